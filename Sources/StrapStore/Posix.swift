import Glibc

/// A failed system call, with errno and what we were doing. ENOSPC/EDQUOT are told apart
/// because the store turns them into `degraded` rather than a fatal error.
public struct IOError: Error, Sendable, CustomStringConvertible {
    public let op: String
    public let path: String
    public let errno: Int32
    public var isNoSpace: Bool { errno == ENOSPC || errno == EDQUOT }
    public var description: String { "\(op) \(path): \(String(cString: strerror(errno)))" }
}

/// A file descriptor with EINTR-retrying, short-write-looping calls. Closed on deinit, so
/// a segment that retention unlinks stays readable by queries still holding it.
final class FileHandleFD: @unchecked Sendable {
    let fd: Int32
    let path: String

    init(path: String, flags: Int32, mode: mode_t = 0o640) throws(IOError) {
        self.path = path
        var f: Int32
        repeat { f = Glibc.open(path, flags | O_CLOEXEC, mode) } while f < 0 && errno == EINTR
        guard f >= 0 else { throw IOError(op: "open", path: path, errno: errno) }
        fd = f
    }

    deinit { _ = Glibc.close(fd) }

    func size() throws(IOError) -> Int {
        var st = stat()
        guard fstat(fd, &st) == 0 else { throw IOError(op: "fstat", path: path, errno: errno) }
        return Int(st.st_size)
    }

    func pwriteAll(_ buf: UnsafeRawBufferPointer, at offset: Int) throws(IOError) {
        var done = 0
        while done < buf.count {
            let n = Glibc.pwrite(fd, buf.baseAddress! + done, buf.count - done, off_t(offset + done))
            if n < 0 {
                if errno == EINTR { continue }
                throw IOError(op: "pwrite", path: path, errno: errno)
            }
            done += n
        }
    }

    func pwriteAll(_ bytes: [UInt8], at offset: Int) throws(IOError) {
        var err: IOError?
        bytes.withUnsafeBytes { b in
            do throws(IOError) { try pwriteAll(b, at: offset) } catch { err = error }
        }
        if let err { throw err }
    }

    /// Reads up to `count` bytes; fewer only at end of file.
    func pread(into buf: UnsafeMutableRawBufferPointer, at offset: Int) throws(IOError) -> Int {
        var done = 0
        while done < buf.count {
            let n = Glibc.pread(fd, buf.baseAddress! + done, buf.count - done, off_t(offset + done))
            if n < 0 {
                if errno == EINTR { continue }
                throw IOError(op: "pread", path: path, errno: errno)
            }
            if n == 0 { break }
            done += n
        }
        return done
    }

    func read(at offset: Int, count: Int) throws(IOError) -> [UInt8] {
        guard count > 0 else { return [] }
        var err: IOError?
        var got = 0
        var out = [UInt8](unsafeUninitializedCapacity: count) { b, n in
            do throws(IOError) { got = try pread(into: UnsafeMutableRawBufferPointer(b), at: offset) }
            catch { err = error }
            n = err == nil ? got : 0
        }
        if let err { throw err }
        if out.count > got { out.removeLast(out.count - got) }
        return out
    }

    func sync() throws(IOError) {
        while fdatasync(fd) != 0 {
            if errno == EINTR { continue }
            throw IOError(op: "fdatasync", path: path, errno: errno)
        }
    }

    func truncate(to size: Int) throws(IOError) {
        while ftruncate(fd, off_t(size)) != 0 {
            if errno == EINTR { continue }
            throw IOError(op: "ftruncate", path: path, errno: errno)
        }
    }
}

enum FS {
    static func syncDirectory(_ dir: String) {
        if let d = try? FileHandleFD(path: dir, flags: O_RDONLY | O_DIRECTORY) { _ = fsync(d.fd) }
    }

    static func list(_ dir: String) throws(IOError) -> [String] {
        guard let d = opendir(dir) else { throw IOError(op: "opendir", path: dir, errno: errno) }
        defer { closedir(d) }
        var names: [String] = []
        while let e = readdir(d) {
            let name = withUnsafeBytes(of: e.pointee.d_name) { raw in
                String(cString: raw.bindMemory(to: CChar.self).baseAddress!)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    static func makeDirectory(_ path: String) throws(IOError) {
        var prefix = ""
        for part in path.split(separator: "/", omittingEmptySubsequences: false) {
            prefix += (prefix.isEmpty && path.hasPrefix("/") ? "" : (prefix.isEmpty ? "" : "/")) + part
            if prefix.isEmpty { prefix = "/"; continue }
            if mkdir(prefix, 0o750) != 0 && errno != EEXIST {
                throw IOError(op: "mkdir", path: prefix, errno: errno)
            }
        }
    }

    static func rename(_ a: String, _ b: String) throws(IOError) {
        guard Glibc.rename(a, b) == 0 else { throw IOError(op: "rename", path: a, errno: errno) }
    }

    static func unlink(_ p: String) { _ = Glibc.unlink(p) }

    /// Writes a whole file via temp + fsync + rename, so it is either old or complete.
    static func writeAtomically(_ bytes: [UInt8], to path: String) throws(IOError) {
        let tmp = path + ".tmp"
        let f = try FileHandleFD(path: tmp, flags: O_WRONLY | O_CREAT | O_TRUNC)
        do throws(IOError) {
            try f.pwriteAll(bytes, at: 0)
            try f.sync()
        } catch {
            unlink(tmp)
            throw error
        }
        try rename(tmp, path)
    }
}
