import Glibc
import StrapOS
import Testing

@Suite struct MallocArenasTests {
    /// Under AddressSanitizer (the CI's second run) malloc is ASan's, whose `mallopt` takes
    /// nothing; glibc's allocator is what strapd ships with.
    static let glibcAllocator = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "__asan_init") == nil

    @Test func glibcTakesTheLimitUnlessTheOperatorChoseOne() {
        // glibc read MALLOC_ARENA_MAX at start; strapd must not override the operator's number.
        #expect(!MallocArenas.limit(to: 1, environment: ["MALLOC_ARENA_MAX": "4"]))
        guard Self.glibcAllocator else { return }
        #expect(MallocArenas.limit(to: 1, environment: [:]))
        // Other variables do not count as the operator's choice.
        #expect(MallocArenas.limit(to: 8, environment: ["PATH": "/usr/bin"]))
    }
}
