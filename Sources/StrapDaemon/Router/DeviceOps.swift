import StrapIngest
import StrapModel
import StrapWire

extension RequestRouter {
    enum DeviceAction: String {
        case pair, connect, disconnect, forget, resetEnergy
    }

    /// `devices.list`: every device the service and the pipeline know, merged.
    func devicesList(_ request: Request, _ session: ClientSession) throws(WireError) {
        _ = try Params(request, allowed: [])
        let id = request.id
        respond(request, session) { [context] () throws(WireError) -> [UInt8] in
            let devices = context.directory.listed(by: context.devices)
            return Reply.success(id: id, result: ["devices": .array(devices.map { .object(DaemonJSON.device($0)) })])
        }
    }

    /// `devices.info {"address"}`: one device, `notFound` when neither side knows it.
    func devicesInfo(_ request: Request, _ session: ClientSession) throws(WireError) {
        let params = try Params(request, allowed: ["address"])
        let address = try params.requiredAddress("address")
        let id = request.id
        respond(request, session) { [context] () throws(WireError) -> [UInt8] in
            guard let info = context.directory.listed(by: context.devices).first(where: { $0.address == address }) else {
                throw WireError(.notFound, "no device \(address)")
            }
            return Reply.success(id: id, result: DaemonJSON.device(info))
        }
    }

    /// `devices.pair|connect|disconnect|forget|resetEnergy {"address"}`: answered when the
    /// device service completes.
    func deviceAction(_ request: Request, _ session: ClientSession, _ action: DeviceAction) throws(WireError) {
        let params = try Params(request, allowed: ["address"])
        let address = try params.requiredAddress("address")
        let id = request.id
        let reply = respondLater(request, session)
        let completion: @Sendable (DeviceError?) -> Void = { error in
            if let error {
                reply(Reply.failure(id: id, error: WireError(error)))
            } else {
                reply(Reply.success(id: id, result: ["address": .string(address), "action": .string(action.rawValue)]))
            }
        }
        let devices = context.devices
        // The service promises completions, not that starting an operation never blocks
        // (D-Bus): start it off the server queue.
        worker.async {
            switch action {
            case .pair: devices.pair(address, completion: completion)
            case .connect: devices.connect(address, completion: completion)
            case .disconnect: devices.disconnect(address, completion: completion)
            case .forget: devices.forget(address, completion: completion)
            case .resetEnergy: devices.resetEnergy(address, completion: completion)
            }
        }
    }

    /// `devices.scan {"timeout": seconds}`: `ok`, then `found` events, then `finished`.
    /// One scan at a time daemon-wide; a second is `busy`.
    func devicesScan(_ request: Request, _ session: ClientSession) throws(WireError) {
        let params = try Params(request, allowed: ["timeout"])
        let timeout = try params.number("timeout") ?? configuration.defaultScanTimeout
        guard timeout > 0, timeout <= configuration.maximumScanTimeout else {
            throw .bad("\"timeout\" must be in (0, \(configuration.maximumScanTimeout)] seconds")
        }
        guard scanning.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged else {
            throw WireError(.busy, "a scan is already running")
        }
        session.connection.write(Reply.success(id: request.id, result: ["timeout": .double(timeout)]))
        let stream = ScanStream(router: self, session: session, id: request.id)
        streamStarted(stream, id: request.id, in: session)
        let queue = session.connection.queue
        let devices = context.devices
        worker.async { [self] in
            let handle = devices.scan(timeout: timeout, found: { device in
                queue.async { stream.found(device) }
            }, finished: { [self] error in
                scanning.store(false, ordering: .releasing)
                queue.async { stream.finished(error) }
            })
            queue.async { stream.started(handle) }
        }
    }
}

/// A running `devices.scan`. Confined to the server queue.
final class ScanStream: RouterStream, @unchecked Sendable {
    /// Weak: a stream's last hop may run after the router is gone (a daemon stopped).
    private weak var router: RequestRouter?
    private let session: ClientSession
    private let id: RequestID
    private var handle: ScanHandle?
    private var ended = false
    private var count = 0

    init(router: RequestRouter, session: ClientSession, id: RequestID) {
        self.router = router
        self.session = session
        self.id = id
    }

    /// The service returned its handle; a cancel that came first stops the scan now.
    func started(_ handle: ScanHandle) {
        if ended { handle.stop() } else { self.handle = handle }
    }

    func found(_ device: DiscoveredDevice) {
        guard !ended else { return }
        count += 1
        session.connection.write(Reply.event(id: id, kind: "found", data: DaemonJSON.discovered(device)))
    }

    func finished(_ error: DeviceError?) {
        guard !ended else { return }
        ended = true
        if let error {
            let e = WireError(error)
            session.connection.write(Reply.event(id: id, kind: "error", data: ["code": .string(e.code.rawValue), "message": .string(e.message)]))
        } else {
            session.connection.write(Reply.event(id: id, kind: "finished", data: ["count": .int(Int64(count))]))
        }
        router?.streamEnded(id: id, in: session, stream: self)
    }

    func cancel(notify: Bool) {
        guard !ended else { return }
        ended = true
        handle?.stop()
        if notify { session.connection.write(Reply.event(id: id, kind: "cancelled", data: ["count": .int(Int64(count))])) }
    }

    func outputDrained() {}
}
