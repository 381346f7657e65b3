import Glibc
import StrapOS

/// A segment's file as the store holds it. The open segment keeps its descriptor: the writer
/// appends and syncs through it. A sealed segment keeps only its path and opens the file for
/// as long as it takes to map it (a mapping outlives its descriptor), so a store with years of
/// sealed segments holds one descriptor for all of them, not one each (`strap-bench soak`
/// counted one more descriptor per sealed segment before).
final class SegmentFile: Sendable {
    let path: String
    let syscalls: Syscalls
    /// Nil once sealed.
    private let descriptor: OpenFile?

    /// The open segment's file, kept open.
    init(appending file: OpenFile) {
        path = file.path
        syscalls = file.syscalls
        descriptor = file
    }

    /// A sealed segment's file, opened on use.
    init(sealed path: String, syscalls: Syscalls) {
        self.path = path
        self.syscalls = syscalls
        descriptor = nil
    }

    /// The same file once its segment is sealed: the descriptor goes when the last reader of
    /// the open segment's `Segment` lets go of it.
    var sealedFile: SegmentFile { SegmentFile(sealed: path, syscalls: syscalls) }

    /// The descriptor the writer appends through; only the open segment has one.
    var appendable: OpenFile {
        guard let descriptor else { preconditionFailure("\(path): a sealed segment is never written") }
        return descriptor
    }

    /// Maps the first `length` bytes.
    func mapped(length: Int) throws(SystemCallError) -> MappedFile {
        if let descriptor { return try MappedFile(descriptor, length: length) }
        let file = try OpenFile(path: path, flags: O_RDONLY, syscalls: syscalls)
        return try MappedFile(file, length: length)
    }

    /// fdatasync; a sealed segment was synced when it was sealed, so this opens it only when a
    /// caller that still held the open segment asks after the roll.
    func dataSync() throws(SystemCallError) {
        if let descriptor { return try descriptor.dataSync() }
        try OpenFile(path: path, flags: O_RDONLY, syscalls: syscalls).dataSync()
    }
}
