import Glibc
import StrapOS
import Synchronization
import Testing

/// A scripted syscall: each call pops the next result; a negative result sets errno.
final class Script: Sendable {
    let results: Mutex<[(Int, Errno?)]>
    let calls = Mutex(0)
    init(_ results: [(Int, Errno?)]) { self.results = Mutex(results) }

    func next() -> Int {
        calls.withLock { $0 += 1 }
        let (value, error) = results.withLock { $0.isEmpty ? (0, nil) : $0.removeFirst() }
        if let error { Errno.current = error }
        return value
    }
}

func scripted(read: Script? = nil, send: Script? = nil, accept: Script? = nil, close: Script? = nil) -> Syscalls {
    var s = Syscalls.live
    if let read { s.read = { _, _, _ in read.next() } }
    if let send { s.send = { _, _, _ in send.next() } }
    if let accept { s.accept = { _ in CInt(accept.next()) } }
    if let close { s.close = { _ in CInt(close.next()) } }
    return s
}

@Suite struct SyscallTests {
    let fd = FileDescriptor(rawValue: 1000)
    var buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 16, alignment: 1)

    @Test func eintrIsRetriedUntilTheCallCompletes() throws {
        let script = Script([(-1, .interrupted), (-1, .interrupted), (5, nil)])
        let result = try scripted(read: script).read(fd, into: buffer)
        #expect(result == .processed(5))
        #expect(script.calls.withLock { $0 } == 3)
    }

    @Test func eagainIsAStateNotAnError() throws {
        #expect(try scripted(read: Script([(-1, .wouldBlock)])).read(fd, into: buffer) == .wouldBlock)
        #expect(try scripted(send: Script([(-1, .wouldBlock)])).send(fd, from: UnsafeRawBufferPointer(buffer)) == .wouldBlock)
        #expect(try scripted(accept: Script([(-1, .wouldBlock)])).accept(fd) == nil)
    }

    @Test(arguments: [Errno.noSpace, .brokenPipe, .connectionReset])
    func sendFailuresAreTypedAndNameTheCall(_ code: Errno) {
        let s = scripted(send: Script([(-1, code)]))
        #expect(throws: SystemCallError("send", code)) { try s.send(fd, from: UnsafeRawBufferPointer(buffer)) }
    }

    @Test func acceptSurfacesEMFILEButSkipsAbortedPeers() throws {
        #expect(throws: SystemCallError("accept4", .tooManyOpenFiles)) {
            try scripted(accept: Script([(-1, .tooManyOpenFiles)])).accept(fd)
        }
        let script = Script([(-1, .connectionAborted), (-1, .interrupted), (42, nil)])
        #expect(try scripted(accept: script).accept(fd) == FileDescriptor(rawValue: 42))
        #expect(script.calls.withLock { $0 } == 3)
    }

    @Test func closeDoesNotRetryEINTR() throws {
        let script = Script([(-1, .interrupted), (-1, .badFileDescriptor)])
        try scripted(close: script).close(fd)
        #expect(script.calls.withLock { $0 } == 1)
        #expect(throws: SystemCallError("close", .badFileDescriptor)) { try scripted(close: script).close(fd) }
    }

    @Test func errnoDescribesItselfWithTheCLibraryText() {
        #expect(Errno.noSpace.description.contains("No space left on device"))
        #expect(SystemCallError("accept4", .tooManyOpenFiles).description.hasPrefix("accept4: Too many open files"))
        #expect(Errno.brokenPipe.isDisconnect && Errno.connectionReset.isDisconnect && !Errno.noSpace.isDisconnect)
    }

    @Test func realSocketPairReadWriteAndEOF() throws {
        let (a, b) = try FileDescriptor.socketPair()
        defer { try? a.close(); try? b.close() }
        let sys = Syscalls.live
        #expect(try sys.read(a, into: buffer) == .wouldBlock)
        #expect(try Array("hi".utf8).withUnsafeBytes { try sys.send(b, from: $0) } == .processed(2))
        #expect(try sys.read(a, into: buffer) == .processed(2))
        try sys.shutdown(b, .write)
        #expect(try sys.read(a, into: buffer) == .processed(0))
    }
}
