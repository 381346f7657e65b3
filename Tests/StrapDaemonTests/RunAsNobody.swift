import Foundation
import Glibc

/// A binary of this build, runnable by another user (nobody). The checkout may sit in a
/// private directory (a 0700 `mktemp -d`), which nobody cannot traverse: the binary, and the
/// AddressSanitizer suppressions file its ASAN_OPTIONS name, are copied into a world-readable
/// directory of their own, and the child's environment points at the copy.
final class NobodyExecutable {
    let directory: String
    let path: String
    let environment: [String: String]

    init(_ binary: String) throws {
        directory = "/tmp/strapd-nobody-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        chmod(directory, 0o755)
        path = directory + "/" + URL(fileURLWithPath: binary).lastPathComponent
        try FileManager.default.copyItem(atPath: binary, toPath: path)
        chmod(path, 0o755)
        var env = ProcessInfo.processInfo.environment
        if let options = env["ASAN_OPTIONS"] {
            var rewritten: [String] = []
            for option in options.split(separator: ":").map(String.init) {
                guard option.hasPrefix("suppressions=") else { rewritten.append(option); continue }
                let source = String(option.dropFirst("suppressions=".count))
                let copy = directory + "/asan-suppressions.txt"
                try FileManager.default.copyItem(atPath: source, toPath: copy)
                chmod(copy, 0o644)
                rewritten.append("suppressions=" + copy)
            }
            env["ASAN_OPTIONS"] = rewritten.joined(separator: ":")
        }
        environment = env
    }

    /// `setpriv` arguments that run the copy as nobody, followed by `arguments`.
    func asNobody(_ arguments: [String]) -> [String] {
        ["--reuid=65534", "--regid=65534", "--clear-groups", path] + arguments
    }

    deinit { try? FileManager.default.removeItem(atPath: directory) }
}
