import Glibc
import StrapOS
import StrapWire

/// `strapctl web url`: the dashboard's URL with its token, read from the file strapd-web
/// writes at each start, as `jupyter server list` prints a notebook's. strapctl does not
/// link strapd-web; the file is their whole contract (docs/web.md, "The token").
enum WebCommands {
    static let usage = """
        usage: strapctl web url [--overlay] [--state-dir DIR]
          url    print strapd-web's dashboard URL (with its token) from DIR/url
          --overlay  the overlay's read-only URL instead, from DIR/overlay-url (for OBS: it cannot steer)
        DIR: strapd-web's state directory; default /var/lib/strapd-web (under systemd's
        DynamicUser= a symlink to /var/lib/private/strapd-web, readable by root only).
        """

    /// Where strapd-web.service keeps its state: StateDirectory= with DynamicUser= makes the
    /// first a symlink to the second. The link can be missing while the directory is there
    /// (removed by hand, or a state directory made before DynamicUser= was set), so both are
    /// tried, in this order.
    static let defaultStateDirectories = ["/var/lib/strapd-web", "/var/lib/private/strapd-web"]
    static let urlFileName = "url"
    /// strapd-web's `AccessToken.overlayURLFileName`.
    static let overlayURLFileName = "overlay-url"

    static func run(_ args: [String], _ context: CommandContext) throws -> Int32 {
        guard let sub = args.first else { throw UsageError(message: "web needs a subcommand") }
        switch sub {
        case "url":
            let a = try Arguments(Array(args.dropFirst()), options: ["state-dir"], flags: ["overlay"])
            guard a.positional.isEmpty else { throw UsageError(message: "web url takes no argument '\(a.positional[0])'") }
            let directories = a.value("state-dir").map { [$0] } ?? defaultStateDirectories
            let url = try readURL(in: directories, file: a.flag("overlay") ? overlayURLFileName : urlFileName)
            if context.json {
                context.sink.print(JSONWriter.string(.object(["url": .string(url)])))
            } else {
                context.sink.print(url)
            }
            return ExitCode.success
        case "help", "--help", "-h":
            context.sink.print(usage)
            return ExitCode.success
        default:
            throw UsageError(message: "unknown web subcommand '\(sub)'")
        }
    }

    /// The URL in the first directory that has a url file. When none has, the first error
    /// that says more than "no such file" wins: a permission refused on the symlink's target
    /// tells the user to use sudo, where "missing" would mislead.
    static func readURL(in directories: [String], file: String = urlFileName) throws(WebURLError) -> String {
        var errors: [WebURLError] = []
        for directory in directories {
            do throws(WebURLError) { return try readURL(at: directory + "/" + file) } catch { errors.append(error) }
        }
        throw errors.first(where: { !$0.isMissing }) ?? errors.first ?? .missing(file)
    }

    static func readURL(at path: String) throws(WebURLError) -> String {
        let bytes: [UInt8]
        do throws(SystemCallError) {
            let file = try OpenFile(path: path, flags: O_RDONLY)
            // strapd-web writes one short line; more than this is not its file.
            bytes = try file.read(at: 0, count: 4096)
        } catch {
            switch error.errno {
            case .noSuchFile, .notDirectory: throw .missing(path)
            case .permissionDenied, .notPermitted: throw .permissionDenied(path)
            default: throw .unreadable(path, error)
            }
        }
        var text = String(decoding: bytes, as: UTF8.self)
        if text.hasSuffix("\n") { text.removeLast() }
        guard text.hasPrefix("http://") || text.hasPrefix("https://"), text.count < 4096,
              !text.unicodeScalars.contains(where: { $0.value <= 0x20 || $0.value == 0x7F }) else {
            throw .malformed(path)
        }
        return text
    }
}

/// Why `strapctl web url` printed no URL, with strapctl(1)'s exit codes.
enum WebURLError: Error, Equatable, CustomStringConvertible {
    /// strapd-web has never started with this state directory.
    case missing(String)
    /// The file and its directory are strapd-web's alone (the URL carries the token).
    case permissionDenied(String)
    case unreadable(String, SystemCallError)
    /// Not one line holding an http(s) URL.
    case malformed(String)

    var description: String {
        switch self {
        case .missing(let path):
            "no URL file at \(path): strapd-web has not started with that state directory (systemctl enable --now strapd-web.service)"
        case .permissionDenied(let path):
            "permission denied reading \(path): the URL holds strapd-web's token, which only root and strapd-web may read (sudo strapctl web url)"
        case .unreadable(let path, let error):
            "cannot read \(path): \(error.errno)"
        case .malformed(let path):
            "\(path) does not hold a URL: it is not strapd-web's url file"
        }
    }

    var isMissing: Bool {
        if case .missing = self { return true }
        return false
    }

    var exitCode: Int32 {
        switch self {
        case .missing: ExitCode.unreachable
        case .permissionDenied: ExitCode.notAuthorized
        case .unreadable, .malformed: ExitCode.daemonError
        }
    }
}
