import FoundationEssentials
import Glibc
import StrapKit
import StrapOS
import StrapWire

/// `strapctl workout export ID [--format fit|tcx|csv] [-o FILE]`: streams `workout.export`
/// (docs/protocol-workouts.md) into FILE. The bytes go to a temporary file next to FILE that is
/// renamed over it only once the whole file has arrived and checked out (every chunk at the
/// offset where the previous one ended, the total the announced size), so FILE is never
/// half-written; on any failure or Ctrl-C the temporary file is removed.
enum WorkoutExport {
    static func run(_ args: [String], _ ctx: CommandContext) throws -> Int32 {
        let a = try Arguments(expandingShortOptions(args), options: ["format", "output"], flags: [])
        let format = try a.choice("format", "format", among: Choices.exportFormats) ?? "fit"
        let output = a.value("output")
        guard output != "" else { throw UsageError(message: "-o needs a file name (or - for standard output)") }
        if output == "-" && ctx.json { throw UsageError(message: "--json and -o - would both write to standard output") }
        let id = try WorkoutCommands.session(try a.single("workout id"), ctx, savedToo: true)

        var target: String?          // nil: standard output
        if output != "-" {
            if let output, !isDirectory(output) {
                target = output
            } else {
                let name = try defaultName(id, format: format, ctx)
                target = output.map { $0.hasSuffix("/") ? $0 + name : $0 + "/" + name } ?? name
            }
        }
        // Ctrl-C is caught from here on, so the temporary file is always removed. The file is
        // created before asking strapd: an unwritable place fails before any work.
        let interrupt = ctx.interrupts.arm()
        let file = try target.map { path throws(ExportFailure) in try TemporaryFile(replacing: path) }
        defer { file?.discard() }

        let client = try ctx.connect(timeout: nil)
        client.send(["id": .int(1), "op": .string("workout.export"), "workout": .string(id), "format": .string(format)], stream: true)
        client.setTimeout(1)   // only bounds the rest of a partial line: strapd writes whole lines
        var assembler: ExportAssembler?
        var progress: ProgressBar?
        while true {
            if !client.hasBufferedLine {
                let ready = DaemonConnection.readable([client.descriptor] + (interrupt.map { [$0] } ?? []), milliseconds: -1)
                if let interrupt, ready.contains(interrupt) {
                    file?.discard()
                    if progress != nil { ctx.sink.writeError(ProgressBar.clear) }
                    cancel(client)
                    let done = assembler?.received ?? 0
                    ctx.sink.error("strapctl: export interrupted; " + (target == nil ? "\(done) bytes went to standard output" : "nothing written"))
                    return ExitCode.interrupted
                }
                guard ready.contains(client.descriptor) else { continue }
            }
            let read = Result { () throws(ClientError) -> JSONObject? in try client.readMessage() }
            if case .failure(.timedOut) = read { continue }
            guard let m = try read.get() else { throw ClientError.closed }
            if m.string("event") == "shutdown" { throw ClientError.shuttingDown }
            guard m["id"] == .int(1) else { continue }
            if m["ok"] != nil {
                let r = try CommandContext.result(of: m)
                if ctx.json { ctx.sink.print(JSONWriter.string(.object(m))) }
                let parts = try ExportAssembler(announced: r.int("bytes"))
                assembler = parts
                // A bar only when there is something to watch: more than one chunk, on a terminal.
                if ctx.sink.errorIsTerminal, parts.announced > Int(r.int("chunkSize") ?? 65536) {
                    progress = ProgressBar(label: target ?? "stdout", total: parts.announced)
                }
                continue
            }
            guard var parts = assembler else { throw ExportFailure.stream("strapd sent \(m.string("event") ?? "a message") before its ok reply") }
            let data = m.object("data") ?? JSONObject()
            switch m.string("event") {
            case "chunk":
                let bytes = try parts.accept(data)
                assembler = parts
                if let file { try file.write(bytes) } else { ctx.sink.write(bytes: bytes) }
                if let line = progress?.update(parts.received) { ctx.sink.writeError(line) }
            case "finished":
                try parts.finish(data)
                if progress != nil { ctx.sink.writeError(ProgressBar.clear) }
                if ctx.json { ctx.sink.print(JSONWriter.string(.object(m))) }
                guard let file, let target else { return ExitCode.success }
                try file.commit()
                if !ctx.json { ctx.sink.print("wrote \(target) (\(parts.received) bytes, \(format.uppercased()))") }
                return ExitCode.success
            case "error":
                if progress != nil { ctx.sink.writeError(ProgressBar.clear) }
                throw DaemonReplyError(code: data.string("code") ?? "internal", message: data.string("message") ?? "export failed")
            default:
                continue
            }
        }
    }

    /// `-o FILE` and `-oFILE` as `--output FILE` (the one short option strapctl takes).
    static func expandingShortOptions(_ args: [String]) -> [String] {
        args.map { arg in
            if arg == "-o" { return "--output" }
            if arg.hasPrefix("-o") && arg.count > 2 { return "--output=" + arg.dropFirst(2) }
            return arg
        }
    }

    /// `<start as YYYYMMDD-HHMMSS, UTC>-<activity>.<ext>`, e.g. `20261201-160000-cycling.fit`.
    static func defaultName(_ id: String, format: String, _ ctx: CommandContext) throws -> String {
        let r = try ctx.call("workout.get", ["session": .string(id)], echo: false)
        return defaultName(WorkoutBrowse.details(r), format: format)
    }

    static func defaultName(_ d: WorkoutDetails, format: String) -> String {
        var stamp = "workout"
        if let start = d.start.flatMap({ try? RFC3339Timestamp.parse($0) }) {
            let digits = RFC3339Timestamp.format(millisecondsSinceEpoch: start).prefix(19).filter(\.isNumber)
            stamp = String(digits.prefix(8)) + "-" + String(digits.dropFirst(8))
        }
        let activity = String(d.activityType.filter { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" })
        return stamp + "-" + (activity.isEmpty ? "workout" : activity) + "." + format
    }

    static func isDirectory(_ path: String) -> Bool {
        var st = stat()
        return stat(path, &st) == 0 && (st.st_mode & S_IFMT) == S_IFDIR
    }

    /// Ends the stream: strapd answers `cancelled` and produces no further chunk. The wait for
    /// that answer is short; the process ends anyway.
    static func cancel(_ client: DaemonConnection) {
        client.cancelStream()
        client.setTimeout(2)
        while let m = try? client.readMessage() {
            if m["id"] == .int(1), m.string("event") == "cancelled" || m.string("event") == "error" || m.string("event") == "finished" { return }
            if m["id"] == .int(1), m["ok"] == .bool(false) { return }
        }
    }
}

/// Why an export did not produce a file (exit 1).
enum ExportFailure: Error, CustomStringConvertible {
    /// The stream did not add up: missing, repeated or extra bytes, undecodable data.
    case stream(String)
    /// The file could not be created, written or put in place.
    case file(String)

    var description: String {
        switch self {
        case .stream(let why): "export stream from strapd is broken: \(why); nothing written"
        case .file(let why): why
        }
    }
}

/// StrapKit's `WorkoutFileAssembler` with strapctl's failure type: the checks are StrapKit's.
struct ExportAssembler {
    private var checks: WorkoutFileAssembler
    var announced: Int { checks.announced }
    var received: Int { checks.received }
    var chunks: Int { checks.chunks }

    init(announced: Int64?) throws(ExportFailure) {
        guard let announced, announced >= 0 else { throw .stream("its ok reply gives no size") }
        checks = WorkoutFileAssembler(announced: Int(announced))
    }

    /// The bytes of a `chunk` event's data `{"offset", "data": base64}`.
    mutating func accept(_ chunk: JSONObject) throws(ExportFailure) -> [UInt8] {
        do { return try checks.accept(chunk) } catch { throw .stream(error.description) }
    }

    /// The `finished` event `{"bytes", "chunks"}`: everything announced arrived.
    func finish(_ data: JSONObject) throws(ExportFailure) {
        do { try checks.finish(data) } catch { throw .stream(error.description) }
    }
}

/// `-o FILE`'s temporary file, `.FILE.strapctl-XXXXXX` in FILE's directory (a rename within a
/// file system is atomic), renamed over FILE by `commit`.
final class TemporaryFile {
    let path: String
    let temporaryPath: String
    private var fd: Int32
    private var done = false

    init(replacing path: String) throws(ExportFailure) {
        self.path = path
        let slash = path.lastIndex(of: "/")
        let directory = slash.map { String(path[...$0]) } ?? ""
        let name = slash.map { String(path[path.index(after: $0)...]) } ?? path
        var template = Array((directory + "." + name + ".strapctl-XXXXXX").utf8CString)
        fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard fd >= 0 else { throw .file("cannot create a file next to \(path): \(Errno.current)") }
        temporaryPath = String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
        // mkstemp makes it 0600; the finished file gets what a new file gets (0666 less umask).
        let mask = umask(0)
        umask(mask)
        fchmod(fd, 0o666 & ~mask)
    }

    deinit { discard() }

    func write(_ bytes: [UInt8]) throws(ExportFailure) {
        var failure: SystemCallError?
        bytes.withUnsafeBytes { b in
            do throws(SystemCallError) { try Syscalls.live.writeAll(FileDescriptor(rawValue: fd), b, path: temporaryPath) } catch { failure = error }
        }
        if let failure { throw .file("cannot write \(path): \(failure.errno)") }
    }

    /// Flushes the bytes to disk and renames the file over `path`.
    func commit() throws(ExportFailure) {
        do throws(SystemCallError) { try Syscalls.live.fsync(FileDescriptor(rawValue: fd), path: temporaryPath) } catch {
            throw .file("cannot write \(path): \(error.errno)")
        }
        close(fd)
        fd = -1
        do throws(SystemCallError) { try Syscalls.live.rename(temporaryPath, to: path) } catch {
            throw .file("cannot rename the finished file to \(path): \(error.errno)")
        }
        done = true
    }

    /// Removes the temporary file unless it was committed; idempotent.
    func discard() {
        guard !done else { return }
        done = true
        if fd >= 0 { close(fd); fd = -1 }
        unlink(temporaryPath)
    }
}

/// `20261201-160000-cycling.fit [#########           ]  589824/1367947 bytes  43%` on standard
/// error, redrawn in place when the percentage changes.
struct ProgressBar {
    static let clear = "\r\u{1B}[2K"
    let label: String
    let total: Int
    private var percent = -1

    init(label: String, total: Int) {
        self.label = label
        self.total = total
    }

    mutating func update(_ done: Int) -> String? {
        let now = total > 0 ? min(100, done * 100 / total) : 100
        guard now != percent else { return nil }
        percent = now
        return "\r" + Self.line(label: label, done: done, total: total)
    }

    static func line(label: String, done: Int, total: Int, width: Int = 24) -> String {
        let filled = total > 0 ? min(width, done * width / total) : width
        let percent = total > 0 ? min(100, done * 100 / total) : 100
        return "\(label) [" + String(repeating: "#", count: filled) + String(repeating: " ", count: width - filled)
            + "] \(done)/\(total) bytes \(percent)%"
    }
}
