/// A file written by a newer strapd in a format this build cannot read (docs/storage.md,
/// "Format versions"). Opening it is refused before anything in the state directory is
/// touched: an older reader that skipped or "repaired" it would destroy what the newer one
/// wrote, and the owner may still go back to that newer version.
public struct NewerFormat: Error, Sendable, Equatable, CustomStringConvertible {
    /// The path of the file that claims the newer version.
    public var file: String
    /// What the file is: "store segment", "store index", "session journal", "profile book".
    public var kind: String
    /// The format version the file says it has.
    public var version: Int
    /// The newest format version this build reads.
    public var supported: Int

    public init(file: String, kind: String, version: Int, supported: Int) {
        self.file = file
        self.kind = kind
        self.version = version
        self.supported = supported
    }

    public var description: String {
        "\(file): \(kind) format version \(version) is newer than this strapd reads (up to version \(supported)); it was written by a newer strapd. Nothing was changed: run that newer strapd, or move the state directory aside"
    }
}
