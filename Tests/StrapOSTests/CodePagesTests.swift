import Glibc
import StrapOS
import Testing

@Suite struct CodePagesTests {
    /// Resident kB of this program's own executable mappings (`r-xp` lines of smaps whose
    /// path is /proc/self/exe), read without Foundation so the reading itself maps little.
    static func residentCodeKB() -> Int? {
        residentKB { perms, path, exe in perms == "r-xp" && path == exe }
    }

    /// Size in kB of the read-only mappings (`r--p`/`r-xp`) of this program and of libc.
    static func readOnlySizeKB() -> (program: Int, libc: Int)? {
        let readOnly: (Substring) -> Bool = { $0 == "r--p" || $0 == "r-xp" }
        guard let program = residentKB(field: "Size:", counting: { perms, path, exe in readOnly(perms) && path == exe }),
              let libc = residentKB(field: "Size:", counting: { perms, path, _ in readOnly(perms) && path.hasSuffix("/libc.so.6") })
        else { return nil }
        return (program, libc)
    }

    static func residentKB(field: Substring = "Rss:", counting: (Substring, Substring, String) -> Bool) -> Int? {
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
            } else if inCode, fields.first == field, fields.count >= 2, let kb = Int(fields[1]) {
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
    /// mapped by fault-around at start-up), and they still work afterwards. Checked by what the
    /// release covers, not by what stays resident: the other tests of this process run at the
    /// same time and map the libraries' pages again at once.
    @Test func sharedLibrariesReadOnlySegmentsAreCoveredToo() throws {
        let size = try #require(Self.readOnlySizeKB())
        #expect(size.program > 0 && size.libc > 0)
        let covered = try CodePages.release()
        // Whole pages of each segment: a little under the mappings' sizes.
        #expect(covered / 1024 > size.program * 9 / 10 + size.libc * 9 / 10,
                "released \(covered / 1024) kB; read-only mappings: program \(size.program) kB, libc \(size.libc) kB")
        #expect(String(cString: strerror(EINVAL)).isEmpty == false, "libc still runs")
    }
}
