import CShims
import Glibc
import StrapOS
@testable import StrapSystem
import StrapWire
import Testing

@Suite struct ListenerTests {
    @Test func bindAppliesModeAndGroupAndUnlinksOnClose() throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        let path = dir.path + "/s.sock"
        let listener = try UnixListener.bind(path: path, mode: 0o660, group: 65534)
        var st = stat()
        #expect(lstat(path, &st) == 0)
        #expect(st.st_mode & S_IFMT == S_IFSOCK)
        #expect(st.st_mode & 0o777 == 0o660)
        #expect(st.st_gid == 65534)
        listener.close()
        #expect(lstat(path, &st) != 0)
    }

    @Test func staleSocketIsReplacedLiveOneAndOtherFilesAreNot() throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        let path = dir.path + "/s.sock"
        // A socket file with nobody listening: what a crashed daemon leaves.
        let stale = cshims_unix_socket(Int32(SOCK_STREAM.rawValue))
        #expect(cshims_unix_bind(stale, path) == 0)
        Glibc.close(stale)
        let listener = try UnixListener.bind(path: path)
        #expect(throws: ListenerError.alreadyServing(path)) { try UnixListener.bind(path: path) }
        listener.close()

        let file = dir.path + "/regular"
        let f = open(file, O_CREAT | O_WRONLY, 0o600)
        Glibc.close(f)
        #expect(throws: ListenerError.pathOccupied(file)) { try UnixListener.bind(path: file) }
    }

    @Test func tooLongPathIsATypedError() throws {
        let path = "/tmp/" + String(repeating: "x", count: 120)
        do {
            _ = try UnixListener.bind(path: path)
            Issue.record("bind succeeded")
        } catch {
            guard case .system(let e, _) = error else { Issue.record("\(error)"); return }
            #expect(e == SystemCallError("bind", .nameTooLong))
        }
    }

    @Test func activationAdoptsOneListeningUnixSocketAndRejectsTheRest() throws {
        // Stand-in for systemd: a listening socket at the fd number systemd would pass.
        let dir = try TempDirectory()
        defer { dir.remove() }
        let bound = try UnixListener.bind(path: dir.path + "/a.sock")
        #expect(try UnixListener.activated(count: 0, firstFD: bound.fd.rawValue) == nil)
        #expect(throws: ListenerError.unexpectedActivationCount(2)) { try UnixListener.activated(count: 2, firstFD: bound.fd.rawValue) }
        let adopted = try #require(try UnixListener.activated(count: 1, firstFD: bound.fd.rawValue))
        #expect(adopted.ownedPath == nil)

        let handler = TestHandler()
        let activated = UnixServer(listener: adopted, handler: handler)
        activated.start()
        let client = try Client(path: dir.path + "/a.sock")
        try client.send(#"{"id":1,"op":"status"}"# + "\n")
        #expect(try client.readJSON()?["ok"] == .bool(true))
        activated.stop()

        let (a, b) = try FileDescriptor.socketPair()
        defer { try? a.close(); try? b.close() }
        #expect(throws: ListenerError.notAListeningUnixSocket(a)) { try UnixListener.adopt(a) }
    }
}
