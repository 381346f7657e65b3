import Foundation
import MockBlueZSupport
import StrapGATT
import StrapIngest
import StrapSystem
import Testing
@testable import StrapBluetooth

/// `BlueZDeviceService.write` against the mock bluetoothd's trainer (gatt.py's
/// control_point_write): what reaches the trainer, what comes back to the pipeline, and how
/// a write that cannot happen is refused. The mock, not real bluetoothd or a trainer.
@Suite(.enabled(if: TestTools.available, TestTools.skipReason))
struct BlueZTrainerWriteTests {
    static let trainer = "C0:DA:E0:00:00:31"
    static let idle = "C0:DA:E0:00:00:32"
    static let hr = "C0:DA:E0:00:00:33"

    final class Bed {
        let mock: MockBlueZ
        let service: BlueZDeviceService
        let events = ResultList<SensorEvent>()
        let directory: String

        /// `onLinkUp` runs on the bus queue as the pipeline hears of a link.
        init(onLinkUp: (@Sendable (BlueZDeviceService, SensorAddress) -> Void)? = nil) throws {
            mock = try MockBlueZ(sensors: [.init(address: BlueZTrainerWriteTests.trainer, kind: "ftms", controlPoint: true),
                                           .init(address: BlueZTrainerWriteTests.idle, kind: "ftms", controlPoint: true),
                                           .init(address: BlueZTrainerWriteTests.hr, kind: "hr")])
            directory = FileManager.default.temporaryDirectory.appendingPathComponent("strapd-svc-\(UUID().uuidString)").path
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            let settings = BlueZDeviceService.Settings(stateDirectory: directory, busAddress: mock.bus.address)
            let box = ResultBox<BlueZDeviceService>()
            let events = self.events
            service = BlueZDeviceService(settings: settings, logger: Logger(level: .warning, sink: .stderr)) { event in
                events.append(event)
                if case .linkUp(let address, _, _) = event, let service = box.get() { onLinkUp?(service, address) }
            }
            box.set(service)
            service.start()
            try eventually("ready") { self.service.degraded == nil }
        }

        func connect(_ address: SensorAddress) throws {
            let done = ResultBox<DeviceError?>()
            service.connect(address) { done.set($0) }
            try eventually("connected") { done.get() != nil }
            #expect(done.get()! == nil)
        }

        func write(_ address: SensorAddress, _ c: GATTCharacteristic, _ value: [UInt8]) throws -> DeviceError? {
            let done = ResultBox<DeviceError?>()
            service.write(address, c, value) { done.set($0) }
            try eventually("write answered") { done.get() != nil }
            return done.get()!
        }

        func notifications(_ c: GATTCharacteristic) -> [[UInt8]] {
            events.items.compactMap { if case .notification(BlueZTrainerWriteTests.trainer, c, let v, _) = $0 { v } else { nil } }
        }

        deinit {
            service.stop()
            try? FileManager.default.removeItem(atPath: directory)
        }
    }

    /// Request Control written the moment the pipeline hears of the link (as a controller
    /// that starts on linkUp does) is granted: the control point's indications are enabled
    /// by then, although each CCC write takes a while and the trainer streams as soon as its
    /// measurement's is answered (the mock's `att_delay`, as on one ATT bearer). Its answer, and Machine Status after a target, reach the pipeline as
    /// notifications; the ranges read on connect as reads.
    @Test func requestControlAtLinkUpIsAnsweredThroughThePipeline() throws {
        let atLinkUp = ResultBox<DeviceError?>()
        let bed = try Bed { service, address in
            guard address == Self.trainer else { return }
            service.write(address, .fitnessMachineControlPoint, FitnessMachineControlPointRequest.requestControl.encoded()) { atLinkUp.set($0) }
        }
        try bed.mock.setFault(Self.trainer, "att_delay", 150)
        try bed.connect(Self.trainer)
        try eventually("Request Control answered") { atLinkUp.get() != nil }
        #expect(atLinkUp.get()! == nil)
        try eventually("indication") { !bed.notifications(.fitnessMachineControlPoint).isEmpty }
        #expect(try bed.mock.writes(Self.trainer, "2ad9") == [[0x00]])
        #expect(bed.notifications(.fitnessMachineControlPoint) == [[0x80, 0x00, 0x01]])

        #expect(try bed.write(Self.trainer, .fitnessMachineControlPoint, FitnessMachineControlPointRequest.setTargetPower(250).encoded()) == nil)
        try eventually("second indication and status") {
            bed.notifications(.fitnessMachineControlPoint).count == 2 && !bed.notifications(.fitnessMachineStatus).isEmpty
        }
        #expect(try bed.mock.writes(Self.trainer, "2ad9") == [[0x00], [0x05, 0xFA, 0x00]])
        #expect(bed.notifications(.fitnessMachineControlPoint).last == [0x80, 0x05, 0x01])
        #expect(bed.notifications(.fitnessMachineStatus) == [[0x08, 0xFA, 0x00]])
        let reads = bed.events.items.compactMap { e -> (GATTCharacteristic, [UInt8])? in
            if case .read(Self.trainer, let c, let v, _) = e { (c, v) } else { nil }
        }
        #expect(reads.contains { $0 == (.supportedPowerRange, [0, 0, 0xD0, 0x07, 0x01, 0x00]) })
        #expect(reads.contains { $0 == (.supportedResistanceLevelRange, [0, 0, 0xC8, 0x00, 0x0A, 0x00]) })
        #expect(reads.contains { $0.0 == .fitnessMachineFeature })
    }

    /// A write that cannot happen says why: an address BlueZ has never seen is not found; a
    /// device that is not connected (never, or any more), or that has no such
    /// characteristic, is unavailable; the device's refusal is a failure with BlueZ's name.
    @Test func writesThatCannotHappenAreRefused() throws {
        let bed = try Bed()
        let request = FitnessMachineControlPointRequest.requestControl.encoded()
        #expect(try bed.write("C0:DA:E0:00:00:99", .fitnessMachineControlPoint, request) == .notFound("C0:DA:E0:00:00:99"))
        #expect(try bed.write("not an address", .fitnessMachineControlPoint, request) == .notFound("not an address"))
        let never = try bed.write(Self.idle, .fitnessMachineControlPoint, request)
        #expect(never?.code == "unavailable")
        #expect(never?.description.contains("not connected") == true)

        try bed.connect(Self.hr)
        let missing = try bed.write(Self.hr, .fitnessMachineControlPoint, request)
        #expect(missing?.code == "unavailable")
        #expect(missing?.description.contains("fitness-machine-control-point") == true)

        try bed.connect(Self.trainer)
        let done = ResultBox<DeviceError?>()
        bed.service.disconnect(Self.trainer) { done.set($0) }
        try eventually("disconnected") { done.get() != nil }
        let gone = try bed.write(Self.trainer, .fitnessMachineControlPoint, request)
        #expect(gone?.code == "unavailable")
        #expect(try bed.mock.writes(Self.trainer, "2ad9").isEmpty)
    }

    /// Where the control point's indications could not be enabled the link streams anyway,
    /// and the trainer refuses the write (ATT 0xFD): `internal`, with BlueZ's error name.
    @Test func trainerRefusalIsAFailureWithBlueZsName() throws {
        let bed = try Bed()
        try bed.mock.setFault(Self.trainer, "refuse_control_notify", 2)
        try bed.connect(Self.trainer)
        let refused = try bed.write(Self.trainer, .fitnessMachineControlPoint, FitnessMachineControlPointRequest.requestControl.encoded())
        #expect(refused == .failed("org.bluez.Error.Failed: Operation failed with ATT error: 0xfd"))
        #expect(try bed.mock.writes(Self.trainer, "2ad9") == [[0x00]])
    }
}
