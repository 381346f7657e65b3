import Dispatch
import StrapIngest

/// Link quality (spec §3.3): the RSSI of every connected sensor, read through HCI off the
/// bus queue.
extension BlueZDeviceService {
    func startRSSITimer() {
        let t = DispatchSource.makeTimerSource(queue: queue)
        t.schedule(deadline: .now() + 1, repeating: settings.rssiInterval)
        t.setEventHandler { @Sendable [weak self] in self?.sampleRSSI() }
        rssiTimer = t
        t.resume()
    }

    /// Reads every connected sensor's RSSI on `rssiQueue` (HCI calls block). Skipped while
    /// nothing is connected, and while the previous round still runs; a permanent failure
    /// (no AF_BLUETOOTH, no CAP_NET_RAW) is logged once per change, not per round.
    func sampleRSSI() {
        guard let client, !rssiBusy else { return }

        let targets: [(SensorAddress, Int32)] = client.mirror.devices.compactMap { d in
            guard d.connected, let address = d.address?.uppercased(), known.entries[address] != nil || manager?.links[address] != nil,
                  let index = d.adapter.flatMap({ LinkQualityReader.adapterIndex($0.rawValue) }) else { return nil }
            return (address, index)
        }
        guard !targets.isEmpty else { return }
        if let paused = rssiPaused, DispatchTime.now() < paused.until {
            for (address, _) in targets where rssi[address] != paused.reading {
                rssi[address] = paused.reading
                publishLinkQuality?(address, paused.reading)
            }
            return
        }
        rssiBusy = true
        let reader = LinkQualityReader(hci: settings.hci)
        rssiQueue.async { [weak self] in
            let results = targets.map { ($0.0, reader.read(address: $0.0, adapter: $0.1)) }
            self?.queue.async { [weak self] in
                guard let self else { return }
                self.rssiBusy = false
                let permanent = !results.isEmpty && results.allSatisfy { LinkQualityReader.isPermanent($0.1) }
                self.rssiPaused = permanent ? (.now() + 60, results[0].1) : nil
                for (address, reading) in results {
                    let previous = self.rssi[address]
                    self.rssi[address] = reading
                    // Every value goes live; a reason only when it changes.
                    if reading.value != nil || previous != reading { self.publishLinkQuality?(address, reading) }
                    if let reason = reading.reason, previous?.reason != reason {
                        self.logger.info("[\(address)] no RSSI: \(reason)", fields: ["DEVICE_ADDRESS": address])
                    } else if let v = reading.value {
                        self.logger.debug("[\(address)] RSSI \(v) dBm", fields: ["DEVICE_ADDRESS": address, "RSSI": String(v)])
                    }
                }
            }
        }
    }
}
