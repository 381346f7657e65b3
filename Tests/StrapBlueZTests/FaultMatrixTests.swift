import Foundation
import StrapBlueZ
import StrapDBus
import MockBlueZSupport
import Testing

/// Every scripted fault of the mock bluetoothd: the link must recover by itself, and no
/// notification may be lost, duplicated or reordered. The mock counts only notifications it
/// actually delivered to a subscriber, so "lost" means sent by BlueZ but never handed to the
/// sink. Against a mock, not real BlueZ.
@Suite(.enabled(if: TestTools.available, TestTools.skipReason))
struct FaultMatrixTests {
    enum Fault: String, CaseIterable, CustomTestStringConvertible, Sendable {
        case servicesResolvedBeforeCharacteristics
        case staleCacheCharacteristicsMissing
        case disconnectMidStream
        case disconnectMidStreamAcquireNotify
        case bluetoothdRestart
        case adapterRemovedAndReAdded
        case adapterPoweredOffAndOn
        case connectAbortedThreeTimes
        case malformedSignals
        case notifyFdClosedWhileConnected

        var testDescription: String { rawValue }
        var notifyMode: NotifyMode {
            self == .disconnectMidStreamAcquireNotify || self == .notifyFdClosedWhileConnected ? .acquireNotify : .startNotify
        }
        /// Faults after which the link has to subscribe again.
        var resubscribes: Bool { self != .malformedSignals && self != .connectAbortedThreeTimes }
    }

    static let address = "C0:FA:01:00:00:01"

    /// Rotates HR, CSC and RSC over the faults so each measurement type meets some of them.
    static func kind(_ fault: Fault) -> String {
        ["hr", "csc", "rsc"][Fault.allCases.firstIndex(of: fault)! % 3]
    }

    @Test(arguments: Fault.allCases)
    func recoversWithoutLossOrDuplicates(_ fault: Fault) throws {
        let mock = try MockBlueZ(sensors: [.init(address: Self.address, kind: Self.kind(fault), hz: 10)])
        let daemon = try Daemon(address: mock.bus.address)
        var options = Daemon.fast
        options.notifyMode = fault.notifyMode
        if fault == .connectAbortedThreeTimes { try mock.setFault(Self.address, "connect_abort", 3) }
        daemon.add(Self.address, options)
        try eventually("first notifications") { daemon.sink.count(Self.address) >= 10 }
        let received = daemon.sink.count(Self.address)
        // A restarted mock bluetoothd counts its calls from zero.
        let subscriptions = fault == .bluetoothdRestart ? 0 : try subscribeCalls(mock, fault)

        switch fault {
        case .servicesResolvedBeforeCharacteristics:
            try mock.setFault(Self.address, "early_resolved")
            try mock.call("Drop", [.string(Self.address), .string("org.bluez.Reason.Timeout")])
        case .staleCacheCharacteristicsMissing:
            try mock.setFault(Self.address, "stale_cache")
            try mock.call("Drop", [.string(Self.address), .string("org.bluez.Reason.Timeout")])
        case .disconnectMidStream, .disconnectMidStreamAcquireNotify:
            try mock.call("Drop", [.string(Self.address), .string("org.bluez.Reason.Timeout")])
        case .bluetoothdRestart:
            try mock.restart()
        case .adapterRemovedAndReAdded:
            try mock.call("RemoveAdapter")
            Thread.sleep(forTimeInterval: 0.5)
            try mock.call("AddAdapter")
        case .adapterPoweredOffAndOn:
            try mock.call("SetPowered", [.boolean(false)])
            Thread.sleep(forTimeInterval: 0.5)
            try mock.call("SetPowered", [.boolean(true)])
        case .connectAbortedThreeTimes:
            break
        case .malformedSignals:
            try mock.call("EmitGarbage")
        case .notifyFdClosedWhileConnected:
            try mock.call("CloseNotifyFd", [.string(Self.address)])
        }

        try eventually("recovery after \(fault)") {
            let resubscribed = !fault.resubscribes || ((try? subscribeCalls(mock, fault)) ?? 0) > subscriptions
            return resubscribed && daemon.sink.count(Self.address) >= received + 30
        }
        try mock.call("SetStreaming", [.boolean(false)])
        let sent = try mock.sent(Self.address)
        try eventually(timeout: 10, "delivery of all \(sent) sent") { Set(daemon.sink.sequence(Self.address)).count >= sent }
        let check = DeliveryCheck(sequence: daemon.sink.sequence(Self.address), sent: sent)
        print("FAULT-MATRIX | \(fault.rawValue) | \(Self.kind(fault)) | \(fault.notifyMode.rawValue) | recovered | \(check)")
        #expect(check.lost == 0, "\(check)")
        #expect(check.duplicated == 0, "\(check)")
        #expect(check.outOfOrder == 0, "\(check)")
        #expect(daemon.phase(Self.address) == .streaming)

        let events = try mock.events()
        switch fault {
        case .staleCacheCharacteristicsMissing:
            // Recovery went through RemoveDevice (unbonded) and rediscovery.
            #expect(events.contains { ($0.first as? String) == "RemoveDevice" })
        case .connectAbortedThreeTimes:
            #expect(events.filter { ($0.first as? String) == "Connect" }.count >= 4)
        case .disconnectMidStream, .disconnectMidStreamAcquireNotify:
            #expect(daemon.sink.phases(Self.address).contains { if case .backingOff = $0 { true } else { false } })
        default:
            break
        }
    }

    private func subscribeCalls(_ mock: MockBlueZ, _ fault: Fault) throws -> Int {
        fault.notifyMode == .acquireNotify ? try mock.acquireCalls(Self.address) : try mock.startNotifyCalls(Self.address)
    }
}
