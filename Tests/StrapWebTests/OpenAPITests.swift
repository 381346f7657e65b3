import Foundation
import Glibc
import Testing
import StrapWeb

/// strapd-web's OpenAPI document (docs/web.md, "The OpenAPI document") against the server it
/// describes: schemathesis (PyPI, pinned in Tests/Fixtures/web/api-requirements.txt, its own
/// venv .build/api-venv) generates requests from it and checks every answer of a real
/// strapd-web in front of a real `strapd --simulate=2`; the document's paths are held to the
/// routes WebApp serves, both ways.
@Suite(.serialized) struct OpenAPITests {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().path
    static let venv = repository + "/.build/api-venv"
    static let install = "scripts/pyvenv.sh .build/api-venv Tests/Fixtures/web/api-requirements.txt"

    static func document() throws -> [String: Any] {
        let parsed = try JSONSerialization.jsonObject(with: Data(OpenAPIDocument.bytes))
        return try #require(parsed as? [String: Any])
    }

    /// path → its documented methods, upper case.
    static func operations() throws -> [String: Set<String>] {
        let paths = try #require(try document()["paths"] as? [String: [String: Any]])
        return paths.mapValues { Set($0.keys.map { $0.uppercased() }) }
    }

    /// A program of the venv with `arguments`, output collected; killed after `limit` seconds.
    static func run(_ program: String, _ arguments: [String], in directory: String, limit: Int = 170) async throws -> (status: Int32, output: String) {
        let path = venv + "/bin/" + program
        guard access(path, X_OK) == 0 else {
            throw Failure(description: "\(path) is missing: run \(install) (scripts/test.sh does)")
        }
        let log = directory + "/\(program).log"
        _ = FileManager.default.createFile(atPath: log, contents: nil)
        let p = Process()
        // nice: the machine is shared, and hypothesis is busy while it generates.
        p.executableURL = URL(fileURLWithPath: "/usr/bin/nice")
        p.arguments = ["-n", "19", path] + arguments
        p.currentDirectoryURL = URL(fileURLWithPath: directory)
        p.standardOutput = FileHandle(forWritingAtPath: log)
        p.standardError = p.standardOutput
        try p.run()
        for _ in 0..<(limit * 10) where p.isRunning { try? await Task.sleep(for: .milliseconds(100)) }
        if p.isRunning { kill(p.processIdentifier, SIGKILL) }
        p.waitUntilExit()
        return (p.terminationStatus, (try? String(contentsOfFile: log, encoding: .utf8)) ?? "")
    }

    @Test func theDocumentIsServedBehindTheToken() throws {
        let web = try WebHarness(sensors: 1)
        let refused = try RawHTTP.request(port: web.port, path: OpenAPIDocument.path, host: web.host)
        #expect(refused.status == 401)
        let served = try RawHTTP.request(port: web.port, path: OpenAPIDocument.path, host: web.host, headers: [web.bearer])
        #expect(served.status == 200)
        #expect(served.header("Content-Type") == "application/json")
        #expect(served.header("Content-Security-Policy") == WebSecurity.contentSecurityPolicy)
        #expect(Array(served.body.utf8) == OpenAPIDocument.bytes)
        #expect(try Self.document()["openapi"] as? String == "3.0.3")
    }

    /// A body over the limit is refused as the document says (JSON under /api/, with the
    /// security headers), and only once the token is checked. schemathesis sends no such body.
    @Test func anOversizedBodyIsRefusedAsTheDocumentSays() throws {
        let web = try WebHarness(sensors: 1)
        let body = #"{"activityType":"cycling","metadata":{"note":""# + String(repeating: "x", count: HTTPServer.maximumBody) + #""}}"#
        let json = [("Content-Type", "application/json")]
        let anonymous = try RawHTTP.request(port: web.port, method: "POST", path: "/api/workout/start", host: web.host,
                                            headers: [("Origin", "http://\(web.host)")] + json, body: body)
        #expect(anonymous.status == 401)
        let refused = try RawHTTP.request(port: web.port, method: "POST", path: "/api/workout/start", host: web.host,
                                          headers: [web.bearer] + json, body: body)
        #expect(refused.status == 413)
        #expect(refused.header("Content-Type") == "application/json")
        #expect(refused.header("Content-Security-Policy") == WebSecurity.contentSecurityPolicy)
        let error = try JSONSerialization.jsonObject(with: Data(refused.body.utf8)) as? [String: Any]
        #expect((error?["error"] as? String)?.contains(String(HTTPServer.maximumBody)) == true, "\(refused.body)")
        let documented = try #require(try Self.document()["paths"] as? [String: [String: [String: Any]]])
        let responses = documented["/api/workout/start"]?["post"]?["responses"] as? [String: Any]
        #expect(responses?["413"] != nil)
    }

    /// openapi-spec-validator, the reference validator of the format, accepts the document.
    @Test func theDocumentIsValidOpenAPI() async throws {
        let directory = NSTemporaryDirectory() + "strapweb-openapi-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try Data(OpenAPIDocument.bytes).write(to: URL(fileURLWithPath: directory + "/openapi.json"))
        let result = try await Self.run("openapi-spec-validator", ["openapi.json"], in: directory, limit: 60)
        #expect(result.status == 0, "openapi-spec-validator refused the document:\n\(result.output)")
    }

    /// Every route is documented and every documented operation is served: a route added to
    /// WebApp's table (or its switch) without its operation fails here, and so does a
    /// documented path the server answers 404 or 405.
    @Test func theDocumentsPathsAreTheRoutesWebAppServes() throws {
        let operations = try Self.operations()
        #expect(Set(operations.keys) == Set(WebApp.endpoints))
        // Paths the route switch names literally, for a route added there but not to the table.
        let source = try String(contentsOfFile: Self.repository + "/Sources/StrapWeb/WebApp.swift", encoding: .utf8)
        let literals = source.split(separator: "\n").filter { $0.contains("case (\"/") }.compactMap { line -> String? in
            guard let open = line.range(of: "case (\"") else { return nil }
            return line[open.upperBound...].split(separator: "\"").first.map(String.init)
        }
        #expect(!literals.isEmpty)
        for path in literals where !path.hasSuffix("/") {
            #expect(operations[path] != nil, "WebApp routes \(path), which the OpenAPI document lacks")
        }

        let web = try WebHarness(sensors: 1)
        for (template, methods) in operations.sorted(by: { $0.key < $1.key }) {
            // A templated path is asked for with a workout strapd does not have, and the profile
            // of an athlete strapd has none of: strapd's own notFound or noData (its code in the
            // JSON) shows the route exists.
            let path = template.replacingOccurrences(of: "{id}", with: UUID().uuidString)
            // A scan answers when it ends: a short one, or the default 5 s meets this 5 s timeout.
            let body = path == "/api/devices/scan" ? #"{"timeout":0.2}"# : "{}"
            for method in ["GET", "POST", "DELETE"] {
                let reply = try RawHTTP.exchange(port: web.port, method: method, path: path, host: web.host,
                                                 headers: [web.bearer, ("Content-Type", "application/json")],
                                                 body: method == "GET" ? nil : body, timeout: 5) { _ in true }
                if methods.contains(method) {
                    let strapdsNotFound = reply.status == 404 && (path != template && reply.body.contains(#""code":"notFound""#)
                                                                  || path == "/api/profile" && reply.body.contains(#""code":"noData""#))
                    #expect(strapdsNotFound || ![404, 405].contains(reply.status), "\(method) \(path) is documented but answered \(reply.status)")
                } else {
                    #expect(reply.status == 405, "\(method) \(path) is not documented but answered \(reply.status)")
                    let allowed = Set((reply.header("Allow") ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) })
                    #expect(allowed.isSuperset(of: methods), "405 on \(method) \(path) allows \(allowed), not \(methods)")
                }
            }
        }
    }

    /// schemathesis' generated requests, with the bearer token, find no server error, no
    /// undocumented status or content type, no answer outside its schema, a 405 with `Allow`
    /// for every method not documented, a 401 without the token, and a refusal for every body
    /// the document rules out. `/events` is left out: its answer never ends, and schemathesis
    /// reads a whole answer. The seed is random and printed: a failure names it for `--seed`.
    @Test func schemathesisFindsTheServerTrueToTheDocument() async throws {
        let web = try WebHarness(sensors: 2)
        try Data(OpenAPIDocument.bytes).write(to: URL(fileURLWithPath: web.directory + "/openapi.json"))
        let result = try await Self.run("schemathesis", [
            "run", "openapi.json", "--url", "http://\(web.host)", "--header", "Authorization: Bearer \(web.token)",
            "--checks", "not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance,unsupported_method," +
                "ignored_auth,negative_data_rejection",
            "--max-examples", "25", "--exclude-path", "/events", "--request-timeout", "10",
            "--generation-database", "none", "--workers", "1", "--no-color",
        ], in: web.directory, limit: 300)  // each scan example waits its timeout (up to 5 s): about 75 s of the run
        print(result.output)
        #expect(result.status == 0, "schemathesis reported failures (exit \(result.status)):\n\(result.output)\nstrapd-web: \(web.log("web"))")
    }
}
