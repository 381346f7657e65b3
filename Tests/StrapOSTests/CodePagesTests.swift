import Glibc
import StrapOS
import Testing

@Suite struct CodePagesTests {
    /// Resident kB of this program's own executable mappings (`r-xp` lines of smaps whose
    /// path is /proc/self/exe), read without Foundation so the reading itself maps little.
    static func residentCodeKB() -> Int? {
        residentKB { perms, path, exe in perms == "r-xp" && path == exe }
    }

    /// Resident kB of the read-only mappings of shared libraries (`r--p`/`r-xp` of a `.so`).
    static func residentLibraryKB() -> Int? {
        residentKB { perms, path, _ in (perms == "r--p" || perms == "r-xp") && path.contains(".so") }
    }

    static func residentKB(counting: (Substring, Substring, String) -> Bool) -> Int? {
        var exe = [CChar](repeating: 0, count: 4096)
        let n = readlink("/proc/self/exe", &exe, exe.count - 1)
        guard n > 0 else { return nil }
        let path = String(decoding: exe[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let fd = open("/proc/self/smaps", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let r = read(fd, &chunk, chunk.count)
            if r <= 0 { break }
            bytes += chunk[0..<r]
        }
        var total = 0, inCode = false
        for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            if let first = fields.first, first.contains("-"), fields.count >= 5 {
                inCode = fields.count >= 6 && counting(fields[1], fields[5], path)
            } else if inCode, fields.first == "Rss:", fields.count >= 2, let kb = Int(fields[1]) {
                total += kb
            }
        }
        return total
    }

    @Test func codePagesAreUnmappedAndComeBackWhenUsed() throws {
        guard let before = Self.residentCodeKB() else { Issue.record("no smaps"); return }
        #expect(before > 0)
        let covered = try CodePages.release()
        // The segment holds at least what this test run has mapped of it.
        #expect(covered >= before * 1024)
        guard let after = Self.residentCodeKB() else { Issue.record("no smaps"); return }
        // Only what ran since (this test, other tests' threads) is mapped again.
        #expect(after < before, "resident code: \(before) kB before, \(after) kB after")
        // And the program still runs its code: pages come back from the file unchanged.
        #expect(Self.residentCodeKB() != nil)
    }

    /// The shared libraries' code and read-only data go too (libc, libstdc++, libsystemd:
    /// mapped by fault-around at start-up), and they still work afterwards.
    @Test func sharedLibrariesReadOnlyPagesAreUnmappedToo() throws {
        guard let before = Self.residentLibraryKB() else { Issue.record("no smaps"); return }
        #expect(before > 0)
        try CodePages.release()
        guard let after = Self.residentLibraryKB() else { Issue.record("no smaps"); return }
        #expect(after < before, "resident read-only library pages: \(before) kB before, \(after) kB after")
        #expect(String(cString: strerror(EINVAL)).isEmpty == false, "libc still runs")
    }
}
