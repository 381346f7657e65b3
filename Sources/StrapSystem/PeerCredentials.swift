import CShims
import Glibc
import StrapOS
import StrapWire

/// SO_PEERCRED of a connected unix socket, plus the supplementary groups of the peer's
/// uid from the group database (what `id USER` prints). The kernel does not report a
/// peer's supplementary groups; looking them up by uid is the usual approach, and means a
/// group change takes effect for the next connection without a re-login.
public enum PeerCredentials {
    public static func of(_ fd: FileDescriptor) throws(SystemCallError) -> PeerIdentity {
        var pid: Int32 = 0
        var uid: UInt32 = 0
        var gid: UInt32 = 0
        _ = try retryingInterrupts("getsockopt(SO_PEERCRED)") { cshims_peer_cred(fd.rawValue, &pid, &uid, &gid) }
        return PeerIdentity(pid: pid, uid: uid, gid: gid, groups: UserDatabase.groups(uid: uid, primaryGID: gid))
    }
}

/// Name lookups in the passwd/group databases (through NSS), thread-safe `_r` variants.
public enum UserDatabase {
    public static func userName(uid: UInt32) -> String? {
        var pwd = passwd()
        var result: UnsafeMutablePointer<passwd>?
        return withScratch { buf in
            guard getpwuid_r(uid, &pwd, buf.baseAddress!, buf.count, &result) == 0, result != nil else { return nil }
            return pwd.pw_name.map { String(cString: $0) }
        }
    }

    public static func uid(userName: String) -> UInt32? {
        var pwd = passwd()
        var result: UnsafeMutablePointer<passwd>?
        return withScratch { buf in
            guard getpwnam_r(userName, &pwd, buf.baseAddress!, buf.count, &result) == 0, result != nil else { return nil }
            return pwd.pw_uid
        }
    }

    public static func gid(groupName: String) -> UInt32? {
        var grp = group()
        var result: UnsafeMutablePointer<group>?
        return withScratch { buf in
            guard getgrnam_r(groupName, &grp, buf.baseAddress!, buf.count, &result) == 0, result != nil else { return nil }
            return grp.gr_gid
        }
    }

    /// The groups of `uid` including `primaryGID`; just the primary group when the uid
    /// has no passwd entry (a container's anonymous uid, say).
    public static func groups(uid: UInt32, primaryGID: UInt32) -> [UInt32] {
        guard let name = userName(uid: uid) else { return [primaryGID] }
        var capacity: Int32 = 32
        while true {
            var groups = [UInt32](repeating: 0, count: Int(capacity))
            var count = capacity
            let n = groups.withUnsafeMutableBufferPointer { cshims_grouplist(name, primaryGID, $0.baseAddress, &count) }
            if n <= capacity { return Array(groups.prefix(Int(max(n, 0)))) }
            capacity = n
        }
    }

    private static func withScratch<T>(_ body: (UnsafeMutableBufferPointer<CChar>) -> T?) -> T? {
        // 16 KiB covers ordinary entries; huge groups (thousands of members) would need
        // ERANGE retries, which a group lookup by name does not warrant here.
        let buffer = UnsafeMutableBufferPointer<CChar>.allocate(capacity: 16384)
        defer { buffer.deallocate() }
        return body(buffer)
    }
}
