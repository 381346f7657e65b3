import Dispatch
import Foundation
import MockBlueZSupport
@testable import StrapBlueZ
import StrapDBus
import Synchronization
import Testing

/// The notification fast path (`CharacteristicValueSignal`, `Bus.addMatch(_:fast:handler:)`):
/// real signals through a private dbus-daemon, sent by one sd-bus connection and received by
/// another. A Value-only PropertiesChanged is read straight from the message; every other
/// shape reaches the generic handler whole, however far the fast reader got before it declined.
@Suite(.enabled(if: TestTools.available, TestTools.skipReason))
struct CharacteristicValueSignalTests {
    private static let characteristic = ObjectPath(unchecked: "/org/bluez/hci0/dev_C0_DA_E0_00_00_01/service000c/char000d")

    @Test func onlyAValueAloneIsTakenEveryOtherShapeArrivesWhole() throws {
        let bus = try PrivateBus()
        let queue = DispatchQueue(label: "value-signal-test")
        let sender = try queue.sync { try Bus.connect(address: bus.address, queue: queue) }
        let receiver = try queue.sync { try Bus.connect(address: bus.address, queue: queue) }
        defer { queue.sync { sender.close(); receiver.close() } }

        let fast = Mutex<[[UInt8]]>([])
        let generic = Mutex<[[DBusValue]]>([])
        let done = DispatchSemaphore(value: 0)
        let slot = try queue.sync {
            try receiver.addMatch("type='signal',interface='org.freedesktop.DBus.Properties',member='PropertiesChanged'",
                                  fast: { m in
                                      guard let value = CharacteristicValueSignal.value(of: m) else { return false }
                                      fast.withLock { $0.append([UInt8](value)) }
                                      return true
                                  }) { message in
                generic.withLock { $0.append(message.body) }
                if message.body.first?.string == "end" { done.signal() }
            }
        }
        defer { queue.sync { slot.cancel() } }
        // The match is asynchronous: a reply from the daemon after it means it is in place.
        _ = try onQueue(queue) { reply in
            receiver.call(destination: "org.freedesktop.DBus", path: ObjectPath(unchecked: "/org/freedesktop/DBus"),
                          interface: "org.freedesktop.DBus", member: "GetId", arguments: []) { reply($0.map { _ in true }) }
        }

        let gatt = BlueZInterface.gattCharacteristic
        let shapes: [[DBusValue]] = [
            [.string(gatt), .vardict([("Value", .bytes([0x16, 0x48, 0x20, 0x03]))]), .strings([])],   // taken
            [.string(gatt), .vardict([("Value", .bytes([0x00, 0x50])), ("Notifying", .boolean(true))]), .strings([])],
            [.string(gatt), .vardict([("Value", .bytes([0x00, 0x51]))]), .strings(["Flags"])],
            [.string(BlueZInterface.device), .vardict([("Value", .bytes([0x00, 0x52]))]), .strings([])],
            [.string(gatt), .vardict([("Notifying", .boolean(false))]), .strings([])],
            [.string(gatt), .vardict([("Value", .bytes([]))]), .strings([])],                          // taken
            [.string(gatt), .vardict([("Value", .strings(["not", "bytes"]))]), .strings([])],
            [.string("end"), .vardict([]), .strings([])],
        ]
        try queue.sync {
            for body in shapes {
                try sender.emitSignal(path: Self.characteristic, interface: "org.freedesktop.DBus.Properties",
                                      member: "PropertiesChanged", arguments: body)
            }
        }
        #expect(done.wait(timeout: .now() + 20) == .success)
        #expect(fast.withLock { $0 } == [[0x16, 0x48, 0x20, 0x03], []])
        let declined = generic.withLock { $0 }
        #expect(declined.count == 6)
        // Each declined signal decoded from its start: the same values that were sent.
        for (got, sent) in zip(declined, [shapes[1], shapes[2], shapes[3], shapes[4], shapes[6], shapes[7]]) {
            #expect(got.count == 3 && got[0] == sent[0] && got[2].stringArray == sent[2].stringArray)
            #expect(got[1].stringDictionary?.mapValues(\.unwrapped) == sent[1].stringDictionary?.mapValues(\.unwrapped))
        }
    }
}
