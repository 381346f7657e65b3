import FoundationEssentials
import Glibc
import StrapIngest
import StrapModel

/// `trainers-held` in the state directory: the trainers strapd may have left holding a target,
/// one address per line. Written (atomically) before a target goes out and after a reset is
/// acknowledged, so a start after a crash or power cut knows which trainers to reset
/// (docs/trainer.md, "Never left at a high target"). A missing file is an empty list; an
/// unreadable one is logged and treated as empty (the trainer keeps the target it had: the
/// rider can stop pedalling, which no code here can do for them).
final class HeldTargetsFile {
    let path: String
    private let log: @Sendable (String) -> Void
    private var addresses: Set<SensorAddress> = []

    init(path: String, log: @escaping @Sendable (String) -> Void) {
        self.path = path
        self.log = log
    }

    func load() -> [SensorAddress] {
        do throws(StrapError) {
            guard let bytes = try DaemonFiles.read(path) else { return [] }
            let text = String(decoding: bytes, as: UTF8.self)
            addresses = Set(text.split(whereSeparator: \.isNewline).map { $0.trimmingSpaces().uppercased() }
                .filter(Self.isAddress))
        } catch {
            log("trainers: \(error); no trainer is reset for an earlier run")
        }
        return addresses.sorted()
    }

    func add(_ a: SensorAddress) {
        guard addresses.insert(a).inserted else { return }
        save()
    }

    func remove(_ a: SensorAddress) {
        guard addresses.remove(a) != nil else { return }
        save()
    }

    private func save() {
        let text = addresses.sorted().map { $0 + "\n" }.joined()
        do throws(StrapError) { try DaemonFiles.replace(path, Array(text.utf8)) } catch {
            log("trainers: \(error)")
        }
    }

    /// Six pairs of hex digits separated by colons: nothing else is acted on.
    static func isAddress(_ s: String) -> Bool {
        let parts = s.split(separator: ":", omittingEmptySubsequences: false)
        return parts.count == 6 && parts.allSatisfy { $0.count == 2 && $0.allSatisfy(\.isHexDigit) }
    }
}

private extension Substring {
    func trimmingSpaces() -> String {
        String(drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
    }
}
