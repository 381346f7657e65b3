import CShims
import Dispatch
import Glibc
import StrapOS
@testable import StrapSystem
import StrapWire
import Synchronization
import Testing

@Suite struct ServerTests {
    @Test func repliesCarryTheRequestIdAndThePeerCredentials() throws {
        let s = try TestServer()
        defer { s.stop() }
        let client = try Client(path: s.path)
        try client.send(#"{"id":"a","op":"status"}"# + "\n" + #"{"id":2,"op":"x"}"# + "\r\n")
        let first = try #require(try client.readJSON())
        #expect(first["id"] == .string("a"))
        guard case .object(let result)? = first["result"] else { Issue.record("no result"); return }
        #expect(result["uid"] == .int(Int64(getuid())))
        #expect(result["pid"] == .int(Int64(getpid())))
        #expect(try client.readJSON()?["id"] == .int(2))
    }

    @Test func badLinesGetBadRequestAndTheConnectionSurvives() throws {
        let config = ServerConfiguration(maximumLineLength: 1024)
        let s = try TestServer(configuration: config)
        defer { s.stop() }
        let client = try Client(path: s.path)
        try client.send("not json\n")
        var reply = try #require(try client.readJSON())
        #expect(reply["id"] == .null)
        guard case .object(let e)? = reply["error"] else { Issue.record("no error"); return }
        #expect(e["code"] == .string("badRequest"))

        try client.send([UInt8](repeating: UInt8(ascii: "z"), count: 5000) + Array("\n".utf8))
        reply = try #require(try client.readJSON())
        guard case .object(let e2)? = reply["error"], case .string(let message)? = e2["message"] else { Issue.record("no error"); return }
        #expect(message.contains("longer than 1024"))

        try client.send(#"{"id":3,"op":"after"}"# + "\n")
        #expect(try client.readJSON()?["id"] == .int(3))
    }

    @Test func oneMebibyteLineIsServedOneByteMoreIsNot() throws {
        let s = try TestServer()
        defer { s.stop() }
        let client = try Client(path: s.path)
        func request(id: Int, length: Int) -> String {
            let head = #"{"id":\#(id),"op":"x","pad":""#
            return head + String(repeating: "p", count: length - head.utf8.count - 2) + "\"}"
        }
        let limit = LineDecoder.defaultMaximumLineLength
        #expect(request(id: 1, length: limit).utf8.count == limit)
        try client.send(request(id: 1, length: limit) + "\r\n" + request(id: 2, length: limit + 1) + "\n" + #"{"id":3,"op":"y"}"# + "\n")
        #expect(try client.readJSON()?["ok"] == .bool(true))
        let rejected = try #require(try client.readJSON())
        #expect(rejected["id"] == .null)
        #expect(rejected["ok"] == .bool(false))
        #expect(try client.readJSON()?["id"] == .int(3))
    }

    @Test func binaryGarbageGetsOneBadRequestPerLine() throws {
        let s = try TestServer()
        defer { s.stop() }
        let client = try Client(path: s.path)
        // Deterministic pseudo-random bytes (xorshift), newlines kept out, then framed.
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        var payload: [UInt8] = []
        let lines = 40
        for _ in 0..<lines {
            for _ in 0..<200 {
                state ^= state << 13; state ^= state >> 7; state ^= state << 17
                let b = UInt8(truncatingIfNeeded: state)
                payload.append(b == 0x0A || b == 0x0D ? 0x00 : b)
            }
            payload.append(0x0A)
        }
        try client.send(payload + Array(#"{"id":"end","op":"x"}"#.utf8) + [0x0A])
        for _ in 0..<lines {
            let reply = try #require(try client.readJSON())
            guard case .object(let e)? = reply["error"] else { Issue.record("not an error: \(reply)"); return }
            #expect(e["code"] == .string("badRequest"))
        }
        #expect(try client.readJSON()?["id"] == .string("end"))
    }

    @Test func manyConcurrentClients() throws {
        // 250 by default; STRAPD_TEST_CLIENTS=1000 for the big run.
        let count = getenv("STRAPD_TEST_CLIENTS").flatMap { Int(String(cString: $0)) } ?? 250
        let s = try TestServer()
        defer { s.stop() }
        var clients: [Client] = []
        for _ in 0..<count { clients.append(try Client(path: s.path)) }
        for (n, c) in clients.enumerated() { try c.send(#"{"id":\#(n),"op":"status"}"# + "\n") }
        for (n, c) in clients.enumerated() {
            #expect(try c.readJSON()?["id"] == .int(Int64(n)))
        }
        #expect(s.connectionCount() == count)
        clients.removeAll()
        #expect(eventually { s.connectionCount() == 0 })
        #expect(s.handler.snapshot().closed.count == count)
    }

    @Test func stalledReaderHitsItsBoundWithoutHurtingOthers() throws {
        // Each "flood" request makes the handler queue events until the buffer refuses.
        let limits = OutputLimits(highWater: 64 * 1024, lowWater: 16 * 1024, hardLimit: 256 * 1024)
        let rejected = Mutex(0)
        let handler = TestHandler { connection, request in
            guard request.op == "flood" else { return TestHandler.echo(connection, request) }
            connection.write(Reply.success(id: request.id))
            let event = Reply.event(id: request.id, kind: "sample", data: ["pad": .string(String(repeating: "x", count: 1000))])
            while connection.write(event) == .queued {}
            rejected.withLock { $0 += 1 }
        }
        let s = try TestServer(handler: handler, configuration: ServerConfiguration(outputLimits: limits))
        defer { s.stop() }
        let stalled = try Client(path: s.path)
        try stalled.send(#"{"id":1,"op":"flood"}"# + "\n")
        #expect(eventually { rejected.withLock { $0 } == 1 })
        let stalledID = try #require(s.handler.snapshot().opened.first)
        #expect(s.handler.snapshot().highWater == [stalledID])
        let (buffered, above) = s.server.queue.sync { () -> (Int, Bool) in
            let c = s.handler.lastConnection.withLock { $0 }!
            return (c.bufferedOutputCount, c.isAboveHighWater)
        }
        #expect(buffered <= limits.hardLimit)
        #expect(buffered >= limits.highWater)
        #expect(above)

        // A well-behaved client is served while the other is stalled.
        let other = try Client(path: s.path)
        try other.send(#"{"id":9,"op":"status"}"# + "\n")
        #expect(try other.readJSON()?["id"] == .int(9))

        // The stalled client finally reads: everything queued arrives, drained fires.
        var events = 0
        #expect(try stalled.readJSON()?["ok"] == .bool(true))
        try stalled.send(#"{"id":2,"op":"status"}"# + "\n")
        while let line = try stalled.readJSON() {
            if line["event"] != nil { events += 1; continue }
            #expect(line["id"] == .int(2))  // the request read after the pause is answered
            break
        }
        #expect(events > 0)
        #expect(s.handler.snapshot().drained == [stalledID])
    }

    @Test func halfCloseFinishesPendingRepliesThenCloses() throws {
        // Replies come later from another queue, as the daemon's would.
        let worker = DispatchQueue(label: "worker")
        let handler = TestHandler(finishOnInputEnd: false) { connection, request in
            worker.asyncAfter(deadline: .now() + .milliseconds(20)) {
                connection.queue.async {
                    connection.write(Reply.success(id: request.id))
                    if request.op == "last" { connection.finish() }
                }
            }
        }
        let s = try TestServer(handler: handler)
        defer { s.stop() }
        let client = try Client(path: s.path)
        // The last line has no newline: EOF terminates it.
        try client.send("{\"id\":1,\"op\":\"a\"}\n{\"id\":2,\"op\":\"b\"}\n{\"id\":3,\"op\":\"last\"}")
        client.shutdownWrite()
        var ids: [JSONValue?] = []
        while let reply = try client.readJSON() { ids.append(reply["id"]) }
        #expect(ids == [.int(1), .int(2), .int(3)])
        #expect(eventually { s.handler.snapshot().closed.values.contains(.finished) })
        #expect(s.handler.snapshot().inputEnded.count == 1)
    }

    @Test func shortWritesAndEAGAINStillDeliverEveryByteInOrder() throws {
        // The seam makes every other send fail with EAGAIN and the rest write at most
        // 7 bytes, so each reply goes out through the write source in many pieces.
        let calls = Mutex(0)
        var sys = Syscalls.live
        sys.send = { fd, buffer, count in
            let n = calls.withLock { c in c += 1; return c }
            if n % 2 == 1 { Errno.current = .wouldBlock; return -1 }
            return cshims_send_nosignal(fd, buffer, min(count, 7))
        }
        let s = try TestServer(syscalls: sys)
        defer { s.stop() }
        let client = try Client(path: s.path)
        var batch = ""
        for n in 0..<50 { batch += #"{"id":\#(n),"op":"op\#(n)"}"# + "\n" }
        try client.send(batch)
        for n in 0..<50 {
            let reply = try #require(try client.readJSON())
            #expect(reply["id"] == .int(Int64(n)))
        }
        #expect(calls.withLock { $0 } > 100)
    }

    @Test func clientBufferSettingMapsToLimits() {
        let limits = OutputLimits(clientBuffer: 4 << 20)
        #expect(limits.hardLimit == 4 << 20 && limits.highWater == 1 << 20 && limits.lowWater == 256 << 10)
    }

    @Test func halfClosedClientThatBacksUpOutputEndsInputOnce() throws {
        // After EOF the handler floods past high water (as a stream would); draining must
        // not resume reading (EOF again) nor report the end of input twice.
        let limits = OutputLimits(highWater: 64 * 1024, lowWater: 16 * 1024, hardLimit: 256 * 1024)
        let queued = Mutex(0)
        let handler = TestHandler(finishOnInputEnd: false, onInputEnded: { connection in
            let event = Reply.event(id: .int(1), kind: "sample", data: ["pad": .string(String(repeating: "y", count: 1000))])
            var n = 0
            while connection.write(event) == .queued { n += 1 }
            queued.withLock { $0 = n }  // set once the flood is complete
        })
        let s = try TestServer(handler: handler, configuration: ServerConfiguration(outputLimits: limits))
        defer { s.stop() }
        let client = try Client(path: s.path)
        try client.send(#"{"id":1,"op":"status"}"# + "\n")
        client.shutdownWrite()
        #expect(eventually { queued.withLock { $0 } > 0 })
        #expect(s.handler.snapshot().highWater.count == 1)
        // Read exactly what was queued (the reply and every event), so nothing blocks.
        for _ in 0..<(1 + queued.withLock { $0 }) { #expect(try client.readLine() != nil) }
        let c = try #require(s.handler.lastConnection.withLock { $0 })
        #expect(eventually { s.handler.snapshot().drained.count == 1 }, "\(s.server.queue.sync { c.diagnostics })")
        // Give a wrongly resumed read the chance to find the EOF again before finishing.
        usleep(50_000)
        s.server.queue.sync { c.finish() }
        #expect(try client.readLine() == nil)
        #expect(s.handler.snapshot().inputEnded.count == 1)
        #expect(eventually { s.handler.snapshot().closed.values.contains(.finished) })
    }

    @Test func handlerIsNotReenteredWithTheNextLineWhileWriting() throws {
        // A stream keeps writing from a timer while the client, above high water, has
        // pipelined requests waiting. A write whose flush crosses low water must not
        // deliver those requests from inside the handler's own write. The seam lets bytes
        // out only during the stream's writes, so that is where low water is crossed.
        let limits = OutputLimits(highWater: 32 * 1024, lowWater: 8 * 1024, hardLimit: 128 * 1024)
        let inHandler = Mutex(false)
        var sys = Syscalls.live
        sys.send = { fd, buffer, count in
            if inHandler.withLock({ $0 }) { return cshims_send_nosignal(fd, buffer, count) }
            Errno.current = .wouldBlock
            return -1
        }
        let violations = Mutex(0)
        // Touched only on the server queue.
        final class TimerBox: @unchecked Sendable { var timer: DispatchSourceTimer? }
        let box = TimerBox()
        let handler = TestHandler { connection, request in
            if inHandler.withLock({ $0 }) { violations.withLock { $0 += 1 } }
            guard request.op == "stream" else { return TestHandler.echo(connection, request) }
            let event = Reply.event(id: request.id, kind: "sample", data: ["pad": .string(String(repeating: "z", count: 500))])
            while !connection.isAboveHighWater { connection.write(event) }
            let t = DispatchSource.makeTimerSource(queue: connection.queue)
            t.schedule(deadline: .now(), repeating: .milliseconds(1))
            t.setEventHandler { @Sendable in
                inHandler.withLock { $0 = true }
                _ = connection.write(event)
                inHandler.withLock { $0 = false }
            }
            t.resume()
            box.timer = t
        }
        let s = try TestServer(handler: handler, configuration: ServerConfiguration(outputLimits: limits), syscalls: sys)
        defer { s.server.queue.sync { box.timer?.cancel() }; s.stop() }
        let client = try Client(path: s.path)
        var batch = #"{"id":0,"op":"stream"}"# + "\n"
        for n in 1...10 { batch += #"{"id":\#(n),"op":"status"}"# + "\n" }
        try client.send(batch)
        var answered = Set<Int64>()
        while answered.count < 10, let line = try client.readJSON() {
            if line["event"] == nil, case .int(let id)? = line["id"], id > 0 { answered.insert(id) }
        }
        #expect(answered == Set(1...10))
        #expect(violations.withLock { $0 } == 0)
    }

    @Test func clientThatResetsIsClosedWithAnError() throws {
        // Writes fail with ECONNRESET from the seam, as if the peer had vanished.
        var sys = Syscalls.live
        sys.send = { _, _, _ in Errno.current = .connectionReset; return -1 }
        let s = try TestServer(syscalls: sys)
        defer { s.stop() }
        let client = try Client(path: s.path)
        try client.send(#"{"id":1,"op":"status"}"# + "\n")
        #expect(try client.readLine() == nil)
        #expect(eventually { !s.handler.snapshot().closed.isEmpty })
        #expect(s.handler.snapshot().closed.values.first == .failed(SystemCallError("send", .connectionReset)))
    }

    @Test func emfileOnAcceptIsReportedOncePerEpisodeAndAcceptingResumes() throws {
        let failures = Mutex(5)
        var sys = Syscalls.live
        sys.accept = { fd in
            if failures.withLock({ f in defer { f -= 1 }; return f > 0 }) { Errno.current = .tooManyOpenFiles; return -1 }
            return Syscalls.live.accept(fd)
        }
        let config = ServerConfiguration(acceptBackoff: .milliseconds(10))
        let s = try TestServer(configuration: config, syscalls: sys)
        defer { s.stop() }
        let client = try Client(path: s.path)
        try client.send(#"{"id":1,"op":"status"}"# + "\n")
        #expect(try client.readJSON()?["id"] == .int(1))
        // Five failures in a row are one episode: reported once, and its end with the count.
        #expect(s.handler.snapshot().acceptErrors == [SystemCallError("accept4", .tooManyOpenFiles)])
        #expect(s.handler.snapshot().acceptRecoveries == [5])
    }

    /// Stopped means the listener is closed: a descriptor closed after the caller was told
    /// could be the number of a file it opened since (a daemon restarted in one process saw
    /// its store segment closed under it that way).
    @Test func stopCompletesOnlyOnceTheListenerIsClosed() throws {
        let directory = try TempDirectory()
        defer { directory.remove() }
        for round in 0..<20 {
            let path = directory.path + "/s\(round).sock"
            let listener = try UnixListener.bind(path: path)
            let server = UnixServer(listener: listener, handler: TestHandler())
            server.start()
            // The number alone does not say: a test running beside this one may have been
            // given it again by the time the completion runs. The socket's inode does.
            let socket = try #require(Self.inode(of: listener.fd.rawValue))
            let closedAtCompletion = Mutex<Bool?>(nil)
            let done = DispatchSemaphore(value: 0)
            server.stop {
                closedAtCompletion.withLock { $0 = Self.inode(of: listener.fd.rawValue) != socket }
                done.signal()
            }
            done.wait()
            #expect(closedAtCompletion.withLock { $0 } == true, "round \(round)")
            #expect(access(path, F_OK) != 0, "the socket path is removed too")
        }
    }

    private static func inode(of fd: Int32) -> ino_t? {
        var st = stat()
        return fstat(fd, &st) == 0 ? st.st_ino : nil
    }

    @Test func connectionsBeyondTheLimitAreToldBusy() throws {
        let s = try TestServer(configuration: ServerConfiguration(maximumConnections: 2))
        defer { s.stop() }
        let a = try Client(path: s.path), b = try Client(path: s.path)
        #expect(eventually { s.connectionCount() == 2 })
        let c = try Client(path: s.path)
        let reply = try #require(try c.readJSON())
        guard case .object(let e)? = reply["error"] else { Issue.record("no error"); return }
        #expect(e["code"] == .string("busy"))
        #expect(try c.readLine() == nil)
        _ = (a, b)
    }

    // setpriv needs root; CI and the dev boxes run the suite as root.
    @Test(.enabled(if: getuid() == 0)) func peerCredentialsOfAnUnprivilegedClient() throws {
        let s = try TestServer(mode: 0o666)
        defer { s.stop() }
        chmod(s.directory.path, 0o755)
        let script = """
        import socket, sys
        s = socket.socket(socket.AF_UNIX)
        s.connect(sys.argv[1])
        s.sendall(b'{"id":1,"op":"whoami"}\\n')
        print(s.makefile('rb').readline().decode().strip())
        """
        let result = try run("/usr/bin/setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups",
                                                  "/usr/bin/python3", "-c", script, s.path])
        #expect(result.status == 0)
        let reply = try JSONParser.parse(Array(result.output.utf8.filter { $0 != 0x0A }))
        guard case .object(let o) = reply, case .object(let r)? = o["result"] else { Issue.record("reply: \(result.output)"); return }
        #expect(r["uid"] == .int(65534))
        #expect(r["gid"] == .int(65534))
        #expect(r["pid"] == .int(Int64(result.pid)))
        // Groups come from the database for uid 65534 (nobody), not from the process.
        #expect(r["groups"] == .array(UserDatabase.groups(uid: 65534, primaryGID: 65534).map { .int(Int64($0)) }))
    }
}
