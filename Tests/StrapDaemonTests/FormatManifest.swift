import Foundation
import StrapModel
import StrapStore
import StrapWorkout
@testable import StrapDaemon

/// What a reader must find in a format fixture (Tests/Fixtures/format/<release>/manifest.json),
/// written when the fixture was generated and compared by every later version. The digests
/// are FNV-1a over a canonical text of the fields that release had, so a field added later
/// does not change them; this canonical text is part of the contract and is never changed
/// (a new field gets a new digest beside it).
struct FormatManifest: Codable, Equatable {
    struct StoreContents: Codable, Equatable {
        var storeID: String
        var oldestAnchor: UInt64
        var latestAnchor: UInt64
        var segments: Int
        var samplesByType: [String: Int]
        var deleted: Int
        var workouts: [WorkoutEntry]
        /// Over every sample, workout and deletion in anchor order.
        var digest: String
    }

    struct WorkoutEntry: Codable, Equatable {
        var anchor: UInt64
        var uuid: String
        var activityType: String
        var events: Int
        var laps: Int
        var sessionID: String?
    }

    struct JournalContents: Codable, Equatable {
        var session: String
        var entries: [String]
        var digest: String
    }

    struct ProfileContents: Codable, Equatable {
        var athletes: [String]
        var digest: String
    }

    var release: String
    var store: StoreContents
    var journals: [JournalContents]
    var profiles: ProfileContents

    /// Reads the state directory with the current code: the store (every anchored item), the
    /// session journals and the profile book. Opening the store may cut a torn tail (none in a
    /// fixture), so callers pass a copy.
    static func read(state: String, release: String = FormatFixtures.release) throws -> FormatManifest {
        let store = try Store.open(StoreConfig(directory: state + "/store", sync: .none))
        defer { store.close() }
        var contents = try storeContents(store)
        contents.storeID = try String(contentsOfFile: state + "/store/store.id", encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        let scan = try WorkoutJournalFile(store: store).openSessions()
        if let d = scan.damaged.first { throw StrapError.internal("journal \(d.file): \(d.problem)") }
        let journals = scan.sessions.map { log in
            JournalContents(session: log.session.uuidString.lowercased(), entries: log.entries.map(\.kind),
                            digest: digest(log.entries.map(canonical)))
        }
        let book = try ProfileBook(directory: state, today: CalendarDate(utcMillis: FormatFixtures.t0), load: DaemonFiles.read,
                                   persist: { _, _ throws(StrapError) in throw .internal("the fixture is read only") },
                                   quarantine: { (p: String) throws(StrapError) -> String in throw .internal("\(p) does not decode") })
        if let problem = book.loadProblem { throw StrapError.internal(problem) }
        let profiles = ProfileContents(athletes: book.athletes,
                                       digest: digest(book.athletes.map { "\($0): " + canonical(book.profile($0)!) }))
        return FormatManifest(release: release, store: contents, journals: journals, profiles: profiles)
    }

    /// Every item from anchor 0, in pages.
    static func everything(_ store: Store) throws -> (added: [StoredObject], deleted: [DeletedObject]) {
        var added: [StoredObject] = [], deleted: [DeletedObject] = []
        var anchor: UInt64 = 0
        while true {
            let page = try store.anchored(anchor: anchor, limit: 97)
            added += page.added
            deleted += page.deleted
            if page.anchor == anchor { return (added, deleted) }
            anchor = page.anchor
        }
    }

    static func storeContents(_ store: Store) throws -> StoreContents {
        let (added, deleted) = try everything(store)
        var byType: [String: Int] = [:]
        var workouts: [WorkoutEntry] = []
        var lines: [(UInt64, String)] = deleted.map { ($0.anchor, "deleted \($0.anchor) \($0.uuid) \(name($0.type))") }
        for item in added {
            switch item {
            case .sample(let s):
                byType[s.type.rawValue, default: 0] += 1
                lines.append((s.anchor, canonical(s)))
            case .workout(let w):
                workouts.append(WorkoutEntry(anchor: w.anchor, uuid: w.uuid.uuidString.lowercased(), activityType: w.activityType,
                                             events: w.events.count, laps: w.laps.count,
                                             sessionID: w.sessionID?.uuidString.lowercased()))
                lines.append((w.anchor, canonical(w)))
            }
        }
        let status = store.status
        return StoreContents(storeID: "", oldestAnchor: status.oldestAnchor,
                             latestAnchor: status.latestAnchor, segments: status.segments, samplesByType: byType,
                             deleted: deleted.count, workouts: workouts,
                             digest: digest(lines.sorted { $0.0 < $1.0 }.map(\.1)))
    }

    // MARK: canonical text

    static func digest(_ lines: [String]) -> String {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for line in lines {
            for b in line.utf8 + [0x0a] { h = (h ^ UInt64(b)) &* 0x0000_0100_0000_01b3 }
        }
        return String(h, radix: 16)
    }

    static func name(_ t: ObjectType) -> String {
        switch t {
        case .quantity(let q): q.rawValue
        case .workout: "workout"
        }
    }

    static func bits(_ v: Double) -> String { String(v.bitPattern, radix: 16) }
    static func bits(_ v: Double?) -> String { v.map(bits) ?? "-" }

    static func pairs(_ m: [String: String]) -> String {
        m.keys.sorted().map { "\($0)=\(m[$0]!)" }.joined(separator: ",")
    }

    static func canonical(_ s: Sample) -> String {
        let d = s.device
        let device = [d.id, d.address, d.name, d.manufacturer ?? "-", d.model ?? "-", d.serial ?? "-", d.firmware ?? "-"]
        return "\(s.anchor) \(s.uuid) \(s.type.rawValue) \(bits(s.value)) \(s.start) \(s.end) \(device.joined(separator: "|")) "
            + "{\(pairs(s.metadata))} [\(s.beats.map(bits).joined(separator: ","))]"
    }

    static func canonical(_ w: Workout) -> String {
        let events = w.events.map { "\($0.kind)@\($0.time){\(pairs($0.metadata))}" }.joined(separator: ";")
        let laps = w.laps.map { l in
            "\(l.start)-\(l.end){\(l.summary.keys.sorted().map { "\($0)=\(bits(l.summary[$0]!))" }.joined(separator: ","))}"
        }.joined(separator: ";")
        let summary = w.summary.keys.sorted().map { "\($0)=\(bits(w.summary[$0]!))" }.joined(separator: ",")
        return "\(w.anchor) \(w.uuid) workout \(w.activityType) \(w.locationType.rawValue) \(w.start) \(w.end) "
            + "\(w.deviceIDs.joined(separator: ",")) [\(events)] [\(laps)] {\(summary)} {\(pairs(w.metadata))} "
            + "\(w.sessionID?.uuidString ?? "-") \(w.athlete ?? "-")"
    }

    static func canonical(_ e: SessionJournalEntry) -> String {
        switch e {
        case let .created(session, t, c):
            "created \(session) \(t) \(c.activityType.rawValue) \(c.locationType.rawValue) \(c.athlete) \(c.deviceIDs.joined(separator: ",")) {\(pairs(c.metadata))}"
        case let .prepared(t, ids): "prepared \(t) \(ids.joined(separator: ","))"
        case let .started(t, ids, p): "started \(t) \(ids.joined(separator: ",")) \(p.map(canonical) ?? "-")"
        case let .paused(t): "paused \(t)"
        case let .resumed(t): "resumed \(t)"
        case let .lap(t, m): "lap \(t) {\(pairs(m))}"
        case let .marker(t, m): "marker \(t) {\(pairs(m))}"
        case let .stopped(t): "stopped \(t)"
        case let .ended(t): "ended \(t)"
        }
    }

    static func canonical(_ p: AthleteProfile) -> String {
        let zones = p.heartRateZones.map { "\($0.method.rawValue)[\($0.bounds.map(bits).joined(separator: ","))]" } ?? "-"
        let devices = p.devices.keys.sorted().map { a in
            "\(a)=\(bits(p.devices[a]!.wheelCircumference))/\(p.devices[a]!.cadenceIsStepsPerMinute.map { "\($0)" } ?? "-")"
        }.joined(separator: ",")
        return [p.dateOfBirth.map { "\($0)" } ?? "-", p.biologicalSex?.rawValue ?? "-", bits(p.weight), bits(p.height),
                bits(p.restingHeartRate), bits(p.maximumHeartRate), bits(p.lactateThresholdHeartRate), bits(p.vo2Max),
                zones, devices].joined(separator: " ")
    }
}
