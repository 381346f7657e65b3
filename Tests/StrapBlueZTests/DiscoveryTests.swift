import Dispatch
import Foundation
import MockBlueZSupport
import StrapBlueZ
import StrapDBus
import Testing

/// One client's discovery as BlueZ keeps it: calls are handled in the order they were sent
/// and answered in that order.
private struct ScriptedBlueZ {
    var discovering = false
    var calls: [DiscoveryMachine.Command] = []
    private var unanswered: [(DiscoveryMachine.Command, UInt64)] = []

    var inFlight: Int { unanswered.count }

    mutating func send(_ command: DiscoveryMachine.Command?, epoch: UInt64) {
        guard let command else { return }
        calls.append(command)
        unanswered.append((command, epoch))
    }

    /// Handles and answers the oldest call.
    mutating func answer() -> DiscoveryMachine.Input? {
        guard !unanswered.isEmpty else { return nil }
        let (command, epoch) = unanswered.removeFirst()
        switch command {
        case .setDiscoveryFilter: return .filterFinished(ok: true, epoch: epoch)
        case .startDiscovery: discovering = true; return .startFinished(ok: true, epoch: epoch)
        case .stopDiscovery: discovering = false; return .stopFinished(epoch: epoch)
        }
    }
}

private enum Step: CustomStringConvertible {
    case want(Bool), reply
    var description: String {
        switch self {
        case .want(let w): w ? "want" : "unwant"
        case .reply: "reply"
        }
    }
}

@Suite struct DiscoveryMachineTests {
    /// Runs `steps` after a first `want(true)`, then answers everything still in flight.
    private func run(_ steps: [Step]) -> (DiscoveryMachine, ScriptedBlueZ, maxInFlight: Int) {
        var machine = DiscoveryMachine()
        var bluez = ScriptedBlueZ()
        var maxInFlight = 0
        func feed(_ input: DiscoveryMachine.Input) {
            bluez.send(machine.handle(input), epoch: machine.epoch)
            maxInFlight = max(maxInFlight, bluez.inFlight)
        }
        feed(.want(true))
        for step in steps {
            switch step {
            case .want(let w): feed(.want(w))
            case .reply: if let reply = bluez.answer() { feed(reply) }
            }
        }
        while let reply = bluez.answer() { feed(reply) }
        return (machine, bluez, maxInFlight)
    }

    @Test func stopBeforeTheFilterReplySendsNoStartDiscovery() {
        let (machine, bluez, _) = run([.want(false)])
        #expect(bluez.calls == [.setDiscoveryFilter])
        #expect(!bluez.discovering)
        #expect(machine.phase == .idle)
    }

    @Test func stopWhileStartDiscoveryIsInFlightStopsAfterItsReply() {
        let (machine, bluez, _) = run([.reply, .want(false)])
        #expect(bluez.calls == [.setDiscoveryFilter, .startDiscovery, .stopDiscovery])
        #expect(!bluez.discovering)
        #expect(machine.phase == .idle)
    }

    @Test func wantedAgainWhileStoppingStartsOnceTheStopIsThrough() {
        let (machine, bluez, _) = run([.reply, .reply, .want(false), .want(true)])
        #expect(bluez.calls == [.setDiscoveryFilter, .startDiscovery, .stopDiscovery, .setDiscoveryFilter, .startDiscovery])
        #expect(bluez.discovering)
        #expect(machine.phase == .running)
    }

    /// Every interleaving of up to 8 changes of mind and replies: one call at a time, and
    /// once everything is answered BlueZ discovers exactly when the user last wanted it.
    @Test func everyInterleavingEndsWhereTheUserLastWanted() {
        let alphabet: [Step] = [.reply, .want(false), .want(true)]
        var scripts: [[Step]] = [[]]
        for _ in 1...8 {
            scripts = scripts.flatMap { s in alphabet.map { s + [$0] } }
            for script in scripts {
                let (machine, bluez, maxInFlight) = run(script)
                #expect(maxInFlight <= 1, "\(script)")
                #expect(bluez.discovering == machine.wanted, "\(script): \(bluez.calls)")
                #expect(machine.phase == (machine.wanted ? .running : .idle), "\(script)")
            }
        }
    }

    @Test func repliesFromBeforeALossAreIgnored() {
        var machine = DiscoveryMachine()
        #expect(machine.handle(.want(true)) == .setDiscoveryFilter)
        let stale = machine.epoch
        #expect(machine.handle(.lost) == nil)
        #expect(machine.handle(.want(true)) == .setDiscoveryFilter)
        #expect(machine.handle(.filterFinished(ok: true, epoch: stale)) == nil)
        #expect(machine.phase == .filtering)
        #expect(machine.handle(.filterFinished(ok: true, epoch: machine.epoch)) == .startDiscovery)
    }

    @Test func failedCallsLeaveItIdleAndStillWanted() {
        var machine = DiscoveryMachine()
        _ = machine.handle(.want(true))
        #expect(machine.handle(.filterFinished(ok: false, epoch: machine.epoch)) == nil)
        #expect(machine.phase == .idle && machine.wanted)
        #expect(machine.handle(.want(true)) == .setDiscoveryFilter)
        _ = machine.handle(.filterFinished(ok: true, epoch: machine.epoch))
        #expect(machine.handle(.startFinished(ok: false, epoch: machine.epoch)) == nil)
        #expect(machine.phase == .idle && machine.wanted)
    }
}

/// `DiscoverySession` against the mock bluetoothd: stopped at the worst moments, it leaves
/// discovery off and its calls in an order BlueZ honours.
@Suite(.enabled(if: TestTools.available, TestTools.skipReason))
struct DiscoverySessionTests {
    static let hr = "C0:11:22:33:44:21"

    private func discoveryCalls(_ mock: MockBlueZ) throws -> [String] {
        try mock.events().compactMap { $0.first as? String }.filter { $0.hasSuffix("Discovery") || $0 == "SetDiscoveryFilter" }
    }

    /// `strapctl scan --until` stops on the first report, which for a cached sensor comes
    /// before BlueZ has answered anything: no StartDiscovery goes out after the stop.
    @Test func stopRightAfterStartLeavesDiscoveryStopped() throws {
        let mock = try MockBlueZ(sensors: [.init(address: Self.hr, kind: "hr")])
        let daemon = try Daemon(address: mock.bus.address)
        try eventually("adapter visible") { daemon.queue.sync { daemon.client.mirror.adapters.count == 1 } }
        let found = ResultList<String>()
        let settled = DispatchSemaphore(value: 0)
        daemon.queue.sync {
            let session = DiscoverySession(client: daemon.client) { found.append($0.address) }
            session.start()
            // Same turn of the bus queue: no reply can have been handled yet.
            session.stop { settled.signal() }
        }
        #expect(found.items == [Self.hr])
        #expect(settled.wait(timeout: .now() + 30) == .success)
        // Settled: every call the session made has been answered, so the mock is final.
        #expect(try mock.stats()["discovering"] as? Bool == false)
        #expect(try discoveryCalls(mock) == ["SetDiscoveryFilter"])
    }

    /// Stopped while StartDiscovery is on its way: the StopDiscovery follows its reply.
    @Test func stopWhileStartDiscoveryIsInFlightStopsAfterIt() throws {
        let mock = try MockBlueZ(sensors: [.init(address: Self.hr, kind: "hr")])
        let daemon = try Daemon(address: mock.bus.address)
        try eventually("adapter visible") { daemon.queue.sync { daemon.client.mirror.adapters.count == 1 } }
        let settled = DispatchSemaphore(value: 0)
        let session = DiscoverySession(client: daemon.client) { _ in }
        daemon.queue.sync {
            // BlueZ signals Discovering=true before it answers StartDiscovery, and the
            // observers run as the signal is handled: the reply has not been seen yet.
            daemon.client.observe { event in
                if case .propertiesChanged(_, BlueZInterface.adapter, let changed) = event, changed["Discovering"]?.bool == true {
                    session.stop { settled.signal() }
                }
            }
            session.start()
        }
        #expect(settled.wait(timeout: .now() + 30) == .success)
        #expect(try mock.stats()["discovering"] as? Bool == false)
        #expect(try discoveryCalls(mock) == ["SetDiscoveryFilter", "StartDiscovery", "StopDiscovery"])
    }

    @Test func stopAfterDiscoveryRunsStopsIt() throws {
        let mock = try MockBlueZ(sensors: [.init(address: Self.hr, kind: "hr")])
        let daemon = try Daemon(address: mock.bus.address)
        try eventually("adapter visible") { daemon.queue.sync { daemon.client.mirror.adapters.count == 1 } }
        let settled = DispatchSemaphore(value: 0)
        let session = DiscoverySession(client: daemon.client) { _ in }
        daemon.queue.sync { session.start() }
        try eventually("discovering") { (try? mock.stats()["discovering"] as? Bool) == true }
        daemon.queue.sync { session.stop { settled.signal() } }
        #expect(settled.wait(timeout: .now() + 30) == .success)
        #expect(try mock.stats()["discovering"] as? Bool == false)
        #expect(try discoveryCalls(mock) == ["SetDiscoveryFilter", "StartDiscovery", "StopDiscovery"])
    }
}
