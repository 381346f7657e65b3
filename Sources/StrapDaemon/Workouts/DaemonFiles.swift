import Glibc
import StrapModel
import StrapOS

/// Whole small state files of the daemon (the profile book) on the OS edge: read whole,
/// replaced atomically, moved aside when damaged.
enum DaemonFiles {
    static let read: ProfileBook.Load = { (path: String) throws(StrapError) -> [UInt8]? in
        do throws(SystemCallError) {
            let file = try OpenFile(path: path, flags: O_RDONLY)
            return try file.read(at: 0, count: try file.size())
        } catch {
            if error.errno == .noSuchFile { return nil }
            throw .unavailable("cannot read \(path): \(error)")
        }
    }

    static let replace: ProfileBook.Persist = { (path: String, bytes: [UInt8]) throws(StrapError) in
        do throws(SystemCallError) { try Syscalls.live.writeFileAtomically(bytes, to: path) } catch {
            throw .unavailable("cannot write \(path): \(error)")
        }
    }

    /// Moves a damaged file aside (`NAME.corrupt`) so the next write does not destroy it.
    static func quarantine(_ path: String) throws(StrapError) -> String {
        let aside = path + ".corrupt"
        do throws(SystemCallError) { try Syscalls.live.rename(path, to: aside) } catch {
            throw .unavailable("cannot move \(path) aside: \(error)")
        }
        return aside
    }
}
