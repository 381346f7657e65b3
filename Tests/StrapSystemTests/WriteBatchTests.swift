import CShims
import Dispatch
import Glibc
import StrapOS
@testable import StrapSystem
import StrapWire
import Synchronization
import Testing

/// A handler that remembers every connection that asked to `join`, in order.
private final class Joined: Sendable {
    final class Roster: Sendable { let list = Mutex<[Connection]>([]) }
    let roster = Roster()
    let handler: TestHandler

    var connections: [Connection] { roster.list.withLock { $0 } }

    init() {
        let roster = self.roster
        handler = TestHandler { connection, request in
            if request.op == "join" { roster.list.withLock { $0.append(connection) } }
            connection.write(Reply.success(id: request.id))
        }
    }
}

/// `WriteBatch`: writes held for many connections and sent from several threads at once,
/// or, below `parallelThreshold` (the live fan-out's usual few subscribers), by each
/// connection in turn on the calling thread. Every test runs with both counts.
@Suite struct WriteBatchTests {
    static let clients = 3 * WriteBatch.parallelThreshold
    static let counts = [3, clients]

    private func joinAll(_ s: TestServer, _ joined: Joined, count: Int) throws -> [Client] {
        var clients: [Client] = []
        for n in 0..<count {
            let c = try Client(path: s.path)
            try c.send(#"{"id":\#(n),"op":"join"}"# + "\n")
            #expect(try c.readJSON()?["id"] == .int(Int64(n)))
            clients.append(c)
        }
        return clients
    }

    @Test(arguments: counts) func everyClientGetsItsLinesInOrderWithPlainWritesBetween(count: Int) throws {
        #expect(WriteBatch.threads(for: Self.clients) > 1 || ProcessInfoCPUs.active == 1)
        #expect(WriteBatch.threads(for: 3) == 1)
        let joined = Joined()
        let s = try TestServer(handler: joined.handler)
        defer { s.stop() }
        let clients = try joinAll(s, joined, count: count)
        s.server.queue.sync {
            var batch = WriteBatch()
            for (n, c) in joined.connections.enumerated() {
                #expect(c.write(Array("a\(n)\n".utf8), in: &batch) == .queued)
                #expect(c.write(Array("b\(n)\n".utf8), in: &batch) == .queued)
                // A plain write while the batch holds bytes goes after them.
                if n % 2 == 0 { #expect(c.write(Array("c\(n)\n".utf8)) == .queued) }
                #expect(c.bufferedOutputCount > 0)
            }
            batch.send()
        }
        // Connections were joined in the clients' order.
        for (n, c) in clients.enumerated() {
            #expect(try c.readLine() == "a\(n)")
            #expect(try c.readLine() == "b\(n)")
            if n % 2 == 0 { #expect(try c.readLine() == "c\(n)") }
        }
    }

    @Test(arguments: counts) func shortSendsAndEAGAINLeaveTheRestQueuedInOrder(count: Int) throws {
        // Every other send fails with EAGAIN, the rest take at most 7 bytes: most of each
        // held write is left to the connection's own output and write source.
        let calls = Atomic(0)
        var sys = Syscalls.live
        sys.send = { fd, buffer, count in
            if calls.add(1, ordering: .relaxed).newValue % 2 == 1 { Errno.current = .wouldBlock; return -1 }
            return cshims_send_nosignal(fd, buffer, min(count, 7))
        }
        let joined = Joined()
        let s = try TestServer(handler: joined.handler, syscalls: sys)
        defer { s.stop() }
        let clients = try joinAll(s, joined, count: count)
        let line = String(repeating: "x", count: 100)
        s.server.queue.sync {
            var batch = WriteBatch()
            for (n, c) in joined.connections.enumerated() {
                c.write(Array("\(n) \(line)\n".utf8), in: &batch)
            }
            batch.send()
        }
        for (n, c) in clients.enumerated() { #expect(try c.readLine() == "\(n) \(line)") }
        #expect(s.handler.snapshot().closed.isEmpty)
    }

    @Test(arguments: counts) func aFailedSendClosesThatConnectionOnlyAndTheOthersGetTheirLines(count: Int) throws {
        // While the batch sends, every send to the first descriptor it reaches fails with
        // EPIPE, as for a client that vanished.
        struct Victim { var armed = false; var fd: CInt? }
        let victim = Mutex(Victim())
        var sys = Syscalls.live
        sys.send = { fd, buffer, count in
            let fail = victim.withLock { v -> Bool in
                guard v.armed else { return false }
                if v.fd == nil { v.fd = fd }
                return v.fd == fd
            }
            if fail { Errno.current = .brokenPipe; return -1 }
            return cshims_send_nosignal(fd, buffer, count)
        }
        let joined = Joined()
        let s = try TestServer(handler: joined.handler, syscalls: sys)
        defer { s.stop() }
        let clients = try joinAll(s, joined, count: count)
        let outcomes = s.server.queue.sync { () -> [Connection.WriteOutcome] in
            var batch = WriteBatch()
            let outcomes = joined.connections.map { $0.write(Array("event\n".utf8), in: &batch) }
            victim.withLock { $0.armed = true }
            batch.send()
            victim.withLock { $0.armed = false }
            return outcomes
        }
        #expect(outcomes.allSatisfy { $0 == .queued })
        let closed = s.handler.snapshot().closed
        #expect(closed.count == 1)
        #expect(closed.values.allSatisfy { if case .failed(let e) = $0 { e.errno == .brokenPipe } else { false } })
        var delivered = 0, ended = 0
        for c in clients {
            switch try c.readLine() {
            case "event": delivered += 1
            case nil: ended += 1
            case let other: Issue.record("unexpected line \(other ?? "")")
            }
        }
        #expect(delivered == count - 1)
        #expect(ended == 1)
    }
}
