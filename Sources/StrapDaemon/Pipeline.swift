import Dispatch
import StrapGATT
import StrapIngest
import StrapModel
import Synchronization

/// decode → derive → (live fan-out, store) on Dispatch queues (docs/architecture.md#the-pipeline).
///
/// Sources call `submit` from their own queues. The hop onto the ingest queue is bounded by
/// an atomic in-flight count, so a flood (or a stalled store) drops at the door with a count
/// instead of growing memory; nothing on the hot path takes a lock. All per-device state
/// lives on the ingest queue.
public final class Pipeline: @unchecked Sendable {
    public struct Counters: Sendable, Equatable {
        public var events = 0
        public var samples = 0
        public var rejected = 0
        public var dropped = 0
        /// Of `samples`, how many of each type (types with none left out).
        public var samplesByType: [QuantityType: Int] = [:]
    }

    public let queue = DispatchQueue(label: "strapd.pipeline.ingest")
    public let capacity: Int
    public let storeStage: StoreStage
    public let live: LiveHub
    let identity: @Sendable (SensorAddress, String?) -> (Device, DeviceIngest.Settings)
    private let inFlight = Atomic<Int>(0)
    private let eventCount = Atomic<Int>(0)
    private let sampleCount = Atomic<Int>(0)
    private let typeCounts = SampleTypeCounts()
    private let rejectedCount = Atomic<Int>(0)
    private let droppedCount = Atomic<Int>(0)
    // The state below is confined to `queue` and reached only by this class's own methods,
    // none of which hands it to a callback while an access is open (ingest writes into `out`
    // through pure decoding code; callbacks get copies). So the runtime's dynamic exclusivity
    // check, some seventeen of them per notification (a tenth of its instructions with the
    // other classes' on the path; docs/benchmarks.md), is left out for these properties alone.
    @exclusivity(unchecked) private var ingests: [SensorAddress: IngestSlot] = [:]
    @exclusivity(unchecked) private var names: [SensorAddress: String] = [:]
    /// What this turn of the ingest queue produced, handed on in one hop per stage when the
    /// turn ends: a per-event hop to the store queue and to live delivery cost two closures, two
    /// wake-ups and two small arrays per notification, more than decoding itself.
    /// Its `samples` are the turn's samples for the store; changes and rejections are
    /// handled per event and cleared.
    @exclusivity(unchecked) private var out = DeviceIngest.Output()
    /// The turn's live events; its samples as ranges of `out.samples`, made into slices only
    /// at hand-off, once nothing more is appended (a slice taken earlier would make every
    /// later append copy the whole buffer).
    @exclusivity(unchecked) private var outLive: [PendingLive] = []
    /// `outLive` made into events at hand-off; empty between turns (`publishLive`).
    @exclusivity(unchecked) private var liveEvents: [LiveEvent] = []
    @exclusivity(unchecked) private var handOffScheduled = false
    /// Called on `queue` for each rejected packet (the daemon logs it, rate-limited).
    public var onRejected: (@Sendable (SensorAddress, String) -> Void)?
    /// Called on `queue` for device changes the daemon acts on (energy saturated, identity).
    public var onChange: (@Sendable (SensorAddress, DeviceIngest.Change) -> Void)?
    /// A tap for `--record`: every event as submitted, before decoding.
    public var recorder: (@Sendable (SensorEvent) -> Void)?
    /// The trainer's control path (docs/trainer.md): control point indications, Machine
    /// Status, the Feature and ranges read, and every link change, as they are processed.
    /// Set before the sources start.
    public var controlTap: (@Sendable (SensorEvent) -> Void)?

    public init(capacity: Int = 65_536, storeStage: StoreStage, live: LiveHub,
         identity: @escaping @Sendable (SensorAddress, String?) -> (Device, DeviceIngest.Settings)) {
        self.capacity = capacity
        self.storeStage = storeStage
        self.live = live
        self.identity = identity
        queue.setSpecific(key: Self.ingestKey, value: true)
    }

    /// Hands an event to the pipeline. Returns false (and counts it) when the pipeline is
    /// `capacity` events behind.
    ///
    /// A source that already runs on the ingest queue (BlueZ's bus queue targets it) with
    /// nothing in flight has its event decoded right here: a hop onto the queue it holds
    /// would run only after it lets go, on a worker woken for it (a thread wake-up per
    /// notification; docs/benchmarks.md). With anything in flight the event queues behind it,
    /// so events keep the order they were submitted in.
    @discardableResult
    public func submit(_ event: SensorEvent) -> Bool {
        if DispatchQueue.getSpecific(key: Self.ingestKey) != nil,
           inFlight.compareExchange(expected: 0, desired: 1, ordering: .acquiringAndReleasing).exchanged {
            recorder?(event)
            process(event)
            turnEnded(processed: 1)
            return true
        }
        if inFlight.add(1, ordering: .relaxed).newValue > capacity {
            inFlight.subtract(1, ordering: .relaxed)
            droppedCount.add(1, ordering: .relaxed)
            return false
        }
        recorder?(event)
        queue.async { [self] in
            process(event)
            turnEnded(processed: 1)
        }
        return true
    }

    /// Set on `queue`: found from blocks on it and on queues that target it.
    private static let ingestKey = DispatchSpecificKey<Bool>()

    /// Submits a batch with one queue hop (replay and the benchmark).
    public func submit(contentsOf events: [SensorEvent]) {
        inFlight.add(events.count, ordering: .relaxed)
        if let recorder { events.forEach(recorder) }
        queue.async { [self] in processBatch(events) }
    }

    /// Submits a batch from a source with a thread of its own (the simulator). When nothing is
    /// in flight the batch is decoded on the caller's thread, through `queue.sync`, instead of
    /// waking a worker for it: the BlueZ source gets the same by running its bus queue on the
    /// ingest queue, and a notification at sensor rates then costs one wake-up fewer (strapd's
    /// idle CPU is mostly wake-ups; docs/benchmarks.md). With anything in flight it hops as
    /// `submit(contentsOf:)` does, so a flood still queues (or drops) at the door instead of
    /// making the source wait.
    public func submitHere(contentsOf events: [SensorEvent]) {
        guard inFlight.compareExchange(expected: 0, desired: events.count, ordering: .acquiringAndReleasing).exchanged else {
            submit(contentsOf: events)
            return
        }
        if let recorder { events.forEach(recorder) }
        queue.sync { processBatch(events) }
    }

    /// On `queue`: a submitted batch, counted in flight by the caller.
    private func processBatch(_ events: [SensorEvent]) {
        // Borrowed in place: a `for` over the array copied each event (its address and value).
        events.withUnsafeBufferPointer { buffer in
            for i in buffer.indices { process(buffer[i]) }
        }
        turnEnded(processed: events.count)
    }

    /// Nothing else waiting: hand on now (the live path's latency is one hop shorter).
    /// More behind us: hand on after them, so a burst goes on in one piece.
    private func turnEnded(processed: Int) {
        if inFlight.subtract(processed, ordering: .relaxed).newValue == 0 {
            handOff(idle: true)
        } else if !handOffScheduled && !(out.samples.isEmpty && outLive.isEmpty) {
            handOffScheduled = true
            queue.async { [self] in handOff() }
        }
    }

    public var counters: Counters {
        Counters(events: eventCount.load(ordering: .relaxed), samples: sampleCount.load(ordering: .relaxed),
                 rejected: rejectedCount.load(ordering: .relaxed), dropped: droppedCount.load(ordering: .relaxed),
                 samplesByType: typeCounts.snapshot)
    }

    /// Waits until everything submitted so far has been decoded and handed to the store stage.
    public func drain() { queue.sync { handOff() } }

    private func process(_ event: SensorEvent) {
        eventCount.add(1, ordering: .relaxed)
        let address = event.address
        // The link's name must be known before the device's identity is first made.
        if case let .linkUp(_, name, _) = event { names[address] = name }
        let slot: IngestSlot
        if let known = ingests[address] {
            slot = known
        } else {
            let (device, settings) = identity(address, names[address])
            slot = IngestSlot(DeviceIngest(device: device, settings: settings))
            ingests[address] = slot
        }
        let livePublishing = live.hasSubscribers
        let mark = out.samples.count
        switch event {
        case let .notification(_, characteristic, value, time), let .read(_, characteristic, value, time):
            if let tap = controlTap, characteristic.isTrainerControlPath { tap(event) }
            slot.ingest.ingest(characteristic, value, wall: time.wall, monotonic: time.monotonic, into: &out)
            if let error = out.rejected {
                out.rejected = nil
                rejectedCount.add(1, ordering: .relaxed)
                onRejected?(address, error.description)
            }
            if !out.changes.isEmpty {
                for change in out.changes {
                    if livePublishing { outLive.append(.event(.change(address, change))) }
                    onChange?(address, change)
                }
                out.changes.removeAll(keepingCapacity: true)
            }
        case let .linkUp(_, _, time):
            controlTap?(event)
            slot.ingest.linkRestarted()
            if livePublishing { outLive.append(.event(.link(address, up: true, reason: nil, time.wall))) }
        case let .linkDown(_, reason, time):
            controlTap?(event)
            if livePublishing { outLive.append(.event(.link(address, up: false, reason: reason, time.wall))) }
        }
        let produced = out.samples.count - mark
        // A sign of life all the same: it goes with the turn's live events to the device
        // directory's last seen, in the same hand-off as the samples (no call of its own).
        if produced == 0, livePublishing, case let .notification(_, characteristic, _, time) = event {
            outLive.append(.event(.quietNotification(address, characteristic, time.wall)))
        }
        if produced > 0 {
            sampleCount.add(produced, ordering: .relaxed)
            typeCounts.count(out.samples[mark...])
            if livePublishing {
                // Samples with nothing between them are one run.
                if case .samples(let run)? = outLive.last, run.upperBound == mark {
                    outLive[outLive.count - 1] = .samples(run.lowerBound..<out.samples.count)
                } else {
                    outLive.append(.samples(mark..<out.samples.count))
                }
            }
        }
        // Bounded: a long batch hands off every few thousand samples instead of at its end.
        if out.samples.count >= 4096 || outLive.count >= 4096 { handOff() }
    }

    /// Live first: the store stage may append the batch on this thread, disk included (always
    /// when sparse; when `idle`, nothing else in flight, unless every append is synced).
    private func handOff(idle: Bool = false) {
        handOffScheduled = false
        if !outLive.isEmpty {
            publishLive()
            outLive.removeAll(keepingCapacity: true)
        }
        if !out.samples.isEmpty {
            storeStage.enqueue(out.samples, callerIdle: idle)
            out.samples = []
            // A buffer the store is done with: its samples are released here, where they were
            // made (docs/architecture.md#the-pipeline).
            out.samples = storeStage.reusableBuffer()
        }
    }
}

extension Pipeline {
    /// A live event of the turn, its samples still a range of the turn's batch.
    fileprivate enum PendingLive {
        case event(LiveEvent)
        case samples(Range<Int>)
    }

    /// Its own function so the slices are released before the batch goes to the store stage.
    /// The events go out in an array kept for the next turn (subscribers let go of it before
    /// `publish` returns), so a turn allocates none.
    private func publishLive() {
        for pending in outLive {
            switch pending {
            case .event(let event): liveEvents.append(event)
            case .samples(let range): liveEvents.append(.samples(out.samples[range]))
            }
        }
        live.publish(liveEvents)
        liveEvents.removeAll(keepingCapacity: true)
    }
}

/// A device's ingest state in a box: one hash per event finds it, and it is mutated in place
/// (through a dictionary value, every event re-hashed the address and copied the state).
private final class IngestSlot {
    var ingest: DeviceIngest
    init(_ ingest: DeviceIngest) { self.ingest = ingest }
}

extension GATTCharacteristic {
    /// What the trainer service takes from the pipeline (`Pipeline.controlTap`).
    var isTrainerControlPath: Bool {
        switch self {
        case .fitnessMachineControlPoint, .fitnessMachineStatus, .fitnessMachineFeature, .supportedPowerRange,
             .supportedResistanceLevelRange: true
        default: false
        }
    }
}
