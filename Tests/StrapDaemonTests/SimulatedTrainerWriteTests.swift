import Dispatch
import Foundation
import Synchronization
import Testing
import StrapGATT
import StrapIngest
import StrapSimulator
import StrapStore
@testable import StrapDaemon

/// `--simulate` with a trainer: a control point write through `SimulatedDeviceService` is
/// acknowledged, then its indication (and Machine Status) reach the pipeline as the trainer's
/// notifications, as the lead's trainer service will see them from BlueZ.
@Suite(.serialized) struct SimulatedTrainerWriteTests {
    /// What the pipeline was given, and the writes' acknowledgements, in one order.
    final class Log: Sendable {
        enum Entry: Equatable { case ack(String, DeviceError?), event(SensorEvent) }
        let entries = Mutex<[Entry]>([])
        let arrived = DispatchSemaphore(value: 0)

        func append(_ e: Entry) {
            entries.withLock { $0.append(e) }
            arrived.signal()
        }

        /// Waits until `condition` holds (a generous bound, not a measurement).
        func wait(until condition: () -> Bool) -> Bool {
            for _ in 0..<600 {
                if condition() { return true }
                _ = arrived.wait(timeout: .now() + .milliseconds(50))
            }
            return false
        }

        var controlPoint: [(index: Int, bytes: [UInt8])] {
            entries.withLock { log in
                log.enumerated().compactMap { i, e in
                    if case let .event(.notification(_, .fitnessMachineControlPoint, v, _)) = e { (i, v) } else { nil }
                }
            }
        }

        var statuses: [[UInt8]] {
            entries.withLock { log in
                log.compactMap { if case let .event(.notification(_, .fitnessMachineStatus, v, _)) = $0 { v } else { nil } }
            }
        }
    }

    struct Rig {
        let source: SimulatorSource
        let service: SimulatedDeviceService
        let log: Log
        let store: Store
        let dir: String

        init() throws {
            dir = temporaryDirectory()
            store = try Store.open(StoreConfig(directory: dir, sync: .none))
            let (pipeline, _) = makePipeline(store: store)
            let log = Log()
            pipeline.recorder = { log.append(.event($0)) }
            let source = SimulatorSource(simulation: Simulation(kinds: [.hr, .trainer], seed: 4, dropouts: .none), pipeline: pipeline)
            service = SimulatedDeviceService(identities: source.identities,
                                             links: { [weak source] a, up in source?.setConnected(a, up) },
                                             writes: { [weak source] a, c, v in source?.write(a, c, v) ?? (.unavailable("gone"), nil) })
            self.source = source
            self.log = log
            source.start()
            // A controller writes once the trainer is connected and its ranges read, as here:
            // the simulator's first events come from its own thread, in their own time.
            let ranges = log.wait {
                log.entries.withLock { $0.contains { if case .event(.read(SimulatedTrainerWriteTests.trainer, .supportedResistanceLevelRange, _, _)) = $0 { true } else { false } } }
            }
            #expect(ranges, "the trainer connected")
        }

        func write(_ address: SensorAddress, _ bytes: [UInt8], to c: GATTCharacteristic = .fitnessMachineControlPoint) -> DeviceError? {
            let done = DispatchSemaphore(value: 0)
            let result = Mutex<DeviceError?>(nil)
            let log = self.log
            service.write(address, c, bytes) { error in
                result.withLock { $0 = error }
                log.append(.ack(address, error))
                done.signal()
            }
            done.wait()
            return result.withLock { $0 }
        }

        func link(_ address: SensorAddress, up: Bool) {
            let done = DispatchSemaphore(value: 0)
            if up { service.connect(address) { _ in done.signal() } } else { service.disconnect(address) { _ in done.signal() } }
            done.wait()
        }

        func close() {
            source.stop()
            store.close()
            try? FileManager.default.removeItem(atPath: dir)
        }
    }

    static let trainer = "5E:1A:00:00:54:00"
    static let strap = "5E:1A:00:00:48:00"

    @Test func requestControlIsAcknowledgedThenIndicated() throws {
        let rig = try Rig()
        defer { rig.close() }
        #expect(rig.write(Self.trainer, [0x00]) == nil)
        #expect(rig.log.wait { rig.log.controlPoint.count == 1 })
        let ack = rig.log.entries.withLock { $0.firstIndex(of: .ack(Self.trainer, nil)) }
        let indication = try #require(rig.log.controlPoint.first)
        #expect(indication.bytes == [0x80, 0x00, 0x01])
        #expect(try #require(ack) < indication.index, "the write is acknowledged before its indication")

        // A target: success, and Machine Status 0x08 with 200 W.
        #expect(rig.write(Self.trainer, [0x05, 0xC8, 0x00]) == nil)
        #expect(rig.log.wait { rig.log.statuses.count == 1 })
        #expect(rig.log.controlPoint.map(\.bytes) == [[0x80, 0x00, 0x01], [0x80, 0x05, 0x01]])
        #expect(rig.log.statuses == [[0x08, 0xC8, 0x00]])
    }

    @Test func writesThatCannotReachATrainerFail() throws {
        let rig = try Rig()
        defer { rig.close() }
        guard case let .failed(message) = rig.write(Self.strap, [0x00]) else { Issue.record("a strap was written"); return }
        #expect(message.contains("not a trainer"), "\(message)")
        #expect(rig.write("AA:BB:CC:DD:EE:FF", [0x00]) == .notFound("AA:BB:CC:DD:EE:FF"))
        guard case .failed = rig.write(Self.trainer, [0x00], to: .indoorBikeData) else { Issue.record("Indoor Bike Data written"); return }
        rig.link(Self.trainer, up: false)
        guard case .unavailable = rig.write(Self.trainer, [0x00]) else { Issue.record("a disconnected trainer was written"); return }
        #expect(rig.log.controlPoint.isEmpty)
    }

    /// `devices.disconnect` then `connect`: the trainer forgot its controller, and says so with
    /// Control Not Permitted; the Feature and ranges are read again after the link is back up.
    @Test func aDisconnectLosesControl() throws {
        let rig = try Rig()
        defer { rig.close() }
        #expect(rig.write(Self.trainer, [0x00]) == nil)
        #expect(rig.log.wait { rig.log.controlPoint.count == 1 })
        rig.link(Self.trainer, up: false)
        rig.link(Self.trainer, up: true)
        #expect(rig.write(Self.trainer, [0x05, 0xC8, 0x00]) == nil)
        #expect(rig.log.wait { rig.log.controlPoint.count == 2 })
        #expect(rig.log.controlPoint.last?.bytes == [0x80, 0x05, 0x05])
        let afterLinkUp = rig.log.entries.withLock { log -> [GATTCharacteristic] in
            guard let up = log.lastIndex(where: { if case .event(.linkUp(Self.trainer, _, _)) = $0 { true } else { false } }) else { return [] }
            return log[up...].compactMap { if case .event(.read(Self.trainer, let c, _, _)) = $0 { c } else { nil } }
        }
        #expect(afterLinkUp == [.fitnessMachineFeature, .supportedPowerRange, .supportedResistanceLevelRange])
    }
}
