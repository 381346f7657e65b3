import CShims

/// Read-only pages of the program and of every shared library it loaded that only start-up
/// needed.
///
/// The static binary is large (the Swift runtime and Foundation are in it), and the kernel
/// maps file pages generously: each fault maps its whole neighbourhood (fault-around, large
/// page-cache folios), so start-up leaves 8–15 MB of the binary's code mapped of which about
/// 1 MB is used afterwards (docs/benchmarks.md, "strapd and the Python logger"). The same goes
/// for its read-only data (Swift's type metadata and conformance records, which the runtime
/// reads) and for the shared libraries (libc, libstdc++ under the Swift runtime, libsystemd):
/// with the program's code, 8.5–9 of strapd's 10.4–10.9 MiB while streaming (docs/benchmarks.md,
/// "Instructions, the floor of a wake-up …"). Those
/// pages are clean and shared with the page cache, so the kernel would drop them under memory
/// pressure anyway, but until then they count in the RSS users compare. Unmapping them leaves
/// mapped what steady running touches again; the page cache keeps them, so a page needed
/// later costs a minor fault.
///
/// Only segments that are read-only in the ELF file, so never written: data, and the RELRO
/// part that the loader writes before making it read-only, keep their pages. The vDSO is no
/// file and is skipped.
///
/// MADV_DONTNEED rather than MADV_PAGEOUT: the kernel ignores MADV_PAGEOUT on files the caller
/// could not write, which includes its own binary when it runs as a service user. A debugger's
/// software breakpoints, written into a private copy of a code page, would be lost.
public enum CodePages {
    /// Unmaps the read-only segments of the program and its shared libraries; the next use
    /// maps their pages again. Returns the bytes covered.
    @discardableResult
    public static func release() throws(SystemCallError) -> Int {
        let n = cshims_release_code_pages()
        if n < 0 { throw SystemCallError("madvise(MADV_DONTNEED)", .current) }
        return n
    }

    /// The program's `.rodata` when the link put it in the writable segment, as it does for
    /// strapd's static binary (the Swift compiler marks some `.rodata` input sections
    /// writable, and the output section takes the union of their flags): about 1 MiB of what
    /// start-up read stays mapped, and `release()` leaves writable segments alone. The first
    /// call makes it read-only (nothing writes it after the loader; a stray write now faults
    /// instead of being silently dropped with its page), each call drops its pages that are
    /// still the file's. Pages the loader relocated are the process's own copies and stay.
    /// Returns the bytes dropped; 0 when the program has no such section.
    @discardableResult
    public static func releaseProgramReadOnlyData() throws(SystemCallError) -> Int {
        let n = cshims_release_program_rodata()
        if n < 0 { throw SystemCallError("release .rodata (mprotect, /proc/self/pagemap, madvise)", .current) }
        return n
    }

    /// Where the sealed `.rodata` lies (empty when there is none); seals it if need be.
    public static func sealedProgramReadOnlyData() throws(SystemCallError) -> Range<UInt> {
        var lo: UInt = 0, hi: UInt = 0
        if cshims_seal_program_rodata(&lo, &hi) < 0 { throw SystemCallError("seal .rodata", .current) }
        return lo..<hi
    }
}
