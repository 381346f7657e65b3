import StrapIngest
import StrapModel
import StrapWire

/// Mapping of domain failures onto protocol error codes (docs/protocol.md#error-codes).
extension WireError {
    init(_ error: StrapError) {
        switch error {
        case let .anchorExpired(oldest):
            self.init(.anchorExpired, error.description, data: ["oldestAnchor": .int(Int64(clamping: oldest))])
        case let .anchorAhead(latest):
            self.init(.anchorAhead, error.description, data: ["latestAnchor": .int(Int64(clamping: latest))])
        case let .invalidOption(m): self.init(.invalidOption, m)
        case let .notFound(m): self.init(.notFound, m)
        case let .badRequest(m): self.init(.badRequest, m)
        case let .unavailable(m): self.init(.unavailable, m)
        case let .internal(m): self.init(.internal, m)
        case let .invalidTransition(m): self.init(.invalidTransition, m)
        case let .noData(m): self.init(.noData, m)
        case let .busy(m): self.init(.busy, m)
        case .newerFormat: self.init(.unavailable, error.description)
        }
    }

    init(_ error: DeviceError) {
        self.init(ErrorCode(rawValue: error.code) ?? .internal, error.description)
    }

    static func bad(_ message: String) -> WireError { WireError(.badRequest, message) }
}
