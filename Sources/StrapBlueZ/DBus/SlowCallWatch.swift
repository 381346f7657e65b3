import Dispatch

/// Names D-Bus calls that stay unanswered: a bluetoothd that stopped answering (seen in the
/// lab: a `Pair` that hung 30 s with nothing logged) must show in the log as the call it did
/// not answer, on which object, not as a silent wait. Confined to the bus queue. Costs nothing
/// while no call is out: the timer is armed only while one is.
final class SlowCallWatch: @unchecked Sendable {
    /// A call unanswered this long is logged (once), and again when its answer comes.
    static let threshold: DispatchTimeInterval = .seconds(5)

    private struct Call {
        let what: String
        let started: DispatchTime
        var warned = false
    }

    private let queue: DispatchQueue
    private var calls: [UInt64: Call] = [:]
    private var nextID: UInt64 = 0
    private var timer: DispatchSourceTimer?
    private let threshold: DispatchTimeInterval
    private let warn: @Sendable (String) -> Void

    init(queue: DispatchQueue, threshold: DispatchTimeInterval = SlowCallWatch.threshold,
         warn: @escaping @Sendable (String) -> Void = { BusLog.warning($0) }) {
        self.queue = queue
        self.threshold = threshold
        self.warn = warn
    }

    /// A call went out; returns its token for `answered`.
    func sent(_ what: String) -> UInt64 {
        dispatchPrecondition(condition: .onQueue(queue))
        nextID += 1
        calls[nextID] = Call(what: what, started: .now())
        if timer == nil { arm(after: threshold) }
        return nextID
    }

    func answered(_ id: UInt64) {
        dispatchPrecondition(condition: .onQueue(queue))
        guard let call = calls.removeValue(forKey: id) else { return }
        if call.warned { warn("D-Bus: \(call.what) answered after \(Self.seconds(since: call.started)) s") }
        if calls.isEmpty { timer?.cancel(); timer = nil }
    }

    var pending: [String] { calls.values.map(\.what) }

    func forgetAll() {
        calls.removeAll()
        timer?.cancel()
        timer = nil
    }

    private func arm(after delay: DispatchTimeInterval) {
        let t = DispatchSource.makeTimerSource(queue: queue)
        t.setEventHandler { [weak self] in self?.check() }
        t.schedule(deadline: .now() + delay, repeating: .seconds(1))
        t.resume()
        timer = t
    }

    private func check() {
        let now = DispatchTime.now()
        for (id, call) in calls where !call.warned && call.started + threshold <= now {
            calls[id]?.warned = true
            warn("D-Bus: \(call.what) unanswered for \(Self.seconds(since: call.started)) s (bluetoothd busy or stuck?)")
        }
    }

    static func seconds(since t: DispatchTime) -> Double {
        (Double(DispatchTime.now().uptimeNanoseconds - t.uptimeNanoseconds) / 1e8).rounded() / 10
    }
}
