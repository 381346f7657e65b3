import FoundationEssentials
import StrapKit
import StrapWire

/// The devices page's endpoints (docs/web.md, "The devices API"): strapd's grants, a scan,
/// pair and forget, through StrapKit's typed calls. strapd checks the address and the `admin`
/// grant and names what it refuses; strapd-web adds only the scan's bound, which keeps one
/// HTTP request short.
enum DevicesAPI {
    static let accessPath = "/api/access"
    static let scanPath = "/api/devices/scan"
    static let pairPath = "/api/devices/{address}/pair"
    static let forgetPath = "/api/devices/{address}/forget"
    static let paths = [accessPath, scanPath, pairPath, forgetPath]

    /// A scan answers when it ends, so its length is the request's: a few seconds finds a
    /// sensor that advertises (they do every second or faster), and the bound stays under
    /// what an HTTP client waits by default.
    static let defaultScanSeconds = 5.0
    static let maximumScanSeconds = 5.0

    /// The commands the page offers, by the path's last component.
    static let commands: [String: DeviceCommand] = ["pair": .pair, "forget": .forget]

    /// A request path under `/api/devices/` other than the list itself.
    enum Route: Equatable {
        case scan
        case command(DeviceCommand, address: String)

        init?(_ path: String) {
            if path == DevicesAPI.scanPath { self = .scan; return }
            guard path.hasPrefix("/api/devices/") else { return nil }
            let parts = path.dropFirst("/api/devices/".count).split(separator: "/", omittingEmptySubsequences: false)
            guard parts.count == 2, !parts[0].isEmpty, let command = DevicesAPI.commands[String(parts[1])] else { return nil }
            self = .command(command, address: String(parts[0]))
        }
    }

    /// `POST /api/devices/scan`'s body: `{"timeout": seconds}`, the timeout optional.
    struct ScanRequest: Decodable {
        var timeout: Double?
    }

    static func scanTimeout(_ body: [UInt8]) throws(WorkoutAPI.RequestError) -> Double {
        let timeout = try WorkoutAPI.decode(ScanRequest.self, from: body).timeout ?? defaultScanSeconds
        guard timeout > 0, timeout <= maximumScanSeconds else {
            throw .unreadableBody("timeout must be more than 0 and at most \(Int(maximumScanSeconds)) seconds, not \(timeout)")
        }
        return timeout
    }

    /// The devices found, each once: `{"timeout", "devices": [{"address", "name", "rssi", "services"}]}`.
    static func scan(_ link: DaemonLink, timeout: Double) -> HTTPResponse {
        answer { () throws(DaemonLinkError) -> JSONObject in
            let found = try link.run("devices.scan", longer: timeout) { store in try await store.scanDevices(timeout: timeout) }
            return ["timeout": .double(timeout), "devices": .array(found.map { device in
                .object(["address": .string(device.address), "name": device.name.map(JSONValue.string) ?? .null,
                         "rssi": device.rssi.map { .int(Int64($0)) } ?? .null,
                         "services": .array(device.services.map(JSONValue.string))])
            })]
        }
    }

    /// strapd's answer to a device command, `{"address", "action"}` as the socket gives it.
    static func command(_ link: DaemonLink, _ command: DeviceCommand, address: String) -> HTTPResponse {
        answer { () throws(DaemonLinkError) -> JSONObject in
            let done = try link.run(command.op) { store in try await store.deviceCommand(command, address: address) }
            return ["address": .string(done), "action": .string(command.rawValue)]
        }
    }

    private static func answer(_ body: () throws(DaemonLinkError) -> JSONObject) -> HTTPResponse {
        do {
            return WebApp.json(200, try body())
        } catch {
            return WebApp.json(WorkoutAPI.status(for: error), WorkoutAPI.errorBody(error.description, code: WebApp.code(error)))
        }
    }
}
