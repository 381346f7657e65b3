import Foundation
import Glibc
import StrapModel
@testable import StrapWorkout

enum W {
    static let t0: Millis = 1_767_225_600_000  // 2026-01-01T00:00:00Z
    static let strap = Device(id: "dev-h10", address: "A0:9E:1A:00:00:01", name: "Polar H10")
    static let strap2 = Device(id: "dev-tickr", address: "C4:00:00:00:00:02", name: "TICKR")
    static let csc = Device(id: "dev-csc", address: "D1:00:00:00:00:03", name: "Speed")
    static let footpod = Device(id: "dev-stryd", address: "E1:00:00:00:00:04", name: "Stryd")

    static func hr(_ bpm: Double, _ t: Millis, _ device: Device = strap, metadata: [String: String] = [:]) -> Sample {
        Sample(type: .heartRate, value: bpm, start: t, device: device, metadata: metadata)
    }

    static func sensorEnergy(_ kcal: Double, _ from: Millis, _ to: Millis, _ device: Device = strap) -> Sample {
        Sample(type: .activeEnergy, value: kcal, start: from, end: to, device: device, metadata: ["source": "sensorEnergyExpended"])
    }

    /// 1 Hz samples at `bpm` covering (from, to], stamped every second.
    static func steadyHR(_ bpm: Double, from: Millis, to: Millis, _ device: Device = strap) -> [Sample] {
        stride(from: from, through: to, by: 1000).map { hr(bpm, $0, device) }
    }

    static let male35 = AthleteProfile(dateOfBirth: CalendarDate(year: 1990, month: 6, day: 15), biologicalSex: .male,
                                       weight: 80, height: 180, restingHeartRate: 50, maximumHeartRate: 190)
}

/// A settable clock for the engine.
final class TestClock: @unchecked Sendable {
    var now: Millis
    init(_ t: Millis = W.t0) { now = t }
    func advance(seconds: Double) { now += Millis(seconds * 1000) }
}

/// An engine over an in-memory journal with a settable clock and sequential session ids. The
/// engine's closures hold the parts, not the fixture, so `EngineFixture().engine` is safe.
final class EngineFixture {
    final class Box<T>: @unchecked Sendable {
        var value: T
        init(_ v: T) { value = v }
    }

    let clock = TestClock()
    let journal = InMemoryWorkoutJournal()
    private let profileBox = Box<[String: AthleteProfile]>(["default": W.male35])
    private let changeBox = Box<[SessionChange]>([])
    var profiles: [String: AthleteProfile] {
        get { profileBox.value }
        set { profileBox.value = newValue }
    }
    var changes: [SessionChange] { changeBox.value }
    let engine: WorkoutEngine

    init() {
        let clock = clock, profiles = profileBox, changes = changeBox, nextID = Box<UInt8>(1)
        engine = WorkoutEngine(journal: journal, profiles: { profiles.value[$0] }, now: { clock.now },
                               makeID: {
                                   defer { nextID.value += 1 }
                                   return UUID(uuid: (0, 0, 0, 0, 0, 0, 0x40, 0, 0x80, 0, 0, 0, 0, 0, 0, nextID.value))
                               })
        engine.onChange = { changes.value.append($0) }
    }
}

/// A unique temporary directory removed when the test is done.
final class TempDir: @unchecked Sendable {
    let path: String

    init(_ tag: String = "workout") {
        var template = Array("/tmp/strap-\(tag)-XXXXXX".utf8CString)
        let p = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        path = String(cString: p!)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }
}

extension Double {
    func isClose(to other: Double, within tolerance: Double = 1e-9) -> Bool { abs(self - other) <= tolerance }
}
