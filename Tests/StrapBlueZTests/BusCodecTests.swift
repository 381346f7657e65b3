import Dispatch
import Foundation
import StrapBlueZ
import StrapDBus
import MockBlueZSupport
import Testing

/// The DBusValue codec checked against foreign implementations: values we encode are read
/// back by busctl (`--json=short`), values busctl encodes are decoded by us, and a python-dbus
/// echo round-trips every BlueZ shape.
@Suite(.enabled(if: TestTools.available, TestTools.skipReason))
final class BusCodecTests {
    let bus: PrivateBus
    let echo: Child
    let queue: DispatchQueue
    let client: Bus

    init() throws {
        bus = try PrivateBus()
        echo = try bus.python("echo.py", [bus.address])
        _ = try echo.waitForLine { $0 == "ready" }
        let address = bus.address
        let q = DispatchQueue(label: "codec-test")
        queue = q
        client = try q.sync { try Bus.connect(address: address, queue: q) }
    }

    deinit {
        queue.sync { client.close() }
        echo.kill(SIGKILL)
        echo.waitForExit()
    }

    private func call(_ member: String, _ args: [DBusValue]) throws -> Result<[DBusValue], BusError> {
        let client = self.client
        return try onQueue(queue) { done in
            client.call(destination: "org.strapd.Echo", path: ObjectPath(unchecked: "/echo"),
                        interface: "org.strapd.Echo", member: member, arguments: args) { done($0) }
        }
    }

    private func busctl(_ args: [String]) throws -> String {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/busctl")
        p.arguments = ["--address=" + bus.address] + (args.first == "call" ? ["call", "--"] + args.dropFirst() : args)
        let out = Pipe()
        let err = Pipe()
        p.standardOutput = out
        p.standardError = err
        try p.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        let errors = err.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        if p.terminationStatus != 0 {
            throw TestBedError.command("busctl \(args.joined(separator: " ")): \(String(decoding: errors, as: UTF8.self))")
        }
        return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    static let managedObjects = DBusValue.array(
        element: .dictEntry(key: .objectPath, value: .array(.dictEntry(key: .string, value: .array(.dictEntry(key: .string, value: .variant))))),
        [.dictEntry(key: .objectPath(ObjectPath(unchecked: "/org/bluez/hci0/dev_AA")),
                    value: .array(element: .dictEntry(key: .string, value: .array(.dictEntry(key: .string, value: .variant))),
                                  [.dictEntry(key: .string("org.bluez.Device1"),
                                              value: .vardict([("Name", .string("H10")), ("RSSI", .int16(-61)), ("Connected", .boolean(true))]))]))])

    /// sd-bus's own call timeouts run on the Bus's timer, which is set only when sd-bus's
    /// deadline changes: a call nobody answers ends with NoReply, calls in between are not
    /// held up, and a second unanswered call after the first timer fired times out too.
    @Test func unansweredCallsTimeOutThroughTheBusTimer() throws {
        let client = self.client
        for round in 0..<2 {
            let hung: Result<[DBusValue], BusError> = try onQueue(queue, timeout: 20) { done in
                client.call(destination: "org.strapd.Echo", path: ObjectPath(unchecked: "/echo"), interface: "org.strapd.Echo",
                            member: "Hang", timeoutMicroseconds: 300_000) { done($0) }
            }
            guard case .failure(.reply(let reply)) = hung else { Issue.record("round \(round): \(hung)"); continue }
            #expect(reply.name == "org.freedesktop.DBus.Error.NoReply")
            #expect(try call("Echo", [.variant(.string("after \(round)"))]).get() == [.variant(.string("after \(round)"))])
        }
    }

    @Test func encodedValuesReadBackByBusctl() throws {
        let cases: [(DBusValue, String)] = [
            (.bytes([0x10, 0x48, 0xff]), #"{"type":"v","data":[{"type":"ay","data":[16,72,255]}]}"#),
            (.vardict([("RSSI", .int16(-61))]), #"{"type":"v","data":[{"type":"a{sv}","data":{"RSSI":{"type":"n","data":-61}}}]}"#),
            (.structure([.uint16(7), .string("x"), .boolean(false)]), #"{"type":"v","data":[{"type":"(qsb)","data":[7,"x",false]}]}"#),
            (.objectPath(ObjectPath(unchecked: "/org/bluez/hci0")), #"{"type":"v","data":[{"type":"o","data":"/org/bluez/hci0"}]}"#),
        ]
        for (value, expected) in cases {
            #expect(throws: Never.self) { try self.call("Store", [.variant(value)]).get() }
            #expect(try busctl(["--json=short", "call", "org.strapd.Echo", "/echo", "org.strapd.Echo", "Last"]) == expected, "\(value)")
        }
    }

    @Test func busctlEncodedValuesDecode() throws {
        _ = try busctl(["call", "org.strapd.Echo", "/echo", "org.strapd.Echo", "Store", "v", "a{oa{sa{sv}}}", "1",
                        "/org/bluez/hci0/dev_AA", "1", "org.bluez.Device1", "3", "Name", "s", "H10", "RSSI", "n", "-61", "Connected", "b", "true"])
        let last = try call("Last", []).get()
        #expect(last == [.variant(Self.managedObjects)])
        _ = try busctl(["call", "org.strapd.Echo", "/echo", "org.strapd.Echo", "Store", "v", "ay", "3", "1", "2", "250"])
        #expect(try call("Last", []).get().first?.bytes == [1, 2, 250])
    }

    @Test func pythonEchoRoundTripsBlueZShapes() throws {
        let shapes: [DBusValue] = [
            Self.managedObjects,
            .vardict([("Value", .bytes([])), ("Flags", .strings(["notify", "read"])), ("Service", .objectPath(ObjectPath(unchecked: "/a/b")))]),
            .array(element: .string, []),
            .structure([.double(1.5), .int64(-1), .uint64(UInt64.max), .uint32(7), .int32(-7), .byte(0)]),
            .signature(try DBusSignature(parsing: "a{sv}")),
            // Byte arrays are read whole (sd_bus_message_read_array); nested and empty ones too.
            .array(element: .array(.byte), [.bytes([1, 2, 3]), .bytes([]), .bytes((0..<600).map { UInt8($0 % 256) })]),
            .vardict([("ManufacturerData", .array(element: .dictEntry(key: .uint16, value: .variant),
                                                    [.dictEntry(key: .uint16(0x006b), value: .variant(.bytes([0xde, 0xad])))]))]),
            .structure([.bytes([0x16, 0x48]), .string("after"), .bytes([7])]),
        ]
        for value in shapes {
            #expect(try call("Echo", [.variant(value)]).get() == [.variant(value)], "\(value)")
        }
    }

    @Test func errorRepliesCarryTheirNames() throws {
        let result = try call("NoSuchMethod", [])
        guard case .failure(.reply(let reply)) = result else {
            Issue.record("expected an error reply, got \(result)")
            return
        }
        #expect(reply.name == "org.freedesktop.DBus.Error.UnknownMethod")
    }

    @Test func mismatchedArrayIsRejectedBeforeSending() throws {
        let bad = DBusValue.array(element: .string, [.int32(1)])
        guard case .failure(.encoding) = try call("Echo", [.variant(bad)]) else {
            Issue.record("expected an encoding error")
            return
        }
    }
}
