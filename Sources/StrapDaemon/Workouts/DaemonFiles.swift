import FoundationEssentials
import Glibc
import StrapModel

/// Whole small state files (the profile book). Replaced by the OS edge's atomic writer.
enum DaemonFiles {
    static let read: ProfileBook.Load = { (path: String) throws(StrapError) -> [UInt8]? in
        guard let data = FileManager.default.contents(atPath: path) else {
            if access(path, F_OK) == 0 { throw .unavailable("cannot read \(path): \(String(cString: strerror(errno)))") }
            return nil
        }
        return Array(data)
    }

    static let replace: ProfileBook.Persist = { (path: String, bytes: [UInt8]) throws(StrapError) in
        let temp = path + ".tmp"
        let fd = Glibc.open(temp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o640)
        guard fd >= 0 else { throw .unavailable("open \(temp): \(String(cString: strerror(errno)))") }
        var ok = bytes.withUnsafeBytes { raw -> Bool in
            var offset = 0
            while offset < raw.count {
                let n = Glibc.write(fd, raw.baseAddress! + offset, raw.count - offset)
                if n < 0 { if errno == EINTR { continue }; return false }
                offset += n
            }
            return true
        }
        ok = ok && fsync(fd) == 0
        let failure = errno
        Glibc.close(fd)
        guard ok else { unlink(temp); throw .unavailable("write \(temp): \(String(cString: strerror(failure)))") }
        guard rename(temp, path) == 0 else { throw .unavailable("rename \(temp): \(String(cString: strerror(errno)))") }
        let dfd = Glibc.open(Path.directory(of: path), O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if dfd >= 0 { _ = fsync(dfd); Glibc.close(dfd) }
    }

    /// Moves a damaged file aside (`NAME.corrupt`) so the next write does not destroy it.
    static func quarantine(_ path: String) throws(StrapError) -> String {
        let aside = path + ".corrupt"
        guard rename(path, aside) == 0 else { throw .unavailable("cannot move \(path) aside: \(String(cString: strerror(errno)))") }
        return aside
    }
}
