import Foundation
import Glibc
import Testing
import StrapModel
import StrapWorkout
@testable import StrapStore
@testable import StrapDaemon

/// Issue 36 item 3: what strapd 0.1.0 wrote (Tests/Fixtures/format/0.1.0, see FormatFixtures)
/// is read whole by this build and taken further; a file claiming a newer format is refused
/// with `StrapError.newerFormat` and left byte for byte as it was (docs/storage.md, "Format
/// versions"). The tests work on copies; the fixture is never regenerated here.
@Suite(.serialized) struct FormatCompatibilityTests {
    static var fixtureState: String { FormatFixtures.directory.appendingPathComponent("state").path }

    /// A copy of the fixture's state directory, removed with the test's directory.
    static func copyOfFixture(_ name: String = #function) throws -> String {
        let state = temporaryDirectory(name) + "/state"
        try FileManager.default.copyItem(atPath: fixtureState, toPath: state)
        return state
    }

    static func expected() throws -> FormatManifest {
        let data = try Data(contentsOf: FormatFixtures.directory.appendingPathComponent("manifest.json"))
        return try JSONDecoder().decode(FormatManifest.self, from: data)
    }

    /// Every file under `dir` (relative path → bytes), to show that nothing was changed.
    static func snapshot(_ dir: String) throws -> [String: Data] {
        var files: [String: Data] = [:]
        for case let rel as String in FileManager.default.enumerator(atPath: dir)! {
            var isDir: ObjCBool = false
            if FileManager.default.fileExists(atPath: dir + "/" + rel, isDirectory: &isDir), !isDir.boolValue {
                files[rel] = try Data(contentsOf: URL(fileURLWithPath: dir + "/" + rel))
            }
        }
        return files
    }

    /// Rewrites the u16 version after the magic and the header CRC over the bytes before it,
    /// as a newer strapd's file of that kind would have them.
    static func claimVersion(_ version: UInt16, file: String, crcOffset: Int) throws {
        var b = [UInt8](try Data(contentsOf: URL(fileURLWithPath: file)))
        b[8] = UInt8(version & 0xff); b[9] = UInt8(version >> 8)
        let crc = crc32(Array(b[0..<crcOffset]))
        for i in 0..<4 { b[crcOffset + i] = UInt8((crc >> (8 * UInt32(i))) & 0xff) }
        try Data(b).write(to: URL(fileURLWithPath: file))
    }

    static func files(_ state: String, suffix: String, under sub: String = "") throws -> [String] {
        let dir = state + "/store" + (sub.isEmpty ? "" : "/" + sub)
        return try FileManager.default.contentsOfDirectory(atPath: dir).filter { $0.hasSuffix(suffix) }.sorted().map { dir + "/" + $0 }
    }

    // MARK: reading what 0.1.0 wrote

    @Test func theFixtureOf010HoldsWhatItsGeneratorPromised() throws {
        let m = try Self.expected()
        #expect(m.release == FormatFixtures.release)
        #expect(m.store.segments >= 3, "sealed segments with index files and an open one")
        #expect(m.store.samplesByType.keys.count >= 10 && m.store.samplesByType.values.reduce(0, +) >= 300)
        #expect(m.store.deleted == 3 && m.store.workouts.count == 2)
        #expect(m.store.workouts.allSatisfy { $0.laps >= 1 && $0.events >= 2 })
        #expect(m.journals.count == 1 && m.journals[0].entries.last == "paused")
        #expect(m.profiles.athletes == ["alex", "default"])
        #expect(try Self.files(Self.fixtureState, suffix: ".idx").count == m.store.segments - 1)
        #expect(!FileManager.default.fileExists(atPath: Self.fixtureState + "/store/store.lock"))
    }

    @Test func thisBuildReadsEverySampleWorkoutJournalAndProfileOf010AsTheManifestSays() throws {
        let state = try Self.copyOfFixture()
        let before = try Self.snapshot(state)
        var read = try FormatManifest.read(state: state)
        // One segment more than 0.1.0 left: its open one sealed, a new one begun (below).
        #expect(read.store.segments == (try Self.expected()).store.segments + 1)
        read.store.segments -= 1
        #expect(read == (try Self.expected()))
        // Reading took nothing away and rewrote nothing. New are the lock file and what sealing
        // 0.1.0's open segment makes (this build never appends to a segment of an older
        // version): its index, and an empty open segment in this build's version.
        var after = try Self.snapshot(state)
        after["store/store.lock"] = nil
        let openOf010 = try #require(before.keys.filter { $0.hasSuffix(".log") }.max())
        let added = Set(after.keys).subtracting(before.keys)
        #expect(added.contains(openOf010.replacingOccurrences(of: ".log", with: ".idx")) && added.count == 2, "\(added)")
        let newOpen = try #require(added.first { $0.hasSuffix(".log") })
        #expect(after[newOpen].map { [UInt8]($0.prefix(10)) } == Array("STRPSEG1".utf8) + [UInt8(Format.version), 0])
        #expect(before.allSatisfy { after[$0.key] == $0.value })
    }

    @Test func aStoreOf010TakesNewSamplesWorkoutsAndDeletionsAfterItsOwn() throws {
        let state = try Self.copyOfFixture()
        let m = try Self.expected()
        let t = FormatFixtures.t0 + 86_400_000
        do {
            let store = try Store.open(StoreConfig(directory: state + "/store", sync: .always))
            defer { store.close() }
            let added = try store.append((0..<300).map {
                Sample(type: .heartRate, value: Double(60 + $0 % 30), start: t + Millis($0) * 1000, device: FormatFixtures.strap)
            } + [Sample(type: .cyclingCadence, value: 90, start: t, end: t + 2000, device: FormatFixtures.csc)])
            #expect(added.first?.anchor == m.store.latestAnchor + 1)
            let old = try #require(try store.anchored(anchor: 0, limit: 1).added.first)
            #expect(try store.delete(uuids: [old.uuid, added[0].uuid]) == 2)
        }
        let store = try Store.open(StoreConfig(directory: state + "/store", sync: .none))
        defer { store.close() }
        let (items, deleted) = try FormatManifest.everything(store)
        let oldItems = items.filter { $0.anchor <= m.store.latestAnchor }
        let newItems = items.filter { $0.anchor > m.store.latestAnchor }
        #expect(oldItems.count == m.store.samplesByType.values.reduce(0, +) + m.store.workouts.count - 1)
        #expect(newItems.count == 300)
        #expect(deleted.count == m.store.deleted + 2)
        #expect(Set(items.map(\.uuid)).count == items.count)
        #expect(store.status.damage.isEmpty, "\(store.status.damage)")
    }

    @Test func theSessionOf010LeftOpenIsRecoveredFromItsJournalAndEndsAsAWorkout() throws {
        let state = try Self.copyOfFixture()
        let m = try Self.expected()
        let store = try Store.open(StoreConfig(directory: state + "/store", sync: .always))
        defer { store.close() }
        let journal = try WorkoutJournalFile(store: store)
        let scan = try journal.openSessions()
        #expect(scan.damaged.isEmpty && scan.sessions.count == 1)
        let log = try #require(scan.sessions.first)
        let clock = FormatFixtures.Clock()
        let engine = WorkoutEngine(journal: journal, profiles: { _ in nil }, now: { clock.now })
        let session = try engine.recover(log.entries)
        #expect(session.state == .paused && session.id.uuidString.lowercased() == m.journals[0].session)
        clock.now = session.lastEventTime + 10_000
        _ = try engine.resume(session.id)
        _ = try engine.lap(session.id)
        clock.now += 5_000
        let workout = try engine.end(session.id)
        #expect(workout.anchor > m.store.latestAnchor && workout.sessionID == session.id)
        #expect(workout.laps.count == 3 && workout.events.map(\.kind).contains("pause"))
        #expect(try Self.files(state, suffix: ".journal", under: "sessions").isEmpty)
        let stored = try FormatManifest.storeContents(store)
        #expect(stored.workouts.count == m.store.workouts.count + 1)
    }

    @Test func theProfileBookOf010LoadsAndIsWrittenAsTheCurrentVersionOnItsFirstChange() throws {
        let state = try Self.copyOfFixture()
        let today = CalendarDate(utcMillis: FormatFixtures.t0)
        let open = { () throws -> ProfileBook in
            try ProfileBook(directory: state, today: today, load: DaemonFiles.read, persist: DaemonFiles.replace,
                            quarantine: DaemonFiles.quarantine)
        }
        let book = try open()
        #expect(book.loadProblem == nil && book.athletes == ["alex", "default"])
        var patch = AthleteProfilePatch()
        patch.weight = .set(70)
        patch.functionalThresholdPower = .set(250)
        try book.update("default", patch, today: today)
        let again = try open()
        #expect(again.profile("default")?.weight == 70 && again.profile("default")?.restingHeartRate == 48)
        #expect(again.profile("alex") == book.profile("alex"))
        #expect(again.profile("default")?.functionalThresholdPower == 250)
        let raw = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: state + "/profiles.json"))) as? [String: Any]
        #expect(raw?["version"] as? Int == ProfileBook.formatVersion && ProfileBook.formatVersion == 2)
    }

    // MARK: newer formats

    enum NewerFile: String, CaseIterable, CustomTestStringConvertible {
        case openSegment, sealedSegment, index, journal
        var testDescription: String { rawValue }
    }

    @Test(arguments: NewerFile.allCases) func aStoreWithAFileOfANewerFormatIsRefusedAndLeftByteForByte(_ kind: NewerFile) throws {
        let state = try Self.copyOfFixture("newer-\(kind.rawValue)")
        let segments = try Self.files(state, suffix: ".log")
        let (file, crcOffset, name): (String, Int, String) = switch kind {
        case .openSegment: (segments.last!, Format.headerSize - 4, "store segment")
        case .sealedSegment: (segments.first!, Format.headerSize - 4, "store segment")
        case .index: (try Self.files(state, suffix: ".idx").last!, IndexFile.headerSize - 4, "store index")
        case .journal: (try Self.files(state, suffix: ".journal", under: "sessions")[0], WorkoutJournalFile.headerSize - 4, "session journal")
        }
        // One past what this build reads of that kind (segments and indexes share a version).
        let newer: UInt16 = kind == .journal ? WorkoutJournalFile.version + 1 : Format.version + 1
        let supported = Int(newer) - 1
        try Self.claimVersion(newer, file: file, crcOffset: crcOffset)
        // A leftover temporary file: an older reader that went on would have deleted it.
        try Data("x".utf8).write(to: URL(fileURLWithPath: state + "/store/seg-0000000000000999.idx.tmp"))
        let before = try Self.snapshot(state)
        #expect(throws: StrapError.newerFormat(NewerFormat(file: file, kind: name, version: Int(newer), supported: supported))) {
            try Store.open(StoreConfig(directory: state + "/store"))
        }
        #expect(try Self.snapshot(state) == before)
    }

    @Test func aJournalOfANewerFormatFoundUnderAnOpenStoreIsRefusedNotCalledDamaged() throws {
        let state = try Self.copyOfFixture()
        let store = try Store.open(StoreConfig(directory: state + "/store", sync: .none))
        defer { store.close() }
        let file = try Self.files(state, suffix: ".journal", under: "sessions")[0]
        try Self.claimVersion(WorkoutJournalFile.version + 1, file: file, crcOffset: WorkoutJournalFile.headerSize - 4)
        let before = try Data(contentsOf: URL(fileURLWithPath: file))
        #expect(throws: StrapError.newerFormat(NewerFormat(file: file, kind: "session journal", version: Int(WorkoutJournalFile.version) + 1, supported: Int(WorkoutJournalFile.version)))) {
            try WorkoutJournalFile(store: store).openSessions()
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: file)) == before)
    }

    @Test func aFlippedBitInTheVersionIsDamageNotANewerFormat() throws {
        let state = try Self.copyOfFixture()
        let sealed = try Self.files(state, suffix: ".log")[0]
        var b = [UInt8](try Data(contentsOf: URL(fileURLWithPath: sealed)))
        b[8] ^= 0x04  // the header CRC no longer holds
        try Data(b).write(to: URL(fileURLWithPath: sealed))
        let store = try Store.open(StoreConfig(directory: state + "/store", sync: .none))
        defer { store.close() }
        #expect(store.status.damage.contains { $0.contains("damaged segment header") }, "\(store.status.damage)")
    }

    @Test func aProfileBookOfANewerFormatIsRefusedNotMovedAside() throws {
        let state = try Self.copyOfFixture()
        let path = state + "/profiles.json"
        let newer = ProfileBook.formatVersion + 1
        try Data(#"{"version":\#(newer),"athletes":{"default":{"weight":70}}}"#.utf8).write(to: URL(fileURLWithPath: path))
        let before = try Self.snapshot(state)
        #expect(throws: StrapError.newerFormat(NewerFormat(file: path, kind: "profile book", version: newer, supported: ProfileBook.formatVersion))) {
            try ProfileBook(directory: state, today: CalendarDate(utcMillis: FormatFixtures.t0), load: DaemonFiles.read,
                            persist: DaemonFiles.replace, quarantine: DaemonFiles.quarantine)
        }
        #expect(try Self.snapshot(state) == before)
    }

    @Test func strapdRefusesAStateDirectoryWithANewerStoreNamingTheFileAndBothVersions() throws {
        let dir = temporaryDirectory()
        let state = dir + "/state"
        try FileManager.default.copyItem(atPath: Self.fixtureState, toPath: state)
        let segment = try Self.files(state, suffix: ".log").last!
        try Self.claimVersion(Format.version + 1, file: segment, crcOffset: Format.headerSize - 4)
        let before = try Self.snapshot(state)
        // A daemon that did not refuse would run on: it gets 30 s, then is killed (and fails).
        let p = Process()
        p.executableURL = URL(fileURLWithPath: DaemonProcess.binary)
        p.arguments = ["--state-dir", state, "--socket", dir + "/s.sock", "--set", "daemon.socket_group=", "--simulate=1"]
        let log = dir + "/stderr"
        _ = FileManager.default.createFile(atPath: log, contents: nil)
        p.standardError = FileHandle(forWritingAtPath: log)
        p.standardOutput = FileHandle.nullDevice
        try p.run()
        var waited = 0
        while p.isRunning, waited < 3000 { usleep(10_000); waited += 1 }
        if p.isRunning { kill(p.processIdentifier, SIGKILL) }
        p.waitUntilExit()
        let message = try String(contentsOfFile: log, encoding: .utf8)
        #expect(p.terminationReason == .exit && p.terminationStatus == 1, "\(message)")
        #expect(message.contains(segment) && message.contains("format version \(Format.version + 1)")
                && message.contains("up to version \(Format.version)"), "\(message)")
        #expect(try Self.snapshot(state) == before)
        #expect(!FileManager.default.fileExists(atPath: dir + "/s.sock"))
    }

    // MARK: regenerating (never in CI)

    /// Writes a fixture for this build's formats: `scripts/format-fixtures.sh <release>`.
    /// Refuses to overwrite one: a committed fixture is never regenerated.
    @Test(.enabled(if: ProcessInfo.processInfo.environment["STRAP_WRITE_FORMAT_FIXTURE"] != nil))
    func writeAFormatFixture() throws {
        let target = FormatFixtures.directory
        #expect(!FileManager.default.fileExists(atPath: target.path), "\(target.path) exists; fixtures are never rewritten")
        guard !FileManager.default.fileExists(atPath: target.path) else { return }
        let manifest = try FormatFixtures.generate(into: target.appendingPathComponent("state").path)
        try? FileManager.default.removeItem(atPath: target.appendingPathComponent("state/store/store.lock").path)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try (encoder.encode(manifest) + Data("\n".utf8)).write(to: target.appendingPathComponent("manifest.json"))
        #expect(manifest.store.latestAnchor > 0)
    }
}
