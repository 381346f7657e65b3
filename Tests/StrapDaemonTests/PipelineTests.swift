import Foundation
import Glibc
import Synchronization
import Testing
import StrapGATT
import StrapIngest
import StrapModel
import StrapOS
import StrapSimulator
import StrapStore
@testable import StrapDaemon

func temporaryDirectory(_ name: String = #function) -> String {
    let path = NSTemporaryDirectory() + "strapd-test-\(name.filter(\.isLetter))-\(UUID().uuidString.prefix(8))"
    try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    return path
}

func makePipeline(store: Store, capacity: Int = 65_536) -> (Pipeline, LiveHub) {
    let live = LiveHub()
    let pipeline = Pipeline(capacity: capacity, storeStage: StoreStage(store: store), live: live) { address, name in
        (Device(id: address, address: address, name: name ?? address), DeviceIngest.Settings())
    }
    return (pipeline, live)
}

/// Simulated events as a source would submit them, with times from a fixed origin.
func simulatedEvents(count: Int = 2, seconds: Double, seed: UInt64 = 1, dropouts: DropoutSchedule = .none) -> [SensorEvent] {
    var simulation = Simulation(count: count, seed: seed, dropouts: dropouts)
    let origin = ReceiveTime(wall: 1_700_000_000_000, monotonic: 1000)
    return simulation.advance(to: seconds).map { t, identity, event in
        let time = ReceiveTime(wall: origin.wall + Millis((t * 1000).rounded()), monotonic: origin.monotonic + t)
        switch event {
        case let .notification(c, v): return .notification(identity.address, c, v, time)
        case let .read(c, v): return .read(identity.address, c, v, time)
        case .connected: return .linkUp(identity.address, name: identity.name, time)
        case let .disconnected(reason): return .linkDown(identity.address, reason: reason, time)
        }
    }
}

@Suite struct PipelineTests {
    @Test func everyDecodedSampleIsStoredAndSeenLive() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let store = try Store.open(StoreConfig(directory: dir, sync: .none))
        let (pipeline, live) = makePipeline(store: store)
        // Live samples have no uuid yet (the store assigns it): compared by what was decoded.
        struct Key: Equatable { var type: QuantityType; var end: Millis; var value: Double }
        let seen = Mutex<(samples: [Key], links: Int)>(([], 0))
        _ = live.subscribe { events in
            seen.withLock { s in
                for e in events {
                    if case .samples(let run) = e { s.samples += run.map { Key(type: $0.type, end: $0.end, value: $0.value) } }
                    if case .link = e { s.links += 1 }
                }
            }
        }
        let events = simulatedEvents(count: 3, seconds: 600, dropouts: DropoutSchedule(meanInterval: 120))
        for e in events { #expect(pipeline.submit(e)) }
        pipeline.drain()
        try pipeline.storeStage.flushAndSync()
        let counters = pipeline.counters
        #expect(counters.events == events.count && counters.rejected == 0 && counters.dropped == 0)
        let storedSamples = try store.anchored(anchor: 0).added
        let stored = storedSamples.count
        #expect(stored == counters.samples && stored > 3 * 600)
        // Live saw each sample once, in the order it was stored.
        let liveSamples = seen.withLock { $0.samples }
        #expect(liveSamples.count == stored)
        let inOrder = liveSamples == storedSamples.compactMap { o -> Key? in
            guard case .sample(let s) = o else { return nil }
            return Key(type: s.type, end: s.end, value: s.value)
        }
        #expect(inOrder, "live samples differ from the stored ones or their order")
        #expect(seen.withLock { $0.links } > 3)
        store.close()
    }

    @Test func samplesCarryTheNameTheLinkReported() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let store = try Store.open(StoreConfig(directory: dir, sync: .none))
        let (pipeline, _) = makePipeline(store: store)
        let t = ReceiveTime(wall: 1_700_000_000_000, monotonic: 1)
        pipeline.submit(.linkUp("AA:BB:CC:DD:EE:01", name: "Polar H10 1234", t))
        pipeline.submit(.notification("AA:BB:CC:DD:EE:01", .heartRateMeasurement, [0x00, 61], t))
        pipeline.drain()
        try pipeline.storeStage.flushAndSync()
        #expect(try store.anchored(anchor: 0).added.compactMap(\.sample).allSatisfy { $0.device.name == "Polar H10 1234" })
        store.close()
    }

    /// Issue 32 item 13: a stopped bike's CSC packets repeat their counters and yield no sample,
    /// yet the sensor is alive: its last seen follows every notification.
    @Test func aNotificationWithoutSamplesStillAdvancesLastSeen() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let store = try Store.open(StoreConfig(directory: dir, sync: .none))
        let (pipeline, live) = makePipeline(store: store)
        let directory = DeviceDirectory()
        _ = live.subscribe { directory.observe($0) }
        let csc = "AA:BB:CC:DD:EE:02"
        let stopped = CSCMeasurement(wheel: .init(revolutions: 100, eventTime: 2048), crank: .init(revolutions: 50, eventTime: 2048)).encoded()
        let t0: Millis = 1_700_000_000_000
        pipeline.submit(.linkUp(csc, name: "CSC", ReceiveTime(wall: t0, monotonic: 1)))
        for k in 1...5 {
            pipeline.submit(.notification(csc, .cscMeasurement, stopped, ReceiveTime(wall: t0 + Millis(k) * 1000, monotonic: 1 + Double(k))))
        }
        pipeline.drain()
        #expect(pipeline.counters.samples == 0, "unchanged counters yield no sample")
        let info = directory.list(service: SimulatedDeviceService(identities: [])).first { $0.address == csc }
        #expect(info?.lastSeen == t0 + 5000 && info?.notifications == 5)
        store.close()
    }

    /// Issue 32: a forgotten device is not shown to clients, though the pipeline saw it; the
    /// full list keeps it (known and connected no more) for the MQTT publisher to clear.
    @Test func aForgottenDeviceIsNotListed() throws {
        let hr = "5E:1A:00:00:48:00"
        let service = SimulatedDeviceService(identities: [SimulatedIdentity(address: hr, name: "Sim HR 0")])
        let directory = DeviceDirectory()
        directory.observe([.link(hr, up: true, reason: nil, 1_700_000_000_000)])
        #expect(directory.listed(by: service).map(\.address) == [hr])
        let forgotten = DispatchSemaphore(value: 0)
        service.forget(hr) { error in
            #expect(error == nil)
            forgotten.signal()
        }
        forgotten.wait()
        directory.observe([.link(hr, up: false, reason: "disconnected by request", 1_700_000_001_000)])
        #expect(directory.listed(by: service).isEmpty)
        #expect(directory.list(service: service).map { [$0.address, "\($0.known || $0.connected)"] } == [[hr, "false"]])
        // Connected again, it is listed again.
        let connected = DispatchSemaphore(value: 0)
        service.connect(hr) { _ in connected.signal() }
        connected.wait()
        #expect(directory.listed(by: service).map(\.address) == [hr])
    }

    @Test func malformedPacketsAreCountedNotFatal() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let store = try Store.open(StoreConfig(directory: dir, sync: .none))
        let (pipeline, _) = makePipeline(store: store)
        let reasons = Mutex<[String]>([])
        pipeline.onRejected = { _, reason in reasons.withLock { $0.append(reason) } }
        let t = ReceiveTime(wall: 1_700_000_000_000, monotonic: 1)
        pipeline.submit(.notification("AA:BB:CC:DD:EE:FF", .heartRateMeasurement, [0x01], t))
        pipeline.submit(.notification("AA:BB:CC:DD:EE:FF", .batteryLevel, [0xFF], t))
        pipeline.submit(.notification("AA:BB:CC:DD:EE:FF", .heartRateMeasurement, [0x00, 61], t))
        pipeline.drain()
        try pipeline.storeStage.flushAndSync()
        #expect(pipeline.counters.rejected == 2)
        #expect(reasons.withLock { $0.count } == 2 && reasons.withLock { $0[1] }.contains("battery level 255"))
        #expect(try store.anchored(anchor: 0).added.compactMap(\.sample).filter { $0.type == .heartRate }.map(\.value) == [61])
        store.close()
    }

    @Test func overCapacityDropsAtTheDoorWithACount() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let store = try Store.open(StoreConfig(directory: dir, sync: .none))
        let (pipeline, _) = makePipeline(store: store, capacity: 10)
        // Hold the ingest queue so submissions pile up behind it.
        let gate = DispatchSemaphore(value: 0)
        pipeline.queue.async { gate.wait() }
        let t = ReceiveTime(wall: 1_700_000_000_000, monotonic: 1)
        let accepted = (0..<50).filter { _ in pipeline.submit(.notification("AA:BB:CC:DD:EE:FF", .heartRateMeasurement, [0x00, 60], t)) }.count
        gate.signal()
        pipeline.drain()
        #expect(accepted == 10 && pipeline.counters.dropped == 40 && pipeline.counters.events == 10)
        store.close()
    }

    /// A full disk holds samples in memory; when space returns they are written and the
    /// stage says how many (the daemon logs it once), and that nothing was lost.
    @Test func aFullDiskHoldsSamplesAndReportsThemWrittenWhenSpaceReturns() throws {
        let full = Mutex(false)
        var sys = StrapOS.Syscalls.live
        sys.pwrite = { fd, buffer, count, offset in
            if full.withLock({ $0 }) { errno = ENOSPC; return -1 }
            return StrapOS.Syscalls.live.pwrite(fd, buffer, count, offset)
        }
        var config = StoreConfig(directory: temporaryDirectory(), sync: .none)
        config.syscalls = sys
        let store = try Store.open(config)
        defer { store.close() }
        let stage = StoreStage(store: store, retryInterval: .milliseconds(10))
        let seen = Mutex<[StoreStage.Health]>([])
        stage.onDegradedChange = { h in seen.withLock { $0.append(h) } }
        full.withLock { $0 = true }
        stage.enqueue(heartRates(40))
        #expect(try waitFor { seen.withLock { $0.count } == 1 })
        stage.enqueue(heartRates(60, from: 1_700_000_100_000))
        usleep(50_000)
        full.withLock { $0 = false }
        #expect(try waitFor { seen.withLock { $0.count } == 2 })
        let health = seen.withLock { $0 }
        guard case .degraded(let why) = health[0] else { Issue.record("\(health)"); return }
        #expect(why.contains("No space left on device"))
        #expect(health[1] == .recovered(written: 100, lost: 0))
        #expect(store.latestAnchor == 100)
    }

    /// While the disk is full, samples wait in memory up to `maxPending`; beyond it the
    /// oldest go first, counted, even part of a batch. When space returns the rest are
    /// written in order and the recovery says how many of each.
    @Test func aFullDiskDropsTheOldestBeyondTheBoundAndCountsThem() throws {
        let full = Mutex(false)
        var sys = StrapOS.Syscalls.live
        sys.pwrite = { fd, buffer, count, offset in
            if full.withLock({ $0 }) { errno = ENOSPC; return -1 }
            return StrapOS.Syscalls.live.pwrite(fd, buffer, count, offset)
        }
        var config = StoreConfig(directory: temporaryDirectory(), sync: .none)
        config.syscalls = sys
        let store = try Store.open(config)
        defer { store.close() }
        let stage = StoreStage(store: store, maxPending: 50, retryInterval: .milliseconds(10))
        let seen = Mutex<[StoreStage.Health]>([])
        stage.onDegradedChange = { h in seen.withLock { $0.append(h) } }
        full.withLock { $0 = true }
        let first = heartRates(40), second = heartRates(30, from: 1_700_000_100_000)
        stage.enqueue(first)
        #expect(try waitFor { seen.withLock { $0.count } == 1 })
        stage.enqueue(second)
        #expect(try waitFor { stage.pendingCount == 50 })
        full.withLock { $0 = false }
        #expect(try waitFor { seen.withLock { $0.count } == 2 })
        #expect(seen.withLock { $0.last } == .recovered(written: 50, lost: 20))
        let starts = try store.anchored(anchor: 0, limit: 100).added.compactMap(\.sample).map(\.start)
        #expect(starts == (first + second).suffix(50).map(\.start))
    }

    /// A batch the store has taken comes back to the ingest queue emptied, its buffer kept:
    /// its samples are released on the thread that made them.
    @Test func aStoredBatchComesBackAsAnEmptyBuffer() throws {
        let store = try Store.open(StoreConfig(directory: temporaryDirectory(), sync: .none))
        defer { store.close() }
        let stage = StoreStage(store: store)
        stage.enqueue(heartRates(100))
        #expect(store.latestAnchor == 100, "sparse: stored on the caller's thread")
        let buffer = stage.reusableBuffer()
        #expect(buffer.isEmpty && buffer.capacity >= 100)
        #expect(stage.reusableBuffer().capacity == 0, "handed back once")
        #expect(try store.anchored(anchor: 0, limit: 200).added.count == 100)
    }

    /// A sparse batch (nothing appended for an interval) is appended on the caller's thread:
    /// stored when `enqueue` returns. A batch right behind it takes the stage's queue and is
    /// stored soon after; nothing is lost or reordered either way.
    @Test func aSparseBatchIsStoredBeforeEnqueueReturns() throws {
        let store = try Store.open(StoreConfig(directory: temporaryDirectory(), sync: .none))
        defer { store.close() }
        let stage = StoreStage(store: store)
        stage.enqueue(heartRates(3))
        #expect(store.latestAnchor == 3)
        stage.enqueue(heartRates(4, from: 1_700_000_100_000))
        #expect(try waitFor { store.latestAnchor == 7 })
        usleep(150_000)
        stage.enqueue(heartRates(2, from: 1_700_000_200_000))
        #expect(store.latestAnchor == 9)
        let starts = try store.anchored(anchor: 0, limit: 100).added.compactMap(\.sample).map(\.start)
        #expect(starts == heartRates(3).map(\.start) + heartRates(4, from: 1_700_000_100_000).map(\.start)
                + heartRates(2, from: 1_700_000_200_000).map(\.start))
    }

    /// A batch right behind another is appended on the caller's thread too when the caller has
    /// nothing else in flight, unless the store syncs every append: with `always` it takes the
    /// stage's queue, so the ingest thread never waits for an fsync while appends can group.
    @Test(arguments: [SyncPolicy.none, .interval(3600), .always])
    func aDenseBatchFromAnIdleCallerIsStoredBeforeEnqueueReturnsUnlessEveryAppendSyncs(_ sync: SyncPolicy) throws {
        let store = try Store.open(StoreConfig(directory: temporaryDirectory(), sync: sync))
        defer { store.close() }
        let stage = StoreStage(store: store)
        stage.enqueue(heartRates(3), callerIdle: true)
        try stage.flushAndSync()
        #expect(store.latestAnchor == 3)
        // Right behind it (well within the sparse gap), from an idle caller.
        stage.enqueue(heartRates(4, from: 1_700_000_100_000), callerIdle: true)
        switch sync {
        case .always:
            #expect(try waitFor { store.latestAnchor == 7 })
        case .none:
            // Readers see what is written: appended before enqueue returned.
            #expect(store.latestAnchor == 7)
        case .interval:
            // The append's sync is the syncer thread's (an hour away here): durability is asked
            // for explicitly, and covers only what was appended when it is asked.
            try store.sync()
            #expect(store.latestAnchor == 7)
        }
        let starts = try store.anchored(anchor: 0, limit: 100).added.compactMap(\.sample).map(\.start)
        #expect(starts == heartRates(3).map(\.start) + heartRates(4, from: 1_700_000_100_000).map(\.start))
    }

    /// The simulator's `submitHere`: with nothing in flight the batch is decoded on the
    /// caller's thread (counted when the call returns), and its samples are the same as
    /// through `submit`.
    @Test func submitHereDecodesOnTheCallersThreadWhenIdle() throws {
        let events = simulatedEvents(count: 2, seconds: 20)
        let hereStore = try Store.open(StoreConfig(directory: temporaryDirectory("here"), sync: .none))
        let asyncStore = try Store.open(StoreConfig(directory: temporaryDirectory("async"), sync: .none))
        defer { hereStore.close(); asyncStore.close() }
        let (here, _) = makePipeline(store: hereStore)
        let (hopping, _) = makePipeline(store: asyncStore)
        here.submitHere(contentsOf: Array(events.prefix(10)))
        #expect(here.counters.events == 10)
        here.submitHere(contentsOf: Array(events.dropFirst(10)))
        hopping.submit(contentsOf: events)
        here.drain()
        hopping.drain()
        #expect(try waitFor { hereStore.latestAnchor == asyncStore.latestAnchor && here.storeStage.pendingCount == 0
                                 && hopping.storeStage.pendingCount == 0 && hereStore.latestAnchor > 0 })
        let a = try hereStore.anchored(anchor: 0, limit: 10_000).added.compactMap(\.sample).map { "\($0.type) \($0.start) \($0.value)" }
        let b = try asyncStore.anchored(anchor: 0, limit: 10_000).added.compactMap(\.sample).map { "\($0.type) \($0.start) \($0.value)" }
        #expect(a == b)
        #expect(here.counters == hopping.counters)
    }

    /// BlueZ's events are submitted from a queue that targets the ingest queue. With nothing
    /// in flight each is decoded before `submit` returns (no hop onto the queue its caller
    /// holds); with a batch in flight it queues behind it. Either way the store holds what
    /// a plain `submit` from elsewhere gives, in the same order.
    @Test func eventsFromAQueueOnTheIngestQueueAreDecodedInPlaceAndInOrder() throws {
        let events = simulatedEvents(count: 2, seconds: 30)
        let hereStore = try Store.open(StoreConfig(directory: temporaryDirectory("here"), sync: .none))
        let plainStore = try Store.open(StoreConfig(directory: temporaryDirectory("plain"), sync: .none))
        defer { hereStore.close(); plainStore.close() }
        let (here, _) = makePipeline(store: hereStore)
        let (plain, _) = makePipeline(store: plainStore)
        let source = DispatchQueue(label: "bluez-like", target: here.queue)
        let (first, batch, last) = (Array(events.prefix(20)), Array(events[20..<60]), Array(events.dropFirst(60)))
        source.sync {
            for (i, e) in first.enumerated() {
                here.submit(e)
                #expect(here.counters.events == i + 1, "event \(i) was not decoded in place")
            }
            // Behind a batch in flight (it cannot run while this block holds the queue).
            here.submit(contentsOf: batch)
            here.submit(last[0])
            #expect(here.counters.events == first.count)
        }
        here.drain()
        source.sync { for e in last.dropFirst() { here.submit(e) } }
        for e in events { plain.submit(e) }
        here.drain()
        plain.drain()
        try here.storeStage.flushAndSync()
        try plain.storeStage.flushAndSync()
        #expect(here.counters == plain.counters && here.counters.events == events.count)
        let a = try hereStore.anchored(anchor: 0, limit: 10_000).added.compactMap(\.sample).map { "\($0.type) \($0.start) \($0.value)" }
        let b = try plainStore.anchored(anchor: 0, limit: 10_000).added.compactMap(\.sample).map { "\($0.type) \($0.start) \($0.value)" }
        #expect(!a.isEmpty && a == b)
    }

    @Test func captureLinesRoundTrip() throws {
        for event in simulatedEvents(count: 3, seconds: 30, dropouts: DropoutSchedule(meanInterval: 5)) {
            let line = CaptureFormat.line(event)
            let parsed = try CaptureFormat.parse(Substring(line), lineNumber: 1)
            #expect(abs(parsed.time.monotonic - event.time.monotonic) < 1e-6)
            #expect(parsed.time.wall == event.time.wall && CaptureFormat.line(parsed) == line)
        }
    }

    /// The exact text docs/capture-format.md shows, for each kind of event: captures written by
    /// earlier versions and by this one read the same.
    @Test func captureLinesAreTheDocumentedText() {
        let t = ReceiveTime(wall: 1_764_446_401_250, monotonic: 1.25)
        #expect(CaptureFormat.line(.notification("5E:1A:00:00:48:00", .heartRateMeasurement, [0x16, 0x4A, 0x3E, 0x03], t))
                == #"{"t":"2025-11-29T20:00:01.250Z","mono":1.250000,"device":"5E:1A:00:00:48:00","event":"notification","characteristic":"2a37","hex":"164a3e03"}"#)
        #expect(CaptureFormat.line(.read("A", .batteryLevel, [0x5F], t))
                == #"{"t":"2025-11-29T20:00:01.250Z","mono":1.250000,"device":"A","event":"read","characteristic":"2a19","hex":"5f"}"#)
        #expect(CaptureFormat.line(.linkUp("A", name: "Polar H10", ReceiveTime(wall: 0, monotonic: 0)))
                == #"{"t":"1970-01-01T00:00:00.000Z","mono":0.000000,"device":"A","event":"linkUp","name":"Polar H10"}"#)
        #expect(CaptureFormat.line(.linkDown("A", reason: "connection timeout (0x08)", ReceiveTime(wall: 0, monotonic: 9.5)))
                == #"{"t":"1970-01-01T00:00:00.000Z","mono":9.500000,"device":"A","event":"linkDown","reason":"connection timeout (0x08)"}"#)
        #expect(CaptureFormat.line(.notification("A", .cscMeasurement, [], t)).hasSuffix(#""characteristic":"2a5b","hex":""}"#))
    }

    @Test func captureMonotonicTimesKeepSixDecimals() {
        #expect(CaptureFormat.micros(1.25) == "1.250000")
        #expect(CaptureFormat.micros(0) == "0.000000")
        #expect(CaptureFormat.micros(12345.0000004) == "12345.000000")
        #expect(CaptureFormat.micros(0.0000015) == "0.000002")
        #expect(CaptureFormat.micros(-2.5) == "-2.500000")
    }

    @Test func capturedControlCharactersAreEscaped() throws {
        let event = SensorEvent.linkDown("A", reason: "bye\n\u{01}\"", ReceiveTime(wall: 1_700_000_000_000, monotonic: 1))
        let line = CaptureFormat.line(event)
        #expect(line.contains(#""reason":"bye\u000a\u0001\"""#))
        guard case let .linkDown(_, reason, _) = try CaptureFormat.parse(Substring(line), lineNumber: 1) else {
            Issue.record("not a linkDown: \(line)"); return
        }
        #expect(reason == "bye\n\u{01}\"")
    }

    @Test(arguments: [("/a/b/c", "/a/b"), ("c", ""), ("/c", "/"), ("/a/b/", "/a"), ("a//b", "a"), ("/", "/")])
    func socketParentDirectory(_ path: String, _ parent: String) {
        #expect(Path.directory(of: path) == parent)
    }

    @Test(arguments: ["", "[]", "{\"device\":\"A\"}", #"{"t":"2026-01-01T00:00:00.000Z","mono":1,"device":"A","event":"notification","characteristic":"2a99","hex":"00"}"#,
                      #"{"t":"2026-01-01T00:00:00.000Z","mono":1,"device":"A","event":"notification","characteristic":"2a37","hex":"0"}"#,
                      #"{"t":"yesterday","mono":1,"device":"A","event":"linkUp"}"#,
                      #"{"t":"2026-01-01T00:00:00.000Z","mono":1,"device":"A","event":"explode"}"#])
    func malformedCaptureLinesNameTheLine(_ text: String) {
        #expect(throws: CaptureFormat.Error.self) { try CaptureFormat.parse(Substring(text), lineNumber: 7) }
    }

    @Test func recordThenReplayReproducesTheSamples() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let capture = dir + "/capture.jsonl"
        let events = simulatedEvents(count: 2, seconds: 120)

        let storeA = try Store.open(StoreConfig(directory: dir + "/a", sync: .none))
        let (recording, _) = makePipeline(store: storeA)
        let recorder = try Recorder(path: capture)
        recording.recorder = { recorder.record($0) }
        recording.submit(contentsOf: events)
        recording.drain()
        try recording.storeStage.flushAndSync()
        recorder.flush()

        let storeB = try Store.open(StoreConfig(directory: dir + "/b", sync: .none))
        let (replaying, _) = makePipeline(store: storeB)
        let replay = try ReplaySource(path: capture, pipeline: replaying, speed: 0)
        #expect(replay.events.map(CaptureFormat.line) == events.map(CaptureFormat.line))
        let done = DispatchSemaphore(value: 0)
        replay.onFinished = { done.signal() }
        replay.start()
        done.wait()
        replaying.drain()
        try replaying.storeStage.flushAndSync()
        func values(_ s: Store) throws -> [String] {
            try s.anchored(anchor: 0).added.compactMap(\.sample).map { "\($0.type) \($0.value) \($0.start) \($0.beats.map { ($0 * 1000).rounded() })" }
        }
        #expect(try values(storeA) == values(storeB))
        #expect(try values(storeA).count > 200)
        storeA.close()
        storeB.close()
    }
}
