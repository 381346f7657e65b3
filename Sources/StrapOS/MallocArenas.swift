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
}
