import Testing
import Foundation
import StrapModel
@testable import StrapWorkout

/// The JSON shapes other code and files rely on.
@Suite struct JournalCodingTests {
    func json<T: Encodable>(_ v: T) throws -> String {
        let enc = JSONEncoder()
        enc.outputFormatting = .sortedKeys
        return String(decoding: try enc.encode(v), as: UTF8.self)
    }

    static let id = UUID(uuidString: "6F9619FF-8B86-4D11-B42D-00C04FC964FF")!

    @Test func entriesHaveStableJSON() throws {
        let config = WorkoutConfiguration(activityType: .cycling, locationType: .indoor, athlete: "ana",
                                          deviceIDs: ["dev-csc"], metadata: ["bike": "trainer"])
        let cases: [(SessionJournalEntry, String)] = [
            (.created(session: Self.id, time: W.t0, configuration: config),
             #"{"configuration":{"activityType":"cycling","athlete":"ana","deviceIDs":["dev-csc"],"locationType":"indoor","metadata":{"bike":"trainer"}},"kind":"created","session":"6F9619FF-8B86-4D11-B42D-00C04FC964FF","time":"2026-01-01T00:00:00.000Z"}"#),
            (.prepared(time: W.t0 + 1, deviceIDs: ["dev-csc"]),
             #"{"deviceIDs":["dev-csc"],"kind":"prepared","time":"2026-01-01T00:00:00.001Z"}"#),
            (.started(time: W.t0 + 2000, deviceIDs: ["dev-csc"], profile: AthleteProfile(weight: 61.5)),
             #"{"deviceIDs":["dev-csc"],"kind":"started","profile":{"weight":61.5},"time":"2026-01-01T00:00:02.000Z"}"#),
            (.started(time: W.t0 + 2000, deviceIDs: [], profile: nil),
             #"{"deviceIDs":[],"kind":"started","time":"2026-01-01T00:00:02.000Z"}"#),
            (.paused(time: W.t0 + 3000), #"{"kind":"paused","time":"2026-01-01T00:00:03.000Z"}"#),
            (.resumed(time: W.t0 + 4000), #"{"kind":"resumed","time":"2026-01-01T00:00:04.000Z"}"#),
            (.lap(time: W.t0 + 5000, metadata: [:]), #"{"kind":"lap","metadata":{},"time":"2026-01-01T00:00:05.000Z"}"#),
            (.marker(time: W.t0 + 6000, metadata: ["note": "gel"]),
             #"{"kind":"marker","metadata":{"note":"gel"},"time":"2026-01-01T00:00:06.000Z"}"#),
            (.stopped(time: W.t0 + 7000), #"{"kind":"stopped","time":"2026-01-01T00:00:07.000Z"}"#),
            (.ended(time: W.t0 + 8000), #"{"kind":"ended","time":"2026-01-01T00:00:08.000Z"}"#),
        ]
        for (entry, expected) in cases {
            #expect(try json(entry) == expected)
            #expect(try JSONDecoder().decode(SessionJournalEntry.self, from: Data(expected.utf8)) == entry)
        }
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(SessionJournalEntry.self, from: Data(#"{"kind":"teleported","time":"2026-01-01T00:00:08.000Z"}"#.utf8))
        }
    }

    @Test func liveStatisticsKeys() throws {
        var b = LiveWorkoutBuilder()
        b.apply(.started(time: W.t0, deviceIDs: ["dev-h10"], profile: AthleteProfile(maximumHeartRate: 200)))
        b.add(W.hr(100, W.t0 + 1000))
        b.add(W.hr(120, W.t0 + 2000))
        let st = b.statistics(session: Self.id, state: .running, at: W.t0 + 2000)
        let text = try json(st)
        #expect(text == #"{"activeEnergyReason":"no energy expended from the heart-rate sensor, and the Keytel estimate needs biologicalSex, weight, dateOfBirth in the profile","elapsedTime":2,"heartRateAverage":110,"heartRateMaximum":120,"heartRateMinimum":100,"heartRateMostRecent":120,"heartRateSamples":2,"heartRateZones":{"bpm":[100,120,140,160,180,200],"isDefaultScheme":true,"maximumHeartRate":{"estimated":false,"value":200},"scheme":{"bounds":[50,60,70,80,90,100],"method":"percentMaxHR"}},"laps":[{"elapsedTime":2,"heartRateAverage":110,"heartRateMaximum":120,"heartRateMinimum":100,"heartRateMostRecent":120,"heartRateSamples":2,"index":1,"start":"2026-01-01T00:00:00.000Z","timeInZones":[0,1,1,0,0,0]}],"session":"6F9619FF-8B86-4D11-B42D-00C04FC964FF","start":"2026-01-01T00:00:00.000Z","state":"running","time":"2026-01-01T00:00:02.000Z","timeInZones":[0,1,1,0,0,0]}"#)
        #expect(try JSONDecoder().decode(LiveStatistics.self, from: Data(text.utf8)) == st)
    }

    @Test func workoutsStoredBeforeTheEngineStillDecode() throws {
        let old = #"{"activityType":"running","anchor":7,"deviceIDs":["dev-h10"],"end":"2026-01-01T01:00:00.000Z","events":[],"laps":[],"locationType":"outdoor","metadata":{},"start":"2026-01-01T00:00:00.000Z","summary":{"distance":10000},"type":"workout","uuid":"6F9619FF-8B86-4D11-B42D-00C04FC964FF"}"#
        let w = try JSONDecoder().decode(Workout.self, from: Data(old.utf8))
        #expect(w.sessionID == nil && w.athlete == nil && w.info == [:] && w.summary == ["distance": 10000])
        var new = w
        new.sessionID = Self.id
        new.athlete = "ana"
        new.info = ["activeEnergySource": "sensor"]
        let text = try json(new)
        #expect(text.contains(#""athlete":"ana""#) && text.contains(#""info":{"activeEnergySource":"sensor"}"#)
            && text.contains(#""sessionID":"6F9619FF-8B86-4D11-B42D-00C04FC964FF""#))
        #expect(try JSONDecoder().decode(Workout.self, from: Data(text.utf8)) == new)
    }
}
