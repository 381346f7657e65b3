import StrapOS
import StrapWire

/// Why a connection ended.
public enum CloseReason: Sendable, Equatable {
    /// The client closed (EOF) and everything queued for it was sent, or the handler
    /// called `finish()` and the output drained.
    case finished
    /// The handler called `close()`.
    case closedByHandler
    /// The peer vanished (EPIPE/ECONNRESET) or another I/O error occurred.
    case failed(SystemCallError)
    case serverStopped
}

/// What the daemon implements to serve connections. The server knows framing, buffers
/// and credentials, nothing about operations. Every method is called on the server's
/// queue; the handler may call `Connection` methods right there, or hop back to
/// `connection.queue` later (e.g. with a reply computed elsewhere).
///
/// Re-entrancy: `connectionOutputHighWater` is called from inside the `write` that
/// crossed the mark (so the handler can stop producing at once), and `connectionClosed`
/// from inside `write`/`finish`/`close` when they end the connection. Nothing else is
/// called from inside a handler's own call: in particular the next line never arrives
/// while the handler is still in `write`.
public protocol ConnectionHandler: AnyObject, Sendable {
    /// A client connected; `connection.peer` holds its credentials.
    func connectionOpened(_ connection: Connection)
    /// One complete NDJSON line, without its newline, at most 1 MiB. Oversized lines never
    /// arrive here: the server answers them with `badRequest` itself.
    func connection(_ connection: Connection, received line: [UInt8])
    /// The client shut down its write side; no more lines will come. Call `finish()` once
    /// the last reply is written (the default finishes at once, right for handlers that
    /// reply synchronously).
    func connectionInputEnded(_ connection: Connection)
    /// Buffered output reached `OutputLimits.highWater`; reading from this client is paused.
    func connectionOutputHighWater(_ connection: Connection)
    /// Buffered output fell back to `lowWater`; reading resumed.
    func connectionOutputDrained(_ connection: Connection)
    /// The connection is gone; its fd is closed or being closed. Called exactly once.
    func connectionClosed(_ connection: Connection, reason: CloseReason)
    /// accept failed for a reason other than "nobody waiting" (EMFILE, ENFILE, ENOBUFS...).
    /// The server pauses accepting briefly and retries by itself. Called once per episode:
    /// the first failure after a success.
    func serverAcceptFailed(_ error: SystemCallError)
    /// accept works again after `failures` failed attempts over `seconds`.
    func serverAcceptRecovered(from error: SystemCallError, failures: Int, seconds: Double)
}

extension ConnectionHandler {
    public func serverAcceptRecovered(from error: SystemCallError, failures: Int, seconds: Double) {}
    public func connectionOpened(_ connection: Connection) {}
    public func connectionInputEnded(_ connection: Connection) { connection.finish() }
    public func connectionOutputHighWater(_ connection: Connection) {}
    public func connectionOutputDrained(_ connection: Connection) {}
    public func serverAcceptFailed(_ error: SystemCallError) {}
}
