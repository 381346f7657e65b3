import Dispatch
import StrapDBus
import StrapGATT

/// Why a write through a link did not reach the device.
public enum LinkWriteError: Error, Sendable, CustomStringConvertible {
    /// The connected device has no such characteristic, or one that takes no acknowledged write.
    case noCharacteristic(String)
    /// BlueZ (or, through it, the device) refused the WriteValue.
    case bus(BusError)

    public var description: String {
        switch self {
        case .noCharacteristic(let why): why
        case .bus(let e): "\(e)"
        }
    }
}

// Control points: the writes a link makes on request, and the subscriptions through which a
// trainer answers them (docs/trainer.md).
extension SensorLink {
    /// Writes 0x01 to the Heart Rate Control Point (0x2A39) to reset Energy Expended.
    public func resetEnergyExpended(_ done: @escaping BlueZClient.Completion) {
        dispatchPrecondition(condition: .onQueue(client.queue))
        guard let path = characteristic(GATTCharacteristic.heartRateControlPoint.uuidString)?.path else {
            return done(.failure(.reply(DBusErrorReply(name: BlueZErrorName.notSupported.rawValue, message: "\(address) has no heart rate control point"))))
        }
        client.writeValue(characteristic: path, [0x01], withResponse: true, done)
    }

    /// An acknowledged write (ATT Write Request: WriteValue with type "request"): `done` hears
    /// the device's write response. Control point procedures need it, since the device refuses
    /// an operation with an error response (0xFD when its indications are off), which a Write
    /// Command would lose. What the device answers by indication arrives as a notification.
    public func write(_ characteristic: GATTCharacteristic, _ value: [UInt8],
                      _ done: @escaping @Sendable (Result<Void, LinkWriteError>) -> Void) {
        dispatchPrecondition(condition: .onQueue(client.queue))
        guard let c = self.characteristic(characteristic.uuidString) else {
            return done(.failure(.noCharacteristic("\(address) has no \(characteristic.name) characteristic")))
        }
        guard c.flags.contains("write") else {
            return done(.failure(.noCharacteristic("\(address): \(characteristic.name) takes no acknowledged write (flags \(c.flags.joined(separator: ",")))")))
        }
        client.writeValue(characteristic: c.path, value, withResponse: true) { result in done(result.mapError { .bus($0) }) }
    }

    /// The Fitness Machine Control Point (0x2AD9, indicate) and Fitness Machine Status (0x2ADA,
    /// notify) of a trainer whose Indoor Bike Data the link streams: the control point answers
    /// every write by indication, and Machine Status says what changed (another controller
    /// took over, the trainer stopped). A device without them is a plain FTMS sensor.
    func fitnessMachineControlCharacteristics(streaming chars: [BlueZCharacteristic]) -> [BlueZCharacteristic] {
        guard chars.contains(where: { $0.uuid == SensorService.fitnessMachine.measurement.uuidString }) else { return [] }
        let wanted: [(GATTCharacteristic, String)] = [(.fitnessMachineControlPoint, "indicate"), (.fitnessMachineStatus, "notify")]
        return wanted.compactMap { c, flag in characteristic(c.uuidString).flatMap { $0.flags.contains(flag) ? $0 : nil } }
    }

    /// Enables them with StartNotify, whatever the link's notify mode: bluetoothd before 5.80
    /// refuses AcquireNotify on a characteristic that only indicates (src/gatt-client.c,
    /// bluez commit f863d0116), and both carry a few values a minute at most.
    ///
    /// They count among the link's subscriptions, so the link reports `streaming` only once
    /// they are through (a controller that starts on the link's up event can write at once),
    /// but a failure only logs: the link streams without them, and a write then fails on the
    /// device's side. Their StartNotify calls go out before the measurement's: bluetoothd
    /// writes the CCCs in that order and answers in that order, so the control point is
    /// enabled before the first measurement notification raises the link's up event (one that
    /// comes ahead of every CCC write, from a bonded device, can still precede it).
    func subscribeFitnessMachineControl(_ chars: [BlueZCharacteristic], _ current: Int, _ finish: @escaping @Sendable (String?) -> Void) {
        dispatchPrecondition(condition: .onQueue(client.queue))
        for c in chars {
            // Attached before enabling, as for the measurements: an indication sent right
            // after the CCC write is not lost.
            subscribed[c.path] = c.uuid
            client.startNotify(characteristic: c.path) { [weak self] result in
                if let self, self.epoch == current, case .failure(let e) = result {
                    self.subscribed[c.path] = nil
                    let consequence = c.uuid == GATTCharacteristic.fitnessMachineControlPoint.uuidString
                        ? "the trainer refuses control point writes on this link" : "its status changes go unheard on this link"
                    BusLog.notice("[\(self.address)] \(GATTCharacteristic(parsing: c.uuid)?.name ?? c.uuid) not enabled (StartNotify: \(e)); \(consequence)",
                                  metadata: BusLog.device(self.address))
                }
                finish(nil)
            }
        }
    }
}
