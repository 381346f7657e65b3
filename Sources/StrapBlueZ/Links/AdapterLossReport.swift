/// The one line strapd logs when an adapter disappears (a dongle pulled, its driver
/// stopped): which sensors were on it and where they go now. One line per disappearance,
/// written by `SensorManager`, which sees all links; each link only says its own part.
struct AdapterLossReport: Equatable {
    /// `hci1`.
    var adapter: String
    var address: String?
    /// Sensors that were connected or connecting through it and may use another adapter.
    var moving: [String]
    /// Sensors pinned to it (`[device.ADDR] adapter`): they wait for it to come back.
    var pinned: [String]
    /// The powered adapters left.
    var remaining: [String]

    var level: BlueZLogLevel { moving.isEmpty && pinned.isEmpty ? .notice : .warning }

    var text: String {
        let gone = "adapter \(adapter)\(address.map { " (\($0))" } ?? "") is gone (unplugged or its driver stopped)"
        let all = (moving + pinned).sorted()
        guard !all.isEmpty else { return gone + "; no sensor was on it" }
        var line = gone + ": \(all.count) sensor(s) on it (\(all.joined(separator: ", ")))"
        let through = remaining.joined(separator: " or ")
        switch (moving.isEmpty, pinned.isEmpty) {
        case (false, true):
            line += remaining.isEmpty ? "; no other adapter: they wait for one" : " will reconnect through \(through)"
        case (true, false):
            line += "; pinned to it, they wait for it to come back"
        default:
            line += remaining.isEmpty ? "; no other adapter: they wait for one"
                : "; \(moving.sorted().joined(separator: ", ")) will reconnect through \(through)"
                    + ", \(pinned.sorted().joined(separator: ", ")) (pinned to it) wait for it to come back"
        }
        return line
    }
}
