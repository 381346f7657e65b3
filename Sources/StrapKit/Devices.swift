/// What this connection's peer may do, strapd's `access.status` (docs/protocol.md): HealthKit's
/// authorization status, asked for instead of trying and reading `notAuthorized`.
public struct AccessStatus: Sendable, Equatable {
    /// The `read` grant: every type, none, or some (`read_types`).
    public enum Read: String, Sendable, Equatable {
        case all, none, limited
    }

    public let read: Read
    /// Workout control.
    public let record: Bool
    /// Devices (scan, pair, forget, …), deletion, the profile.
    public let admin: Bool
    /// Every operation of the daemon: whether this peer may call it.
    public let operations: [String: Bool]

    public init(read: Read, record: Bool, admin: Bool, operations: [String: Bool]) {
        self.read = read
        self.record = record
        self.admin = admin
        self.operations = operations
    }

    /// Whether the peer may call `op`; an operation the daemon does not have is false.
    public func allows(_ op: String) -> Bool { operations[op] ?? false }
}

/// One device a `devices.scan` found: its advertisement as strapd relays it.
public struct ScannedDevice: Sendable, Equatable {
    public let address: String
    /// The advertised name; nil when the device advertises none.
    public let name: String?
    public let rssi: Int?
    /// The advertised service UUIDs, lower case.
    public let services: [String]

    public init(address: String, name: String?, rssi: Int?, services: [String]) {
        self.address = address
        self.name = name
        self.rssi = rssi
        self.services = services
    }
}

/// The device operations that take one address and answer once done (docs/protocol.md,
/// `devices.pair` and its siblings). Each needs the `admin` grant.
public enum DeviceCommand: String, Sendable, CaseIterable {
    case pair, connect, disconnect, forget, resetEnergy

    /// The socket operation's name.
    public var op: String { "devices." + rawValue }
}

extension StrapStore {
    /// This connection's grants (`access.status`). Needs no grant.
    public func accessStatus() async throws -> AccessStatus {
        let result = try await request("access.status")
        guard let grants = result.object("grants"), let read = grants.string("read").flatMap(AccessStatus.Read.init(rawValue:)),
              let record = grants.bool("record"), let admin = grants.bool("admin") else {
            throw StrapKitError.malformedReply("access.status without its grants")
        }
        var operations: [String: Bool] = [:]
        for (name, value) in result.object("operations")?.entries ?? [] {
            if case .bool(let allowed) = value { operations[name] = allowed }
        }
        return AccessStatus(read: read, record: record, admin: admin, operations: operations)
    }

    /// Discovers devices for `timeout` seconds (`devices.scan`, grant `admin`) and returns each
    /// device found, once, in the order first found; a device found again replaces its earlier
    /// advertisement. `busy` when another client's scan runs (one adapter-wide discovery).
    public func scanDevices(timeout: Double) async throws -> [ScannedDevice] {
        let (_, events) = try await rawStream("devices.scan", ["timeout": .double(timeout)])
        var found: [ScannedDevice] = []
        for try await event in events where event.kind == "found" {
            guard let address = event.data.string("address") else {
                throw StrapKitError.malformedReply("a found event without an address")
            }
            let services = if case .array(let items)? = event.data["services"] {
                items.compactMap { if case .string(let s) = $0 { s } else { nil } }
            } else { [String]() }
            let device = ScannedDevice(address: address, name: event.data.string("name"),
                                       rssi: event.data.int("rssi").map { Int($0) }, services: services)
            if let i = found.firstIndex(where: { $0.address == address }) { found[i] = device } else { found.append(device) }
        }
        return found
    }

    /// Runs `command` on the device at `address` and returns once strapd completed it, with the
    /// address as strapd spells it (upper case) (`notFound` for a device strapd does not know,
    /// `badRequest` for an address that is none).
    @discardableResult
    public func deviceCommand(_ command: DeviceCommand, address: String) async throws -> String {
        guard let done = try await request(command.op, ["address": .string(address)]).string("address") else {
            throw StrapKitError.malformedReply("\(command.op) without the address")
        }
        return done
    }

    /// Pairs (bonds) with the device and marks it trusted (`devices.pair`).
    public func pairDevice(_ address: String) async throws { try await deviceCommand(.pair, address: address) }

    /// Disconnects the device, removes its bond and forgets it (`devices.forget`).
    public func forgetDevice(_ address: String) async throws { try await deviceCommand(.forget, address: address) }

    /// The addresses of every device strapd lists (`devices.list`, grant `read`), sorted.
    public func deviceAddresses() async throws -> [String] {
        guard case .array(let devices)? = try await request("devices.list")["devices"] else {
            throw StrapKitError.malformedReply("devices.list without devices")
        }
        return devices.compactMap { if case .object(let o) = $0 { o.string("address") } else { nil } }
    }
}
