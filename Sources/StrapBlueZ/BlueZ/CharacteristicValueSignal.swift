import CSystemd
import Glibc

/// bluetoothd's signal for one notification under StartNotify: PropertiesChanged on
/// `org.bluez.GattCharacteristic1` with `Value` the only change and nothing invalidated. It is
/// the one signal strapd receives at sensor rate, so it is read straight out of the sd-bus
/// message: no `BusMessage`, no value tree, no dictionary, and the mirror is not updated (no
/// part of strapd reads a characteristic's mirrored `Value`). Anything else, a `Value` beside
/// another property included, goes the generic way (`BlueZClient.propertiesChanged`).
enum CharacteristicValueSignal {
    // StaticStrings, compared as the C strings they are: a `String` handed to `strcmp` is
    // copied into a new NUL-terminated array at each call (two allocations per notification).
    private static let signature: StaticString = "sa{sv}as"
    private static let valueKey: StaticString = "Value"

    /// The bytes of `Value`, valid until the message is released; nil when the message is not
    /// that signal (it may then have been read partway: the caller rewinds it).
    static func value(of m: OpaquePointer) -> UnsafeRawBufferPointer? {
        guard let actual = sd_bus_message_get_signature(m, 1), equal(actual, signature) else { return nil }
        // With the signature known, each step below fails only on a malformed message.
        guard let interface = readString(m), equal(interface, BlueZInterface.gattCharacteristicLiteral),
              sd_bus_message_enter_container(m, code("a"), "{sv}") > 0,
              sd_bus_message_enter_container(m, code("e"), "sv") > 0,
              let key = readString(m), equal(key, valueKey),
              sd_bus_message_enter_container(m, code("v"), "ay") > 0 else { return nil }
        var bytes: UnsafeRawPointer?
        var size = 0
        guard sd_bus_message_read_array(m, code("y"), &bytes, &size) > 0,
              sd_bus_message_exit_container(m) >= 0,                    // the variant
              sd_bus_message_exit_container(m) >= 0,                    // the entry
              sd_bus_message_at_end(m, 0) > 0,                          // Value alone changed
              sd_bus_message_exit_container(m) >= 0,                    // the changed properties
              sd_bus_message_enter_container(m, code("a"), "s") > 0,
              sd_bus_message_at_end(m, 0) > 0 else { return nil }      // nothing invalidated
        return UnsafeRawBufferPointer(start: size == 0 ? nil : bytes, count: size)
    }

    private static func readString(_ m: OpaquePointer) -> UnsafePointer<CChar>? {
        var p: UnsafePointer<CChar>?
        guard sd_bus_message_read_basic(m, code("s"), &p) > 0 else { return nil }
        return p
    }

    private static func equal(_ c: UnsafePointer<CChar>, _ s: StaticString) -> Bool {
        s.withUTF8Buffer { literal in
            literal.withMemoryRebound(to: CChar.self) { strncmp(c, $0.baseAddress!, literal.count) == 0 } && c[literal.count] == 0
        }
    }

    @inline(__always) private static func code(_ c: Unicode.Scalar) -> CChar { CChar(UInt8(ascii: c)) }
}
