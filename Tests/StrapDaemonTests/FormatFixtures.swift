import Foundation
import StrapModel
import StrapStore
import StrapWorkout
import ThirdPartyReaders
@testable import StrapDaemon

/// The state directory strapd 0.1.0 wrote, committed under Tests/Fixtures/format/0.1.0
/// (docs/storage.md, "Format versions"): a store of several segments (sealed ones with their
/// index), workouts with laps and pauses, one workout session still open in its journal, and
/// the athlete profile book; `manifest.json` beside it says what a reader must find there.
///
/// `generate` drives today's store, journal, engine and profile book to write such a
/// directory. It runs only when asked (`scripts/format-fixtures.sh`): the committed bytes are
/// the contract, and a later version must read them as they are. A new format version adds a
/// new directory; the old ones are never regenerated or edited.
enum FormatFixtures {
    static let release = "0.1.0"
    static var directory: URL { ThirdPartyReaders.root.appendingPathComponent("Tests/Fixtures/format/\(release)") }
    static let storeID = "0a1b2c3d4e5f6071"
    static let t0: Millis = 1_793_512_800_000  // 2026-11-01T06:00:00Z

    static let strap = Device(id: "dev-h10", address: "A0:9E:1A:00:00:01", name: "Polar H10",
                              manufacturer: "Polar Electro Oy", model: "H10", serial: "C7A2F1", firmware: "5.0.0")
    static let csc = Device(id: "dev-csc", address: "D1:00:00:00:00:03", name: "Speed/Cadence", model: "RPM")
    static let tickr = Device(id: "dev-tickr", address: "C4:00:00:00:00:02", name: "TICKR", manufacturer: "Wahoo Fitness")
    static let footpod = Device(id: "dev-stryd", address: "E1:00:00:00:00:04", name: "Stryd", firmware: "1.28")

    /// The engine's clock while generating: moved forward with the samples.
    final class Clock: @unchecked Sendable {
        var now: Millis = t0
    }

    /// Writes the fixture state into `state` (an empty or absent directory) and returns what
    /// a reader finds there.
    static func generate(into state: String) throws -> FormatManifest {
        // The daemon's layout: the store in `store/` (journals in `store/sessions/`), the
        // profile book beside it.
        try FileManager.default.createDirectory(atPath: state + "/store", withIntermediateDirectories: true)
        // A fixed store id, so the derived UUIDs are the same on every run.
        try Data((storeID + "\n").utf8).write(to: URL(fileURLWithPath: state + "/store/store.id"))
        var config = StoreConfig(directory: state + "/store", sync: .always)
        config.segmentMaxItems = 256
        let store = try Store.open(config)
        let profiles = try ProfileBook(directory: state, today: CalendarDate(utcMillis: t0), load: DaemonFiles.read,
                                       persist: DaemonFiles.replace, quarantine: DaemonFiles.quarantine)
        try writeProfiles(profiles)
        let clock = Clock()
        var nextID: UInt8 = 1
        let engine = WorkoutEngine(journal: try WorkoutJournalFile(store: store), profiles: { profiles.profile($0) },
                                   now: { clock.now }, makeID: {
                                       defer { nextID += 1 }
                                       return UUID(uuid: (0x5e, 0x55, 0x10, 0x00, 0, 0, 0x40, 0, 0x80, 0, 0, 0, 0, 0, 0, nextID))
                                   })
        let recorder = Recorder(store: store, engine: engine, clock: clock)

        // A ride: pause and resume, a lap; heart rate with beats, speed, cadence, distance.
        let ride = try engine.start(WorkoutConfiguration(activityType: .cycling, locationType: .outdoor,
                                                         deviceIDs: [strap.id, csc.id], metadata: ["route": "river loop"]),
                                    connectedDevices: [strap.id, csc.id, tickr.id, footpod.id])
        try recorder.ride(seconds: 0..<150, from: t0) { s in
            if s == 50 { _ = try engine.pause(ride.id) }
            if s == 70 { _ = try engine.resume(ride.id) }
            if s == 100 { _ = try engine.lap(ride.id, metadata: ["name": "climb"]) }
        }
        clock.now = t0 + 150_000
        _ = try engine.end(ride.id)

        // Samples nobody asked for, then a deletion (tombstones in the log).
        try recorder.append([Sample(type: .batteryLevel, value: 87, start: t0 + 200_000, device: strap),
                             Sample(type: .batteryLevel, value: 64, start: t0 + 200_000, device: footpod)])
        let unwanted = try store.anchored(anchor: 0, limit: 40).added.compactMap(\.sample).filter { $0.type == .heartRate }.prefix(3)
        _ = try store.delete(uuids: unwanted.map(\.uuid))

        // A run: two laps and a marker, another strap and a foot pod.
        let t1 = t0 + 600_000
        clock.now = t1
        let run = try engine.start(WorkoutConfiguration(activityType: .running, locationType: .indoor, athlete: "alex",
                                                        deviceIDs: [tickr.id, footpod.id]),
                                   connectedDevices: [strap.id, csc.id, tickr.id, footpod.id])
        try recorder.run(seconds: 0..<100, from: t1) { s in
            if s == 30 || s == 60 { _ = try engine.lap(run.id) }
            if s == 80 { _ = try engine.marker(run.id, metadata: ["note": "water"]) }
        }
        clock.now = t1 + 100_000
        _ = try engine.end(run.id)

        // A ride still open when 0.1.0 stopped: only its journal knows it (paused, one lap).
        let t2 = t0 + 1_200_000
        clock.now = t2
        let open = try engine.start(WorkoutConfiguration(activityType: .cycling, deviceIDs: [strap.id, csc.id]),
                                    connectedDevices: [strap.id, csc.id])
        try recorder.ride(seconds: 0..<60, from: t2) { s in
            if s == 30 { _ = try engine.lap(open.id, metadata: ["name": "warm-up"]) }
            if s == 45 { _ = try engine.pause(open.id) }
        }
        store.close()
        return try FormatManifest.read(state: state)
    }

    private static func writeProfiles(_ book: ProfileBook) throws {
        let today = CalendarDate(utcMillis: t0)
        var me = AthleteProfilePatch()
        me.dateOfBirth = .set(CalendarDate(year: 1988, month: 3, day: 14)!)
        me.biologicalSex = .set(.male)
        me.weight = .set(72.5)
        me.height = .set(181)
        me.restingHeartRate = .set(48)
        me.maximumHeartRate = .set(188)
        me.heartRateZones = .set(HeartRateZoneScheme(method: .heartRateReserve))
        me.devices = [csc.address: DeviceSettings(wheelCircumference: 2.105)]
        try book.update("default", me, today: today)
        var alex = AthleteProfilePatch()
        alex.dateOfBirth = .set(CalendarDate(year: 1995, month: 9, day: 2)!)
        alex.biologicalSex = .set(.female)
        alex.weight = .set(61.5)
        alex.vo2Max = .set(52)
        alex.lactateThresholdHeartRate = .set(171)
        alex.devices = [footpod.address: DeviceSettings(cadenceIsStepsPerMinute: true)]
        try book.update("alex", alex, today: today)
    }

    /// Appends samples to the store and gives them to the engine, as the daemon's pipeline
    /// and live hub do, second by second.
    struct Recorder {
        let store: Store
        let engine: WorkoutEngine
        let clock: Clock

        func append(_ samples: [Sample]) throws {
            for s in try store.append(samples) { _ = engine.add(s) }
        }

        func ride(seconds: Range<Int>, from t: Millis, at second: (Int) throws -> Void) throws {
            for s in seconds {
                let now = t + Millis(s) * 1000
                clock.now = now
                try second(s)
                var batch = [Sample(type: .heartRate, value: Double(120 + (s * 7) % 41), start: now, device: strap,
                                    metadata: s % 50 == 0 ? ["sensorContact": "false"] : [:])]
                if s % 5 == 4 {
                    let beats = (0..<5).map { Double(($0 + 1) * 512 + s % 3) / 1024 }
                    batch.append(Sample(type: .heartbeatSeries, value: beats.last!, start: now - 4000, end: now, device: strap, beats: beats))
                }
                if s % 3 == 2 {
                    batch.append(Sample(type: .cyclingSpeed, value: 8.25 + Double(s % 9) / 4, start: now - 3000, end: now, device: csc))
                    batch.append(Sample(type: .cyclingCadence, value: Double(82 + s % 13), start: now - 3000, end: now, device: csc))
                    batch.append(Sample(type: .cyclingDistance, value: 24.75 + Double(s % 5), start: now - 3000, end: now, device: csc))
                }
                if s % 20 == 19 {
                    batch.append(Sample(type: .energyExpended, value: Double(s * 3), start: now, device: strap))
                }
                try append(batch)
            }
        }

        func run(seconds: Range<Int>, from t: Millis, at second: (Int) throws -> Void) throws {
            for s in seconds {
                let now = t + Millis(s) * 1000
                clock.now = now
                try second(s)
                var batch = [Sample(type: .heartRate, value: Double(140 + (s * 5) % 23), start: now, device: tickr)]
                if s % 4 == 3 {
                    batch.append(Sample(type: .runningSpeed, value: 3.125 + Double(s % 7) / 8, start: now, device: footpod))
                    batch.append(Sample(type: .runningCadence, value: Double(168 + s % 9), start: now, device: footpod))
                    batch.append(Sample(type: .strideLength, value: 1.1 + Double(s % 4) / 100, start: now, device: footpod))
                    batch.append(Sample(type: .runningDistance, value: 12.5, start: now - 4000, end: now, device: footpod))
                }
                if s == 50 { batch.append(Sample(type: .sensorContact, value: 0, start: now, device: tickr)) }
                try append(batch)
            }
        }
    }
}
