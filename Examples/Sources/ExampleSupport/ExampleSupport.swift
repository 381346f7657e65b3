import FoundationEssentials
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import StrapKit
import CShims

/// The command line of an example: `--name value` options and `--name` flags, nothing more
/// (the examples show StrapKit, not argument parsing).
public struct Options: Sendable {
    public let arguments: [String]

    public init(_ arguments: [String] = CommandLine.arguments) { self.arguments = Array(arguments.dropFirst()) }

    public func value(_ name: String) -> String? {
        guard let i = arguments.firstIndex(of: "--\(name)"), i + 1 < arguments.count else { return nil }
        return arguments[i + 1]
    }

    public func flag(_ name: String) -> Bool { arguments.contains("--\(name)") }

    /// The daemon's socket: `--socket`, else `$STRAPD_SOCKET`, else strapd's default.
    public var socket: String {
        value("socket") ?? ProcessInfo.processInfo.environment["STRAPD_SOCKET"] ?? StrapStore.defaultSocket
    }
}

/// Thrown when an example waited longer than it allows itself.
public struct TimedOut: Error, CustomStringConvertible {
    public let what: String
    public var description: String { "timed out waiting for \(what)" }
}

/// Runs `body`, throwing ``TimedOut`` if it takes more than `seconds`; the loser is cancelled,
/// which for a StrapKit stream sends `cancel` to the daemon.
public func withDeadline<T: Sendable>(_ seconds: Double, _ what: String,
                                      _ body: @escaping @Sendable () async throws -> T) async throws -> T {
    try await withThrowingTaskGroup(of: T.self) { group in
        group.addTask { try await body() }
        group.addTask {
            try await Task.sleep(nanoseconds: UInt64(seconds * 1_000_000_000))
            throw TimedOut(what: what)
        }
        defer { group.cancelAll() }
        return try await group.next()!
    }
}

/// UTC time of day with milliseconds, e.g. 14:03:07.250.
public func clock(_ millis: Int64) -> String {
    let ms = ((millis % 86_400_000) + 86_400_000) % 86_400_000
    func two(_ n: Int64) -> String { n < 10 ? "0\(n)" : "\(n)" }
    let frac = ms % 1000
    return "\(two(ms / 3_600_000)):\(two(ms / 60_000 % 60)):\(two(ms / 1000 % 60)).\(frac < 10 ? "00" : frac < 100 ? "0" : "")\(frac)"
}

public func clock(_ date: Date) -> String { clock(date.millis) }

/// A number with one decimal, or "-" when absent.
public func one(_ value: Double?) -> String {
    guard let value else { return "-" }
    return String((value * 10).rounded() / 10)
}

/// Prints `message` to standard error and exits with status 1.
public func fail(_ message: String) -> Never {
    var line = message + "\n"
    line.withUTF8 { _ = write(2, $0.baseAddress, $0.count) }
    exit(1)
}

/// A JSON value as compact text (a workout message's payload).
public func json(_ value: JSONValue) -> String {
    var out: [UInt8] = []
    JSONWriter.write(value, into: &out)
    return String(decoding: out, as: UTF8.self)
}

/// Standard output flushed at each line even into a file or pipe, so a script watching an
/// example sees each line when it is printed, not when the program exits.
public func lineBufferedOutput() {
    cshims_stdout_line_buffered()
}
