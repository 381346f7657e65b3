import Glibc
import StrapOS
import Synchronization
import Testing

/// A private directory under /tmp, removed with what is in it.
final class Scratch {
    let path: String

    init() throws {
        var template = Array("/tmp/strapos-test-XXXXXX".utf8CString)
        guard let p = mkdtemp(&template) else { throw Errno.current }
        path = String(cString: p)
    }

    deinit {
        for name in (try? Syscalls.live.listDirectory(path)) ?? [] { unlink(path + "/" + name) }
        rmdir(path)
    }

    func contents(_ name: String) throws -> [UInt8] {
        let file = try OpenFile(path: path + "/" + name, flags: O_RDONLY)
        return try file.read(at: 0, count: try file.size())
    }
}

@Suite struct FileTests {
    @Test func atomicWriteReplacesTheFileAndLeavesNoTemporary() throws {
        let dir = try Scratch()
        let path = dir.path + "/state.json"
        try Syscalls.live.writeFileAtomically(Array("one".utf8), to: path)
        try Syscalls.live.writeFileAtomically(Array("two, longer".utf8), to: path, mode: 0o600)
        #expect(try dir.contents("state.json") == Array("two, longer".utf8))
        #expect(try Syscalls.live.listDirectory(dir.path) == ["state.json"])
        var st = stat()
        #expect(stat(path, &st) == 0 && st.st_mode & 0o777 == 0o600)
    }

    @Test func aSymlinkAtTheTemporaryNameIsNotFollowed() throws {
        let dir = try Scratch()
        let path = dir.path + "/url"
        let victim = dir.path + "/victim"
        try Syscalls.live.writeFileAtomically(Array("keep me".utf8), to: victim)
        #expect(symlink(victim, path + ".tmp") == 0)
        #expect(throws: SystemCallError("open", .init(rawValue: ELOOP), path: path + ".tmp")) {
            try Syscalls.live.writeFileAtomically(Array("secret token".utf8), to: path)
        }
        #expect(try dir.contents("victim") == Array("keep me".utf8))
        // The planted link is removed with the failed attempt, so the next write succeeds.
        try Syscalls.live.writeFileAtomically(Array("secret token".utf8), to: path)
        #expect(try dir.contents("url") == Array("secret token".utf8))
        #expect(try dir.contents("victim") == Array("keep me".utf8))
    }

    @Test func atomicWriteThatCannotSyncKeepsTheOldFile() throws {
        let dir = try Scratch()
        let path = dir.path + "/known.json"
        try Syscalls.live.writeFileAtomically(Array("old".utf8), to: path)
        var sys = Syscalls.live
        sys.fsync = { _ in Errno.current = .ioError; return -1 }
        #expect(throws: SystemCallError("fsync", .ioError, path: path + ".tmp")) {
            try sys.writeFileAtomically(Array("new".utf8), to: path)
        }
        #expect(try dir.contents("known.json") == Array("old".utf8))
        #expect(try Syscalls.live.listDirectory(dir.path) == ["known.json"], "the temporary file is removed")
    }

    @Test func shortAndInterruptedWritesStillWriteEverything() throws {
        let dir = try Scratch()
        let calls = Mutex(0)
        var sys = Syscalls.live
        // Every other call is interrupted; the others write at most 3 bytes.
        sys.pwrite = { fd, buffer, count, offset in
            let n = calls.withLock { c in c += 1; return c }
            if n % 2 == 1 { Errno.current = .interrupted; return -1 }
            return Glibc.pwrite(fd, buffer, min(count, 3), offset)
        }
        let file = try OpenFile(path: dir.path + "/log", flags: O_RDWR | O_CREAT, syscalls: sys)
        let text = Array("seventeen bytes!!".utf8)
        try file.pwriteAll(text, at: 4)
        #expect(calls.withLock { $0 } == 12)
        #expect(try file.read(at: 4, count: 100) == text, "a read past the end returns what is there")
        #expect(try file.size() == 4 + text.count)
    }

    @Test func failuresNameTheCallAndThePath() throws {
        let dir = try Scratch()
        let missing = dir.path + "/nope/file"
        let error = #expect(throws: SystemCallError.self) { try OpenFile(path: missing, flags: O_RDONLY) }
        #expect(error == SystemCallError("open", .noSuchFile, path: missing))
        #expect(error?.description == "open \(missing): No such file or directory (errno \(ENOENT))")

        var sys = Syscalls.live
        sys.fdatasync = { _ in Errno.current = .noSpace; return -1 }
        let file = try OpenFile(path: dir.path + "/data", flags: O_RDWR | O_CREAT, syscalls: sys)
        let syncError = #expect(throws: SystemCallError.self) { try file.dataSync() }
        #expect(syncError?.errno.isNoSpace == true)
        #expect(syncError?.call == "fdatasync" && syncError?.path == dir.path + "/data")
    }

    @Test func makeDirectoriesCreatesParentsAndAcceptsExistingOnes() throws {
        let dir = try Scratch()
        let nested = dir.path + "/a/b/c"
        try Syscalls.live.makeDirectories(nested)
        try Syscalls.live.makeDirectories(nested)
        var st = stat()
        #expect(stat(nested, &st) == 0 && st.st_mode & S_IFMT == S_IFDIR)
        rmdir(nested); rmdir(dir.path + "/a/b"); rmdir(dir.path + "/a")
    }
}
