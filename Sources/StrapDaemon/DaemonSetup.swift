import FoundationEssentials
import Glibc
import StrapConfig
import StrapModel
import StrapOS
import StrapStore
import StrapSystem
import StrapWire

/// Why the daemon could not start: each is one clear line for the log and stderr.
public enum StartupError: Error, CustomStringConvertible {
    case configuration(String)
    case stateDirectory(String)
    case store(String)
    case socket(String)
    case source(String)

    public var description: String {
        switch self {
        case let .configuration(m): "configuration: \(m)"
        case let .stateDirectory(m): "state directory: \(m)"
        case let .store(m): "store: \(m)"
        case let .socket(m): "socket: \(m)"
        case let .source(m): "source: \(m)"
        }
    }
}

/// Loading and translating configuration: file, then command-line overrides.
enum DaemonSetup {
    static func loadConfiguration(_ options: DaemonOptions) throws(StartupError) -> (configuration: Configuration, warnings: [ConfigDiagnostic]) {
        var configuration = Configuration()
        var warnings: [ConfigDiagnostic] = []
        if let text = try? String(contentsOfFile: options.configPath, encoding: .utf8) {
            do throws(ConfigError) {
                let parsed = try ConfigParser.parse(text, path: options.configPath)
                configuration = parsed.configuration
                warnings = parsed.warnings
            } catch {
                throw .configuration(error.description)
            }
        } else if options.configExplicit || FileManager.default.fileExists(atPath: options.configPath) {
            throw .configuration("cannot read \(options.configPath): \(Errno.current)")
        }
        do throws(ConfigError) {
            configuration = try ConfigOverrides.apply(options.overrides.map { ($0.flag, $0.value) }, to: configuration)
        } catch {
            throw .configuration(error.description)
        }
        return (configuration, warnings)
    }

    static func storeConfig(_ c: Configuration) -> StoreConfig {
        let sync: SyncPolicy = switch c.store.sync {
        case .always: .always
        case .none: .none
        case .interval: .interval(seconds(c.store.syncInterval))
        }
        let retention: Millis = switch c.store.retention {
        case .forever: 0
        case let .duration(d): Millis(seconds(d) * 1000)
        }
        return StoreConfig(directory: c.daemon.stateDirectory + "/store", sync: sync, retention: retention)
    }

    static func seconds(_ d: Duration) -> Double {
        Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
    }

    static func logLevel(_ l: ConfiguredLogLevel) -> StrapSystem.LogLevel {
        StrapSystem.LogLevel(name: l.rawValue) ?? .info
    }

    /// `[access]` with user and group names resolved to ids (unknown names are warnings).
    static func accessPolicy(_ a: Configuration.Access, warn: (String) -> Void) -> AccessPolicy {
        func resolve(_ p: PrincipalSpec) -> Principal? {
            switch p {
            case let .uid(u): return .uid(u)
            case let .gid(g): return .gid(g)
            case let .user(name):
                guard let pw = getpwnam(name) else { warn("access: no user \(name)"); return nil }
                return .uid(pw.pointee.pw_uid)
            case let .group(name):
                guard let gr = getgrnam(name) else { warn("access: no group \(name)"); return nil }
                return .gid(gr.pointee.gr_gid)
            }
        }
        var readTypes: [Principal: Set<String>] = [:]
        for (p, types) in a.readTypes { if let r = resolve(p) { readTypes[r] = Set(types) } }
        return AccessPolicy(read: Set(a.read.compactMap(resolve)), readTypes: readTypes,
                            record: Set(a.record.compactMap(resolve)), admin: Set(a.admin.compactMap(resolve)),
                            daemonUID: getuid())
    }

    /// Creates `path` (and its parents) unless it is a directory already. A failure names
    /// the path, the errno in words and what to do about it.
    static func makeDirectory(_ path: String, mode: mode_t, option: String = "--state-dir") throws(StartupError) {
        var st = stat()
        if stat(path, &st) == 0 {
            guard (st.st_mode & S_IFMT) == S_IFDIR else { throw .stateDirectory("\(path) exists and is not a directory") }
            return
        }
        do throws(SystemCallError) { try Syscalls.live.makeDirectories(path, mode: mode) } catch {
            throw .stateDirectory("cannot create \(error.path ?? path): \(error.errno.text)" + advice(error.errno, path: path, option: option))
        }
    }

    /// A directory strapd must write in: refused up front, with advice, rather than failing
    /// later on whichever file comes first.
    static func requireWritable(_ path: String, option: String = "--state-dir") throws(StartupError) {
        guard access(path, W_OK | X_OK) != 0 else { return }
        let e = Errno.current
        throw .stateDirectory("cannot write in \(path): \(e.text)" + advice(e, path: path, option: option))
    }

    /// What to do about `errno` on `path`: for permissions, who strapd runs as and who owns
    /// the nearest existing directory.
    static func advice(_ errno: Errno, path: String, option: String) -> String {
        switch errno {
        case .permissionDenied, .notPermitted:
            let uid = geteuid()
            let me = userName(uid)
            var dir = path
            var st = stat()
            while stat(dir, &st) != 0, dir != "/", !dir.isEmpty { dir = Path.directory(of: dir).isEmpty ? "/" : Path.directory(of: dir) }
            let owner = userName(st.st_uid)
            let mode = String(st.st_mode & 0o7777, radix: 8)
            return "; strapd runs as user \(me) (uid \(uid)) and \(dir) belongs to \(owner) (uid \(st.st_uid), mode \(mode)). " +
                "Create the directory for strapd's user (sudo install -d -o \(me) -m 0750 \(path)), run strapd as \(owner), or give it another \(option)"
        case .noSpace, .diskQuotaExceeded: return "; the file system is full: free some space"
        case Errno(rawValue: EROFS): return "; the file system is read-only: give strapd a writable \(option)"
        default: return ""
        }
    }

    static func userName(_ uid: uid_t) -> String {
        if let pw = getpwuid(uid), let name = pw.pointee.pw_name { return String(cString: name) }
        return "#\(uid)"
    }

    /// The socket systemd passed us, else our own bound at the configured path. systemd is
    /// asked only when `maybeSocketActivated` (the daemon's environment names a LISTEN_PID).
    static func listener(_ c: Configuration, maybeSocketActivated: Bool, warn: (String) -> Void) throws(StartupError) -> (UnixListener, activated: Bool) {
        do {
            if maybeSocketActivated, let activated = try UnixListener.activated() { return (activated, true) }
        } catch {
            throw .socket("socket activation: \(error)")
        }
        let path = c.daemon.socket
        let parent = Path.directory(of: path)
        if !parent.isEmpty { try makeDirectory(parent, mode: 0o755, option: "--socket") }
        var gid: gid_t?
        if let group = c.daemon.socketGroup {
            if let gr = getgrnam(group) { gid = gr.pointee.gr_gid } else {
                warn("socket group \(group) does not exist; the socket stays owned by our own group")
            }
        }
        do { return (try UnixListener.bind(path: path, mode: 0o660, group: gid), false) } catch {
            if case let .system(e, _) = error { throw .socket("\(error)" + advice(e.errno, path: path, option: "--socket")) }
            throw .socket("\(error)")
        }
    }
}
