import Glibc
@testable import StrapConfig
import Testing

func fixture(_ name: String) throws -> (path: String, text: String) {
    // Tests/StrapConfigTests/ConfigTests.swift → Tests/Fixtures/config/NAME
    let here = #filePath
    let tests = here.split(separator: "/").dropLast(2).joined(separator: "/")
    let path = "/" + tests + "/Fixtures/config/" + name
    guard let f = fopen(path, "r") else { throw ConfigValue.Invalid("cannot open \(path)") }
    defer { fclose(f) }
    var bytes: [UInt8] = []
    var buf = [UInt8](repeating: 0, count: 4096)
    while true {
        let n = fread(&buf, 1, buf.count, f)
        if n == 0 { break }
        bytes += buf[..<n]
    }
    return (path, String(decoding: bytes, as: UTF8.self))
}

@Suite struct ConfigFileTests {
    @Test func defaultsMatchTheDocumentation() {
        let c = Configuration()
        #expect(c.daemon.stateDirectory == "/var/lib/strapd")
        #expect(c.daemon.socket == "/run/strapd/strapd.sock")
        #expect(c.daemon.socketGroup == "strapd")
        #expect(c.store.sync == .interval)
        #expect(c.store.syncInterval == .milliseconds(100))
        #expect(c.store.retention == .forever)
        #expect(c.bluetooth.autoConnect && !c.bluetooth.pairAgent && c.bluetooth.notifyMode == .notify)
        #expect(c.simulate.devices == [.hr, .csc])
    }

    @Test func everyKeyIsParsed() throws {
        let (path, text) = try fixture("full.conf")
        let parsed = try ConfigParser.parse(text, path: path)
        #expect(parsed.warnings.isEmpty, "\(parsed.warnings)")
        let c = parsed.configuration
        #expect(c.daemon.stateDirectory == "/srv/strapd")
        #expect(c.daemon.socket == "/run/strapd/test.sock")
        #expect(c.daemon.logLevel == .debug)
        #expect(c.daemon.socketGroup == "fitness")
        #expect(c.daemon.clientBuffer == 8 << 20)
        #expect(c.daemon.maxClients == 200)
        #expect(c.daemon.maxWorkoutSessions == 100)
        #expect(c.store.sync == .always)
        #expect(c.store.syncInterval == .milliseconds(250))
        #expect(c.store.retention == .duration(.seconds(14 * 86_400)))
        #expect(c.bluetooth.adapter == "hci1")
        #expect(!c.bluetooth.autoConnect)
        #expect(c.bluetooth.notifyMode == .acquire)
        #expect(c.bluetooth.scanTimeout == .seconds(60))
        #expect(c.bluetooth.pairAgent)
        #expect(c.access.read == [.uid(1000), .group("strapd")])
        #expect(c.access.readTypes == [.uid(1001): ["heartRate", "batteryLevel"], .group("coaches"): ["heartRate"]])
        #expect(c.access.record == [.group("strapd"), .user("alice")])
        #expect(c.access.admin == [.uid(1000)])
        #expect(c.simulate.devices == [.hr, .hr, .csc, .rsc])
        let bike = try #require(c.devices["AA:BB:CC:DD:EE:FF"])
        #expect(bike.name == "Trainer bike")
        #expect(bike.wheelCircumference == 2.105)
        #expect(bike.notifyMode == .notify)
        #expect(bike.cadenceIsSpm == true)
        #expect(bike.adapter == "hci1")
        #expect(c.devices["11:22:33:44:55:66"]?.wheelCircumference == 2.096)
        #expect(c.devices["11:22:33:44:55:66"]?.adapter == "00:1A:7D:DA:71:13")
        #expect(c.devices["11:22:33:44:55:66"]?.name == nil)
        #expect(c.mqtt.host == "broker.example.net" && c.mqtt.port == 8884 && c.mqtt.unixSocket == "/run/mosquitto/mqtt.sock")
        #expect(c.mqtt.usesTLS && !c.mqtt.tlsVerify && c.mqtt.caFile == "/etc/strapd/mqtt-ca.crt")
        #expect(c.mqtt.username == "gym-box-1" && c.mqtt.passwordFile == "mqtt-password" && c.mqtt.topicPrefix == "gym/box1")
        #expect(c.mqtt.qos == 2 && c.mqtt.types == ["heartRate", "batteryLevel"] && c.mqtt.protocolVersion == .v311)
        #expect(c.mqtt.keepAlive == .seconds(45) && !c.mqtt.homeAssistant && c.mqtt.homeAssistantPrefix == "ha")
        #expect(c.mqtt.reconnectMin == .seconds(2) && c.mqtt.reconnectMax == .seconds(300) && c.mqtt.maxInflight == 256)
        // Parsed one by one, the keys contradict each other: the daemon refuses to start.
        #expect(c.mqtt.problems().first == "mqtt.host and mqtt.unix_socket are both set; name one broker")
        // Every schema key is covered by the fixture: it differs from the default.
        let untouched = ConfigSchema.keys.map(\.qualifiedName).filter { c.value(of: $0) == Configuration().value(of: $0) }
        #expect(untouched.isEmpty, "fixture leaves defaults for \(untouched)")
    }

    @Test func unknownSectionsKeysAndRepeatsAreWarningsWithLines() throws {
        let (path, text) = try fixture("warnings.conf")
        let parsed = try ConfigParser.parse(text, path: path)
        #expect(parsed.warnings.map(\.description) == [
            "\(path):3: daemon.colour: unknown key; ignored",
            "\(path):4: daemon.log_level: set again (first at line 2); this value wins",
            "\(path):6: unknown section [plugins]; its keys are ignored",
        ])
        #expect(parsed.configuration.daemon.logLevel == .notice)
        #expect(parsed.configuration.store.sync == SyncMode.none)
    }

    @Test func badValuesNameFileLineKeyAndReason() throws {
        let (path, text) = try fixture("bad.conf")
        do {
            _ = try ConfigParser.parse(text, path: path)
            Issue.record("bad.conf parsed")
        } catch {
            let lines = error.problems.map(\.description)
            #expect(lines == [
                "\(path):2: store.sync: expected one of always, interval, none, got \"sometimes\"",
                "\(path):3: store.sync_interval: a duration needs a unit (ms, s, min, h, d, w), got \"100\"",
                "\(path):4: store.retention: must be 0 (forever) or at least 1h",
                "\(path):7: bluetooth.auto_connect: expected yes or no, got \"maybe\"",
                "\(path):10: access.read: \"abc\" is not a valid uid",
                "\(path):11: access.read_types.uid:1000: unknown sample type \"steps\" (known: \(knownSampleTypes.joined(separator: ", ")))",
                "\(path):13: \"not-an-address\" is not a Bluetooth address (AA:BB:CC:DD:EE:FF)",
            ])
        }
    }

    @Test(arguments: [
        ("key = 1", "key outside any [section]"),
        ("[daemon\nx = 1", "malformed section header"),
        ("[daemon]\njust words", "expected key = value"),
        ("[daemon]\nsocket = relative/path", "expected an absolute path"),
        ("[daemon]\nclient_buffer = 1K", "must be at least 64K"),
        ("[daemon]\nmax_clients = 0", "outside 1...65536"),
        ("[daemon]\nmax_workout_sessions = 0", "outside 1...1024"),
        ("[bluetooth]\nadapter = hcix", "expected an adapter: hciN with N a number"),
        ("[bluetooth]\nscan_timeout = 0", "between 1s and 1h"),
        ("[simulate]\ndevices = hr, bike", "expected one of hr, csc, rsc, power, trainer"),
        ("[device.AA:BB:CC:DD:EE:FF]\nwheel_circumference = 21m", "not a plausible wheel circumference"),
        ("[device.AA:BB:CC:DD:EE:FF]\nadapter = usb0", "expected an adapter: hciN with N a number"),
    ])
    func structuralAndRangeErrors(text: String, fragment: String) {
        #expect(throws: ConfigError.self) { try ConfigParser.parse(text, path: "t.conf") }
        do { _ = try ConfigParser.parse(text, path: "t.conf") } catch {
            #expect(error.problems.count == 1)
            #expect(error.problems.first?.description.contains(fragment) == true, "\(error)")
            #expect(error.problems.first?.description.hasPrefix("t.conf:") == true)
        }
    }

    /// `[device.ADDR] adapter` pins a sensor to one adapter: hciN or the adapter's address;
    /// anything else is refused with the forms that are accepted.
    @Test func deviceAdapterIsHciNOrAnAddress() throws {
        let section = "[device.AA:BB:CC:DD:EE:FF]\nadapter = "
        #expect(try ConfigParser.parse(section + "hci1", path: "t.conf").configuration.devices["AA:BB:CC:DD:EE:FF"]?.adapter == "hci1")
        #expect(try ConfigParser.parse(section + "hci12", path: "t.conf").configuration.devices["AA:BB:CC:DD:EE:FF"]?.adapter == "hci12")
        #expect(try ConfigParser.parse(section + "00:1a:7d:da:71:13", path: "t.conf").configuration
            .devices["AA:BB:CC:DD:EE:FF"]?.adapter == "00:1A:7D:DA:71:13")
        #expect(try ConfigParser.parse(section, path: "t.conf").configuration.devices["AA:BB:CC:DD:EE:FF"]?.adapter == nil)
        for bad in ["usb0", "hci", "hci-1", "hci1x", "HCI1", "00:1A:7D:DA:71"] {
            do {
                _ = try ConfigParser.parse(section + bad, path: "t.conf")
                Issue.record("accepted adapter = \(bad)")
            } catch {
                #expect(error.problems.map(\.description) == [
                    "t.conf:2: device.AA:BB:CC:DD:EE:FF.adapter: expected an adapter: hciN with N a number (hci0, hci1) "
                        + "or its Bluetooth address (AA:BB:CC:DD:EE:FF), got \"\(bad)\"",
                ])
            }
        }
    }

    @Test func crlfAndQuotedValues() throws {
        let c = try ConfigParser.parse("[daemon]\r\nlog_level = warning\r\nsocket = \"/run/x y.sock\"\r\n", path: "crlf.conf").configuration
        #expect(c.daemon.logLevel == .warning)
        #expect(c.daemon.socket == "/run/x y.sock")
    }
}

@Suite struct ConfigOverrideTests {
    @Test func flagsOverrideTheFile() throws {
        let file = try ConfigParser.parse("[daemon]\nsocket = /run/a.sock\nlog_level = info\n", path: "f").configuration
        let c = try ConfigOverrides.apply([("--socket", "/tmp/b.sock"), ("--log-level", "debug"), ("--state-dir", "/tmp/state"),
                                           ("--set", "store.sync=none"), ("--set", "device.aa:bb:cc:dd:ee:ff.name=Bike")], to: file)
        #expect(c.daemon.socket == "/tmp/b.sock")
        #expect(c.daemon.logLevel == .debug)
        #expect(c.daemon.stateDirectory == "/tmp/state")
        #expect(c.store.sync == SyncMode.none)
        #expect(c.devices["AA:BB:CC:DD:EE:FF"]?.name == "Bike")
    }

    @Test func badOverridesNameTheFlag() {
        do {
            _ = try ConfigOverrides.apply([("--log-level", "loud"), ("--set", "store.nope=1"), ("--colour", "x")], to: Configuration())
            Issue.record("accepted")
        } catch {
            #expect(error.problems.map(\.description) == [
                "command line --log-level: daemon.log_level: expected one of debug, info, notice, warning, error, got \"loud\"",
                "command line --set: store.nope: unknown key",
                "command line --colour: not a configuration flag",
            ])
        }
    }

    @Test func reloadClassification() throws {
        let old = Configuration()
        var new = old
        new.daemon.logLevel = .debug
        new.daemon.socket = "/run/other.sock"
        new.access.readTypes[.uid(5)] = ["heartRate"]
        new.devices["AA:BB:CC:DD:EE:FF"] = Configuration.DeviceSettings()
        #expect(new.changedKeys(comparedTo: old) == ["daemon.socket", "daemon.log_level", "access.read_types", "device.AA:BB:CC:DD:EE:FF"])
        #expect(new.restartRequiredChanges(comparedTo: old) == ["daemon.socket"])
    }
}

@Suite struct ConfigValueTests {
    @Test(arguments: [
        ("0", Duration.zero), ("100ms", .milliseconds(100)), ("30s", .seconds(30)), ("5min", .seconds(300)),
        ("5m", .seconds(300)), ("2h", .seconds(7200)), ("14d", .seconds(14 * 86_400)), ("1w", .seconds(604_800)),
        ("1h30min", .seconds(5400)), ("1H 30S", .seconds(3630)),
    ])
    func durations(text: String, expected: Duration) throws {
        #expect(try ConfigValue.duration(text) == expected)
    }

    @Test(arguments: ["", "10", "ms", "10x", "-5s", "1.5h", "99999999999999d", "99999999999999w", "99999999999999999999s"])
    func badDurations(_ text: String) {
        #expect(throws: ConfigValue.Invalid.self) { try ConfigValue.duration(text) }
    }

    @Test(arguments: [("512", 512), ("64K", 65536), ("4M", 4 << 20), ("1GiB", 1 << 30), ("2 MiB", 2 << 20)])
    func sizes(text: String, expected: Int) throws {
        #expect(try ConfigValue.size(text) == expected)
    }

    @Test func booleansPrincipalsAddresses() throws {
        for yes in ["yes", "TRUE", "on", "1"] { #expect(try ConfigValue.bool(yes)) }
        for no in ["no", "False", "off", "0"] { #expect(try !ConfigValue.bool(no)) }
        #expect(try ConfigValue.principals("uid:0,gid:5  group:wheel user:_x uid:0") == [.uid(0), .gid(5), .group("wheel"), .user("_x")])
        #expect(throws: ConfigValue.Invalid.self) { try ConfigValue.principal("group:a b") }
        #expect(throws: ConfigValue.Invalid.self) { try ConfigValue.principal("host:x") }
        #expect(try ConfigValue.address("0a:1b:2c:3d:4e:5f") == "0A:1B:2C:3D:4E:5F")
        #expect(throws: ConfigValue.Invalid.self) { try ConfigValue.address("0a:1b:2c:3d:4e") }
    }
}
