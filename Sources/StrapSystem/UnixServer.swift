import Dispatch
import Glibc
import StrapOS
import StrapWire

public struct ServerConfiguration: Sendable {
    public var maximumLineLength: Int
    public var outputLimits: OutputLimits
    /// Connections beyond this are accepted, told `busy`, and closed.
    public var maximumConnections: Int
    /// After EMFILE/ENFILE/ENOBUFS/ENOMEM the accept source is paused this long, so a
    /// level-triggered listener does not spin while the process is out of descriptors.
    public var acceptBackoff: DispatchTimeInterval
    public var readChunkSize: Int

    public init(maximumLineLength: Int = LineDecoder.defaultMaximumLineLength,
                outputLimits: OutputLimits = OutputLimits(),
                maximumConnections: Int = 4096,
                acceptBackoff: DispatchTimeInterval = .milliseconds(100),
                readChunkSize: Int = 64 * 1024) {
        self.maximumLineLength = maximumLineLength
        self.outputLimits = outputLimits
        self.maximumConnections = maximumConnections
        self.acceptBackoff = acceptBackoff
        self.readChunkSize = readChunkSize
    }
}

/// The unix socket server: a DispatchSource accept loop over a `UnixListener`, and one
/// `Connection` per client, all on one serial queue.
public final class UnixServer: @unchecked Sendable {
    public let queue: DispatchQueue
    public let listener: UnixListener
    let syscalls: Syscalls
    private let configuration: ServerConfiguration
    private(set) var handler: (any ConnectionHandler)?
    private var acceptSource: DispatchSourceRead?
    private var acceptSuspended = false
    /// The accept failures since the last success: the first error, how many, since when.
    private var acceptFailures: (error: SystemCallError, count: Int, since: DispatchTime)?
    private var connections: [UInt64: Connection] = [:]
    private var nextID: UInt64 = 1
    private var stopped = false
    /// One read buffer shared by all connections: reads happen one at a time on `queue`.
    var scratch: [UInt8]

    public init(listener: UnixListener, handler: any ConnectionHandler,
                configuration: ServerConfiguration = ServerConfiguration(),
                syscalls: Syscalls = .live,
                queue: DispatchQueue = DispatchQueue(label: "strapd.server")) {
        self.listener = listener
        self.handler = handler
        self.configuration = configuration
        self.syscalls = syscalls
        self.queue = queue
        self.scratch = [UInt8](repeating: 0, count: configuration.readChunkSize)
    }

    /// Starts accepting. Safe to call from any queue.
    public func start() {
        queue.async { [self] in
            guard !stopped, acceptSource == nil else { return }
            let source = DispatchSource.makeReadSource(fileDescriptor: listener.fd.rawValue, queue: queue)
            source.setEventHandler { @Sendable [weak self] in self?.acceptPending() }
            acceptSource = source
            source.resume()
        }
    }

    /// Stops accepting, closes every connection (reason `.serverStopped`) and the listener.
    /// `completion` runs on `queue` when done.
    public func stop(completion: (@Sendable () -> Void)? = nil) {
        queue.async { [self] in
            guard !stopped else { completion?(); return }
            stopped = true
            for connection in Array(connections.values) { connection.stop() }
            handler = nil
            guard let acceptSource else {
                listener.close()
                completion?()
                return
            }
            self.acceptSource = nil
            if acceptSuspended { acceptSource.resume() }
            // The listener closes once libdispatch has let go of it, and `completion` waits
            // for that: a caller told "stopped" before the close could open a file that gets
            // the same number and have it closed under it (a daemon restarted in one process).
            let listener = self.listener
            acceptSource.setCancelHandler { @Sendable in
                listener.close()
                completion?()
            }
            acceptSource.cancel()
        }
    }

    /// Number of open connections (on `queue`).
    public var connectionCount: Int {
        dispatchPrecondition(condition: .onQueue(queue))
        return connections.count
    }

    private func acceptPending() {
        dispatchPrecondition(condition: .onQueue(queue))
        while !stopped {
            let fd: FileDescriptor
            do {
                guard let accepted = try syscalls.accept(listener.fd) else { endFailureEpisode(); return }
                fd = accepted
            } catch {
                // Out of descriptors the retry comes every backoff: reported once per
                // episode, not ten times a second.
                if let episode = acceptFailures {
                    acceptFailures = (episode.error, episode.count + 1, episode.since)
                } else {
                    acceptFailures = (error, 1, DispatchTime.now())
                    handler?.serverAcceptFailed(error)
                }
                backOff()
                return
            }
            endFailureEpisode()
            admit(fd)
        }
    }

    private func endFailureEpisode() {
        guard let episode = acceptFailures else { return }
        acceptFailures = nil
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - episode.since.uptimeNanoseconds) / 1e9
        handler?.serverAcceptRecovered(from: episode.error, failures: episode.count, seconds: seconds)
    }

    private func admit(_ fd: FileDescriptor) {
        guard connections.count < configuration.maximumConnections else {
            let busy = Reply.failure(id: nil, error: WireError(.busy, "too many connections (\(configuration.maximumConnections))"))
            _ = busy.withUnsafeBytes { try? syscalls.send(fd, from: $0) }
            try? syscalls.close(fd)
            return
        }
        let peer: PeerIdentity
        do {
            peer = try PeerCredentials.of(fd)
        } catch {
            // Without credentials there is no access decision to make; drop the client.
            try? syscalls.close(fd)
            return
        }
        let connection = Connection(id: nextID, fd: fd, peer: peer, server: self, configuration: configuration)
        nextID += 1
        connections[connection.id] = connection
        connection.start()
        handler?.connectionOpened(connection)
    }

    private func backOff() {
        guard let acceptSource, !acceptSuspended else { return }
        acceptSuspended = true
        acceptSource.suspend()
        queue.asyncAfter(deadline: .now() + configuration.acceptBackoff) { [weak self] in
            guard let self, !self.stopped, self.acceptSuspended else { return }
            self.acceptSuspended = false
            self.acceptSource?.resume()
        }
    }

    func connectionDidClose(_ connection: Connection, reason: CloseReason) {
        dispatchPrecondition(condition: .onQueue(queue))
        guard connections.removeValue(forKey: connection.id) != nil else { return }
        handler?.connectionClosed(connection, reason: reason)
    }
}
