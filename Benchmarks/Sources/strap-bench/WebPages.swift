import Foundation

/// Each page strapd-web serves, weighed (its HTML and the stylesheet and script it names,
/// as served) and painted (first contentful paint from Chromium's Performance API, through
/// selenium in `.build/web-venv`, when that venv exists).
enum WebPages {
    static let pages = ["/", "/workout", "/history", "/profile", "/overlay"]

    static func figures(_ rig: WebRig, section: String, quick: Bool) throws -> [BenchFigure] {
        let cookie = try rig.sessionCookie()
        var figures: [BenchFigure] = []
        for page in pages {
            let html = try WebHTTP.get(port: rig.port, path: page, cookie: cookie)
            guard html.status == 200 else { throw BenchFailure("GET \(page) answered \(html.status)") }
            var parts = ["HTML \(html.body.count)"]
            var total = html.body.count
            for file in linkedFiles(String(decoding: html.body, as: UTF8.self)) {
                let answer = try WebHTTP.get(port: rig.port, path: file, cookie: cookie)
                guard answer.status == 200 else { throw BenchFailure("GET \(file) (named by \(page)) answered \(answer.status)") }
                parts.append("\(file.split(separator: "?")[0]) \(answer.body.count)")
                total += answer.body.count
            }
            print("  web page weight \(page): \(total) bytes (\(parts.joined(separator: ", ")))")
            figures.append(BenchFigure(section: section, name: "page weight \(page), HTML+CSS+JS", unit: "KB",
                                       ours: Double(total) / 1024, higherIsBetter: false))
        }
        figures += try paint(rig, section: section, rounds: quick ? 3 : 7)
        return figures
    }

    /// The `src` and `href` of the document's script and stylesheet tags (strapd-web's pages
    /// name only their own two files: the CSP allows nothing else).
    static func linkedFiles(_ html: String) -> [String] {
        var files: [String] = []
        for attribute in ["src=\"", "href=\""] {
            var rest = html[...]
            while let at = rest.range(of: attribute) {
                let value = rest[at.upperBound...].prefix { $0 != "\"" }
                // HTML-escaped query (the overlay's settings): the server gets it unescaped.
                let path = String(value).replacingOccurrences(of: "&amp;", with: "&")
                if path.hasPrefix("/"), path.contains(".css") || path.contains(".js") { files.append(path) }
                rest = rest[at.upperBound...]
            }
        }
        return files
    }

    static func paint(_ rig: WebRig, section: String, rounds: Int) throws -> [BenchFigure] {
        guard let o = try browser(rig, ["fcp", rig.tokenURL, String(rounds)] + pages, what: "first contentful paint") else { return [] }
        var figures: [BenchFigure] = []
        for page in pages {
            let times = ((o[page] as? [Any]) ?? []).compactMap { ($0 as? NSNumber)?.doubleValue }
            guard !times.isEmpty else {
                print("  web first contentful paint \(page): no paint entry in \(rounds) loads")
                continue
            }
            let median = LiveLatency.median(times)
            print("  web first contentful paint \(page): " + times.map { String(format: "%.0f", $0) }.joined(separator: ", ")
                  + String(format: " ms (median %.0f ms)", median))
            figures.append(BenchFigure(section: section, name: "first contentful paint \(page), headless Chromium, median of \(rounds)",
                                       unit: "ms", ours: median, higherIsBetter: false))
        }
        return figures
    }

    /// Runs Benchmarks/web-browser.py in the browser tests' venv, from the repository's top
    /// (where strap-bench runs, as `make bench` does); its JSON answer, or nil after printing
    /// why the figure is skipped.
    static func browser(_ rig: WebRig, _ arguments: [String], what: String) throws -> [String: Any]? {
        let python = ".build/web-venv/bin/python", script = "Benchmarks/web-browser.py"
        guard FileManager.default.isExecutableFile(atPath: python), FileManager.default.fileExists(atPath: script),
              FileManager.default.isExecutableFile(atPath: "/usr/bin/chromedriver") else {
            print("  web \(what): skipped: needs \(python) (scripts/pyvenv.sh .build/web-venv Tests/Fixtures/web/requirements.txt), "
                  + "\(script) and /usr/bin/chromedriver, run from the repository's top")
            return nil
        }
        let p = Process()
        p.executableURL = URL(fileURLWithPath: python)
        p.arguments = [script] + arguments
        let out = Pipe()
        p.standardOutput = out
        let log = rig.run + "/browser-\(arguments[0]).log"
        _ = FileManager.default.createFile(atPath: log, contents: nil)
        p.standardError = FileHandle(forWritingAtPath: log)
        try p.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        guard p.terminationStatus == 0, let line = String(decoding: data, as: UTF8.self).split(separator: "\n").last,
              let o = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else {
            let errors = (try? String(contentsOfFile: log, encoding: .utf8)).map { String($0.suffix(300)) } ?? ""
            print("  web \(what): skipped: web-browser.py failed (status \(p.terminationStatus)): \(errors)")
            return nil
        }
        return o
    }
}
