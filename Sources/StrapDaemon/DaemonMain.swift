import Dispatch
import FoundationEssentials
import Glibc
import StrapOS
import StrapSystem

/// What `strapd`'s main.swift calls: parse, start, run the Dispatch main loop until a
/// signal stops the daemon. Exit codes: 0 stopped cleanly, 1 could not start, 2 usage.
public enum DaemonMain {
    public static func run(arguments: [String]) -> Never {
        StandardStreams.lineBufferStdout()
        MallocArenas.limit(to: 1, environment: ProcessInfo.processInfo.environment)
        MallocArenas.returnFreedMemory(environment: ProcessInfo.processInfo.environment)
        let options: DaemonOptions
        do { options = try DaemonOptions.parse(arguments) } catch {
            fail("strapd: \(error)\n\(DaemonOptions.usage)", code: 2)
        }
        if options.showHelp { print(DaemonOptions.usage); exit(0) }
        if options.showVersion { print("strapd \(Daemon.version)"); exit(0) }
        let daemon: Daemon
        do { daemon = try Daemon(options: options, environment: ProcessInfo.processInfo.environment) } catch {
            fail("strapd: \(error)", code: 1)
        }
        daemon.onStopped = { code in exit(code) }
        do {
            try daemon.start()
        } catch {
            daemon.logger.error("cannot start: \(error)")
            fail("strapd: \(error)", code: 1)
        }
        dispatchMain()
    }

    static func fail(_ message: String, code: Int32) -> Never {
        StandardStreams.writeStderr(message + "\n")
        exit(code)
    }
}
