import Dispatch
import Synchronization

/// A part of the daemon that starts and stops with it: the store, the socket and front end,
/// the pipeline's flush, the recorder, the source, the status timer, the watchdog, the
/// signals, the notifier (docs/architecture.md lists them in order). Modelled on
/// swift-service-lifecycle's `Service`, with a synchronous start and stop.
public protocol LifecycleService: AnyObject {
    /// For the log and for errors ("store", "replay").
    var serviceName: String { get }
    /// Brings it up. Must not wait for the daemon's queue: a SIGTERM arriving meanwhile waits
    /// there for this start to finish.
    func start() throws(StartupError)
    /// Brings it down and returns once it is down (a source submits nothing more, what was
    /// buffered is written). Called once, and only after `start` succeeded.
    func stop()
}

/// Starts services in order and stops them in reverse, in one place, so no part can be
/// started without being stopped. A start that fails stops the ones already started (in
/// reverse) and throws; `stop` stops every started one (in reverse), once. A `stop` during
/// `start` waits for the service being started, stops what is up, and no further service
/// starts.
public final class ServiceGroup: @unchecked Sendable {
    public let services: [any LifecycleService]
    private let log: (@Sendable (String) -> Void)?
    /// Held while one service starts, and while `stop` takes the list.
    private let gate = DispatchSemaphore(value: 1)
    /// Set by `stop` before it waits for a service being started: no further one starts.
    private let stopRequested = Atomic<Bool>(false)
    /// Guarded by `gate`.
    private var started: [any LifecycleService] = []

    /// `log` hears "starting X" / "stopping X" (debug lines).
    public init(_ services: [any LifecycleService], log: (@Sendable (String) -> Void)? = nil) {
        self.services = services
        self.log = log
    }

    public func start() throws(StartupError) {
        for service in services {
            gate.wait()
            if stopRequested.load(ordering: .acquiring) {
                gate.signal()
                return
            }
            log?("starting \(service.serviceName)")
            do throws(StartupError) {
                try service.start()
            } catch {
                gate.signal()
                log?("\(service.serviceName) failed to start: \(error)")
                stop()
                throw error
            }
            started.append(service)
            gate.signal()
        }
    }

    /// Idempotent; returns once every started service has stopped.
    public func stop() {
        stopRequested.store(true, ordering: .releasing)
        gate.wait()
        let running = started
        started = []
        gate.signal()
        for service in running.reversed() {
            log?("stopping \(service.serviceName)")
            service.stop()
        }
    }

    /// `stop` was called (it may still be waiting for a service's start).
    public var isStopping: Bool { stopRequested.load(ordering: .acquiring) }

    /// The names of the services started and not stopped, in start order.
    public var running: [String] {
        gate.wait()
        defer { gate.signal() }
        return started.map(\.serviceName)
    }
}

/// A service made of two closures, for the daemon's glue steps.
public final class ServiceSteps: LifecycleService {
    public let serviceName: String
    private let startStep: () throws(StartupError) -> Void
    private let stopStep: () -> Void

    public init(_ name: String, start: @escaping () throws(StartupError) -> Void, stop: @escaping () -> Void) {
        serviceName = name
        startStep = start
        stopStep = stop
    }

    public func start() throws(StartupError) { try startStep() }
    public func stop() { stopStep() }
}
