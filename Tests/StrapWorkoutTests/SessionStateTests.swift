import Testing
import Foundation
import StrapModel
@testable import StrapWorkout

/// Every state × every command, on the session value and through the engine.
@Suite struct SessionStateTests {
    static let config = WorkoutConfiguration(activityType: .running, locationType: .outdoor, deviceIDs: ["dev-h10"])

    static let commands: [WorkoutCommand] = [
        .prepare(deviceIDs: ["dev-h10"]), .start(deviceIDs: ["dev-h10"], profile: nil), .pause, .resume, .stop,
        .lap(metadata: ["n": "1"]), .marker(metadata: ["note": "gel"]), .end, .discard,
    ]

    /// The legal commands per state and the state they lead to; "discard" drops the session.
    static let legal: [WorkoutSessionState: [String: WorkoutSessionState?]] = [
        .notStarted: ["prepare": .prepared, "start": .running, "discard": nil],
        .prepared: ["start": .running, "discard": nil],
        .running: ["pause": .paused, "stop": .stopped, "end": .ended, "lap": .running, "marker": .running, "discard": nil],
        .paused: ["resume": .running, "stop": .stopped, "end": .ended, "lap": .paused, "marker": .paused, "discard": nil],
        .stopped: ["end": .ended, "discard": nil],
        .ended: [:],
    ]

    /// The commands that bring a new session to `state`.
    static func path(to state: WorkoutSessionState) -> [WorkoutCommand] {
        let start = WorkoutCommand.start(deviceIDs: ["dev-h10"], profile: nil)
        switch state {
        case .notStarted: return []
        case .prepared: return [.prepare(deviceIDs: ["dev-h10"])]
        case .running: return [start]
        case .paused: return [start, .pause]
        case .stopped: return [start, .stop]
        case .ended: return [start, .end]
        }
    }

    static func session(in state: WorkoutSessionState) throws -> WorkoutSession {
        var s = WorkoutSession(id: UUID(), configuration: config, created: W.t0)
        for (i, c) in path(to: state).enumerated() { try s.perform(c, at: W.t0 + Millis(i + 1) * 1000) }
        #expect(s.state == state)
        return s
    }

    @Test(arguments: WorkoutSessionState.allCases)
    func everyCommandOnTheSessionValue(state: WorkoutSessionState) throws {
        for command in Self.commands {
            var s = try Self.session(in: state)
            let before = s
            if let target = Self.legal[state]![command.name] {
                let entry = try s.perform(command, at: W.t0 + 60_000)
                if command == .discard {
                    #expect(entry == nil)
                    #expect(s == before, "discard is checked here; the engine drops the session")
                } else {
                    #expect(s.state == target!, "\(state) + \(command.name)")
                    #expect(entry?.time == W.t0 + 60_000)
                }
            } else {
                #expect(throws: StrapError.self, "\(state) + \(command.name) must be refused") {
                    try s.perform(command, at: W.t0 + 60_000)
                }
                do { try s.perform(command, at: W.t0 + 60_000) } catch {
                    #expect(error.code == "invalidTransition")
                    #expect(error.description.contains(s.id.uuidString), "the message names the session")
                    #expect(error.description.contains(state.rawValue) && error.description.contains(command.name))
                }
                #expect(s == before, "a refused command changes nothing")
            }
        }
    }

    @Test(arguments: WorkoutSessionState.allCases)
    func everyCommandThroughTheEngine(state: WorkoutSessionState) throws {
        for command in Self.commands {
            let f = EngineFixture()
            let e = f.engine
            let id = try e.create(Self.config).id
            for c in Self.path(to: state) {
                f.clock.advance(seconds: 1)
                switch c {
                case .prepare: try e.prepare(id, connectedDevices: [])
                case .start: try e.start(id, connectedDevices: [])
                case .pause: try e.pause(id)
                case .stop: try e.stop(id)
                case .end: try e.end(id)
                default: Issue.record("unexpected path command")
                }
            }
            f.clock.advance(seconds: 10)
            let before = try e.get(id).session
            let journalBefore = f.journal.entries
            func issue() throws {
                switch command {
                case .prepare: try e.prepare(id, connectedDevices: ["dev-h10"])
                case .start: try e.start(id, connectedDevices: ["dev-h10"])
                case .pause: try e.pause(id)
                case .resume: try e.resume(id)
                case .stop: try e.stop(id)
                case .lap(let m): try e.lap(id, metadata: m)
                case .marker(let m): try e.marker(id, metadata: m)
                case .end: try e.end(id)
                case .discard: try e.discard(id)
                }
            }
            if let target = Self.legal[state]![command.name] {
                try issue()
                if let target {
                    #expect(try e.get(id).session.state == target, "\(state) + \(command.name)")
                } else {
                    #expect(throws: StrapError.notFound("no workout session \(id)")) { try e.get(id) }
                    #expect(f.journal.entries[id] == nil, "a discarded session leaves no journal")
                }
            } else {
                do {
                    try issue()
                    Issue.record("\(state) + \(command.name) must be refused")
                } catch let error as StrapError {
                    #expect(error.code == "invalidTransition", "\(state) + \(command.name): \(error)")
                }
                #expect(try e.get(id).session == before)
                #expect(f.journal.entries == journalBefore, "nothing journaled")
            }
        }
    }

    @Test func endFromPreparedSaysToDiscard() throws {
        var s = try Self.session(in: .prepared)
        do { try s.perform(.end, at: W.t0 + 5000); Issue.record("must throw") } catch {
            #expect(error.code == "invalidTransition")
            #expect(error.description.contains("discard it"))
        }
    }

    @Test func unknownSessionIsNotFound() {
        let e = EngineFixture().engine
        let id = UUID()
        #expect(throws: StrapError.notFound("no workout session \(id)")) { try e.pause(id) }
        #expect(throws: StrapError.notFound("no workout session \(id)")) { try e.end(id) }
        #expect(throws: StrapError.notFound("no workout session \(id)")) { try e.statistics(id) }
    }

    @Test func eventTimesNeverGoBackwards() throws {
        var s = try Self.session(in: .running)
        try s.perform(.pause, at: W.t0 - 50_000)  // the clock stepped back
        #expect(s.events.last?.time == W.t0 + 1000, "taken as the previous event's time")
    }

    @Test func markerMetadataIsBounded() throws {
        var s = try Self.session(in: .running)
        let before = s
        let many = Dictionary(uniqueKeysWithValues: (0..<17).map { ("k\($0)", "v") })
        #expect(throws: StrapError.invalidOption("marker metadata has 17 keys; at most 16 are allowed")) {
            try s.perform(.marker(metadata: many), at: W.t0 + 9000)
        }
        let big = ["note": String(repeating: "x", count: 4093)]
        #expect(throws: StrapError.invalidOption("lap metadata takes 4097 bytes; at most 4096 are allowed")) {
            try s.perform(.lap(metadata: big), at: W.t0 + 9000)
        }
        #expect(s == before)
        try s.perform(.marker(metadata: ["note": String(repeating: "x", count: 4092)]), at: W.t0 + 9000)
        #expect(s.events.last?.kind == "marker")
    }

    @Test func configurationIsValidated() {
        let e = EngineFixture().engine
        var c = Self.config
        c.athlete = ""
        #expect(throws: StrapError.self) { try e.create(c) }
        c = Self.config
        c.deviceIDs = ["a", "a"]
        #expect(throws: StrapError.invalidOption("deviceIDs names a twice")) { try e.create(c) }
        #expect(e.list().isEmpty)
        #expect(throws: StrapError.invalidOption("unknown activityType 'jogging'; known: "
            + ActivityType.allCases.map(\.rawValue).joined(separator: ", "))) {
            try JSONDecoder().decode(WorkoutConfiguration.self, from: Data(#"{"activityType":"jogging"}"#.utf8))
        }
        #expect(throws: StrapError.invalidOption("locationType 'moon' is not one of indoor, outdoor, unknown")) {
            try JSONDecoder().decode(WorkoutConfiguration.self, from: Data(#"{"activityType":"cycling","locationType":"moon"}"#.utf8))
        }
        let decoded = try? JSONDecoder().decode(WorkoutConfiguration.self, from: Data(#"{"activityType":"cycling"}"#.utf8))
        #expect(decoded == WorkoutConfiguration(activityType: .cycling, locationType: .unknown, athlete: "default"))
    }
}
