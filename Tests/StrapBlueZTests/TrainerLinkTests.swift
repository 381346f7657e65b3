import Foundation
import StrapBlueZ
import StrapDBus
import StrapGATT
import MockBlueZSupport
import Testing

/// A link to an FTMS trainer against the mock bluetoothd (Tests/Fixtures/mockbluez, whose
/// control point answers as gatt.py's control_point_write says): a mock, not real BlueZ.
@Suite(.enabled(if: TestTools.available, TestTools.skipReason))
struct TrainerLinkTests {
    static let trainer = "C0:11:22:33:55:01"
    static let controlPoint = GATTCharacteristic.fitnessMachineControlPoint.uuidString
    static let status = GATTCharacteristic.fitnessMachineStatus.uuidString

    /// Control point and Machine Status are enabled with StartNotify even where the
    /// measurement uses AcquireNotify, before the link reports streaming; the ranges are read.
    @Test(arguments: [NotifyMode.startNotify, .acquireNotify])
    func subscribesToTheControlPointAndReadsTheRanges(mode: NotifyMode) throws {
        let mock = try MockBlueZ(sensors: [.init(address: Self.trainer, kind: "ftms", controlPoint: true)])
        let daemon = try Daemon(address: mock.bus.address)
        var options = Daemon.fast
        options.notifyMode = mode
        daemon.add(Self.trainer, options)
        try eventually("streaming") { daemon.phase(Self.trainer) == .streaming }
        #expect(try mock.controlStartNotifyCalls(Self.trainer) == ["2ad9": 1, "2ada": 1])
        #expect(try mock.acquireCalls(Self.trainer) == (mode == .acquireNotify ? 1 : 0))
        let reads = { daemon.sink.reads }
        try eventually("ranges read") { reads()[Self.trainer + "/" + GATTCharacteristic.supportedResistanceLevelRange.uuidString] != nil }
        #expect(reads()[Self.trainer + "/" + GATTCharacteristic.supportedPowerRange.uuidString] == [0, 0, 0xD0, 0x07, 0x01, 0x00])
        #expect(reads()[Self.trainer + "/" + GATTCharacteristic.supportedResistanceLevelRange.uuidString] == [0, 0, 0xC8, 0, 0x0A, 0])
        let range = try SupportedRange.decode(.supportedPowerRange, reads()[Self.trainer + "/" + GATTCharacteristic.supportedPowerRange.uuidString] ?? [])
        #expect(range == SupportedRange(minimum: 0, maximum: 2000, increment: 1))
    }

    /// Writes reach the trainer acknowledged, and its indications come back as notifications
    /// of the control point: a target before Request Control is refused (0x05), then granted.
    @Test func writesAndHearsTheIndications() throws {
        let mock = try MockBlueZ(sensors: [.init(address: Self.trainer, kind: "ftms", controlPoint: true)])
        let daemon = try Daemon(address: mock.bus.address)
        daemon.add(Self.trainer)
        try eventually("streaming") { daemon.phase(Self.trainer) == .streaming }
        let link = try #require(daemon.queue.sync { daemon.manager.links[Self.trainer] })
        func write(_ request: FitnessMachineControlPointRequest) throws -> Bool {
            let result: Result<Void, LinkWriteError> = try onQueue(daemon.queue) { done in
                link.write(.fitnessMachineControlPoint, request.encoded()) { done($0) }
            }
            if case .failure(let e) = result { Issue.record("\(request): \(e)"); return false }
            return true
        }
        func indications() -> [[UInt8]] {
            daemon.sink.notifications.filter { $0.characteristic == Self.controlPoint }.map(\.value)
        }
        #expect(try write(.setTargetPower(200)))
        try eventually("refused") { indications().count == 1 }
        #expect(try write(.requestControl))
        try eventually("granted") { indications().count == 2 }
        #expect(try write(.setTargetPower(200)))
        try eventually("target set") { indications().count == 3 }
        #expect(indications() == [[0x80, 0x05, 0x05], [0x80, 0x00, 0x01], [0x80, 0x05, 0x01]])
        #expect(try mock.writes(Self.trainer, "2ad9") == [[0x05, 0xC8, 0x00], [0x00], [0x05, 0xC8, 0x00]])
        try eventually("Machine Status") { daemon.sink.notifications.contains { $0.characteristic == Self.status } }
        #expect(daemon.sink.notifications.filter { $0.characteristic == Self.status }.map(\.value) == [[0x08, 0xC8, 0x00]])
        #expect(try FitnessMachineControlPointResponse.decode(indications()[0]).result == .controlNotPermitted)
    }

    /// The subscriptions are optional: where their StartNotify fails the link streams all
    /// the same, and a write is then refused by the trainer (ATT 0xFD through bluetoothd).
    @Test func refusedControlSubscriptionDoesNotFailTheLink() throws {
        let mock = try MockBlueZ(sensors: [.init(address: Self.trainer, kind: "ftms", controlPoint: true)])
        try mock.setFault(Self.trainer, "refuse_control_notify", 2)
        let daemon = try Daemon(address: mock.bus.address)
        daemon.add(Self.trainer)
        try eventually("streaming") { daemon.phase(Self.trainer) == .streaming }
        try eventually("measurements") { daemon.sink.count(Self.trainer) >= 3 }
        let link = try #require(daemon.queue.sync { daemon.manager.links[Self.trainer] })
        let result: Result<Void, LinkWriteError> = try onQueue(daemon.queue) { done in link.write(.fitnessMachineControlPoint, [0x00]) { done($0) } }
        guard case .failure(.bus(let e)) = result else { Issue.record("write succeeded: \(result)"); return }
        #expect(e.errorName == "org.bluez.Error.Failed")
        #expect(daemon.sink.phases(Self.trainer).filter { $0 == .streaming }.count == 1)
    }

    /// A Fitness Machine without a control point (a plain FTMS sensor) streams as before,
    /// and a write to it names what is missing.
    @Test func plainFitnessMachineHasNothingToControl() throws {
        let sensor = "C0:11:22:33:55:02"
        let mock = try MockBlueZ(sensors: [.init(address: sensor, kind: "ftms")])
        let daemon = try Daemon(address: mock.bus.address)
        daemon.add(sensor)
        try eventually("streaming") { daemon.phase(sensor) == .streaming }
        #expect(try mock.controlStartNotifyCalls(sensor).isEmpty)
        let link = try #require(daemon.queue.sync { daemon.manager.links[sensor] })
        let result: Result<Void, LinkWriteError> = try onQueue(daemon.queue) { done in link.write(.fitnessMachineControlPoint, [0x00]) { done($0) } }
        guard case .failure(.noCharacteristic(let why)) = result else { Issue.record("expected noCharacteristic: \(result)"); return }
        #expect(why.contains("fitness-machine-control-point"))
        #expect(try mock.writes(sensor, "2ad9").isEmpty)
    }
}
