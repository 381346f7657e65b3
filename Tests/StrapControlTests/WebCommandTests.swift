import Foundation
import Testing
@testable import StrapControl

/// `strapctl web url`: the URL strapd-web wrote, and each way it can be missing, with the
/// exit codes of strapctl(1).
@Suite struct WebCommandTests {
    let url = "http://127.0.0.1:8420/?token=" + String(repeating: "5e1a", count: 16)

    func tempDirectory() throws -> String {
        let dir = NSTemporaryDirectory() + "strapctl-web-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        return dir
    }

    /// As strapd-web writes it: one line, mode 0600.
    func writeURLFile(_ text: String, in dir: String) throws {
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        #expect(FileManager.default.createFile(atPath: dir + "/url", contents: Data(text.utf8), attributes: [.posixPermissions: 0o600]))
    }

    @Test func printsTheURLStrapdWebWrote() throws {
        let dir = try tempDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try writeURLFile(url + "\n", in: dir)
        let out = Strapctl.run(["web", "url", "--state-dir", dir])
        #expect(out.exitCode == ExitCode.success)
        #expect(out.stdout == url + "\n")
        #expect(out.stderr == "")
        let json = Strapctl.run(["--json", "web", "url", "--state-dir=\(dir)"])
        #expect(json.exitCode == ExitCode.success)
        #expect(json.stdout == #"{"url":"\#(url)"}"# + "\n")
    }

    /// `--overlay` reads the overlay's own file, never the steering URL; without that file it
    /// is exit 3 even when `url` is there.
    @Test func overlayPrintsTheReadOnlyURL() throws {
        let dir = try tempDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try writeURLFile(url + "\n", in: dir)
        #expect(Strapctl.run(["web", "url", "--overlay", "--state-dir", dir]).exitCode == ExitCode.unreachable)
        let overlay = "http://127.0.0.1:8420/overlay?token=" + String(repeating: "0b5a", count: 16)
        #expect(FileManager.default.createFile(atPath: dir + "/overlay-url", contents: Data((overlay + "\n").utf8),
                                               attributes: [.posixPermissions: 0o600]))
        let out = Strapctl.run(["web", "url", "--overlay", "--state-dir", dir])
        #expect(out.exitCode == ExitCode.success)
        #expect(out.stdout == overlay + "\n")
        #expect(Strapctl.run(["web", "url", "--state-dir", dir]).stdout == url + "\n")
    }

    @Test func aMissingFileIsExitThreeAndSaysHowToStartStrapdWeb() throws {
        let dir = try tempDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        for stateDir in [dir, dir + "/never-made"] {
            let out = Strapctl.run(["web", "url", "--state-dir", stateDir])
            #expect(out.exitCode == ExitCode.unreachable)
            #expect(out.stdout == "")
            #expect(out.stderr == "strapctl: no URL file at \(stateDir)/url: strapd-web has not started with that state directory " +
                    "(systemctl enable --now strapd-web.service)\n")
        }
    }

    /// systemd's layout under DynamicUser=: StateDirectory=strapd-web is
    /// /var/lib/private/strapd-web with /var/lib/strapd-web a symlink to it.
    @Test func theDynamicUserLayoutIsReadThroughTheSymlinkOrWithoutIt() throws {
        let root = try tempDirectory()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let link = root + "/strapd-web", target = root + "/private/strapd-web"
        try writeURLFile(url + "\n", in: target)
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: "private/strapd-web")
        #expect(try WebCommands.readURL(in: [link, target]) == url)
        #expect(Strapctl.run(["web", "url", "--state-dir", link]).stdout == url + "\n")
        // The link gone (removed by hand): the private directory is tried next.
        try FileManager.default.removeItem(atPath: link)
        #expect(try WebCommands.readURL(in: [link, target]) == url)
        // Neither there: the error names the first place looked.
        try FileManager.default.removeItem(atPath: target + "/url")
        #expect(throws: WebURLError.missing(link + "/url")) { try WebCommands.readURL(in: [link, target]) }
        #expect(WebCommands.defaultStateDirectories == ["/var/lib/strapd-web", "/var/lib/private/strapd-web"])
    }

    /// The real binary as another user (nobody, through setpriv when the test runs as root)
    /// against a 0700 directory, as /var/lib/private is: exit 4, naming sudo.
    @Test func aFileItMayNotReadIsExitFourNamingSudo() throws {
        let dir = try tempDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try writeURLFile(url + "\n", in: dir)
        try FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: dir)
        let exe = (try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") as NSString)
            .deletingLastPathComponent + "/strapctl"
        let p = Process()
        if getuid() == 0 {
            p.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
            p.arguments = ["--reuid=65534", "--regid=65534", "--clear-groups", exe, "web", "url", "--state-dir", dir]
        } else {
            try FileManager.default.setAttributes([.posixPermissions: 0o000], ofItemAtPath: dir)
            p.executableURL = URL(fileURLWithPath: exe)
            p.arguments = ["web", "url", "--state-dir", dir]
        }
        let stdout = Pipe(), stderr = Pipe()
        p.standardOutput = stdout
        p.standardError = stderr
        try p.run()
        p.waitUntilExit()
        try? FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: dir)
        let err = String(decoding: stderr.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(p.terminationStatus == ExitCode.notAuthorized, "\(err)")
        #expect(stdout.fileHandleForReading.readDataToEndOfFile().isEmpty)
        #expect(err == "strapctl: permission denied reading \(dir)/url: the URL holds strapd-web's token, which only root " +
                "and strapd-web may read (sudo strapctl web url)\n")
    }

    @Test func aFileThatIsNotAURLIsExitOne() throws {
        let dir = try tempDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        for text in ["", "\n", "hello\n", url + "\n" + url + "\n", "http://127.0.0.1:8420/ ?token=x\n"] {
            try writeURLFile(text, in: dir)
            let out = Strapctl.run(["web", "url", "--state-dir", dir])
            #expect(out.exitCode == ExitCode.daemonError, "\(text)")
            #expect(out.stdout == "")
            #expect(out.stderr == "strapctl: \(dir)/url does not hold a URL: it is not strapd-web's url file\n")
        }
        // A directory where the file should be: read fails (EISDIR) and says so.
        try FileManager.default.removeItem(atPath: dir + "/url")
        try FileManager.default.createDirectory(atPath: dir + "/url", withIntermediateDirectories: false)
        let out = Strapctl.run(["web", "url", "--state-dir", dir])
        #expect(out.exitCode == ExitCode.daemonError)
        #expect(out.stderr.hasPrefix("strapctl: cannot read \(dir)/url: "))
    }

    @Test(arguments: [["web"], ["web", "frobnicate"], ["web", "url", "extra"], ["web", "url", "--state-dir"], ["web", "url", "--port", "1"]])
    func usageErrorsAreExitTwoWithTheWebUsage(_ args: [String]) {
        let out = Strapctl.run(args)
        #expect(out.exitCode == ExitCode.usage)
        #expect(out.stderr.contains("usage: strapctl web url [--overlay] [--state-dir DIR]"))
    }
}
