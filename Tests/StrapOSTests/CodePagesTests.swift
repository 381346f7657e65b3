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
        // The other suites of this process run at the same time and fault their code back in
        // between the release and the measurement (a CI run once saw 548 kB before and after):
        // a few tries, and one of them must show the drop.
        var seen: [(Int, Int)] = []
        for _ in 0..<10 {
            guard let before = Self.residentCodeKB() else { Issue.record("no smaps"); return }
            #expect(before > 0)
            let covered = try CodePages.release()
            // The segment holds at least what this test run has mapped of it.
            #expect(covered >= before * 1024)
            guard let after = Self.residentCodeKB() else { Issue.record("no smaps"); return }
            seen.append((before, after))
            if after < before { break }
            usleep(50_000)
        }
        // Only what ran since (this test, other tests' threads) is mapped again.
        #expect(seen.contains { $0.1 < $0.0 }, "resident code (kB before, after) in each try: \(seen)")
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

    /// Pages of `range` in this process's page tables: still the file's, or its own copies
    /// (pagemap(5) bits 63 and 61).
    static func presentPages(_ range: Range<UInt>) -> (file: Int, own: Int)? {
        let fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        let page = UInt(sysconf(Int32(_SC_PAGESIZE)))
        var entries = [UInt64](repeating: 0, count: Int((range.upperBound - range.lowerBound) / page))
        let want = entries.count * 8
        let got = entries.withUnsafeMutableBytes { pread(fd, $0.baseAddress, want, off_t(range.lowerBound / page * 8)) }
        guard got == want else { return nil }
        var file = 0, own = 0
        for e in entries where e >> 63 & 1 == 1 {
            if e >> 61 & 1 == 1 { file += 1 } else { own += 1 }
        }
        return (file, own)
    }

    /// This test binary, like strapd's, has its `.rodata` in the writable segment (the Swift
    /// objects' writable `.rodata` inputs). Once sealed it is read-only, its pages that are
    /// still the file's go, the loader's relocated copies stay, and every byte reads as before.
    @Test func theProgramsWritableReadOnlyDataIsSealedAndHandedBack() throws {
        let range = try CodePages.sealedProgramReadOnlyData()
        try #require(!range.isEmpty, "no writable .rodata in this build: readelf -S shows why")
        let bytes = UnsafeRawBufferPointer(start: UnsafeRawPointer(bitPattern: range.lowerBound),
                                           count: Int(range.upperBound - range.lowerBound))
        let checksum = { bytes.enumerated().reduce(UInt64(0)) { $0 &* 31 &+ UInt64($1.element) &+ UInt64($1.offset & 7) } }
        let sum = checksum()
        let before = try #require(Self.presentPages(range))
        #expect(before.file > 0, "reading it all mapped its pages")
        let dropped = try CodePages.releaseProgramReadOnlyData()
        let after = try #require(Self.presentPages(range))
        #expect(dropped > 0)
        // Other tests of this process run meanwhile and may read some of it again.
        #expect(after.file < before.file, "file pages present: \(before.file) before, \(after.file) after")
        #expect(after.own == before.own, "the relocated pages stay")
        #expect(checksum() == sum, "the pages read back from the file are what was there")
        // Read-only now: /proc/self/maps shows the range inside an r--p mapping.
        let maps = try #require(Self.mapsLine(containing: range.lowerBound))
        #expect(maps.split(separator: " ")[1] == "r--p", "\(maps)")
    }

    static func mapsLine(containing address: UInt) -> String? {
        guard let f = fopen("/proc/self/maps", "r") else { return nil }
        defer { fclose(f) }
        var line = [CChar](repeating: 0, count: 4096)
        while fgets(&line, Int32(line.count), f) != nil {
            let text = String(cString: line)
            let bounds = text.prefix(while: { $0 != " " }).split(separator: "-")
            if bounds.count == 2, let lo = UInt(bounds[0], radix: 16), let hi = UInt(bounds[1], radix: 16),
               lo <= address && address < hi { return text }
        }
        return nil
    }
}
