import FoundationEssentials
import Glibc
import StrapIngest
import StrapOS

/// The sensors strapd remembers (`devices.connect`), in `known-devices.json` in the state
/// directory: reconnected at start and after every drop
/// (docs/operations.md#known-devices-and-auto-reconnect).
///
/// ```json
/// {"version":1,"devices":[{"address":"C8:3F:26:12:34:56","name":"Polar H10","autoConnect":true}]}
/// ```
/// `autoConnect` is false after `devices.disconnect`: the sensor stays known (and listed)
/// but is not connected again, not even after a restart, until `devices.connect`.
public struct KnownDevices: Sendable, Equatable {
    public struct Entry: Codable, Sendable, Equatable {
        public var address: SensorAddress
        /// The name BlueZ reported when it was remembered (a `[device.ADDR] name` wins).
        public var name: String?
        public var autoConnect: Bool
    }

    public private(set) var entries: [SensorAddress: Entry] = [:]
    public let path: String
    /// Where the file lives: synced after each save, so the rename is durable.
    private let directory: String

    public static let fileName = "known-devices.json"

    public init(directory: String) {
        self.directory = directory
        path = directory + "/" + Self.fileName
    }

    public enum LoadProblem: Error, Sendable, Equatable, CustomStringConvertible {
        /// Unreadable JSON; the file was moved to `movedTo` and strapd starts with none.
        case corrupt(String, movedTo: String)
        case unreadable(String)
        public var description: String {
            switch self {
            case let .corrupt(why, moved): "corrupt (\(why)); kept as \(moved), starting with no known devices"
            case let .unreadable(why): "unreadable: \(why)"
            }
        }
    }

    private struct File: Codable {
        var version: Int
        var devices: [Entry]
    }

    /// Loads the file; a missing file is no devices. A corrupt one is moved aside as
    /// `.corrupt` (so the next save doesn't destroy the evidence) and reported.
    public mutating func load() -> LoadProblem? {
        let bytes: [UInt8]
        do throws(SystemCallError) {
            let file = try OpenFile(path: path, flags: O_RDONLY)
            bytes = try file.read(at: 0, count: try file.size())
        } catch {
            return error.errno == .noSuchFile ? nil : .unreadable(error.description)
        }
        do {
            let file = try JSONDecoder().decode(File.self, from: Data(bytes))
            var fresh: [SensorAddress: Entry] = [:]
            for var e in file.devices {
                guard let address = Self.normalise(e.address) else { throw KnownDevicesError.badAddress(e.address) }
                e.address = address
                fresh[address] = e
            }
            entries = fresh
            return nil
        } catch {
            let aside = path + ".corrupt"
            let why = (error as? KnownDevicesError)?.description ?? "not the expected JSON"
            do throws(SystemCallError) { try Syscalls.live.rename(path, to: aside) } catch {
                return .unreadable("\(path) is corrupt (\(why)) and cannot be moved aside: \(error)")
            }
            entries = [:]
            return .corrupt(why, movedTo: aside)
        }
    }

    public mutating func set(_ entry: Entry) { entries[entry.address] = entry }
    public mutating func remove(_ address: SensorAddress) { entries[address] = nil }

    /// Temp file, fsync, rename over the old one, fsync the directory: after a crash the
    /// file is either the old or the new list, never a torn one.
    public func save() throws(KnownDevicesError) {
        let file = File(version: 1, devices: entries.values.sorted { $0.address < $1.address })
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        let data: Data
        do { data = try encoder.encode(file) } catch { throw .io("encoding: \(error)") }
        do throws(SystemCallError) { try Syscalls.live.writeFileAtomically(Array(data), to: path) } catch {
            throw .io(error.description)
        }
    }

    /// "aa:bb:…" → "AA:BB:…"; nil unless six hex octets.
    public static func normalise(_ address: String) -> SensorAddress? {
        let parts = address.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 6, parts.allSatisfy({ $0.count == 2 && UInt8($0, radix: 16) != nil }) else { return nil }
        return address.uppercased()
    }
}

public enum KnownDevicesError: Error, Sendable, Equatable, CustomStringConvertible {
    case badAddress(String)
    case io(String)
    public var description: String {
        switch self {
        case .badAddress(let a): "bad address \(a)"
        case .io(let m): m
        }
    }
}
