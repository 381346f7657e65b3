import StrapOS
import StrapWire
import Glibc

/// The persisted delivery cursor (`<state_dir>/mqtt-cursor`, docs/mqtt.md#delivery): the
/// anchor up to which the broker acknowledged everything, and the broker and prefix it
/// counts for. Replaced atomically, so a crash leaves the old or the new cursor.
struct DeliveryCursor: Equatable {
    var anchor: UInt64
    var broker: String
    var prefix: String

    func bytes() -> [UInt8] {
        var out: [UInt8] = []
        JSONWriter.write(.object(["anchor": .int(Int64(anchor)), "broker": .string(broker), "prefix": .string(prefix)]), into: &out)
        out.append(0x0A)
        return out
    }

    enum Loaded {
        case none
        case found(DeliveryCursor)
        case damaged(String)
    }

    static func load(_ path: String) -> Loaded {
        let bytes: [UInt8]
        do throws(SystemCallError) {
            let file = try OpenFile(path: path, flags: O_RDONLY)
            bytes = try file.read(at: 0, count: min(try file.size(), 65536))
        } catch {
            return error.errno == .noSuchFile ? .none : .damaged("\(error)")
        }
        guard case .object(let o)? = try? JSONParser.parse(bytes),
              case .int(let a)? = o["anchor"], a >= 0,
              case .string(let broker)? = o["broker"], case .string(let prefix)? = o["prefix"] else {
            return .damaged("not a cursor: \(bytes.count) bytes")
        }
        return .found(DeliveryCursor(anchor: UInt64(a), broker: broker, prefix: prefix))
    }

    func save(_ path: String) throws(SystemCallError) {
        try Syscalls.live.writeFileAtomically(bytes(), to: path, mode: 0o640)
    }
}
