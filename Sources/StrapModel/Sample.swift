import FoundationEssentials
import StrapWire

/// One stored measurement (docs/product.md §3.4, JSON shape docs/protocol.md#shapes). `start`/`end`
/// are milliseconds.
public struct Sample: Sendable, Hashable {
    public var uuid: UUID
    /// Assigned by the store when committed; 0 before.
    public var anchor: UInt64
    public var type: QuantityType
    public var value: Double
    public var start: Millis
    public var end: Millis
    public var device: Device
    /// Metadata and beats live in one optional box: most samples have neither, and then a
    /// copy of a sample costs one retain (its device) instead of three.
    @usableFromInline var extras: SampleExtras?

    public var metadata: [String: String] {
        @inlinable get { extras?.metadata ?? [:] }
        set { extras = SampleExtras.make(newValue, beats) }
    }

    /// Reconstructed beat times (seconds since `start`) of a heartbeat series; empty otherwise.
    public var beats: [Double] {
        @inlinable get { extras?.beats ?? [] }
        set { extras = SampleExtras.make(metadata, newValue) }
    }

    /// Whether metadata or beats are present.
    @inlinable public var hasExtras: Bool { extras != nil }

    public var startDate: Date { Date(millis: start) }
    public var endDate: Date { Date(millis: end) }
}

/// The initializers live in an extension so that the struct keeps its implicit memberwise
/// initializer, and each delegates to it: an initializer that assigns a struct of this size
/// field by field built it in a temporary and copied it out (an extra retain and release of
/// the device and extras for every decoded sample, `perf` on the pipeline). For the same
/// reason they are not `@inlinable`: the memberwise initializer is internal, and a call per
/// sample costs less than that copy.
extension Sample {
    public init(type: QuantityType, value: Double, start: Millis, end: Millis? = nil,
                device: Device, metadata: [String: String] = [:], beats: [Double] = [],
                uuid: UUID = .unassigned, anchor: UInt64 = 0) {
        self.init(uuid: uuid, anchor: anchor, type: type, value: value, start: start, end: end ?? start,
                  device: device, extras: SampleExtras.make(metadata, beats))
    }

    /// The decoder's and the store reader's path: no metadata or beats.
    public init(uuid: UUID, anchor: UInt64, type: QuantityType, value: Double, start: Millis, end: Millis, device: Device) {
        self.init(uuid: uuid, anchor: anchor, type: type, value: value, start: start, end: end, device: device, extras: nil)
    }

    /// A sample tagged with metadata made once (a decoder's fixed tags): no allocation per sample.
    public init(type: QuantityType, value: Double, start: Millis, end: Millis? = nil, device: Device, metadata: SharedMetadata) {
        self.init(uuid: .unassigned, anchor: 0, type: type, value: value, start: start, end: end ?? start,
                  device: device, extras: metadata.extras)
    }
}

extension Sample {
    /// The addresses of a sample's device and of its extras storage (0 for none), read in
    /// place as integers. A class reference loaded through a pointer is retained and released;
    /// on the store's thread those objects' counts are shared with the ingest thread making
    /// samples, so each pair cost a cache-line transfer. Samples with equal identities share
    /// the device or extras object; the caller keeps the samples alive while it compares.
    @inlinable
    public static func identities(at p: UnsafePointer<Sample>) -> (device: UInt, extras: UInt) {
        let raw = UnsafeRawPointer(p)
        return (raw.load(fromByteOffset: deviceOffset, as: UInt.self), raw.load(fromByteOffset: extrasOffset, as: UInt.self))
    }

    @usableFromInline static let deviceOffset = MemoryLayout<Sample>.offset(of: \Sample.device)!
    @usableFromInline static let extrasOffset = MemoryLayout<Sample>.offset(of: \Sample.extras)!
}

extension UUID {
    /// The all-zero UUID of a sample or workout the store has not assigned yet.
    @inlinable public static var unassigned: UUID { UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)) }
}

/// Metadata made once and shared by every sample that carries it. A dictionary literal and
/// its box per sample were most of what a foot pod's notification allocated (every RSC
/// speed sample is tagged `running`), and allocations freed on other threads contend for
/// malloc's arena locks in the pipeline.
public struct SharedMetadata: Sendable {
    @usableFromInline let extras: SampleExtras?
    public init(_ metadata: [String: String]) { extras = SampleExtras.make(metadata, []) }
}

/// Immutable storage of a sample's rarely present parts.
@usableFromInline
final class SampleExtras: Sendable, Hashable {
    @usableFromInline let metadata: [String: String]
    @usableFromInline let beats: [Double]

    private init(_ m: [String: String], _ b: [Double]) { metadata = m; beats = b }

    static func make(_ m: [String: String], _ b: [Double]) -> SampleExtras? {
        m.isEmpty && b.isEmpty ? nil : SampleExtras(m, b)
    }

    @usableFromInline static func == (a: SampleExtras, b: SampleExtras) -> Bool {
        a.metadata == b.metadata && a.beats == b.beats
    }

    @usableFromInline func hash(into h: inout Hasher) { h.combine(metadata); h.combine(beats) }
}

extension Sample: Codable {
    enum CodingKeys: String, CodingKey {
        case uuid, anchor, type, value, unit, start, end, device, metadata, beats
    }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(uuid, forKey: .uuid)
        try c.encode(anchor, forKey: .anchor)
        try c.encode(type, forKey: .type)
        if type == .heartbeatSeries { try c.encode(beats, forKey: .beats) } else {
            try c.encode(value, forKey: .value)
        }
        try c.encode(type.unit, forKey: .unit)
        try c.encode(RFC3339Timestamp.format(millisecondsSinceEpoch: start), forKey: .start)
        try c.encode(RFC3339Timestamp.format(millisecondsSinceEpoch: end), forKey: .end)
        try c.encode(device, forKey: .device)
        try c.encode(metadata, forKey: .metadata)
    }

    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        uuid = try c.decodeIfPresent(UUID.self, forKey: .uuid) ?? UUID()
        anchor = try c.decodeIfPresent(UInt64.self, forKey: .anchor) ?? 0
        type = try c.decode(QuantityType.self, forKey: .type)
        let beats = try c.decodeIfPresent([Double].self, forKey: .beats) ?? []
        value = try c.decodeIfPresent(Double.self, forKey: .value) ?? Double(beats.count)
        start = try c.decodeTime(.start)
        end = c.contains(.end) ? try c.decodeTime(.end) : start
        device = try c.decode(Device.self, forKey: .device)
        let metadata = try c.decodeIfPresent([String: String].self, forKey: .metadata) ?? [:]
        extras = SampleExtras.make(metadata, beats)
    }
}

/// A deleted object as anchored readers receive it: the deleted UUID, and the anchor of the
/// tombstone entry (not of the deleted object).
public struct DeletedObject: Codable, Sendable, Hashable {
    public var uuid: UUID
    public var anchor: UInt64
    public var type: ObjectType
    public init(uuid: UUID, anchor: UInt64, type: ObjectType) {
        self.uuid = uuid; self.anchor = anchor; self.type = type
    }
}

/// What an anchored query returns as added: samples and workouts, in anchor order.
public enum StoredObject: Sendable, Hashable, Codable {
    case sample(Sample)
    indirect case workout(Workout)

    public var anchor: UInt64 {
        switch self {
        case .sample(let s): s.anchor
        case .workout(let w): w.anchor
        }
    }

    public var uuid: UUID {
        switch self {
        case .sample(let s): s.uuid
        case .workout(let w): w.uuid
        }
    }

    public var sample: Sample? { if case .sample(let s) = self { s } else { nil } }

    public init(from decoder: Decoder) throws {
        let probe = try decoder.container(keyedBy: Sample.CodingKeys.self)
        if try probe.decode(String.self, forKey: .type) == "workout" {
            self = .workout(try Workout(from: decoder))
        } else {
            self = .sample(try Sample(from: decoder))
        }
    }

    public func encode(to encoder: Encoder) throws {
        switch self {
        case .sample(let s): try s.encode(to: encoder)
        case .workout(let w): try w.encode(to: encoder)
        }
    }
}

/// `samples.anchored`'s answer (docs/protocol.md#samplesanchored).
public struct AnchoredResult: Codable, Sendable {
    public var added: [StoredObject]
    public var deleted: [DeletedObject]
    /// Continue from here; never skips nor repeats an item.
    public var anchor: UInt64
    public init(added: [StoredObject], deleted: [DeletedObject], anchor: UInt64) {
        self.added = added; self.deleted = deleted; self.anchor = anchor
    }
}
