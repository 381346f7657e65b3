import StrapBlueZ
import StrapDBus
import StrapGATT
import Testing

/// The mirror's handling of odd input from the bus: never a crash, always a clear problem.
@Suite struct ObjectMirrorTests {
    static let hci0 = ObjectPath(unchecked: "/org/bluez/hci0")
    static let dev = ObjectPath(unchecked: "/org/bluez/hci0/dev_AA")
    static let chr = ObjectPath(unchecked: "/org/bluez/hci0/dev_AA/service000a/char000b")
    static let ifacesType = DBusType.array(.dictEntry(key: .string, value: .array(.dictEntry(key: .string, value: .variant))))

    static func ifaces(_ entries: [(String, DBusValue)]) -> DBusValue {
        .array(element: .dictEntry(key: .string, value: .array(.dictEntry(key: .string, value: .variant))),
               entries.map { .dictEntry(key: .string($0.0), value: $0.1) })
    }

    static func managed(_ objects: [(ObjectPath, DBusValue)]) -> DBusValue {
        .array(element: .dictEntry(key: .objectPath, value: ifacesType), objects.map { .dictEntry(key: .objectPath($0.0), value: $0.1) })
    }

    static let tree = managed([
        (hci0, ifaces([("org.bluez.Adapter1", .vardict([("Powered", .boolean(true)), ("Address", .string("00:01"))]))])),
        (dev, ifaces([("org.bluez.Device1", .vardict([("Address", .string("AA:BB")), ("Adapter", .objectPath(hci0)),
                                                     ("UUIDs", .strings(["0000180D-0000-1000-8000-00805F9B34FB"])), ("RSSI", .int16(-40))]))])),
        (chr, ifaces([("org.bluez.GattCharacteristic1", .vardict([("UUID", .string("00002a37-0000-1000-8000-00805f9b34fb")), ("Flags", .strings(["notify"]))]))])),
    ])

    /// `[bluetooth] adapter`: only that adapter and its devices are visible, by name or address.
    @Test func onlyAdapterHidesTheOthers() throws {
        var m = ObjectMirror()
        try m.replaceAll(with: Self.tree)
        for only in ["hci0", "00:01"] {
            m.onlyAdapter = only
            #expect(m.adapters.count == 1 && m.devices.count == 1 && m.device(Self.dev) != nil)
        }
        m.onlyAdapter = "hci1"
        #expect(m.adapters.isEmpty && m.devices.isEmpty && m.device(Self.dev) == nil && m.adapter(Self.hci0) == nil)
        #expect(m.devices(address: "AA:BB").isEmpty)
    }

    @Test func loadsTypedViews() throws {
        var m = ObjectMirror()
        try m.replaceAll(with: Self.tree)
        #expect(m.adapters.map(\.powered) == [true])
        let d = try #require(m.device(Self.dev))
        #expect(d.address == "AA:BB")
        #expect(d.rssi == -40)
        #expect(SensorService.advertised(in: d.uuids) == [.heartRate])
        #expect(m.characteristics(of: Self.dev).map(\.uuid) == ["00002a37-0000-1000-8000-00805f9b34fb"])
        #expect(m.services(of: Self.dev).isEmpty)
        try m.add(ObjectPath(unchecked: "/org/bluez/hci0/dev_AA/service000a"),
                  interfaces: Self.ifaces([("org.bluez.GattService1", .vardict([("UUID", .string("0000180D-0000-1000-8000-00805F9B34FB")), ("Device", .objectPath(Self.dev))]))]))
        #expect(m.services(of: Self.dev).map(\.uuid) == ["0000180d-0000-1000-8000-00805f9b34fb"])
        #expect(m.services(of: Self.dev).first?.device == Self.dev)
    }

    /// Power meters and trainers are sensors; a trainer offering Cycling Power beside FTMS
    /// streams Indoor Bike Data alone (docs/decoding.md#power-and-trainer-samples).
    @Test func powerMeterAndTrainerServices() {
        let cps = "00001818-0000-1000-8000-00805f9b34fb", ftms = "00001826-0000-1000-8000-00805F9B34FB"
        #expect(SensorService.discoveryUUIDs.contains(cps) && SensorService.discoveryUUIDs.contains(ftms.lowercased()))
        #expect(SensorService.advertised(in: [cps]) == [.cyclingPower])
        #expect(SensorService.streamed(SensorService.advertised(in: [cps])).map(\.measurement) == [.cyclingPowerMeasurement])
        let trainer = SensorService.advertised(in: [ftms, cps])
        #expect(trainer == [.cyclingPower, .fitnessMachine])
        #expect(SensorService.streamed(trainer).map(\.measurement) == [.indoorBikeData])
        #expect(SensorService.streamed([.heartRate, .cyclingPower]) == [.heartRate, .cyclingPower])
    }

    /// bluetoothd 5.66 may send ServicesResolved=true after a reconnect without ever sending
    /// Connected=true; the link is up all the same, and goes down with both false.
    @Test func servicesResolvedMeansConnectedWhenTheConnectedSignalWasMissed() throws {
        var m = ObjectMirror()
        try m.replaceAll(with: Self.tree)
        let device = "org.bluez.Device1"
        try m.update(Self.dev, interface: device, changed: ["Connected": .boolean(false), "ServicesResolved": .boolean(false)], invalidated: [])
        #expect(m.device(Self.dev)?.connected == false)
        try m.update(Self.dev, interface: device, changed: ["ServicesResolved": .boolean(true)], invalidated: [])
        #expect(m.device(Self.dev)?.connected == true && m.device(Self.dev)?.servicesResolved == true)
        try m.update(Self.dev, interface: device, changed: ["ServicesResolved": .boolean(false), "Connected": .boolean(false)], invalidated: [])
        #expect(m.device(Self.dev)?.connected == false)
        try m.update(Self.dev, interface: device, changed: ["Connected": .boolean(true)], invalidated: [])
        #expect(m.device(Self.dev)?.connected == true && m.device(Self.dev)?.servicesResolved == false)
    }

    @Test func missingPropertiesDefault() throws {
        var m = ObjectMirror()
        try m.replaceAll(with: Self.managed([(Self.dev, Self.ifaces([("org.bluez.Device1", .vardict([]))]))]))
        let d = try #require(m.device(Self.dev))
        #expect(d.address == nil && d.connected == false && d.uuids.isEmpty && d.rssi == nil)
    }

    @Test func wronglyTypedPropertiesReadAsAbsent() throws {
        var m = ObjectMirror()
        try m.replaceAll(with: Self.managed([(Self.dev, Self.ifaces([("org.bluez.Device1", .vardict([
            ("Address", .int32(5)), ("Connected", .string("yes")), ("UUIDs", .array(element: .int32, [.int32(1)])), ("RSSI", .int32(70000)),
        ]))]))]))
        let d = try #require(m.device(Self.dev))
        #expect(d.address == nil && d.connected == false && d.uuids.isEmpty && d.rssi == nil)
    }

    @Test func rejectsWrongShapes() {
        var m = ObjectMirror()
        #expect(throws: ObjectMirror.Problem.self) { try m.replaceAll(with: .strings(["x"])) }
        #expect(throws: ObjectMirror.Problem.self) { try m.add(Self.dev, interfaces: .vardict([("x", .int32(1))])) }
    }

    @Test func changeForUnknownObjectIsReported() {
        var m = ObjectMirror()
        #expect(throws: ObjectMirror.Problem.unknownObject(Self.dev)) {
            try m.update(Self.dev, interface: "org.bluez.Device1", changed: ["Connected": .boolean(true)], invalidated: [])
        }
    }

    @Test func propertiesChangeAndInvalidate() throws {
        var m = ObjectMirror()
        try m.replaceAll(with: Self.tree)
        try m.update(Self.dev, interface: "org.bluez.Device1", changed: ["Connected": .variant(.boolean(true))], invalidated: ["RSSI"])
        #expect(m.device(Self.dev)?.connected == true)
        #expect(m.device(Self.dev)?.rssi == nil)
    }

    @Test func removingAdapterDropsEverythingBelow() throws {
        var m = ObjectMirror()
        try m.replaceAll(with: Self.tree)
        m.remove(Self.hci0, interfaces: ["org.bluez.Adapter1"])
        #expect(m.objects.isEmpty)
    }

    @Test func removingOneInterfaceKeepsTheObject() throws {
        var m = ObjectMirror()
        try m.replaceAll(with: Self.tree)
        try m.add(Self.dev, interfaces: Self.ifaces([("org.bluez.Battery1", .vardict([("Percentage", .byte(50))]))]))
        #expect(m.device(Self.dev)?.batteryPercentage == 50)
        m.remove(Self.dev, interfaces: ["org.bluez.Battery1"])
        #expect(m.device(Self.dev)?.batteryPercentage == nil)
        #expect(m.device(Self.dev) != nil)
        #expect(m.characteristics(of: Self.dev).count == 1)
    }
}
