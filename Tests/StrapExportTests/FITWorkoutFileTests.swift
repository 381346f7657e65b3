import Foundation
import StrapModel
import Testing
import ThirdPartyReaders
@testable import StrapExport

/// Plans as FIT workout files (docs/export.md, "FIT workout files"): what strapd writes is
/// read by Garmin's FIT SDK and fitdecode as the same steps, and read back by strapd as the
/// same plan; files strapd cannot represent are refused naming the step; damaged bytes are an
/// error, never a trap.
@Suite struct FITWorkoutFileTests {
    static func fixturePlan() throws -> WorkoutPlan {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../Fixtures/plans/threshold-3x8.json")
        return try JSONDecoder().decode(WorkoutPlan.self, from: Data(contentsOf: url))
    }

    static let created: Millis = 1_767_225_600_000

    @Test func garminsSDKAndFitdecodeReadTheStepsAndStrapdReadsBackTheSamePlan() throws {
        var plan = try Self.fixturePlan()
        plan.blocks.append(PlanBlock(iterations: 2, steps: [
            IntervalStep(.work, PlanStep(goal: .distance(400), target: .power(watts: 300...350))),
            IntervalStep(.recovery, PlanStep(goal: .time(90.5), target: .heartRate(bpm: 100...120))),
        ]))
        let bytes = FITWorkoutFile.encode(plan, created: Self.created)
        let dir = try ThirdPartyReaders.temporaryDirectory()
        let file = dir.appendingPathComponent("plan.fit")
        try Data(bytes).write(to: file)
        let read = try ThirdPartyReaders.check("check_fit_workout.py", [file.path])
        #expect(read["file_type"] as? String == "workout")
        #expect(read["sport"] as? String == "cycling")
        #expect(read["name"] as? String == "Threshold 3x8")
        let steps = try #require(read["steps"] as? [[String: Any]])
        // warm-up, work, recovery, repeat ×3, work (a block done once: no repeat step), work,
        // recovery, repeat ×2, cool-down
        try #require(steps.count == 9 && read["fitdecode_steps"] as? Int == 9, "\(steps)")
        func s(_ i: Int, _ key: String) -> String { "\(steps[i][key] ?? "nil")" }
        #expect(s(0, "intensity") == "warmup" && s(0, "duration_type") == "time" && s(0, "duration") == "600.0")
        #expect(s(0, "target_type") == "power" && s(0, "low") == "50" && s(0, "high") == "65", "% of FTP: no offset")
        #expect(s(1, "name") == "Threshold" && s(1, "intensity") == "active" && s(1, "low") == "95" && s(1, "high") == "105")
        #expect(s(2, "intensity") == "recovery" && s(2, "target_type") == "heart_rate" && s(2, "target_value") == "2")
        #expect(s(3, "duration_type") == "repeat_until_steps_cmplt" && s(3, "duration") == "1" && s(3, "target_value") == "3")
        #expect(s(4, "target_type") == "heart_rate" && s(4, "low") == "240" && s(4, "high") == "250", "bpm + 100")
        #expect(s(5, "duration_type") == "distance" && s(5, "duration") == "400.0" && s(5, "low") == "1300" && s(5, "high") == "1350", "W + 1000")
        #expect(s(6, "duration") == "90.5")
        #expect(s(7, "duration") == "5" && s(7, "target_value") == "2")
        #expect(s(8, "intensity") == "cooldown" && s(8, "duration_type") == "open" && s(8, "target_type") == "cadence")

        let back = try FITWorkoutFile.decode(bytes)
        #expect(back == plan)
    }

    @Test func aFileOfStepsAPlanCannotSayIsRefusedNamingTheStep() throws {
        var plan = try Self.fixturePlan()
        plan.warmup = nil
        var bytes = FITWorkoutFile.encode(plan, created: Self.created)
        // The first step's duration type becomes 2 (hr_less_than); fix the CRC as a writer would.
        let steps = FITWorkoutFile.flatten(plan)
        #expect(!steps.isEmpty)
        let reader = try FITReader(bytes)
        #expect(reader.messages.filter { $0.global == 27 }.count == steps.count)
        let definitionEnd = Self.offsetOfFirstStepData(bytes)
        let durationTypeOffset = definitionEnd + 1 + 2 + (steps.map { $0.name.utf8.count + 1 }.max() ?? 1)
        bytes[durationTypeOffset] = 2
        let end = bytes.count - 2
        let crc = FIT.CRC.checksum(bytes[0..<end])
        bytes[end] = UInt8(crc & 0xFF); bytes[end + 1] = UInt8(crc >> 8)
        #expect(throws: FITWorkoutFile.Failure.unsupported(step: 0, "duration type 2 (only time, distance, open and repeats)")) {
            try FITWorkoutFile.decode(bytes)
        }
    }

    /// The byte after the workout_step definition (the first step's record header).
    static func offsetOfFirstStepData(_ b: [UInt8]) -> Int {
        var i = 14
        while i + 5 < b.count {
            if b[i] == 0x42, b[i + 3] == 27, b[i + 4] == 0 { return i + 6 + Int(b[i + 5]) * 3 }
            i += 1
        }
        return -1
    }

    @Test func anActivityFileIsNotAWorkoutAndDamagedBytesAreErrors() throws {
        let plan = try Self.fixturePlan()
        let good = FITWorkoutFile.encode(plan, created: Self.created)
        var activity = good
        activity[14 + 6 + 4 * 3 + 1] = 4    // file_id.type: activity
        let end = activity.count - 2
        let crc = FIT.CRC.checksum(activity[0..<end])
        activity[end] = UInt8(crc & 0xFF); activity[end + 1] = UInt8(crc >> 8)
        #expect(throws: FITWorkoutFile.Failure.notAWorkout("file type 4, not 5 (workout)")) { try FITWorkoutFile.decode(activity) }
        #expect(throws: FITWorkoutFile.Failure.self) { try FITWorkoutFile.decode(Array(good.prefix(40))) }
        var flipped = good
        flipped[30] ^= 0x10
        #expect(throws: FITWorkoutFile.Failure.self) { try FITWorkoutFile.decode(flipped) }
        // Every truncation and every single-byte change with the checksums made right again
        // decodes or fails with an error; none traps.
        var generator = SystemRandomNumberGenerator()
        for cut in stride(from: 0, to: good.count, by: 3) { _ = try? FITWorkoutFile.decode(Array(good.prefix(cut))) }
        for _ in 0..<2000 {
            var b = good
            b[Int.random(in: 14..<(b.count - 2), using: &generator)] = UInt8.random(in: 0...255, using: &generator)
            let e = b.count - 2
            let c = FIT.CRC.checksum(b[0..<e])
            b[e] = UInt8(c & 0xFF); b[e + 1] = UInt8(c >> 8)
            _ = try? FITWorkoutFile.decode(b)
        }
    }

    /// Found by the `fit` fuzzer (CI, 2026-12-07): records whose definition gives a step's
    /// duration type a 4-byte base type carry 0xFFFFFFFF-like values; the step mapping took
    /// them for UInt8 and trapped. Framed as the fuzzer frames it, they are now refused.
    @Test func aStepEnumWiderThanItsTypeIsRefusedNotTrappedOn() throws {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../Fixtures/plans/fuzz-wide-enum-records.bin")
        let records = try Array(Data(contentsOf: url))
        var framed = FIT.header(dataSize: UInt32(records.count)) + records
        let crc = FIT.CRC.checksum(framed)
        framed += [UInt8(crc & 0xFF), UInt8(crc >> 8)]
        #expect(throws: FITWorkoutFile.Failure.self) { try FITWorkoutFile.decode(framed) }
    }
}
