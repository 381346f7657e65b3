import Foundation
import Glibc

/// What goes wrong with Prometheus' own tools in a test. A missing tool is a failure, never a
/// skip: `scripts/deps.sh test` installs Debian's `prometheus` (promtool and the server), and a
/// suite that passes without them has checked nothing of what docs/web.md promises.
enum PrometheusToolError: Error, CustomStringConvertible {
    case missing(tool: String)
    /// The tool is there but could not be run, or its files not written.
    case couldNotRun(tool: String, String)
    case didNotStart(String)
    case queryFailed(String)

    var description: String {
        switch self {
        case .missing(let tool):
            "\(tool) is not installed (not on PATH): run scripts/deps.sh test, which installs Debian's prometheus package (promtool and the server)"
        case .couldNotRun(let tool, let why): "\(tool): \(why)"
        case .didNotStart(let why): "prometheus did not start: \(why)"
        case .queryFailed(let why): "prometheus query: \(why)"
        }
    }
}

enum PrometheusTools {
    /// The tool's path on PATH (Debian puts both in /usr/bin); PATH alone decides, so a run
    /// with PATH narrowed shows what a machine without the package sees.
    static func find(_ tool: String) throws(PrometheusToolError) -> String {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        for dir in path.split(separator: ":") {
            let candidate = "\(dir)/\(tool)"
            if access(candidate, X_OK) == 0 { return candidate }
        }
        throw .missing(tool: tool)
    }

    /// `promtool check metrics` on `text`: its exit status and what it said (a lint problem
    /// or a parse error, one per line). Status 0 is a clean exposition.
    static func checkMetrics(_ text: String) throws(PrometheusToolError) -> (status: Int32, output: String) {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: try find("promtool"))
        p.arguments = ["check", "metrics"]
        let input = Pipe(), output = Pipe()
        p.standardInput = input
        p.standardOutput = output
        p.standardError = output
        do {
            try p.run()
            // A scrape is a few kilobytes, within the pipe's buffer: writing all of it before
            // reading promtool's answer cannot block.
            input.fileHandleForWriting.write(Data(text.utf8))
            try input.fileHandleForWriting.close()
        } catch { throw .couldNotRun(tool: "promtool", "\(error)") }
        let said = output.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return (p.terminationStatus, String(decoding: said, as: UTF8.self))
    }

    /// A free loopback port: bound with port 0, read back, released. Another process could
    /// take it before prometheus binds it; prometheus then exits and the test says so.
    static func freeLoopbackPort() -> UInt16 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = UInt32(0x7f00_0001).bigEndian
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { a in
                bind(fd, a, length) == 0 ? getsockname(fd, a, &length) : -1
            }
        }
        return UInt16(bigEndian: address.sin_port)
    }
}

/// A real Prometheus server, a child of the test, on a free loopback port with its own config
/// and storage in `directory`, scraping one strapd-web every second with its token.
final class PrometheusServer {
    let port: UInt16
    let directory: String
    private let process: Process

    /// The scrape config is docs/web.md's recipe: the bearer token read from strapd-web's own
    /// token file (`credentials_file`), the target by its loopback address, which strapd-web's
    /// Host allow-list takes.
    init(scraping target: String, tokenFile: String, directory: String) throws(PrometheusToolError) {
        self.directory = directory
        port = PrometheusTools.freeLoopbackPort()
        let config = """
            global:
              scrape_interval: 1s
              scrape_timeout: 1s
            scrape_configs:
              - job_name: strapd-web
                authorization:
                  type: Bearer
                  credentials_file: \(tokenFile)
                static_configs:
                  - targets: ['\(target)']

            """
        process = Process()
        process.executableURL = URL(fileURLWithPath: try PrometheusTools.find("prometheus"))
        process.arguments = ["--config.file=\(directory)/prometheus.yml", "--storage.tsdb.path=\(directory)/data",
                             "--web.listen-address=127.0.0.1:\(port)", "--log.level=warn"]
        process.standardOutput = FileHandle.nullDevice
        do {
            try FileManager.default.createDirectory(atPath: directory + "/data", withIntermediateDirectories: true)
            try config.write(toFile: directory + "/prometheus.yml", atomically: true, encoding: .utf8)
            _ = FileManager.default.createFile(atPath: directory + "/prometheus.log", contents: nil)
            process.standardError = FileHandle(forWritingAtPath: directory + "/prometheus.log") ?? FileHandle.nullDevice
            try process.run()
        } catch { throw .couldNotRun(tool: "prometheus", "\(error)") }
        // Ready once it has read its config and opened its storage (a few seconds on a busy machine).
        for _ in 0..<300 {
            if !process.isRunning { break }
            if (try? RawHTTP.request(port: port, path: "/-/ready", host: host, timeout: 2))?.status == 200 { return }
            usleep(100_000)
        }
        let log = self.log
        stop()
        throw .didNotStart("not ready on 127.0.0.1:\(port) within 30 s\n\(log)")
    }

    var host: String { "127.0.0.1:\(port)" }
    var log: String { (try? String(contentsOfFile: directory + "/prometheus.log", encoding: .utf8)) ?? "" }

    /// An instant query through the HTTP API: the result vector's series as (labels, value).
    func query(_ promQL: String) throws(PrometheusToolError) -> [(labels: [String: String], value: Double)] {
        let encoded = promQL.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? promQL
        let reply: HTTPReply
        do { reply = try RawHTTP.request(port: port, path: "/api/v1/query?query=\(encoded)", host: host) }
        catch { throw .queryFailed("\(error)") }
        guard reply.status == 200,
              let json = try? JSONSerialization.jsonObject(with: Data(reply.body.utf8)) as? [String: Any],
              json["status"] as? String == "success", let data = json["data"] as? [String: Any],
              let result = data["result"] as? [[String: Any]] else {
            throw .queryFailed("\(reply.status): \(reply.body)")
        }
        return result.compactMap { series in
            // A vector sample's value is [time, "value as a string"].
            guard let labels = series["metric"] as? [String: String], let pair = series["value"] as? [Any], pair.count == 2,
                  let text = pair[1] as? String, let value = Double(text) else { return nil }
            return (labels, value)
        }
    }

    /// The scrape targets' state as Prometheus reports it (health, last error): what a failing
    /// test prints.
    var targets: String {
        (try? RawHTTP.request(port: port, path: "/api/v1/targets", host: host))?.body ?? "(no answer)"
    }

    func stop() {
        guard process.processIdentifier != 0 else { return }  // never launched
        if process.isRunning {
            kill(process.processIdentifier, SIGTERM)
            for _ in 0..<1000 where process.isRunning { usleep(10_000) }
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        }
        process.waitUntilExit()
    }

    deinit { stop() }
}
