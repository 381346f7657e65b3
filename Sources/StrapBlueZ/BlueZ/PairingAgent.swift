import Dispatch
import StrapDBus

/// An org.bluez.Agent1 for the opt-in pairing flow. HR/CSC/RSC work unbonded, so strapd
/// registers it only when asked to pair (docs/bluetooth-field-notes.md#pairing-and-bonding).
public final class PairingAgent: @unchecked Sendable {
    public enum Policy: Sendable {
        /// Accept Just Works confirmations and authorizations; refuse PIN/passkey entry.
        case acceptJustWorks
        /// Refuse everything (pairing fails with AuthenticationRejected).
        case rejectAll
    }

    public let path: ObjectPath
    /// Agent capability: NoInputNoOutput by default, since a headless daemon can't show or type codes.
    public let capability: String
    public var policy: Policy
    private let bus: Bus
    private var slot: BusSlot?
    public private(set) var requests: [String] = []

    public init(bus: Bus, path: ObjectPath = ObjectPath(unchecked: "/org/strapd/agent"),
                capability: String = "NoInputNoOutput", policy: Policy = .acceptJustWorks) {
        self.bus = bus
        self.path = path
        self.capability = capability
        self.policy = policy
    }

    public func export() throws(BusError) {
        dispatchPrecondition(condition: .onQueue(bus.queue))
        guard slot == nil else { return }
        slot = try bus.export(path: path) { [weak self] call in
            guard let self, call.message.interface == BlueZInterface.agent, let member = call.message.member else { return false }
            self.requests.append(member)
            let device = call.message.body.first?.objectPath?.rawValue ?? "?"
            switch member {
            case "Release", "Cancel", "DisplayPinCode", "DisplayPasskey":
                call.reply()
            case "RequestConfirmation", "RequestAuthorization", "AuthorizeService":
                switch self.policy {
                case .acceptJustWorks:
                    BusLog.info("agent: accepting \(member) for \(device)")
                    call.reply()
                case .rejectAll:
                    BusLog.notice("agent: rejecting \(member) for \(device)")
                    call.fail(BlueZErrorName.rejected.rawValue, "pairing refused by strapd")
                }
            case "RequestPinCode", "RequestPasskey":
                BusLog.notice("agent: \(member) for \(device) needs input strapd cannot give; rejecting")
                call.fail(BlueZErrorName.rejected.rawValue, "no input capability")
            default:
                return false
            }
            return true
        }
    }

    public func unexport() {
        slot?.cancel()
        slot = nil
    }
}
