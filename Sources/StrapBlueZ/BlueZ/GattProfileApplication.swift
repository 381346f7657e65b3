import Dispatch
import StrapDBus

/// An ObjectManager-rooted application holding one GattProfile1 whose UUIDs ask BlueZ to
/// auto-connect known sensors (the only way to get background reconnects for a profile
/// BlueZ has no plugin for: docs/bluetooth-field-notes.md#auto-connect-through-gattprofile1).
public final class GattProfileApplication: @unchecked Sendable {
    public let root: ObjectPath
    public let profile: ObjectPath
    public let uuids: [String]
    private let bus: Bus
    private var slots: [BusSlot] = []

    public init(bus: Bus, root: ObjectPath = ObjectPath(unchecked: "/org/strapd/gatt"),
                uuids: [String] = SensorService.discoveryUUIDs) {
        self.bus = bus
        self.root = root
        self.profile = root.appending("profile0")
        self.uuids = uuids
    }

    private var profileProperties: DBusValue { .vardict([("UUIDs", .strings(uuids))]) }

    public func export() throws(BusError) {
        dispatchPrecondition(condition: .onQueue(bus.queue))
        guard slots.isEmpty else { return }
        let profilePath = profile
        slots.append(try bus.export(path: root) { [weak self] call in
            guard let self, call.message.interface == BlueZInterface.objectManager, call.message.member == "GetManagedObjects" else { return false }
            let ifaces = DBusValue.array(element: .dictEntry(key: .string, value: .array(.dictEntry(key: .string, value: .variant))),
                                         [.dictEntry(key: .string(BlueZInterface.gattProfile), value: self.profileProperties)])
            call.reply([.array(element: .dictEntry(key: .objectPath, value: ifaces.type),
                               [.dictEntry(key: .objectPath(profilePath), value: ifaces)])])
            return true
        })
        slots.append(try bus.export(path: profile) { [weak self] call in
            guard let self else { return false }
            switch (call.message.interface, call.message.member) {
            case (BlueZInterface.gattProfile, "Release"):
                BusLog.notice("BlueZ released the GattProfile1 application")
                call.reply()
            case (BlueZInterface.properties, "GetAll"):
                call.reply([call.message.body.first?.string == BlueZInterface.gattProfile ? self.profileProperties : .vardict([])])
            case (BlueZInterface.properties, "Get"):
                guard call.message.body.count == 2, call.message.body[1].string == "UUIDs" else {
                    call.fail(FreedesktopErrorName.unknownProperty.rawValue, "no such property")
                    return true
                }
                call.reply([.variant(.strings(self.uuids))])
            default:
                return false
            }
            return true
        })
    }

    public func unexport() {
        slots.forEach { $0.cancel() }
        slots = []
    }
}
