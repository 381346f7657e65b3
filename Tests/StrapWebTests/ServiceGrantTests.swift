import Foundation
import Glibc
import Testing

/// The grant strapd-web.service relies on (docs/web.md, "Under systemd"), with the
/// credentials systemd would give it set by setpriv: a uid with no passwd entry (as a
/// DynamicUser= uid has none in /etc/passwd), the grant group as its primary gid (Group=),
/// strapd's socket group as a supplementary one (SupplementaryGroups=). strapd runs with
/// `[access] read = gid:GRANT`, as the shipped strapd.conf has `group:strapd-web-grant`.
/// Not systemd itself: no test here has systemd as PID 1.
@Suite(.enabled(if: getuid() == 0, "setpriv changes uid and groups: root only"))
struct ServiceGrantTests {
    // Ids in no database, so the test adds nothing to the machine: 61234 is in systemd's
    // dynamic range (61184–65519).
    static let dynamicUID: UInt32 = 61234
    static let socketGroup: UInt32 = 42420
    static let grantGroup: UInt32 = 42421
    static let otherGroup: UInt32 = 42422
    let grantRead = ["--set", "access.read=gid:\(ServiceGrantTests.grantGroup)"]

    func devices(_ web: WebHarness) throws -> HTTPReply {
        try RawHTTP.request(port: web.port, path: "/api/devices", host: web.host, headers: [web.bearer])
    }

    @Test func thePrimaryGroupIsGrantedReadAndTheSupplementaryOneOpensTheSocket() throws {
        let web = try WebHarness(strapdArguments: grantRead, credentials: .init(
            uid: Self.dynamicUID, gid: Self.grantGroup, groups: [Self.socketGroup], socketGroup: Self.socketGroup))
        defer { web.stop() }
        let reply = try devices(web)
        #expect(reply.status == 200, "\(reply.body)\n\(web.log("web"))")
        #expect(reply.body.contains("\"Sim HR 0\""), "\(reply.body)")
        // The token and URL files are the service user's, as under StateDirectory=.
        var st = stat()
        #expect(stat(web.webState + "/token", &st) == 0 && st.st_uid == Self.dynamicUID && st.st_mode & 0o777 == 0o600)
    }

    /// Why the unit sets Group= rather than listing the grant group in SupplementaryGroups=:
    /// strapd sees SO_PEERCRED's uid and gid and the group database's groups of that uid,
    /// never the process's own supplementary groups.
    @Test func theGrantGroupAsASupplementaryGroupIsNotSeen() throws {
        let web = try WebHarness(strapdArguments: grantRead, credentials: .init(
            uid: Self.dynamicUID, gid: Self.otherGroup, groups: [Self.socketGroup, Self.grantGroup], socketGroup: Self.socketGroup))
        defer { web.stop() }
        let reply = try devices(web)
        #expect(reply.status == 403, "\(reply.status) \(reply.body)")
        #expect(reply.body.contains("notAuthorized"), "\(reply.body)")
    }

    /// Without SupplementaryGroups= strapd's 0660 socket refuses the connection itself.
    @Test func withoutTheSocketGroupStrapdCannotBeReached() throws {
        let web = try WebHarness(strapdArguments: grantRead, credentials: .init(
            uid: Self.dynamicUID, gid: Self.grantGroup, groups: [], socketGroup: Self.socketGroup))
        defer { web.stop() }
        let reply = try devices(web)
        #expect(reply.status == 502, "\(reply.status) \(reply.body)")
        #expect(reply.body.contains("permission denied"), "\(reply.body)")
    }
}
