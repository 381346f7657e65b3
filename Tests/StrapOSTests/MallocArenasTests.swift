import StrapOS
import Testing

@Suite struct MallocArenasTests {
    @Test func glibcTakesTheLimitUnlessTheOperatorChoseOne() {
        #expect(MallocArenas.limit(to: 1, environment: [:]))
        // glibc read MALLOC_ARENA_MAX at start; strapd must not override the operator's number.
        #expect(!MallocArenas.limit(to: 1, environment: ["MALLOC_ARENA_MAX": "4"]))
        // Other variables do not count as the operator's choice.
        #expect(MallocArenas.limit(to: 8, environment: ["PATH": "/usr/bin"]))
    }
}
