import Glibc
import StrapModel
import StrapOS

/// Refuses a state directory that a newer strapd wrote in a format this build cannot read,
/// before anything in it is touched: no temporary file deleted, no torn tail cut off, no
/// index rebuilt over a newer one, not even the lock file written (docs/storage.md, "Format
/// versions"). Reads only the headers of segments, indexes and session journals.
enum FormatVersionGate {
    /// A file kind with a versioned header: its magic, the offset of the u16 version after it
    /// and of the u32 CRC that covers every byte before it. Every format version keeps these
    /// three where version 1 has them, so an older reader can tell "newer" from "damaged".
    struct Header {
        var kind: String
        var magic: [UInt8]
        var version: UInt16
        var crcOffset: Int
    }

    static let segment = Header(kind: "store segment", magic: Format.segmentMagic, version: Format.version,
                                crcOffset: Format.headerSize - 4)
    static let index = Header(kind: "store index", magic: Format.indexMagic, version: Format.version,
                              crcOffset: IndexFile.headerSize - 4)
    static let journal = Header(kind: "session journal", magic: WorkoutJournalFile.magic, version: WorkoutJournalFile.version,
                                crcOffset: WorkoutJournalFile.headerSize - 4)

    /// The version `head` claims when it is above what this build reads. Believed only under
    /// an intact header checksum: a flipped bit in the version field is damage (that file is
    /// skipped and reported as before), not a reason to refuse the whole store.
    static func newerVersion(_ head: [UInt8], _ h: Header) -> Int? {
        guard head.count >= h.crcOffset + 4, Array(head[0..<8]) == h.magic else { return nil }
        let version = UInt16(head[8]) | UInt16(head[9]) << 8
        guard version > h.version else { return nil }
        let stored = (0..<4).reduce(UInt32(0)) { $0 | UInt32(head[h.crcOffset + $1]) << (8 * $1) }
        return stored == crc32(Array(head[0..<h.crcOffset])) ? Int(version) : nil
    }

    /// Throws for the first file (in name order) that claims a newer format.
    static func check(directory: String, syscalls: Syscalls) throws(StoreOpenError) {
        let names = (try? syscalls.listDirectory(directory)) ?? []
        let sessions = directory + "/sessions"
        let journals = (try? syscalls.listDirectory(sessions)) ?? []
        let files: [(path: String, header: Header)] =
            names.sorted().compactMap { n -> (String, Header)? in
                guard n.hasPrefix("seg-") else { return nil }
                if n.hasSuffix(".log") { return (directory + "/" + n, segment) }
                return n.hasSuffix(".idx") ? (directory + "/" + n, index) : nil
            } + journals.sorted().filter { $0.hasSuffix(".journal") }.map { (sessions + "/" + $0, journal) }
        for (path, header) in files {
            guard let f = try? OpenFile(path: path, flags: O_RDONLY, syscalls: syscalls),
                  let head = try? f.read(at: 0, count: header.crcOffset + 4),
                  let version = newerVersion(head, header) else { continue }
            throw .newerFormat(NewerFormat(file: path, kind: header.kind, version: version, supported: Int(header.version)))
        }
    }
}
