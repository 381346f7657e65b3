import Testing
@testable import StrapDBus

/// Signatures, object paths, value accessors and error names: the pure layer-2 model.
@Suite struct DBusValueModelTests {
    @Test(arguments: ["a{oa{sa{sv}}}", "a{sv}", "ay", "h", "(yqs)", "aas", "oa{sa{sv}}as", ""])
    func roundTripsText(_ text: String) throws {
        #expect(try DBusSignature(parsing: text).description == text)
    }

    @Test func parsesGetManagedObjectsShape() throws {
        let sig = try DBusSignature(parsing: "a{oa{sa{sv}}}")
        let props = DBusType.array(.dictEntry(key: .string, value: .variant))
        #expect(sig.types == [.array(.dictEntry(key: .objectPath, value: .array(.dictEntry(key: .string, value: props))))])
    }

    @Test(arguments: ["{sv}", "a{vs}", "a{s}", "(", "()", "a", "z", "a{sv", "s)"])
    func rejectsMalformed(_ text: String) {
        #expect(throws: DBusSignatureError.self) { try DBusSignature(parsing: text) }
    }

    @Test func objectPathValidation() throws {
        #expect(ObjectPath.isValid("/org/bluez/hci0/dev_AA_BB"))
        #expect(ObjectPath.isValid("/"))
        #expect(!ObjectPath.isValid("org/bluez"))
        #expect(!ObjectPath.isValid("/org//bluez"))
        #expect(!ObjectPath.isValid("/org/bluez/"))
        #expect(!ObjectPath.isValid("/org/blu-ez"))
        let dev = try ObjectPath("/org/bluez/hci0/dev_AA")
        #expect(dev.appending("service000a").isDescendant(of: dev))
        #expect(!dev.isDescendant(of: dev))
        #expect(!(try ObjectPath("/org/bluez/hci0/dev_AAB")).isDescendant(of: dev))
    }

    @Test func valueSignaturesAndAccessors() {
        let props = DBusValue.vardict([("Name", .string("H10")), ("RSSI", .int16(-60)), ("UUIDs", .strings(["180d"]))])
        #expect(props.signature == "a{sv}")
        let dict = props.stringDictionary
        #expect(dict?["Name"]?.string == "H10")
        #expect(dict?["RSSI"]?.integer == -60)
        #expect(dict?["UUIDs"]?.stringArray == ["180d"])
        #expect(DBusValue.bytes([1, 2, 3]).bytes == [1, 2, 3])
        #expect(DBusValue.variant(.variant(.boolean(true))).bool == true)
        // Wrong types come back as nil, never a trap.
        #expect(DBusValue.string("x").bool == nil)
        #expect(DBusValue.int32(1).bytes == nil)
        #expect(DBusValue.strings(["a"]).stringDictionary == nil)
    }

    @Test func errorNamesMapToTypedCases() {
        let e = DBusErrorReply(name: "org.bluez.Error.Failed", message: "le-connection-abort-by-local")
        #expect(e.bluez == .failed)
        #expect(e.freedesktop == nil)
        #expect(DBusErrorReply(name: "org.freedesktop.DBus.Error.UnknownObject", message: "").freedesktop == .unknownObject)
        #expect(e.description == "org.bluez.Error.Failed: le-connection-abort-by-local")
    }
}
