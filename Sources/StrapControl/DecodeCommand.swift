import StrapGATT
import StrapWire

/// What a command produced; `strapctl`'s main writes it out, tests inspect it directly.
public struct CommandOutput: Equatable, Sendable {
    public var exitCode: Int32
    public var stdout: String
    public var stderr: String

    public init(exitCode: Int32 = 0, stdout: String = "", stderr: String = "") {
        self.exitCode = exitCode
        self.stdout = stdout
        self.stderr = stderr
    }

    /// Exit codes documented in strapctl(1).
    public static let success: Int32 = 0
    public static let invalidPacket: Int32 = 1
    public static let usageError: Int32 = 2
}

/// `strapctl decode CHAR HEX...` and `strapctl decode csc-measurement --sequence HEX... [--circumference M] [--interval S]`.
public enum DecodeCommand {
    public static let usage = """
        usage: strapctl decode CHAR HEX...
               strapctl decode csc-measurement|cycling-power-measurement --sequence HEX HEX... [--circumference M] [--interval S]
        CHAR is a 16-bit UUID (2a37, 0x2A37) or a name: \(names)
        HEX is the packet's octets, in one string or several arguments, spaces and colons allowed.
        """

    static let names = GATTCharacteristic.allCases.map(\.name).joined(separator: ", ")

    public static func run(_ arguments: [String]) -> CommandOutput {
        guard let first = arguments.first else { return usageError("missing characteristic") }
        guard let characteristic = GATTCharacteristic(parsing: first) else {
            return usageError("unknown characteristic '\(first)'")
        }
        var rest = Array(arguments.dropFirst())
        if rest.contains("--sequence") {
            guard characteristic == .cscMeasurement || characteristic == .cyclingPowerMeasurement else {
                return usageError("--sequence is for csc-measurement and cycling-power-measurement only")
            }
            return runSequence(characteristic, &rest)
        }
        if let flag = rest.first(where: { $0.hasPrefix("--") }) { return usageError("unknown option '\(flag)'") }
        guard !rest.isEmpty else { return usageError("missing packet hex") }
        let bytes: [UInt8]
        do { bytes = try HexParser.parse(rest) } catch { return usageError(error.description) }
        do {
            return CommandOutput(stdout: JSONWriter.string(try PacketJSON.render(characteristic, bytes)) + "\n")
        } catch {
            return CommandOutput(exitCode: CommandOutput.invalidPacket, stderr: "strapctl decode: invalid packet: \(error)\n")
        }
    }

    /// One packet of a `--sequence`: the derivation reads a CPS wheel event time at 2048 per second.
    enum RevolutionPacket {
        case csc(CSCMeasurement)
        case power(CyclingPowerMeasurement)
    }

    static func runSequence(_ characteristic: GATTCharacteristic, _ arguments: inout [String]) -> CommandOutput {
        var configuration = CSCDerivation.Configuration()
        var interval = 1.0
        var packets: [String] = []
        var i = 0
        while i < arguments.count {
            let arg = arguments[i]
            switch arg {
            case "--sequence": break
            case "--circumference", "--interval":
                guard i + 1 < arguments.count, let value = Double(arguments[i + 1]), value.isFinite, value > 0 else {
                    return usageError("\(arg) needs a positive number")
                }
                if arg == "--circumference" { configuration.wheelCircumference = value } else { interval = value }
                i += 1
            default:
                if arg.hasPrefix("--") { return usageError("unknown option '\(arg)'") }
                packets.append(arg)
            }
            i += 1
        }
        guard !packets.isEmpty else { return usageError("missing packet hex") }
        // Validate every packet first, so a bad one prints nothing on stdout (exit 1).
        var decoded: [RevolutionPacket] = []
        for (n, packet) in packets.enumerated() {
            let bytes: [UInt8]
            do { bytes = try HexParser.parse([packet]) } catch { return usageError("packet \(n + 1): \(error.description)") }
            do {
                decoded.append(characteristic == .cscMeasurement ? .csc(try CSCMeasurement.decode(bytes))
                               : .power(try CyclingPowerMeasurement.decode(bytes)))
            } catch {
                return CommandOutput(exitCode: CommandOutput.invalidPacket,
                                     stderr: "strapctl decode: invalid packet \(n + 1): \(error)\n")
            }
        }
        var derivation = CSCDerivation(configuration: configuration)
        var out = ""
        for (n, packet) in decoded.enumerated() {
            let time = Double(n) * interval
            let derived = switch packet {
            case .csc(let m): derivation.update(m, receivedAt: time)
            case .power(let m): derivation.update(m, receivedAt: time)
            }
            out += JSONWriter.string(PacketJSON.render(derived)) + "\n"
        }
        return CommandOutput(stdout: out)
    }

    static func usageError(_ message: String) -> CommandOutput {
        CommandOutput(exitCode: CommandOutput.usageError, stderr: "strapctl decode: \(message)\n\(usage)\n")
    }
}
