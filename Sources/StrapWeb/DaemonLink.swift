import Dispatch
import StrapKit
import Synchronization

public enum DaemonLinkError: Error, Equatable, CustomStringConvertible {
    case strapKit(StrapKitError)
    /// strapd did not answer `op` within the time an HTTP client is kept waiting.
    case timedOut(op: String, seconds: Double)

    public var description: String {
        switch self {
        case .strapKit(let e): "strapd: \(e)"
        case .timedOut(let op, let seconds): "strapd did not answer \(op) within \(seconds) s"
        }
    }
}

/// strapd as libmicrohttpd's connection threads see it: StrapKit's asynchronous calls made
/// synchronous, with a deadline. The one `StrapStore` connects again by itself after strapd
/// restarts (a few tries per call, so a call fails soon while strapd is down).
public final class DaemonLink: Sendable {
    public let store: StrapStore
    public let timeout: Double

    public init(socket: String, timeout: Double = 5) {
        store = StrapStore(socket: socket, reconnect: .backoff(initial: 0.1, maximum: 1, attempts: 3))
        self.timeout = timeout
    }

    /// One request; blocks the calling thread (a connection's, never the cooperative pool's).
    public func request(_ op: String, _ params: JSONObject = [:]) throws(DaemonLinkError) -> JSONObject {
        try run(op) { store in try await store.request(op, params) }
    }

    /// Any StrapKit call (`what` names it in a timeout's message), made synchronous the same way.
    /// `longer` seconds are added to the deadline for a call that takes time by design (a scan).
    public func run<T: Sendable>(_ what: String, longer: Double = 0,
                                 _ call: @escaping @Sendable (StrapStore) async throws -> T) throws(DaemonLinkError) -> T {
        let outcome = Mutex<Result<T, DaemonLinkError>?>(nil)
        let done = DispatchSemaphore(value: 0)
        let store = store
        let task = Task {
            let result: Result<T, DaemonLinkError>
            do {
                result = .success(try await call(store))
            } catch let error as StrapKitError {
                result = .failure(.strapKit(error))
            } catch {
                result = .failure(.strapKit(.malformedReply("\(error)")))
            }
            outcome.withLock { $0 = result }
            done.signal()
        }
        if done.wait(timeout: .now() + timeout + longer) == .timedOut {
            task.cancel()
            throw .timedOut(op: what, seconds: timeout + longer)
        }
        return try outcome.withLock { $0! }.get()
    }
}
