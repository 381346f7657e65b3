import Dispatch
import StrapModel

/// The beats a strap sends with its next packet (docs/workouts.md "The saved workout"): a
/// strap reports RR intervals after the beat that closes them, so the beats just before a
/// session's end reach strapd with the packet after it, up to about a second later. `end`
/// waits, bounded, until each of the session's heart-rate devices has delivered a heartbeat
/// series reaching the workout's end, so the saved HRV counts the same beats `workout.hrv`
/// reads afterwards.
///
/// Not thread-safe: `WorkoutService` uses it under its lock.
struct EndBeatWait {
    /// One `end` waiting; the ingest side signals it once every device it waits for is past
    /// the end.
    final class Waiter: @unchecked Sendable {
        let end: Millis
        /// Guarded by the service's lock.
        var missing: Set<String>
        let arrived = DispatchSemaphore(value: 0)

        init(end: Millis, missing: Set<String>) {
            self.end = end
            self.missing = missing
        }
    }

    /// The newest beat (a series' end) per device seen while any session was open.
    private var newestBeat: [String: Millis] = [:]
    private var waiters: [Waiter] = []

    /// A device whose newest beat is older than this before the end has gone quiet (out of
    /// contact, disconnected, sends no RR): `end` does not wait for it.
    static let quietAfter: Millis = 5_000

    /// On the ingest side, for every heartbeat series (while a session is open).
    mutating func observe(device: String, beatsUntil end: Millis) {
        if end > newestBeat[device] ?? .min { newestBeat[device] = end }
        guard !waiters.isEmpty else { return }
        waiters.removeAll { w in
            guard end >= w.end, w.missing.remove(device) != nil, w.missing.isEmpty else { return false }
            w.arrived.signal()
            return true
        }
    }

    /// The devices of `workout` that sent beats lately but none reaching its end yet; nil when
    /// there is nothing to wait for.
    mutating func waiter(for workout: Workout) -> Waiter? {
        let missing = workout.deviceIDs.filter { d in
            guard let newest = newestBeat[d] else { return false }
            return newest < workout.end && newest >= workout.end - Self.quietAfter
        }
        guard !missing.isEmpty else { return nil }
        let w = Waiter(end: workout.end, missing: Set(missing))
        waiters.append(w)
        return w
    }

    /// The wait timed out (or ended): stop tracking it.
    mutating func remove(_ w: Waiter) {
        waiters.removeAll { $0 === w }
    }
}
