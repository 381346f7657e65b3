import Foundation
import Glibc
import Testing
import StrapKit
import StrapWeb
import StrapWire

/// The devices API and page when strapd-web has the packaged grant only (`read` and `record`,
/// no `admin`): strapd-web runs as a uid in no database with the grant group as its primary
/// group (setpriv, as ServiceGrantTests; root only), strapd as the test's user.
@Suite(.serialized, .enabled(if: getuid() == 0, "setpriv changes uid and groups: root only"))
struct DevicesGrantTests {
    typealias J = WorkoutAPITests

    static func packagedGrant(sensors: Int = 2, name: String = #function) throws -> WebHarness {
        let g = ServiceGrantTests.grantGroup
        return try WebHarness(sensors: sensors, strapdArguments: ["--set", "access.read=gid:\(g)", "--set", "access.record=gid:\(g)"],
                              credentials: .init(uid: ServiceGrantTests.dynamicUID, gid: g, groups: [ServiceGrantTests.socketGroup],
                                                 socketGroup: ServiceGrantTests.socketGroup), name: name)
    }

    /// Scan, pair and forget are strapd's notAuthorized as 403 with its text, and change
    /// nothing; `/api/access` says why, and the list itself still reads.
    @Test func withoutAdminStrapdsRefusalIs403() async throws {
        let web = try Self.packagedGrant()
        defer { web.stop() }
        let store = StrapStore(socket: web.socket)
        defer { store.close() }
        let listed = try await store.deviceAddresses()
        let access = try RawHTTP.request(port: web.port, path: "/api/access", host: web.host, headers: [web.bearer])
        let grants = J.object(J.json(access)["grants"])
        #expect(access.status == 200 && grants?["admin"] == .bool(false) && grants?["record"] == .bool(true), "\(access.body)")
        #expect(J.object(J.json(access)["operations"])?["devices.forget"] == .bool(false), "\(access.body)")
        let list = try RawHTTP.request(port: web.port, path: "/api/devices", host: web.host, headers: [web.bearer])
        #expect(list.status == 200, "\(list.body)")
        let requests: [(String, String?)] = [
            ("/api/devices/scan", #"{"timeout":0.2}"#), ("/api/devices/\(listed[0])/pair", nil), ("/api/devices/\(listed[0])/forget", nil),
        ]
        for (path, body) in requests {
            let reply = try RawHTTP.request(port: web.port, method: "POST", path: path, host: web.host,
                                            headers: [web.bearer, ("Content-Type", "application/json")], body: body)
            let json = J.json(reply)
            #expect(reply.status == 403 && J.string(json["code"]) == "notAuthorized", "\(path): \(reply.status) \(reply.body)")
            #expect(J.string(json["error"])?.contains("admin") == true, "\(path): strapd's text names the grant: \(reply.body)")
        }
        #expect(try await store.deviceAddresses() == listed)
        #expect(try await store.request("devices.info", ["address": .string(listed[0])])["paired"] == .bool(false))
    }

    /// The page says strapd-web lacks the grant and offers no enabled button, rather than
    /// failing on a click.
    @Test func withoutAdminThePageSaysSoAndDisablesItsButtons() async throws {
        let web = try Self.packagedGrant()
        defer { web.stop() }
        let report = try await Browser.run(script: DevicesTests.script, web, screenshot: "devices-no-admin.png", [
            "noadmin", "http://\(web.host)/?token=\(web.token)", Browser.artifacts + "/devices-no-admin.png",
        ])
        #expect(report["state"] as? String == "loaded", "\(report)")
        #expect((report["grant"] as? String ?? "").contains("lacks strapd's admin grant"), "\(report["grant"] ?? "no notice")")
        #expect(report["scanDisabled"] as? Bool == true)
        let rows = report["devices"] as? [[String: Any]] ?? []
        #expect(rows.count == 2, "\(rows)")
        let buttons = rows.flatMap { $0["buttons"] as? [[String: Any]] ?? [] }
        #expect(!buttons.isEmpty && buttons.allSatisfy { $0["disabled"] as? Bool == true }, "\(buttons)")
        let errors = (report["consoleErrors"] as? [String] ?? ["unreadable"]).filter { !$0.contains("/favicon.ico") }
        #expect(errors.isEmpty, "console errors: \(errors)")
        Browser.expectScreenshot(report, "devices-no-admin.png")
    }
}
