// strapd: the daemon. All wiring lives in StrapDaemon (Daemon, DaemonMain); see strapd(8).
import StrapDaemon

DaemonMain.run(arguments: Array(CommandLine.arguments.dropFirst()))
