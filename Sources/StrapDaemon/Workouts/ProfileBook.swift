import FoundationEssentials
import StrapModel
import Synchronization

/// Every athlete's profile (docs/workouts.md "Athlete profile"), kept in `profiles.json` in
/// the state directory and replaced atomically on every change, so a crash leaves the old or
/// the new book, never a torn one:
///
/// ```json
/// {"version":2,"profiles":{"default":{"weight":72.5,"dateOfBirth":"1990-04-01"}}}
/// ```
public final class ProfileBook: Sendable {
    /// Writes the whole file atomically (temp, fsync, rename, fsync the directory).
    public typealias Persist = @Sendable (_ path: String, _ bytes: [UInt8]) throws(StrapError) -> Void
    /// Reads the file; nil when it does not exist.
    public typealias Load = @Sendable (_ path: String) throws(StrapError) -> [UInt8]?

    public static let fileName = "profiles.json"
    public static let maximumAthletes = 1024

    public let path: String
    private let persist: Persist
    private let profiles: Mutex<[String: AthleteProfile]>

    private struct File: Codable {
        var version: Int
        var profiles: [String: AthleteProfile]
    }

    /// A book kept only in memory (tests, the benchmark).
    public init() {
        path = ""
        persist = { _, _ throws(StrapError) in }
        loadProblem = nil
        profiles = Mutex([:])
    }

    /// What was wrong with the file at start-up, if anything (the daemon logs it).
    public let loadProblem: String?

    /// Loads `directory/profiles.json`. A file that does not decode or validate is moved aside
    /// (`quarantine`, e.g. to `profiles.json.corrupt`) and reported in `loadProblem`: the
    /// athletes' data stays on disk for a person to repair, and recording goes on meanwhile.
    public init(directory: String, today: CalendarDate, load: Load, persist: @escaping Persist,
                quarantine: (_ path: String) throws(StrapError) -> String) throws(StrapError) {
        path = directory + "/" + Self.fileName
        self.persist = persist
        let (loaded, problem) = try VersionedBook.load(path: path, kind: "profile book", supported: Self.formatVersion, load: load,
                                                       quarantine: quarantine, startingWith: "no athlete profiles") { bytes throws(StrapError) in
            try Self.decode(bytes, today: today)
        }
        loadProblem = problem
        profiles = Mutex(loaded ?? [:])
    }

    /// The format version this build writes, and the newest it reads (docs/storage.md, "Format
    /// versions"). Version 2 added `functionalThresholdPower`: 0.1.0 decodes a profile leniently
    /// and would drop the FTP on its next write, so it must refuse a version 2 book instead.
    public static let formatVersion = 2
    /// Every version ever shipped, all read: a version 1 book (0.1.0) loads as it is and is
    /// written as version 2 on its first change.
    public static let readableVersions = 1...formatVersion

    static func decode(_ bytes: [UInt8], today: CalendarDate) throws(StrapError) -> [String: AthleteProfile] {
        let file: File
        do { file = try JSONDecoder().decode(File.self, from: Data(bytes)) } catch {
            throw .invalidOption("not a valid profile book (\(error))")
        }
        guard readableVersions.contains(file.version) else {
            throw .invalidOption("version \(file.version); this strapd reads versions \(readableVersions.lowerBound) to \(formatVersion)")
        }
        for (athlete, p) in file.profiles {
            // A birth date that was valid when written stays valid; only its shape is checked.
            do throws(StrapError) { try p.validate(today: max(today, p.dateOfBirth ?? today)) } catch {
                throw .invalidOption("athlete \(athlete): \(error)")
            }
        }
        return file.profiles
    }

    public func profile(_ athlete: String) -> AthleteProfile? {
        profiles.withLock { $0[athlete] }
    }

    public var athletes: [String] { profiles.withLock { $0.keys.sorted() } }

    /// Applies a patch: validated as a whole, written to disk, and only then in force. On any
    /// error nothing changes.
    @discardableResult
    public func update(_ athlete: String, _ patch: AthleteProfilePatch, today: CalendarDate) throws(StrapError) -> AthleteProfile {
        try profiles.withLock { all throws(StrapError) -> AthleteProfile in
            if all[athlete] == nil && all.count >= Self.maximumAthletes {
                throw .invalidOption("at most \(Self.maximumAthletes) athletes have a profile")
            }
            let updated = try (all[athlete] ?? AthleteProfile()).applying(patch, today: today)
            var next = all
            next[athlete] = updated
            try write(next)
            all = next
            return updated
        }
    }

    /// The per-device settings any profile holds for `address` (wheel circumference, cadence
    /// unit); when several athletes set the same sensor, the name that sorts last wins (a
    /// rule, not an accident of dictionary order).
    public func deviceSettings(_ address: String) -> DeviceSettings? {
        profiles.withLock { all in
            all.keys.sorted().compactMap { all[$0]?.devices[address] }.last
        }
    }

    private func write(_ all: [String: AthleteProfile]) throws(StrapError) {
        guard !path.isEmpty else { return }
        try persist(path, try VersionedBook.encode(File(version: Self.formatVersion, profiles: all), kind: "profile book"))
    }
}
