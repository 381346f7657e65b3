import FoundationEssentials
import StrapModel

/// The daemon's small JSON books (`profiles.json`, `plans.json`): `{"version": n, …}` written
/// whole and atomically, read at start (docs/storage.md, "Format versions"). One place for
/// the rules both keep: a book a newer strapd wrote is refused, never moved aside (that would
/// lose it for the newer strapd); a book that does not decode is moved aside and reported, and
/// the daemon starts without it, so recording goes on while a person repairs it.
enum VersionedBook {
    /// Reads `path` with `decode`: nil and no problem when there is no file.
    static func load<T>(path: String, kind: String, supported: Int, load: ProfileBook.Load,
                        quarantine: (_ path: String) throws(StrapError) -> String, startingWith: String,
                        decode: ([UInt8]) throws(StrapError) -> T) throws(StrapError) -> (value: T?, problem: String?) {
        guard let bytes = try load(path) else { return (nil, nil) }
        if let v = newerVersion(bytes, than: supported) {
            throw .newerFormat(NewerFormat(file: path, kind: kind, version: v, supported: supported))
        }
        do throws(StrapError) { return (try decode(bytes), nil) } catch {
            let aside = try quarantine(path)
            return (nil, "\(path): \(error); kept as \(aside), starting with \(startingWith)")
        }
    }

    /// The version the file claims when it is above `supported`; nil for anything else (a book
    /// this build reads, or one that does not decode: that is damage, moved aside).
    static func newerVersion(_ bytes: [UInt8], than supported: Int) -> Int? {
        struct Versioned: Decodable { var version: Int }
        guard let v = try? JSONDecoder().decode(Versioned.self, from: Data(bytes)).version, v > supported else { return nil }
        return v
    }

    /// The file's bytes: pretty-printed, keys sorted (people read and repair these files).
    static func encode<T: Encodable>(_ file: T, kind: String) throws(StrapError) -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        do { return Array(try encoder.encode(file)) } catch { throw .internal("encoding the \(kind): \(error)") }
    }
}
