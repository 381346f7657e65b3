import StrapBlueZ
import StrapDBus
import Testing

/// The link state machine without D-Bus: inputs carry an injected clock, jitter is fixed.
@Suite struct SensorLinkMachineTests {
    static let policy = BackoffPolicy(base: 1, cap: 8, jitter: 0.5, transient: 0.25, outOfSlots: 4)
    static let timeouts = LinkTimeouts(connect: 30_000_000_000, resolve: 10_000_000_000, subscribe: 10_000_000_000, disconnect: 5_000_000_000)
    static let second: UInt64 = 1_000_000_000

    private func machine() -> SensorLinkMachine {
        // unit 0.5 means "no jitter", so delays are exact.
        SensorLinkMachine(policy: Self.policy, timeouts: Self.timeouts, random: { 0.5 })
    }

    /// Drives a machine to streaming and returns it.
    private func streaming() -> SensorLinkMachine {
        var m = machine()
        _ = m.handle(.deviceAvailable(true), now: 0)
        _ = m.handle(.start, now: 0)
        _ = m.handle(.connectFinished(error: nil, detail: ""), now: 1)
        _ = m.handle(.characteristicsReady, now: 2)
        _ = m.handle(.subscribeFinished(error: nil), now: 3)
        return m
    }

    @Test func happyPathConnectsResolvesSubscribesStreams() {
        var m = machine()
        #expect(m.handle(.start, now: 0) == [.wantDiscovery(true)])
        #expect(m.phase == .waitingForDevice)
        #expect(m.handle(.deviceAvailable(true), now: 5) == [.wantDiscovery(false), .setTimer(deadline: 5 + Self.timeouts.connect), .connect])
        #expect(m.phase == .connecting(attempt: 1))
        #expect(m.handle(.connectFinished(error: nil, detail: ""), now: 6) == [.cancelTimer, .setTimer(deadline: 6 + Self.timeouts.resolve)])
        #expect(m.phase == .resolving)
        #expect(m.handle(.characteristicsReady, now: 7) == [.cancelTimer, .setTimer(deadline: 7 + Self.timeouts.subscribe), .subscribe])
        let done = m.handle(.subscribeFinished(error: nil), now: 8)
        #expect(m.phase == .streaming)
        #expect(done.contains(.readDeviceInformation))
    }

    @Test func transientConnectErrorsRetryQuicklyThenBackOffExponentially() {
        var m = machine()
        _ = m.handle(.deviceAvailable(true), now: 0)
        _ = m.handle(.start, now: 0)
        _ = m.handle(.connectFinished(error: .transient, detail: "le-connection-abort-by-local"), now: 10)
        #expect(m.phase == .backingOff(attempt: 1, until: 10 + Self.second / 4))
        _ = m.handle(.timer, now: 10 + Self.second / 4)
        #expect(m.phase == .connecting(attempt: 2))
        _ = m.handle(.connectFinished(error: .other, detail: "boom"), now: 100)
        #expect(m.phase == .backingOff(attempt: 2, until: 100 + 2 * Self.second))
        _ = m.handle(.timer, now: 100 + 2 * Self.second)
        _ = m.handle(.connectFinished(error: .other, detail: "boom"), now: 200)
        #expect(m.phase == .backingOff(attempt: 3, until: 200 + 4 * Self.second))
        _ = m.handle(.timer, now: 200 + 4 * Self.second)
        _ = m.handle(.connectFinished(error: .outOfSlots, detail: "no slots"), now: 300)
        #expect(m.phase == .backingOff(attempt: 4, until: 300 + 4 * Self.second))
    }

    @Test func backoffIsCapped() {
        #expect(Self.policy.nominal(attempt: 1) == 1)
        #expect(Self.policy.nominal(attempt: 4) == 8)
        #expect(Self.policy.nominal(attempt: 40) == 8)
        #expect(Self.policy.jittered(8, unit: 0) == 4)
        #expect(Self.policy.jittered(8, unit: 1) == 12)
    }

    @Test func alreadyConnectedCountsAsSuccess() {
        var m = machine()
        _ = m.handle(.deviceAvailable(true), now: 0)
        _ = m.handle(.start, now: 0)
        _ = m.handle(.connectFinished(error: .alreadyConnected, detail: ""), now: 1)
        #expect(m.phase == .resolving)
    }

    @Test func missingCharacteristicsClearCacheOfUnbondedDevice() {
        var m = machine()
        _ = m.handle(.deviceAvailable(true), now: 0)
        _ = m.handle(.start, now: 0)
        _ = m.handle(.connectFinished(error: nil, detail: ""), now: 1)
        let onTimeout = m.handle(.timer, now: 1 + Self.timeouts.resolve)
        #expect(m.phase == .disconnecting(clearCache: true))
        #expect(onTimeout.contains(.disconnect))
        let after = m.handle(.disconnectFinished, now: 2 + Self.timeouts.resolve)
        #expect(after.contains(.removeDevice))
        #expect(after.contains(.wantDiscovery(true)))
        #expect(m.phase == .waitingForDevice)
    }

    @Test func missingCharacteristicsKeepBondedDevice() {
        var m = machine()
        m.bonded = true
        _ = m.handle(.deviceAvailable(true), now: 0)
        _ = m.handle(.start, now: 0)
        _ = m.handle(.connectFinished(error: nil, detail: ""), now: 1)
        _ = m.handle(.timer, now: 1 + Self.timeouts.resolve)
        let after = m.handle(.disconnectFinished, now: 2 + Self.timeouts.resolve)
        #expect(!after.contains(.removeDevice))
        if case .backingOff = m.phase {} else { Issue.record("expected backing off, got \(m.phase)") }
    }

    @Test func dropWhileStreamingResubscribesAfterReconnect() {
        var m = streaming()
        let lost = m.handle(.connectionChanged(connected: false), now: 100)
        #expect(lost.contains(.dropSubscriptions))
        #expect(m.phase == .backingOff(attempt: 1, until: 100 + Self.second))
        _ = m.handle(.timer, now: 100 + Self.second)
        #expect(m.phase == .connecting(attempt: 2))
        _ = m.handle(.connectFinished(error: nil, detail: ""), now: 101 + Self.second)
        #expect(m.handle(.characteristicsReady, now: 102 + Self.second).last == .subscribe)
    }

    @Test func deviceVanishingWaitsForRediscovery() {
        var m = streaming()
        let gone = m.handle(.deviceAvailable(false), now: 50)
        #expect(m.phase == .waitingForDevice)
        #expect(gone.contains(.dropSubscriptions))
        #expect(gone.contains(.wantDiscovery(true)))
        _ = m.handle(.deviceAvailable(true), now: 60)
        #expect(m.phase == .connecting(attempt: 1))
    }

    @Test func deviceMissingErrorRediscovers() {
        var m = machine()
        _ = m.handle(.deviceAvailable(true), now: 0)
        _ = m.handle(.start, now: 0)
        let cmds = m.handle(.connectFinished(error: .deviceMissing, detail: "UnknownObject"), now: 1)
        #expect(m.phase == .waitingForDevice)
        #expect(cmds.contains(.wantDiscovery(true)))
    }

    @Test func autoConnectByBlueZIsAdopted() {
        var m = machine()
        _ = m.handle(.deviceAvailable(true), now: 0)
        _ = m.handle(.start, now: 0)
        _ = m.handle(.connectFinished(error: .other, detail: "x"), now: 1)
        _ = m.handle(.connectionChanged(connected: true), now: 2)
        #expect(m.phase == .resolving)
    }

    @Test func stopDisconnectsAndGoesIdle() {
        var m = streaming()
        let cmds = m.handle(.stop, now: 10)
        #expect(m.phase == .idle)
        #expect(cmds.contains(.disconnect))
        #expect(m.handle(.timer, now: 20).isEmpty)
        #expect(m.handle(.connectionChanged(connected: false), now: 21).isEmpty)
    }

    @Test func closedNotifyFdResubscribesWhileConnected() {
        var m = streaming()
        _ = m.handle(.connectionChanged(connected: true), now: 4)
        let cmds = m.handle(.notificationsStopped, now: 5)
        #expect(m.phase == .subscribing)
        #expect(cmds.last == .subscribe)
        var dropped = streaming()
        _ = dropped.handle(.connectionChanged(connected: false), now: 5)
        #expect(dropped.handle(.notificationsStopped, now: 6).isEmpty)
    }

    @Test func staleRepliesAreIgnored() {
        var m = streaming()
        #expect(m.handle(.connectFinished(error: .other, detail: "late"), now: 10).isEmpty)
        #expect(m.handle(.subscribeFinished(error: "late"), now: 10).isEmpty)
        #expect(m.phase == .streaming)
    }

    @Test(arguments: [
        ("org.bluez.Error.Failed", "le-connection-abort-by-local", FailureClass.transient),
        ("org.bluez.Error.Failed", "br-connection-canceled", .transient),
        ("org.bluez.Error.InProgress", "Operation already in progress", .transient),
        ("org.bluez.Error.Failed", "Out of slots", .outOfSlots),
        ("org.freedesktop.DBus.Error.UnknownObject", "Method Connect doesn't exist", .deviceMissing),
        ("org.bluez.Error.DoesNotExist", "Does Not Exist", .deviceMissing),
        ("org.bluez.Error.NotReady", "Resource Not Ready", .adapterNotReady),
        ("org.bluez.Error.AlreadyConnected", "Already Connected", .alreadyConnected),
        ("org.bluez.Error.Failed", "Software caused connection abort", .other),
    ])
    func failureTaxonomy(name: String, message: String, expected: FailureClass) {
        #expect(FailureClass(.reply(DBusErrorReply(name: name, message: message))) == expected)
    }

    @Test func nonReplyErrorsAreOther() {
        #expect(FailureClass(.closed) == .other)
        #expect(FailureClass(.errno("call", 104)) == .other)
    }
}
