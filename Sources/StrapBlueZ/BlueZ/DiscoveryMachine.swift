/// Where LE discovery on one adapter is, for one user of it (a scan, or the rediscovery of
/// missing sensors). Pure value; `DiscoverySession` and `SensorManager` send the calls.
///
/// Starting takes two calls, SetDiscoveryFilter then StartDiscovery, each answered later, and
/// the user may change its mind in between (`strapctl scan --until` stops as soon as a cached
/// sensor is reported, before any reply). A StopDiscovery sent then would reach BlueZ before
/// the StartDiscovery still to come and leave discovery running for good, so a change of mind
/// is only recorded while a call is in flight and acted on at its reply: no StartDiscovery
/// after a filter reply nobody wants any more, StopDiscovery right after a start reply.
public struct DiscoveryMachine: Sendable, Equatable {
    public enum Phase: Sendable, Equatable {
        case idle
        /// SetDiscoveryFilter sent, no reply yet.
        case filtering
        /// StartDiscovery sent, no reply yet.
        case starting
        case running
        /// StopDiscovery sent, no reply yet.
        case stopping
    }

    public enum Input: Sendable, Equatable {
        case want(Bool)
        /// Replies carry the `epoch` the call was sent in: replies to calls sent before a
        /// `lost` are ignored.
        case filterFinished(ok: Bool, epoch: UInt64)
        /// `ok` also when BlueZ answers InProgress: this client's discovery is running.
        case startFinished(ok: Bool, epoch: UInt64)
        /// Whatever the answer: a failed stop leaves nothing running either.
        case stopFinished(epoch: UInt64)
        /// Discovery ended without a stop of ours (adapter gone or off, bluetoothd gone,
        /// the other user's StopDiscovery): idle, calls in flight forgotten, `wanted` kept.
        case lost
    }

    public enum Command: Sendable, Equatable {
        case setDiscoveryFilter
        case startDiscovery
        case stopDiscovery
    }

    public private(set) var phase = Phase.idle
    public private(set) var wanted = false
    public private(set) var epoch: UInt64 = 0

    public init() {}

    public mutating func handle(_ input: Input) -> Command? {
        switch input {
        case .want(let wants):
            wanted = wants
            switch phase {
            case .idle where wants:
                phase = .filtering
                return .setDiscoveryFilter
            case .running where !wants:
                phase = .stopping
                return .stopDiscovery
            default:
                return nil
            }
        case .filterFinished(let ok, let e):
            guard e == epoch, phase == .filtering else { return nil }
            guard ok, wanted else { phase = .idle; return nil }
            phase = .starting
            return .startDiscovery
        case .startFinished(let ok, let e):
            guard e == epoch, phase == .starting else { return nil }
            guard ok else { phase = .idle; return nil }
            if wanted { phase = .running; return nil }
            phase = .stopping
            return .stopDiscovery
        case .stopFinished(let e):
            guard e == epoch, phase == .stopping else { return nil }
            if wanted { phase = .filtering; return .setDiscoveryFilter }
            phase = .idle
            return nil
        case .lost:
            epoch &+= 1
            phase = .idle
            return nil
        }
    }
}
