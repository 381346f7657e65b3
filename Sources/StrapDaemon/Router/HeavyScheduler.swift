import Dispatch

/// Where requests that scan the store run (docs/protocol.md, *Fair service*). Confined to the
/// server queue, where every connection lives.
///
/// A connection has at most one such request running; its others wait in its own FIFO. The
/// connections with work waiting take turns (round robin), and at most `limit` run at once
/// daemon-wide, one fewer than the cores: libdispatch bounds a QoS class's thread pool by the
/// core count, so without that bound a few heavy clients could take every thread of it and
/// hold up a `status`, a device command or the pipeline's own hops. Everything runs at the
/// default QoS: libdispatch gives each class its own nice value and sets it per worker
/// thread, and a thread created by a lower class's worker inherits that one's nice, which an
/// unprivileged service may not lower again; a bound on how many run is the simpler lever.
final class HeavyScheduler: @unchecked Sendable {
    typealias Work = @Sendable () -> @Sendable () -> Void

    let limit: Int
    private let worker: DispatchQueue
    private let serverQueue: DispatchQueue
    private var running = 0
    /// Connections with work waiting and none running, in turn order.
    private var ready: [ClientSession] = []

    init(worker: DispatchQueue, serverQueue: DispatchQueue, limit: Int) {
        self.worker = worker
        self.serverQueue = serverQueue
        self.limit = max(1, limit)
    }

    func submit(_ work: @escaping Work, for session: ClientSession) {
        dispatchPrecondition(condition: .onQueue(serverQueue))
        session.heavyWaiting.append(work)
        if !session.heavyRunning, session.heavyWaiting.count == 1 { ready.append(session) }
        startWhatFits()
    }

    private func startWhatFits() {
        while running < limit, !ready.isEmpty {
            let session = ready.removeFirst()
            guard !session.closed, !session.heavyWaiting.isEmpty else { continue }
            let work = session.heavyWaiting.removeFirst()
            session.heavyRunning = true
            running += 1
            worker.async { [self] in
                let done = work()
                serverQueue.async { [self] in
                    running -= 1
                    session.heavyRunning = false
                    done()
                    if !session.closed, !session.heavyWaiting.isEmpty { ready.append(session) }
                    startWhatFits()
                }
            }
        }
    }
}
