import Foundation
import Glibc
import Testing
@testable import StrapStore
import StrapModel

/// SIGKILL a child process that appends in a loop, at random moments, many times.
@Suite struct CrashTests {
    static var torture: Bool { ProcessInfo.processInfo.environment["STRAP_TORTURE"] == "1" }

    /// The torture executable sits next to the test bundle in .build/<triple>/debug/.
    static func childPath() throws -> String {
        let exe = try #require(try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
        let dir = URL(fileURLWithPath: exe).deletingLastPathComponent().path
        let path = dir + "/strap-store-torture"
        try #require(FileManager.default.isExecutableFile(atPath: path), "build strap-store-torture first (swift build --build-tests)")
        return path
    }

    /// Same formula as the child's `expectedSample`.
    static func expectedValue(_ a: UInt64) -> Double { Double(40 + a % 150) }

    @Test(arguments: ["always", "interval"])
    func killedWriterLosesNothingAcknowledged(mode: String) throws {
        let child = try Self.childPath()
        let dir = TempDir("crash")
        let kills = Self.torture ? 300 : 25
        var promised: UInt64 = 0
        var truncations = 0
        for round in 0..<kills {
            let p = Process()
            p.executableURL = URL(fileURLWithPath: child)
            p.arguments = [dir.path, mode]
            let out = Pipe()
            p.standardOutput = out
            try p.run()
            usleep(UInt32.random(in: 2_000...60_000) + (round == 0 ? 100_000 : 0))
            kill(p.processIdentifier, SIGKILL)
            p.waitUntilExit()
            #expect(p.terminationReason == .uncaughtSignal, "the child died on its own: \(p.terminationStatus)")
            let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            for line in text.split(separator: "\n") {
                let parts = line.split(separator: " ")
                guard parts.count == 2, let n = UInt64(parts[1]) else { continue }
                if parts[0] == "ack" || parts[0] == "seen" { promised = max(promised, n) }
            }

            // Reopen as the daemon would after the crash and check every item.
            let store = try Store.open(StoreConfig(directory: dir.path, sync: .none))
            truncations += store.status.damage.filter { $0.contains("tail truncated") }.count
            #expect(store.status.damage.allSatisfy { $0.contains("tail truncated") || $0.contains("index missing or damaged, rebuilt") },
                    "\(store.status.damage)")
            #expect(store.latestAnchor >= promised, "round \(round): acknowledged \(promised), store has \(store.latestAnchor)")
            let all = try readAll(store, limit: 5000)
            #expect(all.added.count == Int(store.latestAnchor))
            for (i, o) in all.added.enumerated() {
                let s = try #require(o.sample)
                if s.anchor != UInt64(i + 1) || s.value != Self.expectedValue(s.anchor)
                    || (s.anchor % 10 == 0 && s.metadata["anchor"] != String(s.anchor)) {
                    Issue.record("round \(round): bad item at anchor \(s.anchor): \(s)")
                    break
                }
            }
            store.close()
        }
        #expect(promised > 0)
        print("crash test (\(mode)): \(kills) kills, \(promised) anchors acknowledged, \(truncations) torn tails truncated")
    }
}
