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
}
