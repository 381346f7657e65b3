import Foundation
import Glibc
import StrapWeb

/// A real `strapd --simulate` and a real `strapd-web` in front of it, both as children, each
/// with its own state in a temp directory; strapd-web binds 127.0.0.1:0 and says the port it
/// got in its URL file. StrapDaemonTests' `DaemonProcess` does the strapd half for that
/// target, but a test target cannot import another's helpers and this one needs only a start
/// and a stop: a shared support target is worth it once a third target starts strapd.
final class WebHarness {
    static var buildDirectory: URL {
        // The test bundle sits in .build/<triple>/debug next to the executables it depends on.
        let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? ""
        return URL(fileURLWithPath: exe).deletingLastPathComponent()
    }

    struct StartFailure: Error, CustomStringConvertible {
        let description: String
    }

    let directory: String
    var socket: String { directory + "/s.sock" }
    var webState: String { directory + "/web" }
    private var strapd: Process?
    private var web: Process?
    /// strapd-web's port and token, read from the URL file it writes at start.
    private(set) var port: UInt16 = 0
    private(set) var token = ""

    /// strapd-web under other credentials, as strapd-web.service gives it (a DynamicUser= uid,
    /// Group=, SupplementaryGroups=), set by setpriv (root only); strapd's socket then
    /// becomes mode 0660, group `socketGroup`, as strapd.socket makes it. Numeric ids: nothing
    /// is added to the machine's user or group database.
    struct Credentials {
        let uid: UInt32
        let gid: UInt32
        let groups: [UInt32]
        let socketGroup: UInt32
    }

    /// Starts strapd with `sensors` simulated sensors (sensor 0 is "Sim HR 0", a heart-rate
    /// strap; nil: no `--simulate`, for a `--replay` in `strapdArguments`) and
    /// `strapdArguments` (`--set` options), waits for its socket, then starts strapd-web with
    /// `webArguments` (as `credentials` when given).
    init(sensors: Int? = 2, strapdArguments: [String] = [], webArguments: [String] = [], credentials: Credentials? = nil,
         name: String = #function) throws {
        // sun_path holds 108 bytes: keep the directory short.
        directory = "/tmp/strapweb-\(name.filter(\.isLetter).prefix(10))-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: webState, withIntermediateDirectories: true)
        strapd = try Self.launch("strapd", ["--state-dir", directory + "/state", "--socket", socket, "--set", "daemon.socket_group=",
                                            "--log-level", "warning"] + (sensors.map { ["--simulate=\($0)"] } ?? []) + strapdArguments, log: directory + "/strapd.log")
        try waitFor("strapd's socket at \(socket)") { Self.canConnect(unixPath: socket) }
        let webCommand = ["--listen", "127.0.0.1:0", "--socket", socket, "--state-dir", webState] + webArguments
        if let c = credentials {
            guard chmod(directory, 0o755) == 0, chown(socket, 0, c.socketGroup) == 0, chmod(socket, 0o660) == 0,
                  chown(webState, c.uid, c.gid) == 0, chmod(webState, 0o700) == 0 else {
                throw StartFailure(description: "giving the socket and state directory to \(c): errno \(errno)")
            }
            let groups = c.groups.isEmpty ? "--clear-groups" : "--groups=" + c.groups.map(String.init).joined(separator: ",")
            web = try Self.launch("/usr/bin/setpriv", ["--reuid=\(c.uid)", "--regid=\(c.gid)", groups,
                                                       Self.buildDirectory.appendingPathComponent("strapd-web").path] + webCommand,
                                  log: directory + "/web.log")
        } else {
            web = try Self.launch("strapd-web", webCommand, log: directory + "/web.log")
        }
        let urlFile = webState + "/" + AccessToken.urlFileName
        try waitFor("strapd-web's URL file") { FileManager.default.fileExists(atPath: urlFile) }
        // http://127.0.0.1:PORT/?token=HEX
        let url = try String(contentsOfFile: urlFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        guard let components = URLComponents(string: url), let p = components.port,
              let t = components.queryItems?.first(where: { $0.name == "token" })?.value else {
            throw StartFailure(description: "strapd-web's URL file holds '\(url)'")
        }
        port = UInt16(p)
        token = t
    }

    /// The overlay's read-only token, from the overlay URL file strapd-web wrote beside `url`.
    var overlayToken: String {
        let url = (try? String(contentsOfFile: webState + "/" + AccessToken.overlayURLFileName, encoding: .utf8)) ?? ""
        return URLComponents(string: url.trimmingCharacters(in: .whitespacesAndNewlines))?.queryItems?
            .first(where: { $0.name == "token" })?.value ?? ""
    }

    /// The Host header a browser on this machine sends.
    var host: String { "127.0.0.1:\(port)" }
    var bearer: (String, String) { ("Authorization", "Bearer \(token)") }

    func log(_ program: String) -> String {
        (try? String(contentsOfFile: directory + "/\(program).log", encoding: .utf8)) ?? ""
    }

    private static func launch(_ program: String, _ arguments: [String], log: String) throws -> Process {
        let p = Process()
        p.executableURL = program.hasPrefix("/") ? URL(fileURLWithPath: program) : buildDirectory.appendingPathComponent(program)
        p.arguments = arguments
        _ = FileManager.default.createFile(atPath: log, contents: nil)
        p.standardError = FileHandle(forWritingAtPath: log) ?? FileHandle.nullDevice
        p.standardOutput = FileHandle.nullDevice
        try p.run()
        return p
    }

    private func waitFor(_ what: String, _ condition: () -> Bool) throws {
        // Generous: in CI the whole suite runs beside this on 2 cores; a good start takes ~0.1 s.
        for _ in 0..<1500 {
            if condition() { return }
            if strapd?.isRunning == false || web?.isRunning == false { break }
            usleep(20_000)
        }
        guard condition() else {
            throw StartFailure(description: "no \(what) within 30 s\nstrapd: \(log("strapd"))\nstrapd-web: \(log("web"))")
        }
    }

    static func canConnect(unixPath: String) -> Bool {
        let fd = Glibc.socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(unixPath.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { return false }
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        } == 0
    }

    /// SIGTERM to both, strapd-web first.
    func stop() {
        if let web { Self.terminate(web) }
        web = nil
        stopStrapd()
    }

    /// strapd alone: what strapd-web meets when strapd stops under it.
    func stopStrapd() {
        if let strapd { Self.terminate(strapd) }
        strapd = nil
    }

    /// SIGTERM, then SIGKILL if it still runs after 10 s.
    private static func terminate(_ p: Process) {
        if p.isRunning {
            kill(p.processIdentifier, SIGTERM)
            for _ in 0..<1000 where p.isRunning { usleep(10_000) }
            if p.isRunning { kill(p.processIdentifier, SIGKILL) }
        }
        p.waitUntilExit()
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(atPath: directory)
    }
}
