/// Who a rule talks about, already resolved to numbers (name lookup is I/O and happens
/// in the daemon when the configuration is loaded).
public enum Principal: Sendable, Hashable, CustomStringConvertible {
    case uid(UInt32)
    case gid(UInt32)

    public var description: String {
        switch self {
        case .uid(let u): "uid:\(u)"
        case .gid(let g): "gid:\(g)"
        }
    }
}

/// What a peer may read.
public enum ReadGrant: Sendable, Equatable {
    case none
    case all
    /// Only these sample types (HealthKit-style per-type read authorisation).
    case types(Set<String>)

    public func allows(type: String) -> Bool {
        switch self {
        case .none: false
        case .all: true
        case .types(let set): set.contains(type)
        }
    }

    public var allowsAny: Bool { self != .none && self != .types([]) }

    /// The union of two grants: a peer matched by several rules gets the widest.
    public func union(_ other: ReadGrant) -> ReadGrant {
        switch (self, other) {
        case (.all, _), (_, .all): .all
        case (.none, let x), (let x, .none): x
        case (.types(let a), .types(let b)): .types(a.union(b))
        }
    }
}

/// The three independent permissions (docs/protocol.md#access-control): `read` (queries,
/// subscriptions), `record` (workout control), `admin` (devices, deletion, profile). None implies
/// another; configuration lists a principal under each grant it needs.
public struct Grants: Sendable, Equatable {
    public var read: ReadGrant
    public var record: Bool
    public var admin: Bool

    public init(read: ReadGrant = .none, record: Bool = false, admin: Bool = false) {
        self.read = read
        self.record = record
        self.admin = admin
    }

    public static let nothing = Grants()
    public static let everything = Grants(read: .all, record: true, admin: true)
}

/// The peer as the kernel reported it (SO_PEERCRED) plus the supplementary groups of
/// its uid. Groups come from the group database, not from the peer process, so they are
/// the groups the user *would* get at login: the standard approach for unix sockets.
public struct PeerIdentity: Sendable, Equatable {
    public var pid: Int32
    public var uid: UInt32
    public var gid: UInt32
    public var groups: [UInt32]

    public init(pid: Int32, uid: UInt32, gid: UInt32, groups: [UInt32] = []) {
        self.pid = pid
        self.uid = uid
        self.gid = gid
        self.groups = groups
    }
}

/// The `[access]` rules with names resolved, and the resolution of a peer to its grants.
public struct AccessPolicy: Sendable, Equatable {
    public var read: Set<Principal>
    /// Principals whose read access is limited to these types. A principal that appears
    /// here but not in `read` is granted read of exactly these types.
    public var readTypes: [Principal: Set<String>]
    public var record: Set<Principal>
    public var admin: Set<Principal>
    /// The uid the daemon runs as; it and root are granted everything.
    public var daemonUID: UInt32

    public init(read: Set<Principal> = [], readTypes: [Principal: Set<String>] = [:],
                record: Set<Principal> = [], admin: Set<Principal> = [], daemonUID: UInt32) {
        self.read = read
        self.readTypes = readTypes
        self.record = record
        self.admin = admin
        self.daemonUID = daemonUID
    }

    public func grants(for peer: PeerIdentity) -> Grants {
        if peer.uid == 0 || peer.uid == daemonUID { return .everything }
        var principals: Set<Principal> = [.uid(peer.uid), .gid(peer.gid)]
        for g in peer.groups { principals.insert(.gid(g)) }

        var result = Grants()
        for p in principals {
            if let limited = readTypes[p] {
                result.read = result.read.union(.types(limited))
            } else if read.contains(p) {
                result.read = .all
            }
        }
        result.record = !principals.isDisjoint(with: record)
        result.admin = !principals.isDisjoint(with: admin)
        return result
    }
}
