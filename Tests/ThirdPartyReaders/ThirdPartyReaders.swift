import Foundation
import Testing

/// The third-party readers the export tests and the daemon's export tests run: the Python
/// checkers of Tests/Fixtures/export in .build/venv (scripts/pyvenv.sh) and gpsbabel. A test
/// that needs one fails (never skips) without it.
public enum ThirdPartyReaders {
    /// The package root: Tests/ThirdPartyReaders/ThirdPartyReaders.swift → ../../
    public static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    public static let fixtures = root.appendingPathComponent("Tests/Fixtures/export")
    public static let python = root.appendingPathComponent(".build/venv/bin/python")

    public struct MissingTool: Error, CustomStringConvertible {
        public let description: String
    }

    public struct ToolResult {
        public let status: Int32
        public let stdout: String
        public let stderr: String
    }

    /// The venv's interpreter; a test that needs it fails (never skips) without it.
    public static func requirePython() throws -> URL {
        guard FileManager.default.isExecutableFile(atPath: python.path) else {
            throw MissingTool(description: "\(python.path) is missing: run scripts/pyvenv.sh (and scripts/deps.sh) first")
        }
        return python
    }

    public static func requireGPSBabel() throws -> URL {
        for dir in ["/usr/bin", "/usr/local/bin"] where FileManager.default.isExecutableFile(atPath: dir + "/gpsbabel") {
            return URL(fileURLWithPath: dir + "/gpsbabel")
        }
        throw MissingTool(description: "gpsbabel is missing: run scripts/deps.sh first")
    }

    public static func run(_ tool: URL, _ arguments: [String]) throws -> ToolResult {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let out = dir.appendingPathComponent("stdout"), err = dir.appendingPathComponent("stderr")
        _ = FileManager.default.createFile(atPath: out.path, contents: nil)
        _ = FileManager.default.createFile(atPath: err.path, contents: nil)
        let process = Process()
        process.executableURL = tool
        process.arguments = arguments
        process.standardOutput = try FileHandle(forWritingTo: out)
        process.standardError = try FileHandle(forWritingTo: err)
        try process.run()
        process.waitUntilExit()
        return ToolResult(status: process.terminationStatus,
                          stdout: (try? String(contentsOf: out, encoding: .utf8)) ?? "",
                          stderr: (try? String(contentsOf: err, encoding: .utf8)) ?? "")
    }

    /// Runs a checker script of Tests/Fixtures/export with the venv's Python; records its
    /// complaints as test issues and returns its JSON summary.
    @discardableResult
    public static func check(_ script: String, _ arguments: [String], sourceLocation: SourceLocation = #_sourceLocation) throws -> [String: Any] {
        let python = try requirePython()
        let result = try run(python, [fixtures.appendingPathComponent(script).path] + arguments)
        #expect(result.status == 0, "\(script) failed:\n\(result.stderr)", sourceLocation: sourceLocation)
        let json = try? JSONSerialization.jsonObject(with: Data(result.stdout.utf8))
        return json as? [String: Any] ?? [:]
    }

    public static func temporaryDirectory() throws -> URL {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("strapd-export-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        return dir
    }

    public static func writeJSON(_ value: Any, to url: URL) throws {
        try JSONSerialization.data(withJSONObject: value, options: [.sortedKeys]).write(to: url)
    }

/// Garmin's SDK and fitdecode through check_fit.py, then gpsbabel's FIT reader (which
    /// verifies the header CRC, the file CRC and the announced size).
    @discardableResult
    public static func verifyFIT(_ file: URL, expect: [String: Any],
                          sourceLocation: SourceLocation = #_sourceLocation) throws -> [String: Any] {
        let expectURL = file.deletingPathExtension().appendingPathExtension("fit-expect.json")
        try writeJSON(expect, to: expectURL)
        let summary = try check("check_fit.py", [file.path, expectURL.path], sourceLocation: sourceLocation)
        let babel = try run(try requireGPSBabel(), ["-D", "3", "-i", "garmin_fit", "-f", file.path, "-o", "unicsv", "-F", "/dev/null"])
        #expect(babel.status == 0, "gpsbabel -i garmin_fit: \(babel.stderr)", sourceLocation: sourceLocation)
        for line in ["Header CRC verified", "File CRC verified", "File size matches expectations"] {
            #expect(babel.stderr.contains(line), "gpsbabel did not say \"\(line)\"", sourceLocation: sourceLocation)
        }
        return summary
    }

    /// Python's csv module through check_csv.py (field counts, times, numbers, and `expect`).
    @discardableResult
    public static func verifyCSV(_ file: URL, expect: [String: Any],
                          sourceLocation: SourceLocation = #_sourceLocation) throws -> [String: Any] {
        let expectURL = file.deletingPathExtension().appendingPathExtension("csv-expect.json")
        try writeJSON(expect, to: expectURL)
        return try check("check_csv.py", [file.path, expectURL.path], sourceLocation: sourceLocation)
    }

    /// tcxreader and the XML parser through check_tcx.py, then gpsbabel's TCX reader.
    @discardableResult
    public static func verifyTCX(_ file: URL, expect: [String: Any],
                          sourceLocation: SourceLocation = #_sourceLocation) throws -> [String: Any] {
        let expectURL = file.deletingPathExtension().appendingPathExtension("tcx-expect.json")
        try writeJSON(expect, to: expectURL)
        let summary = try check("check_tcx.py", [file.path, expectURL.path], sourceLocation: sourceLocation)
        let babel = try run(try requireGPSBabel(), ["-i", "gtrnctr", "-f", file.path, "-o", "unicsv", "-F", "/dev/null"])
        #expect(babel.status == 0 && babel.stderr.isEmpty, "gpsbabel -i gtrnctr: \(babel.stderr)", sourceLocation: sourceLocation)
        return summary
    }
}
