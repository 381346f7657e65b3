import CMosquittoLoader
import Dispatch
import Glibc

/// A connected `MosquittoClient` serviced from the publisher's queue (libmosquitto's
/// external-loop interface): a read source on its socket, and a write source resumed only
/// while libmosquitto has bytes the socket would not take at once. Every callback and every
/// handler runs on `queue`; no thread of libmosquitto's own exists.
final class MosquittoConnection {
    let client: MosquittoClient
    private let read: DispatchSourceRead
    private let write: DispatchSourceWrite
    private var writing = false
    /// Whether the read source is resumed. While the publisher is caught up it reads the
    /// socket on its tick instead (`watchReads(false)`, `readNow`).
    private(set) var watchingReads = true
    private var closed = false

    /// `readable` runs after libmosquitto read what arrived (its callbacks have run);
    /// `failed` gets the `MOSQ_ERR_*` that ended the connection. Nil when the socket cannot be
    /// duplicated (out of descriptors): the caller treats that as a failed attempt.
    init?(client: MosquittoClient, queue: DispatchQueue, readable: @escaping () -> Void, failed: @escaping (Int32) -> Void) {
        self.client = client
        // The sources watch a duplicate of libmosquitto's socket, closed only after both let go
        // of it. libmosquitto closes its own descriptor inside loopRead when a connection ends
        // (a refused CONNACK, EOF); with the sources on that number, the next descriptor to get
        // it (the daemon's signal pipe, seen in CI) was registered while libdispatch still tore
        // the old registration down, and its source never fired: SIGTERM was lost.
        let fd = fcntl(client.socket, F_DUPFD_CLOEXEC, 0)
        guard fd >= 0 else { return nil }
        read = DispatchSource.makeReadSource(fileDescriptor: fd, queue: queue)
        write = DispatchSource.makeWriteSource(fileDescriptor: fd, queue: queue)
        // Weak, held strongly while a handler runs: `failed` or `readable` may end the
        // connection, and the publisher then lets go of it.
        read.setEventHandler { [weak self] in
            guard let self, !closed else { return }
            let rc = client.loopRead()
            guard rc == MOSQ_ERR_SUCCESS.rawValue else { return failed(rc) }
            readable()
            flush()
        }
        write.setEventHandler { [weak self] in
            guard let self, !closed else { return }
            let rc = client.loopWrite()
            guard rc == MOSQ_ERR_SUCCESS.rawValue else { return failed(rc) }
            flush()
        }
        // The socket (and the watched duplicate) close only after both sources let go of it.
        let group = DispatchGroup()
        group.enter(); group.enter()
        read.setCancelHandler { group.leave() }
        write.setCancelHandler { group.leave() }
        group.notify(queue: queue) {
            Glibc.close(fd)
            client.close()
        }
        read.resume()
    }

    /// Watches for writability while libmosquitto holds unsent bytes (after a publish that
    /// met a full socket buffer), and stops watching once they are out.
    func flush() {
        guard !closed else { return }
        if client.wantsWrite {
            if !writing { writing = true; write.resume() }
        } else if writing {
            writing = false
            write.suspend()
        }
    }

    /// Runs `body` (several publishes) with the socket corked, so that its packets leave in as
    /// few TCP segments as fit. A unix socket has no cork; there it changes nothing.
    func corked(_ body: () -> Void) {
        guard !closed else { return body() }
        let fd = client.socket
        var on: Int32 = 1, off: Int32 = 0
        let corked = setsockopt(fd, Int32(IPPROTO_TCP), TCP_CORK, &on, socklen_t(MemoryLayout<Int32>.size)) == 0
        body()
        if corked && !closed { _ = setsockopt(fd, Int32(IPPROTO_TCP), TCP_CORK, &off, socklen_t(MemoryLayout<Int32>.size)) }
    }

    /// Stops or starts watching the socket for reads. Unwatched, what the broker sends
    /// (acknowledgements, PINGRESP, an EOF) waits in the socket until `readNow`: a caught-up
    /// publisher reads once a second on its tick instead of being woken by every reply.
    func watchReads(_ on: Bool) {
        guard !closed, on != watchingReads else { return }
        watchingReads = on
        if on { read.resume() } else { read.suspend() }
    }

    /// What arrived, read now (its callbacks run here); a code other than success ended the
    /// connection.
    func readNow() -> Int32 {
        guard !closed else { return MOSQ_ERR_NO_CONN.rawValue }
        let rc = client.loopRead()
        if rc == MOSQ_ERR_SUCCESS.rawValue { flush() }
        return rc
    }

    /// Keepalive work, once a second; a code other than success ended the connection.
    func misc() -> Int32 { closed ? MOSQ_ERR_SUCCESS.rawValue : client.loopMisc() }

    /// Reads and writes what is ready now (a graceful stop waits for acknowledgements so).
    func poll() -> Int32 {
        guard !closed else { return MOSQ_ERR_NO_CONN.rawValue }
        let rc = client.loopRead()
        guard rc == MOSQ_ERR_SUCCESS.rawValue else { return rc }
        return client.wantsWrite ? client.loopWrite() : MOSQ_ERR_SUCCESS.rawValue
    }

    /// `disconnect`: DISCONNECT is sent first, so the broker drops the Last Will.
    func close(disconnect: Bool) {
        guard !closed else { return }
        closed = true
        if disconnect {
            client.disconnect()
            _ = client.loopWrite()
        }
        if !writing { write.resume() }
        // A suspended source never runs its cancel handler, which closes the socket.
        if !watchingReads { read.resume() }
        write.cancel()
        read.cancel()
    }
}
