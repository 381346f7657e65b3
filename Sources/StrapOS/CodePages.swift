import CShims

/// strapd's own code pages that only start-up needed.
///
/// The static binary is large (the Swift runtime and Foundation are in it), and the kernel
/// maps file pages generously: each fault maps its whole neighbourhood (fault-around, large
/// page-cache folios), so start-up leaves 8–15 MB of the binary's code mapped of which about
/// 1 MB is used afterwards (docs/benchmarks.md, "strapd and the Python logger"). Those pages
/// are clean and shared with the page cache, so the kernel would drop them under memory
/// pressure anyway, but until then they count in the RSS users compare. Unmapping them once
/// start-up is over leaves mapped what steady running touches again; the page cache keeps
/// them, so a page needed later costs a minor fault.
///
/// MADV_DONTNEED rather than MADV_PAGEOUT: the kernel ignores MADV_PAGEOUT on files the caller
/// could not write, which includes its own binary when it runs as a service user. The segment
/// is read-only and never written, so dropping its mappings loses nothing (a debugger's
/// software breakpoints, written into a private copy, would be the exception).
public enum CodePages {
    /// Unmaps the program's code and read-only data pages; the next use maps them again.
    /// Returns the bytes covered.
    @discardableResult
    public static func release() throws(SystemCallError) -> Int {
        let n = cshims_release_code_pages()
        if n < 0 { throw SystemCallError("madvise(MADV_DONTNEED)", .current) }
        return n
    }
}
