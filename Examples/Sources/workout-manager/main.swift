// HealthKit's workout session and live builder: start a cycling session, read the builder's live
// heart-rate statistics, lap, pause, resume, end, and print the workout the store saved. With
// `--mirror` it is the other side (a companion's `workoutSessionMirroringStartHandler`): it finds
// the running session through `workout.watch`, mirrors it by id, reads it, and sends the
// primary a message (`sendToRemoteWorkoutSession`), which the primary prints before it ends.
//   workout-manager [--socket PATH] [--wait SECONDS]     the primary
//   workout-manager --mirror [--socket PATH] [--session ID]
import FoundationEssentials
import StrapKit
import ExampleSupport

lineBufferedOutput()
let options = Options()
let store = StrapStore(socket: options.socket)
let wait = Double(options.value("wait") ?? "20") ?? 20

func heartRate(_ builder: WorkoutBuilder) async throws -> String {
    guard let hr = try await builder.statistics(for: .heartRate), hr.count > 0 else { return "heart rate: no samples yet" }
    return "heart rate: average \(one(hr.average)) min \(one(hr.minimum)) max \(one(hr.maximum)) bpm over \(hr.count) samples"
}

func pause(_ seconds: Double) async throws { try await Task.sleep(nanoseconds: UInt64(seconds * 1_000_000_000)) }

func runPrimary() async throws {
    let session = WorkoutSession(store: store, configuration: WorkoutConfiguration(activityType: .cycling, locationType: .indoor))
    // Prepared first (HealthKit's prepare(), strapd creates the session), so the feeds are open
    // before start: no state change or message is missed.
    try await session.prepare()
    guard let id = session.id else { fail("workout-manager: prepared without a session id") }
    let states = try await session.states()
    let messages = try await session.messages()
    let stateLog = Task {
        for try await change in states { print("state \(change.from.rawValue) -> \(change.to.rawValue)") }
    }
    try await session.start()
    print("session \(id) started: cycling, indoor")
    let firstMessage = Task { () -> WorkoutSession.Message? in
        for try await message in messages { return message }
        return nil
    }
    try await pause(2)
    print(try await heartRate(session.builder))
    try await session.lap(metadata: ["split": "1"])
    print("lap 1 at \(one(try await session.builder.elapsedTime())) s")
    try await pause(1)
    try await session.pause()
    try await pause(1)
    try await session.resume()
    print(try await heartRate(session.builder))
    print("waiting up to \(Int(wait)) s for a message from a mirror")
    let message = try await withDeadline(wait, "a mirror's message") { try await firstMessage.value }
    if let message { print("message from mirror: \(json(message.payload))") }
    let workout = try await session.end()
    try await pause(0.2)   // lets the state log print the last change
    stateLog.cancel()
    print("saved workout \(workout.uuid): \(workout.activityType), \(workout.laps.count) laps, \(workout.events.count) events, \(Double(workout.end - workout.start) / 1000) s")
    let shown = ["elapsedTime", "heartRateAverage", "heartRateMaximum", "distance", "activeEnergy"]
    print("  " + shown.compactMap { key in workout.summary[key].map { "\(key) \(one($0))" } }.joined(separator: ", "))
}

func runMirror() async throws {
    let (open, announcements) = try await store.watchWorkoutSessions()
    var candidates = options.value("session").flatMap(UUID.init(uuidString:)).map { [$0] } ?? open
    if candidates.isEmpty {
        print("no session open: waiting for one")
        let created = try await withDeadline(wait, "a workout session") { () -> UUID? in
            for try await announcement in announcements { if case .created(let session, _) = announcement { return session } }
            return nil
        }
        candidates = created.map { [$0] } ?? []
    }
    // `open` includes sessions that ended lately: mirror one that is still live.
    for id in candidates {
        let mirror = WorkoutSession(mirroring: id, store: store)
        let state = try await mirror.state()
        guard [.running, .paused].contains(state) else { continue }
        print("mirroring session \(id), \(state.rawValue), elapsed \(one(try await mirror.builder.elapsedTime())) s")
        print(try await heartRate(mirror.builder))
        try await mirror.send(.object(["text": .string("hello from the mirror"), "pid": .int(Int64(ProcessInfo.processInfo.processIdentifier))]))
        print("sent a message to session \(id)")
        return
    }
    fail("workout-manager --mirror: no live session to mirror")
}

do {
    try await options.flag("mirror") ? runMirror() : runPrimary()
} catch {
    fail("workout-manager: \(error)")
}
