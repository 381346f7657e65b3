import StrapConfig
import StrapSimulator

/// `strapd`'s command line (strapd(8)). Flags that set configuration keys are kept as
/// overrides and applied after the file, so the command line always wins.
public struct DaemonOptions: Sendable, Equatable {
    public var configPath = "/etc/strapd/strapd.conf"
    /// `--config` was given: a missing file is then an error, not the defaults.
    public var configExplicit = false
    /// `--simulate[=N]`: nil when not simulating; 0 means the configured default set.
    public var simulate: Int?
    public var record: String?
    public var replay: String?
    public var replaySpeed = 1.0
    /// `--simulate-speed X`: the simulator runs X times faster than real time (soak runs,
    /// benchmarks); the samples' times follow the simulated clock.
    public var simulateSpeed = 1.0
    /// `--simulate-scenario NAME`: how the simulated athlete moves; `demo` is scripted (and
    /// seeded) so that `make demo` always shows riding and a heart rate climbing through zones.
    public var simulateScenario = Simulation.Scenario.random
    public var overrides: [ConfigOverride] = []
    public var showVersion = false
    public var showHelp = false
    /// The D-Bus address BlueZ is reached on instead of the system bus. Not a flag: a seam
    /// for tests, which run daemons in parallel in one process and so cannot use
    /// `setenv("DBUS_SYSTEM_BUS_ADDRESS")` (the environment variable still works for strapd).
    public var systemBusAddress: String?
    /// Send StrapBlueZ's log (`BusLog`, process-global) to this daemon's logger. Tests that
    /// run daemons next to the BlueZ tests in one process turn it off so they don't steal
    /// each other's handler.
    public var forwardBusLog = true

    public struct ConfigOverride: Sendable, Equatable {
        public var flag: String
        public var value: String
    }

    public struct CommandLineError: Error, Equatable, CustomStringConvertible {
        public var message: String
        public var description: String { message }
    }

    public static let usage = """
        usage: strapd [--config FILE] [--state-dir DIR] [--socket PATH] [--log-level LEVEL]
                      [--simulate[=N] [--simulate-speed X] [--simulate-scenario random|demo]] [--record FILE] [--replay FILE [--replay-speed X]]
                      [--set section.key=value]... [--version] [--help]
        """

    public init() {}

    public static func parse(_ arguments: [String]) throws(CommandLineError) -> DaemonOptions {
        var o = DaemonOptions()
        var i = 0
        func value(_ flag: String, _ inline: String?) throws(CommandLineError) -> String {
            if let inline { return inline }
            i += 1
            guard i < arguments.count else { throw CommandLineError(message: "\(flag) needs a value") }
            return arguments[i]
        }
        while i < arguments.count {
            let arg = arguments[i]
            let parts = arg.split(separator: "=", maxSplits: 1).map(String.init)
            let flag = parts[0]
            let inline = parts.count > 1 ? parts[1] : nil
            switch flag {
            case "--config":
                o.configPath = try value(flag, inline)
                o.configExplicit = true
            case "--simulate":
                if let inline {
                    guard let n = Int(inline), n > 0, n <= 64 else { throw CommandLineError(message: "--simulate=N takes 1…64 devices") }
                    o.simulate = n
                } else {
                    o.simulate = 0
                }
            case "--simulate-speed":
                let v = try value(flag, inline)
                guard let x = Double(v), x > 0, x <= 1_000_000, x.isFinite else { throw CommandLineError(message: "--simulate-speed takes a number in (0, 1000000]") }
                o.simulateSpeed = x
            case "--simulate-scenario":
                let v = try value(flag, inline)
                guard let scenario = Simulation.Scenario(rawValue: v) else {
                    throw CommandLineError(message: "--simulate-scenario takes \(Simulation.Scenario.allCases.map(\.rawValue).joined(separator: " or ")), not '\(v)'")
                }
                o.simulateScenario = scenario
            case "--record": o.record = try value(flag, inline)
            case "--replay": o.replay = try value(flag, inline)
            case "--replay-speed":
                let v = try value(flag, inline)
                guard let x = Double(v), x >= 0, x.isFinite else { throw CommandLineError(message: "--replay-speed takes a number ≥ 0 (0 = as fast as possible)") }
                o.replaySpeed = x
            case "--set": o.overrides.append(ConfigOverride(flag: flag, value: try value(flag, inline)))
            case "--version": o.showVersion = true
            case "-h", "--help": o.showHelp = true
            default:
                guard ConfigOverrides.flags[flag] != nil else { throw CommandLineError(message: "unknown option '\(arg)'") }
                o.overrides.append(ConfigOverride(flag: flag, value: try value(flag, inline)))
            }
            i += 1
        }
        if o.replay != nil && o.simulate != nil { throw CommandLineError(message: "--replay and --simulate cannot be combined") }
        if o.simulateSpeed != 1, o.simulate == nil { throw CommandLineError(message: "--simulate-speed goes with --simulate") }
        if o.simulateScenario != .random, o.simulate == nil { throw CommandLineError(message: "--simulate-scenario goes with --simulate") }
        return o
    }
}
