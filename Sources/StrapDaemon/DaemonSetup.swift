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

    static func makeDirectory(_ path: String, mode: mode_t) throws(StartupError) {
        var isDirectory = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) {
            guard isDirectory else { throw .stateDirectory("\(path) exists and is not a directory") }
            return
        }
        do {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: Int(mode)])
        } catch {
            throw .stateDirectory("cannot create \(path): \(error)")
        }
    }

    /// The socket systemd passed us, else our own bound at the configured path.
    static func listener(_ c: Configuration, warn: (String) -> Void) throws(StartupError) -> (UnixListener, activated: Bool) {
        do {
            if let activated = try UnixListener.activated() { return (activated, true) }
        } catch {
            throw .socket("socket activation: \(error)")
        }
        let path = c.daemon.socket
        let parent = Path.directory(of: path)
        if !parent.isEmpty { try makeDirectory(parent, mode: 0o755) }
        var gid: gid_t?
        if let group = c.daemon.socketGroup {
            if let gr = getgrnam(group) { gid = gr.pointee.gr_gid } else {
                warn("socket group \(group) does not exist; the socket stays owned by our own group")
            }
        }
        do { return (try UnixListener.bind(path: path, mode: 0o660, group: gid), false) } catch {
            throw .socket("\(error)")
        }
    }
}
