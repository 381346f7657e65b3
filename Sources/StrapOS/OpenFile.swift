import Glibc

/// An open file that owns its descriptor and closes it when the last reference goes: a
/// store segment that retention unlinks stays readable by the queries still holding it.
/// Every call goes through `syscalls` and its errors name the path.
public final class OpenFile: Sendable {
    public let descriptor: FileDescriptor
    public let path: String
    public let syscalls: Syscalls

    public init(path: String, flags: CInt, mode: mode_t = 0o640, syscalls: Syscalls = .live) throws(SystemCallError) {
        self.path = path
        self.syscalls = syscalls
        descriptor = try syscalls.open(path, flags, mode: mode)
    }

    deinit { try? syscalls.close(descriptor) }

    public func size() throws(SystemCallError) -> Int { try syscalls.fileSize(descriptor, path: path) }

    public func pwriteAll(_ buffer: UnsafeRawBufferPointer, at offset: Int) throws(SystemCallError) {
        try syscalls.pwriteAll(descriptor, buffer, at: offset, path: path)
    }

    public func pwriteAll(_ bytes: [UInt8], at offset: Int) throws(SystemCallError) {
        let result: Result<Void, SystemCallError> = bytes.withUnsafeBytes { raw in
            do throws(SystemCallError) { try pwriteAll(raw, at: offset); return .success(()) } catch { return .failure(error) }
        }
        try result.get()
    }

    /// Appends at the file position (for a file opened O_APPEND: its end).
    public func writeAll(_ bytes: [UInt8]) throws(SystemCallError) {
        let result: Result<Void, SystemCallError> = bytes.withUnsafeBytes { raw in
            do throws(SystemCallError) { try syscalls.writeAll(descriptor, raw, path: path); return .success(()) }
            catch { return .failure(error) }
        }
        try result.get()
    }

    /// Reads up to `buffer.count` bytes at `offset`; fewer only at end of file.
    public func pread(into buffer: UnsafeMutableRawBufferPointer, at offset: Int) throws(SystemCallError) -> Int {
        try syscalls.preadAll(descriptor, into: buffer, at: offset, path: path)
    }

    /// Up to `count` bytes at `offset`; fewer only at end of file.
    public func read(at offset: Int, count: Int) throws(SystemCallError) -> [UInt8] {
        guard count > 0 else { return [] }
        var failure: SystemCallError?
        var got = 0
        var out = [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            do throws(SystemCallError) { got = try pread(into: UnsafeMutableRawBufferPointer(buffer), at: offset) }
            catch { failure = error }
            initialized = failure == nil ? got : 0
        }
        if let failure { throw failure }
        if out.count > got { out.removeLast(out.count - got) }
        return out
    }

    /// fdatasync: the data and what is needed to read it back (the size) reach the disk.
    public func dataSync() throws(SystemCallError) { try syscalls.fdatasync(descriptor, path: path) }

    public func sync() throws(SystemCallError) { try syscalls.fsync(descriptor, path: path) }

    public func truncate(to length: Int) throws(SystemCallError) { try syscalls.ftruncate(descriptor, to: length, path: path) }
}

extension Syscalls {
    /// Replaces the file at `path` with `bytes` so that after a crash it is either the old
    /// or the complete new file, never a torn one: a temporary file next to it is written
    /// and fsynced, renamed over `path`, and the directory fsynced so the rename lasts.
    public func writeFileAtomically(_ bytes: [UInt8], to path: String, mode: mode_t = 0o640) throws(SystemCallError) {
        let temporary = path + ".tmp"
        do throws(SystemCallError) {
            // O_NOFOLLOW: a symlink planted at the temporary name (state directories may be
            // group-writable) must not make strapd truncate and write the file it points to.
            let file = try OpenFile(path: temporary, flags: O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW, mode: mode, syscalls: self)
            try file.pwriteAll(bytes, at: 0)
            try file.sync()
            try rename(temporary, to: path)
        } catch {
            try? removeFile(temporary)
            throw error
        }
        try syncDirectory(containing: path)
    }

    /// fsync of a directory: makes file creations, renames and unlinks in it durable.
    public func syncDirectory(_ directory: String) throws(SystemCallError) {
        let handle = try OpenFile(path: directory.isEmpty ? "." : directory, flags: O_RDONLY | O_DIRECTORY, syscalls: self)
        try handle.sync()
    }

    public func syncDirectory(containing path: String) throws(SystemCallError) {
        guard let slash = path.lastIndex(of: "/") else { return try syncDirectory(".") }
        try syncDirectory(slash == path.startIndex ? "/" : String(path[..<slash]))
    }

    /// The names in `directory` except `.` and `..` (opendir is not in the seam).
    public func listDirectory(_ directory: String) throws(SystemCallError) -> [String] {
        guard let handle = opendir(directory) else { throw SystemCallError("opendir", .current, path: directory) }
        defer { closedir(handle) }
        var names: [String] = []
        while let entry = readdir(handle) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(cString: raw.bindMemory(to: CChar.self).baseAddress!)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }
}
