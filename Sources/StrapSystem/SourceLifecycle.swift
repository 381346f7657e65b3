import Dispatch
import Synchronization

/// Start/stop bookkeeping for a dispatch source owned by an object that may be started,
/// stopped, or dropped in any order from any thread. libdispatch traps when an inactive
/// or suspended source is released, so an unstarted source is cancelled and then
/// activated, which runs its cancel handler and lets it go.
final class SourceLifecycle: Sendable {
    private enum State { case created, running, stopped }
    private let state = Mutex(State.created)
    private nonisolated(unsafe) let source: any DispatchSourceProtocol

    init(_ source: any DispatchSourceProtocol) { self.source = source }

    func start() {
        if state.withLock({ s in defer { if s == .created { s = .running } }; return s == .created }) {
            source.resume()
        }
    }

    func stop() {
        let previous = state.withLock { s in defer { s = .stopped }; return s }
        switch previous {
        case .created: source.cancel(); source.resume()
        case .running: source.cancel()
        case .stopped: break
        }
    }

    deinit { stop() }
}
