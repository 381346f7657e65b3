/// The `strapctl` command line: subcommand dispatch. Subcommands that talk to the daemon
/// arrive with the daemon; `decode` works offline.
public enum Strapctl {
    public static let usage = """
        usage: strapctl COMMAND [ARGS...]
        commands:
          decode CHAR HEX...      decode one GATT packet offline (see strapctl decode --help)
          help                    this text
        """

    public static func run(_ arguments: [String]) -> CommandOutput {
        guard let command = arguments.first else {
            return CommandOutput(exitCode: CommandOutput.usageError, stderr: usage + "\n")
        }
        let rest = Array(arguments.dropFirst())
        switch command {
        case "decode":
            if rest == ["--help"] || rest == ["-h"] { return CommandOutput(stdout: DecodeCommand.usage + "\n") }
            return DecodeCommand.run(rest)
        case "help", "--help", "-h":
            return CommandOutput(stdout: usage + "\n")
        default:
            return CommandOutput(exitCode: CommandOutput.usageError,
                                 stderr: "strapctl: unknown command '\(command)'\n\(usage)\n")
        }
    }
}
