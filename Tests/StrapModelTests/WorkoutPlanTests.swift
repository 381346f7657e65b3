import Foundation
import Testing
import StrapModel

/// Structured workouts (docs/workouts.md, "Structured workouts"): the JSON shape, the limits
/// and what each is refused with, the unrolled steps, and relative targets resolved per athlete.
@Suite struct WorkoutPlanTests {
    static func fixture() throws -> Data {
        try Data(contentsOf: URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../Fixtures/plans/threshold-3x8.json"))
    }

    static func decode(_ json: String) throws -> WorkoutPlan { try JSONDecoder().decode(WorkoutPlan.self, from: Data(json.utf8)) }

    @Test func theFixtureDecodesUnrollsAndSurvivesARoundTrip() throws {
        let plan = try JSONDecoder().decode(WorkoutPlan.self, from: Self.fixture())
        try plan.validate()
        let steps = plan.expandedSteps
        #expect(steps.map(\.purpose) == [.warmup, .work, .recovery, .work, .recovery, .work, .recovery, .work, .cooldown])
        #expect(steps.map(\.iteration) == [nil, 1, 1, 2, 2, 3, 3, 1, nil])
        #expect(steps.map(\.block) == [nil, 0, 0, 0, 0, 0, 0, 1, nil])
        #expect(steps[1].step.target == .powerPercentFTP(95...105) && steps[1].step.displayName == "Threshold")
        #expect(steps[8].step.goal == .open && steps[8].step.target == .cadence(rpm: 80...95))
        #expect(plan.plannedDuration == nil, "the cool-down is open")
        let again = try JSONDecoder().decode(WorkoutPlan.self, from: JSONEncoder().encode(plan))
        #expect(again == plan)
    }

    @Test func aPlanOfTimeGoalsHasItsDuration() throws {
        let plan = try Self.decode(#"{"name":"p","activity":"cycling","blocks":[{"iterations":4,"steps":[{"purpose":"work","goal":{"time":30}},{"purpose":"recovery","goal":{"time":90}}]}]}"#)
        #expect(plan.plannedDuration == 480)
    }

    @Test(arguments: [
        (#"{"name":"","activity":"cycling","blocks":[{"iterations":1,"steps":[{"purpose":"work"}]}]}"#, "plan name must be 1 to 100 bytes"),
        (#"{"name":"p","activity":"cycling","blocks":[]}"#, "has no step"),
        (#"{"name":"p","activity":"cycling","blocks":[{"iterations":0,"steps":[{"purpose":"work"}]}]}"#, "blocks[0].iterations must be 1 to 100"),
        (#"{"name":"p","activity":"cycling","blocks":[{"iterations":1,"steps":[]}]}"#, "blocks[0] must have 1 to 32 steps"),
        (#"{"name":"p","activity":"cycling","warmup":{"goal":{"time":0}},"blocks":[]}"#, "warmup.goal.time must be 1 to 86400 s"),
        (#"{"name":"p","activity":"cycling","blocks":[{"iterations":1,"steps":[{"purpose":"work","goal":{"distance":-5}}]}]}"#, "blocks[0].steps[0].goal.distance must be 1 to"),
        (#"{"name":"p","activity":"cycling","blocks":[{"iterations":1,"steps":[{"purpose":"work","target":{"power":{"watts":[0,5000]}}}]}]}"#, "blocks[0].steps[0].target.power.watts must lie within 1...3000"),
        (#"{"name":"p","activity":"cycling","cooldown":{"target":{"heartRate":{"zone":6}}},"blocks":[]}"#, "cooldown.target.heartRate.zone must be 1 to 5"),
        (#"{"name":"p","activity":"cycling","blocks":[{"iterations":100,"steps":[{"purpose":"work"},{"purpose":"recovery"},{"purpose":"work"},{"purpose":"recovery"},{"purpose":"work"},{"purpose":"recovery"},{"purpose":"work"},{"purpose":"recovery"},{"purpose":"work"},{"purpose":"recovery"},{"purpose":"work"}]}]}"#, "expands to 1100 steps; at most 1000"),
    ]) func anInvalidPlanIsRefusedNamingWhereAndWhy(_ json: String, _ why: String) throws {
        let plan = try Self.decode(json)
        #expect { try plan.validate() } throws: { error in
            guard case StrapError.invalidOption(let message) = error else { return false }
            return message.contains(why)
        }
    }

    @Test(arguments: [
        #"{"name":"p","activity":"cycling","blocks":[{"iterations":1,"steps":[{"purpose":"work","goal":{"time":5,"distance":9}}]}]}"#,
        #"{"name":"p","activity":"cycling","blocks":[{"iterations":1,"steps":[{"purpose":"work","target":{"power":{"watts":[300,200]}}}]}]}"#,
        #"{"name":"p","activity":"cycling","blocks":[{"iterations":1,"steps":[{"purpose":"work","target":{"power":{"bpm":[1,2]}}}]}]}"#,
        #"{"name":"p","activity":"cycling","blocks":[{"iterations":1,"steps":[{"purpose":"work","target":{"power":{"watts":[1,2]},"cadence":{"rpm":[1,2]}}}]}]}"#,
        #"{"name":"p","activity":"cycling","blocks":[{"iterations":1,"steps":[{"purpose":"sprint"}]}]}"#,
        #"{"name":"p","activity":"juggling","blocks":[]}"#,
    ]) func aMalformedPlanDoesNotDecode(_ json: String) {
        #expect(throws: (any Error).self) { try Self.decode(json) }
    }

    @Test func relativeTargetsResolveAgainstTheAthlete() throws {
        let zones = try HeartRateZones(bpm: [95, 114, 133, 152, 171, 190])
        #expect(try PlanTarget.powerPercentFTP(95...105).resolved(ftp: 250) { zones } == .power(237.5...262.5))
        #expect(try PlanTarget.heartRateZone(2).resolved(ftp: nil) { zones } == .heartRate(114...133))
        #expect(try PlanTarget.heartRateZone(5).resolved(ftp: nil) { zones } == .heartRate(171...190))
        #expect(try PlanTarget.power(watts: 200...210).resolved(ftp: nil) { zones } == .power(200...210))
        #expect(throws: StrapError.noData("a %FTP target needs functionalThresholdPower in the athlete's profile")) {
            try PlanTarget.powerPercentFTP(50...60).resolved(ftp: nil) { zones }
        }
    }
}
