import Glibc

/// The outcome of a non-blocking transfer.
public enum IOResult: Sendable, Equatable {
    /// Bytes moved; for a read, 0 is end of file.
    case processed(Int)
    case wouldBlock
}

/// Runs `body` until it does not fail with EINTR; any other failure becomes a
/// `SystemCallError` naming `call` (and `path`). The one place errno is read after a call
/// and the one EINTR loop.
@inline(__always)
public func retryingInterrupts<T: BinaryInteger>(_ call: String, path: String? = nil,
                                                 _ body: () -> T) throws(SystemCallError) -> T {
    while true {
        let result = body()
        if result >= 0 { return result }
        let error = Errno.current
        if error == .interrupted { continue }
        throw SystemCallError(call, error, path: path)
    }
}

/// As `retryingInterrupts`, with EAGAIN/EWOULDBLOCK reported as `.wouldBlock` rather
/// than thrown: on a non-blocking fd (or one with a receive timeout) it is a state, not an
/// error.
@inline(__always)
func nonBlocking(_ call: String, _ body: () -> Int) throws(SystemCallError) -> IOResult {
    do {
        return .processed(try retryingInterrupts(call, body))
    } catch where error.errno == .wouldBlock || error.errno.rawValue == EWOULDBLOCK {
        return .wouldBlock
    }
}

// MARK: sockets and pipes

extension Syscalls {
    public func read(_ fd: FileDescriptor, into buffer: UnsafeMutableRawBufferPointer) throws(SystemCallError) -> IOResult {
        try nonBlocking("read") { read(fd.rawValue, buffer.baseAddress!, buffer.count) }
    }

    public func send(_ fd: FileDescriptor, from buffer: UnsafeRawBufferPointer) throws(SystemCallError) -> IOResult {
        try nonBlocking("send") { send(fd.rawValue, buffer.baseAddress!, buffer.count) }
    }

    /// One pending connection, or nil when none is waiting. ECONNABORTED (the peer gave
    /// up while queued) is skipped like EINTR: it concerns that peer only.
    public func accept(_ listener: FileDescriptor) throws(SystemCallError) -> FileDescriptor? {
        while true {
            do {
                switch try nonBlocking("accept4", { Int(accept(listener.rawValue)) }) {
                case .wouldBlock: return nil
                case .processed(let fd): return FileDescriptor(rawValue: CInt(fd))
                }
            } catch where error.errno == .connectionAborted {
                continue
            }
        }
    }

    /// Closes `fd`. EINTR is *not* retried: on Linux the descriptor is released even
    /// when close is interrupted, and retrying could close a descriptor another thread
    /// has just been given.
    public func close(_ fd: FileDescriptor) throws(SystemCallError) {
        if close(fd.rawValue) < 0, Errno.current != .interrupted {
            throw SystemCallError("close", Errno.current)
        }
    }

    public func shutdown(_ fd: FileDescriptor, _ how: FileDescriptor.ShutdownKind) throws(SystemCallError) {
        _ = try retryingInterrupts("shutdown") { shutdown(fd.rawValue, how.rawValue) }
    }
}

// MARK: files

extension Syscalls {
    /// Opens `path` (always close-on-exec); errors name the path.
    public func open(_ path: String, _ flags: CInt, mode: mode_t = 0o640) throws(SystemCallError) -> FileDescriptor {
        FileDescriptor(rawValue: try retryingInterrupts("open", path: path) { open(path, flags, mode) })
    }

    /// Writes all of `buffer` at the file position (an O_APPEND file: at its end), looping
    /// over short writes.
    public func writeAll(_ fd: FileDescriptor, _ buffer: UnsafeRawBufferPointer, path: String? = nil) throws(SystemCallError) {
        var done = 0
        while done < buffer.count {
            done += try retryingInterrupts("write", path: path) { write(fd.rawValue, buffer.baseAddress! + done, buffer.count - done) }
        }
    }

    /// Writes all of `buffer` at `offset`, looping over short writes. After a failure an
    /// unknown prefix may have been written: the caller truncates if that matters.
    public func pwriteAll(_ fd: FileDescriptor, _ buffer: UnsafeRawBufferPointer, at offset: Int,
                          path: String? = nil) throws(SystemCallError) {
        var done = 0
        while done < buffer.count {
            done += try retryingInterrupts("pwrite", path: path) {
                pwrite(fd.rawValue, buffer.baseAddress! + done, buffer.count - done, off_t(offset + done))
            }
        }
    }

    /// Reads up to `buffer.count` bytes at `offset`; fewer only at end of file.
    public func preadAll(_ fd: FileDescriptor, into buffer: UnsafeMutableRawBufferPointer, at offset: Int,
                         path: String? = nil) throws(SystemCallError) -> Int {
        var done = 0
        while done < buffer.count {
            let n = try retryingInterrupts("pread", path: path) {
                pread(fd.rawValue, buffer.baseAddress! + done, buffer.count - done, off_t(offset + done))
            }
            if n == 0 { break }
            done += n
        }
        return done
    }

    public func fsync(_ fd: FileDescriptor, path: String? = nil) throws(SystemCallError) {
        _ = try retryingInterrupts("fsync", path: path) { fsync(fd.rawValue) }
    }

    public func fdatasync(_ fd: FileDescriptor, path: String? = nil) throws(SystemCallError) {
        _ = try retryingInterrupts("fdatasync", path: path) { fdatasync(fd.rawValue) }
    }

    public func ftruncate(_ fd: FileDescriptor, to length: Int, path: String? = nil) throws(SystemCallError) {
        _ = try retryingInterrupts("ftruncate", path: path) { ftruncate(fd.rawValue, off_t(length)) }
    }

    public func fileSize(_ fd: FileDescriptor, path: String? = nil) throws(SystemCallError) -> Int {
        var status = stat()
        _ = try retryingInterrupts("fstat", path: path) { fstat(fd.rawValue, &status) }
        return Int(status.st_size)
    }

    public func rename(_ from: String, to: String) throws(SystemCallError) {
        _ = try retryingInterrupts("rename", path: from) { rename(from, to) }
    }

    public func removeFile(_ path: String) throws(SystemCallError) {
        _ = try retryingInterrupts("unlink", path: path) { unlink(path) }
    }

    /// Creates `path` and any missing parents (an existing directory is fine).
    public func makeDirectories(_ path: String, mode: mode_t = 0o750) throws(SystemCallError) {
        var prefix = path.hasPrefix("/") ? "/" : ""
        for part in path.split(separator: "/") {
            prefix += (prefix.isEmpty || prefix.hasSuffix("/") ? "" : "/") + part
            do {
                _ = try retryingInterrupts("mkdir", path: prefix) { mkdir(prefix, mode) }
            } catch where error.errno == .fileExists {
                continue
            }
        }
    }
}
