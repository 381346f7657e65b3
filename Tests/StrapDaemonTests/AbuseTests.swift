import Foundation
import Glibc
import Synchronization
import Testing
import StrapControl
import StrapModel
import StrapSystem
import StrapWire
@testable import StrapDaemon

@Suite struct AbuseTests {
    @Test func garbageAndMalformedLinesAreAnsweredAndTheConnectionSurvives() throws {
        let h = try RouterHarness()
        defer { h.close() }
        let c = try h.client()
        var rng = SystemRandomNumberGenerator()
        var garbage = (0..<4096).map { _ in UInt8.random(in: 0...255, using: &rng) }.filter { $0 != 0x0A }
        garbage.append(0x0A)
        try c.sendRaw(garbage)
        try c.sendRaw(Array("[1,2,3]\n\"str\"\n{\"id\":[1],\"op\":\"status\"}\n{\"id\":1,\"op\":7}\n{\"id\":1,\"op\":\"status\",\"id\":2}\n".utf8))
        try c.sendRaw([0xFF, 0xFE, 0x7B, 0x7D, 0x0A])  // invalid UTF-8 before a brace
        for _ in 0..<7 {
            let m = try c.readMessage()!
            #expect(m.errorCode == "badRequest")
        }
        #expect(try c.call(#"{"id":"alive","op":"status"}"#).isOK)
    }

    @Test func aTwoMebibyteLineIsRefusedWithoutClosing() throws {
        let h = try RouterHarness()
        defer { h.close() }
        let c = try h.client()
        var line = Array(#"{"id":1,"op":"status","pad":""#.utf8)
        line += [UInt8](repeating: UInt8(ascii: "x"), count: 2 << 20)
        line += Array("\"}\n".utf8)
        try c.sendRaw(line)
        let m = try c.readMessage()!
        #expect(m.errorCode == "badRequest" && m["id"] == .null)
        #expect(try c.call(#"{"id":2,"op":"status"}"#).isOK)
    }

    @Test func clientsVanishingMidRequestOrMidStreamDoNotDisturbOthers() throws {
        let h = try RouterHarness()
        defer { h.close() }
        try h.store.append(heartRates(2000))
        try h.store.sync()
        for _ in 0..<20 {
            let gone = try h.client()
            try gone.sendRaw(Array(#"{"id":1,"op":"samples.que"#.utf8))   // half a line, then gone
            let follower = try h.client()
            try follower.send(#"{"id":2,"op":"samples.anchored","limit":10,"follow":true}"#)
            let query = try h.client()
            try query.send(#"{"id":3,"op":"samples.query"}"#)
            let subscriber = try h.client()
            #expect(try subscriber.call(#"{"id":4,"op":"live.subscribe"}"#).isOK)
            // Dropped without reading: the replies race the close.
        }
        let survivor = try h.client()
        #expect(try survivor.call(#"{"id":1,"op":"samples.query","limit":5}"#).result.objects("samples").count == 5)
        // Every stream of the vanished clients was ended with its connection.
        #expect(try waitFor { h.onServerQueue { h.server.connectionCount } == 1 })
        #expect(try waitFor { h.router.liveSubscriberCount == 0 })
    }

    /// Issue 15 item 1: a client that sends a stream request and closes before reading is
    /// closed by the write of its own `ok`; nothing of it may stay behind.
    @Test func streamsOfClientsThatCloseWithoutReadingAreAllGivenBack() throws {
        let h = try RouterHarness()
        defer { h.close() }
        try h.store.append(heartRates(50))
        try h.store.sync()
        let requests = [#"{"id":1,"op":"live.subscribe"}"#,
                        #"{"id":1,"op":"samples.anchored","limit":10,"follow":true}"#,
                        #"{"id":1,"op":"live.subscribe","types":["heartRate"]}"#]
        for i in 0..<2000 {
            let c = try h.client()
            try c.send(requests[i % requests.count])
            // Dropped here: closed at once, nothing read.
        }
        #expect(try waitFor { h.onServerQueue { h.server.connectionCount } == 0 })
        #expect(try waitFor { h.router.liveSubscriberCount == 0 })
        #expect(try waitFor { h.router.follow.counters.parked == 0 })
        #expect(h.onServerQueue { h.router.clientCount } == 0)
        let status = try h.client().call(#"{"id":"s","op":"status"}"#).result
        #expect(status.int("clients") == 1)
        #expect(status.int("liveSubscribers") == 0)
    }

    @Test func aThousandConcurrentClients() throws {
        var limit = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        if limit.rlim_cur < 4096 {
            limit.rlim_cur = min(limit.rlim_max, 8192)
            setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        }
        let h = try RouterHarness()
        defer { h.close() }
        try h.store.append(heartRates(10))
        try h.store.sync()
        let clients = try (0..<1000).map { _ in try h.client() }
        for (i, c) in clients.enumerated() {
            try c.send(i % 2 == 0 ? #"{"id":\#(i),"op":"status"}"# : #"{"id":\#(i),"op":"samples.query","limit":3}"#)
        }
        var answered = 0
        for (i, c) in clients.enumerated() {
            let m = try c.readMessage()!
            if m.isOK && m["id"] == .int(Int64(i)) { answered += 1 }
        }
        #expect(answered == 1000)
        #expect(h.onServerQueue { h.server.connectionCount } == 1000)
    }

    @Test func connectionsBeyondTheLimitAreToldBusy() throws {
        let h = try RouterHarness(maximumConnections: 2)
        defer { h.close() }
        let a = try h.client(), b = try h.client()
        #expect(try a.call(#"{"id":1,"op":"status"}"#).isOK && b.call(#"{"id":1,"op":"status"}"#).isOK)
        let c = try h.client()
        let m = try c.readMessage()!
        #expect(m.errorCode == "busy" && m["id"] == .null)
        #expect(try c.readMessage() == nil)
    }

    @Test func aStalledLiveSubscriberStaysBoundedAndLearnsWhatItMissed() throws {
        let limits = OutputLimits(highWater: 32 * 1024, lowWater: 8 * 1024, hardLimit: 128 * 1024)
        let h = try RouterHarness(outputLimits: limits)
        defer { h.close() }
        let stalled = try h.client()
        try stalled.send(#"{"id":"s","op":"live.subscribe"}"#)
        // Never reads from here on, while about a thousand samples a second flow.
        let other = try h.client()
        var maxBuffered = 0
        var seed: UInt64 = 100
        for round in 0..<40 {
            seed += 1
            h.pipeline.submit(contentsOf: simulatedEvents(count: 12, seconds: 2, seed: seed))
            Thread.sleep(forTimeInterval: 0.05)
            let buffered = h.onServerQueue { h.router.bufferedOutput.values.max() ?? 0 }
            maxBuffered = max(maxBuffered, buffered)
            if round % 10 == 0 { #expect(try other.call(#"{"id":\#(round),"op":"status"}"#).isOK) }
        }
        h.pipeline.drain()
        #expect(maxBuffered <= limits.hardLimit)
        #expect(maxBuffered >= limits.highWater)  // it really was stalled
        // Now it reads: first what was queued, then the count of what it missed.
        let (dropped, before) = try stalled.read { $0.event == "dropped" }
        #expect((dropped.data.int("count") ?? 0) > 0)
        #expect(before.contains { $0.event == "sample" })
    }

    @Test func aStalledFollowerPausesAndResumesFromItsAnchor() throws {
        let limits = OutputLimits(highWater: 32 * 1024, lowWater: 8 * 1024, hardLimit: 256 * 1024)
        let h = try RouterHarness(outputLimits: limits, routerConfiguration: .init(followPageLimit: 50))
        defer { h.close() }
        try h.store.append(heartRates(20_000))
        try h.store.sync()
        let c = try h.client()
        let first = try c.call(#"{"id":"f","op":"samples.anchored","limit":10,"follow":true}"#)
        var anchors = first.result.objects("added").compactMap { $0.int("anchor") }
        // Not reading: the follower must stop near the high-water mark, not queue 20 000 samples.
        var maxBuffered = 0
        for _ in 0..<20 {
            Thread.sleep(forTimeInterval: 0.02)
            maxBuffered = max(maxBuffered, h.onServerQueue { h.router.bufferedOutput.values.max() ?? 0 })
        }
        #expect(maxBuffered <= limits.hardLimit)
        while anchors.last != 20_000 {
            guard let m = try c.readMessage() else { Issue.record("closed"); return }
            if m.event == "added", let a = m.data.int("anchor") { anchors.append(a) }
        }
        #expect(anchors == Array(1...20_000))
    }

    @Test func aWorkoutFollowerFilledByMessagesEndsWithAnErrorNotAGap() throws {
        let limits = OutputLimits(highWater: 16 * 1024, lowWater: 4 * 1024, hardLimit: 64 * 1024)
        let clock = WorkoutProtocolTests.TestClock()
        let h = try RouterHarness(outputLimits: limits, workoutClock: clock.now)
        defer { h.close() }
        let control = try h.client()
        let started = try control.call(#"{"id":1,"op":"workout.start","activityType":"walking","devices":[]}"#)
        guard case .object(let s)? = started.result["session"], let id = s.string("session") else {
            Issue.record("not started: \(started)"); return
        }
        let stalled = try h.client()
        #expect(try stalled.call(#"{"id":"live","op":"workout.live","session":"\#(id)"}"#).isOK)
        // The follower stops reading; another participant's messages (never dropped) fill its
        // buffer and the kernel's, then the session pauses and is saved.
        let pad = String(repeating: "x", count: 4000)
        let sent = 600
        for n in 0..<sent {
            #expect(try control.call(#"{"id":2,"op":"workout.send","session":"\#(id)","payload":{"n":\#(n),"pad":"\#(pad)"}}"#).isOK)
        }
        clock.set(seconds: 5)
        #expect(try control.call(#"{"id":3,"op":"workout.pause","session":"\#(id)"}"#).isOK)
        #expect(try control.call(#"{"id":4,"op":"workout.end","session":"\#(id)"}"#).isOK)

        // What it reads is every message in order up to some point, then the error that says
        // the stream ended there: nothing after it, and nothing missing before it.
        let (error, before) = try stalled.read { $0.string("id") == "live" && $0.event == "error" }
        #expect(error.data.string("code") == "busy")
        let numbers = before.filter { $0.event == "message" }.compactMap { m -> Int64? in
            guard case .object(let p)? = m.data["payload"] else { return nil }
            return p.int("n")
        }
        #expect(before.allSatisfy { $0.event == "message" || $0.event == "statistics" })
        #expect(numbers == Array(0..<Int64(numbers.count)))
        #expect(numbers.count < sent)  // it really overflowed
        try stalled.send(#"{"id":"after","op":"status"}"#)
        let (reply, between) = try stalled.read { $0.string("id") == "after" }
        #expect(reply.isOK)
        #expect(between.isEmpty, "\(between)")
    }
}

/// Polls `condition` (bounded number of tries); the tests never assert on durations.
func waitFor(tries: Int = 500, _ condition: () -> Bool) throws -> Bool {
    for _ in 0..<tries {
        if condition() { return true }
        Thread.sleep(forTimeInterval: 0.01)
    }
    return condition()
}

@Suite struct PipeliningTests {
    @Test func aFloodOfPipelinedQueriesIsAnsweredOnceEachWithBusyBeyondTheLimit() throws {
        let h = try RouterHarness(routerConfiguration: .init(maximumPendingRequests: 4))
        defer { h.close() }
        try h.store.append(heartRates(500))
        try h.store.sync()
        let c = try h.client()
        var burst: [UInt8] = []
        for i in 0..<300 { burst += Array(#"{"id":\#(i),"op":"samples.query","limit":200}"#.utf8) + [0x0A] }
        try c.sendRaw(burst)
        var answered: [Int64: String] = [:]
        while answered.count < 300 {
            let m = try c.readMessage()!
            let id = m.int("id")!
            #expect(answered[id] == nil)
            answered[id] = m.isOK ? "ok" : m.errorCode
        }
        #expect(Set(answered.values).isSubset(of: ["ok", "busy"]))
        #expect(answered.values.contains("ok"))
        #expect(try c.call(#"{"id":"later","op":"status"}"#).isOK)
    }
}
