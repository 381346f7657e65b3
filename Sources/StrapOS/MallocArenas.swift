import CShims

/// How many malloc arenas glibc may create. By default glibc gives a thread that meets a
/// locked arena a new one (up to 8 per core), and each arena keeps the memory its threads
/// touched: the first export or query served on a Dispatch worker thread raised strapd's RSS
/// by about 1 MB that stayed (docs/benchmarks.md, "Daemon memory while streaming"). A daemon
/// with a handful of threads and a small heap gains nothing from more arenas: small blocks
/// come from each thread's tcache without taking the arena's lock anyway.
public enum MallocArenas {
    /// Limits the arenas to `count` unless the operator chose a number with glibc's own
    /// `MALLOC_ARENA_MAX`, which glibc has already applied. Returns whether the limit was set.
    @discardableResult
    public static func limit(to count: Int32, environment: [String: String]) -> Bool {
        guard environment["MALLOC_ARENA_MAX"] == nil else { return false }
        return cshims_malloc_arena_max(count) == 1
    }

    /// Keeps freed memory from staying in the heap for good. glibc raises its mmap threshold
    /// each time a large block is freed, so the daemon's large buffers (2 MiB reply pages,
    /// 20 000-item store pages) end up in the heap, and what they leave free there is only
    /// returned when it happens to sit at the top: a 10 M-notification soak ended with 150 MB
    /// of RssAnon of which 38 MB were in use (malloc_trim gave back the rest). Fixed
    /// thresholds put blocks of 256 KiB and more in their own mappings again (returned on
    /// free); `trim()` gives back the free pages inside the heap. glibc's own
    /// `MALLOC_MMAP_THRESHOLD_`/`MALLOC_TRIM_THRESHOLD_` win when set.
    @discardableResult
    public static func returnFreedMemory(environment: [String: String]) -> Bool {
        guard environment["MALLOC_MMAP_THRESHOLD_"] == nil, environment["MALLOC_TRIM_THRESHOLD_"] == nil else { return false }
        return cshims_malloc_fixed_thresholds(256 << 10, 1 << 20) == 1
    }

    /// Free pages inside the heap back to the kernel (a walk of the heap: call it now and
    /// then, not per request).
    @discardableResult
    public static func trim() -> Bool { cshims_malloc_trim() == 1 }
}
