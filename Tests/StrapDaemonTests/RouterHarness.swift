import ProtocolDriver
import Foundation
import Glibc
import StrapControl
import StrapIngest
import StrapModel
import StrapOS
import StrapSimulator
import StrapStore
import StrapSystem
import StrapWire
@testable import StrapDaemon

/// A real daemon front end for protocol tests: a temp store, a pipeline fed by the simulator,
/// the simulated device service, a `RequestRouter` and a `UnixServer` on a socket in a temp
/// directory. Everything is unique per instance, so tests run in parallel.
final class RouterHarness: @unchecked Sendable {
    let directory: String
    let socketPath: String
    let frontEnd: DaemonFrontEnd
    var store: Store { frontEnd.store }
    var pipeline: Pipeline { frontEnd.pipeline }
    var live: LiveHub { frontEnd.live }
    var devices: DeviceService { frontEnd.context.devices }
    var directoryService: DeviceDirectory { frontEnd.directory }
    var router: RequestRouter { frontEnd.router }
    var server: UnixServer { frontEnd.server }
    let identities: [SimulatedIdentity]
    /// With a `workoutClock` only.
    let workouts: WorkoutService?

    init(access: AccessPolicy? = nil, devices: DeviceService? = nil, outputLimits: OutputLimits = OutputLimits(),
         routerConfiguration: RequestRouter.Configuration = RequestRouter.Configuration(),
         maximumConnections: Int = 4096, retention: Millis = 0, workoutClock: (@Sendable () -> Millis)? = nil,
         syscalls: Syscalls = .live, name: String = #function) throws {
        // sun_path holds 108 bytes: keep the socket directory short.
        directory = "/tmp/strapd-rt-\(name.filter(\.isLetter).prefix(12))-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        chmod(directory, 0o755)
        socketPath = directory + "/s.sock"
        var storeConfig = StoreConfig(directory: directory + "/store", sync: .none, retention: retention)
        // The store's files and the session journals beside them: tests make writes fail.
        storeConfig.syscalls = syscalls
        let store = try Store.open(storeConfig)
        let identities = Simulation(count: 3, seed: 1).devices.map(\.identity)
        self.identities = identities
        let service = devices ?? SimulatedDeviceService(identities: identities)
        let workouts = try workoutClock.map { clock in try WorkoutService(store: store, profiles: ProfileBook(), now: clock) }
        self.workouts = workouts
        frontEnd = DaemonFrontEnd(
            store: store, listener: try UnixListener.bind(path: socketPath, mode: 0o666),
            access: access ?? AccessPolicy(daemonUID: getuid()),
            identity: { address, name in (Device(id: address, address: address, name: name ?? address), DeviceIngest.Settings()) },
            server: ServerConfiguration(outputLimits: outputLimits, maximumConnections: maximumConnections),
            router: routerConfiguration,
            workouts: workouts,
            status: { f in
                DaemonStatus(version: "test", startedAt: 1_700_000_000_000, mode: "simulate", connectedSensors: f.directory.connectedCount,
                             knownSensors: f.context.devices.snapshot().count, sampleRate: 0, pipeline: f.pipeline.counters,
                             store: f.store.status, degraded: nil, clients: 0, liveSubscribers: 0, mqtt: nil)
            }
        ) { _ in service }
        frontEnd.start()
    }

    /// Feeds `seconds` of simulated sensors through the pipeline and waits until stored.
    func ingest(seconds: Double, count: Int = 3, seed: UInt64 = 1) throws {
        pipeline.submit(contentsOf: simulatedEvents(count: count, seconds: seconds, seed: seed))
        pipeline.drain()
        try pipeline.storeStage.flushAndSync()
    }

    func client(timeout: Double = 20) throws -> RawProtocolDriver {
        try RawProtocolDriver(path: socketPath, timeout: timeout)
    }

    func close() {
        frontEnd.stopAndWait()
        store.close()
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// The server queue's view of the buffered output of every connection (test probe).
    func onServerQueue<T: Sendable>(_ body: @Sendable () -> T) -> T { server.queue.sync(execute: body) }
}

extension RawProtocolDriver {
    /// `call` with the request written as a JSON string literal.
    func call(_ json: String) throws -> JSONObject {
        guard case .object(let o) = try JSONParser.parse(Array(json.utf8)) else { fatalError("not an object: \(json)") }
        return try call(o)
    }

    func send(_ json: String) throws {
        try sendRaw(Array((json + "\n").utf8))
    }

    /// Reads messages until one matches; returns it and what came before.
    func read(until predicate: (JSONObject) -> Bool) throws -> (match: JSONObject, before: [JSONObject]) {
        var before: [JSONObject] = []
        while let m = try readMessage() {
            if predicate(m) { return (m, before) }
            before.append(m)
        }
        throw ClientError.closed
    }
}

extension JSONObject {
    var isOK: Bool { self["ok"] == .bool(true) }
    var errorMessage: String? {
        guard case .object(let e)? = self["error"], case .string(let m)? = e["message"] else { return nil }
        return m
    }
    var errorCode: String? {
        guard case .object(let e)? = self["error"], case .string(let c)? = e["code"] else { return nil }
        return c
    }
    var result: JSONObject {
        guard case .object(let r)? = self["result"] else { return JSONObject() }
        return r
    }
    var data: JSONObject {
        guard case .object(let r)? = self["data"] else { return JSONObject() }
        return r
    }
    var event: String? { if case .string(let s)? = self["event"] { s } else { nil } }
    func array(_ key: String) -> [StrapWire.JSONValue] { if case .array(let a)? = self[key] { a } else { [] } }
    func objects(_ key: String) -> [JSONObject] { array(key).compactMap { if case .object(let o) = $0 { o } else { nil } } }
    func int(_ key: String) -> Int64? { if case .int(let i)? = self[key] { i } else { nil } }
    func string(_ key: String) -> String? { if case .string(let s)? = self[key] { s } else { nil } }
}
