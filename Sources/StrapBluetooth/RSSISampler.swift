import Dispatch
import StrapIngest
import StrapSystem

/// Link quality (docs/operations.md#link-quality-rssi): the RSSI of every connected sensor,
/// read through HCI off the bus queue.
///
/// Every `interval` (and when a link comes up) it reads the RSSI of the sensors `targets`
/// names, on a queue of its own since HCI calls block. Skipped while nothing is connected and
/// while the previous round still runs; a permanent failure (no AF_BLUETOOTH, no CAP_NET_RAW)
/// pauses the rounds for a minute and is logged once per change, not per round.
final class RSSISampler: @unchecked Sendable {
    /// A sensor to read: its address and the HCI index of its adapter.
    typealias Target = (address: SensorAddress, adapter: Int32)

    private let queue: DispatchQueue
    private let hciQueue = DispatchQueue(label: "strapd.bluez.rssi")
    private let reader: LinkQualityReader
    private let interval: Double
    private let logger: Logger

    // Confined to `queue` (the bus queue).
    private var targets: () -> [Target] = { [] }
    private var publish: (SensorAddress, RSSIReading) -> Void = { _, _ in }
    private var timer: DispatchSourceTimer?
    private var busy = false
    private var paused: (until: DispatchTime, reading: RSSIReading)?
    private var readings: [SensorAddress: RSSIReading] = [:]

    init(queue: DispatchQueue, hci: any HCIAccess, interval: Double, logger: Logger) {
        self.queue = queue
        reader = LinkQualityReader(hci: hci)
        self.interval = interval
        self.logger = logger
    }

    /// `targets` is asked on the bus queue each round; `publish` gets every value and every
    /// change of reason.
    func start(targets: @escaping () -> [Target], publish: @escaping (SensorAddress, RSSIReading) -> Void) {
        dispatchPrecondition(condition: .onQueue(queue))
        self.targets = targets
        self.publish = publish
        let t = DispatchSource.makeTimerSource(queue: queue)
        t.schedule(deadline: .now() + 1, repeating: interval)
        t.setEventHandler { @Sendable [weak self] in self?.sample() }
        timer = t
        t.resume()
    }

    func stop() {
        dispatchPrecondition(condition: .onQueue(queue))
        timer?.cancel()
        timer = nil
    }

    /// The last reading of `address`, nil before the first.
    func reading(_ address: SensorAddress) -> RSSIReading? { readings[address] }

    /// The link went down: its reading is stale.
    func forget(_ address: SensorAddress) { readings[address] = nil }

    /// One round now (a fresh link gets its RSSI, or the reason there is none, at once).
    func sample() {
        dispatchPrecondition(condition: .onQueue(queue))
        guard timer != nil, !busy else { return }
        let targets = targets()
        guard !targets.isEmpty else { return }
        if let paused, DispatchTime.now() < paused.until {
            for (address, _) in targets where readings[address] != paused.reading {
                readings[address] = paused.reading
                publish(address, paused.reading)
            }
            return
        }
        busy = true
        let reader = reader
        hciQueue.async { [weak self] in
            let results = targets.map { ($0.address, reader.read(address: $0.address, adapter: $0.adapter)) }
            self?.queue.async { [weak self] in self?.finished(results) }
        }
    }

    private func finished(_ results: [(SensorAddress, RSSIReading)]) {
        busy = false
        let permanent = !results.isEmpty && results.allSatisfy { LinkQualityReader.isPermanent($0.1) }
        paused = permanent ? (.now() + 60, results[0].1) : nil
        for (address, reading) in results {
            let previous = readings[address]
            readings[address] = reading
            // Every value goes live; a reason only when it changes.
            if reading.value != nil || previous != reading { publish(address, reading) }
            if let reason = reading.reason, previous?.reason != reason {
                logger.info("[\(address)] no RSSI: \(reason)", metadata: [LogKey.deviceAddress: address])
            } else if let v = reading.value {
                logger.debug("[\(address)] RSSI \(v) dBm", metadata: [LogKey.deviceAddress: address, LogKey.rssi: String(v)])
            }
        }
    }
}
