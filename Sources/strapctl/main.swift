import CShims
import Glibc
import StrapControl

// Streaming commands (scan, live, anchored --follow) print as events arrive.
let sink = OutputSink(isTerminal: isatty(1) == 1,
                      stdout: { text in text.withCString { cshims_write_stdout($0, strlen($0)) }; cshims_flush_stdout() },
                      stderr: { text in text.withCString { cshims_write_stderr($0, strlen($0)) } })
var environment: [String: String] = [:]
if let s = getenv("STRAPD_SOCKET") { environment["STRAPD_SOCKET"] = String(decoding: UnsafeRawBufferPointer(start: s, count: strlen(s)), as: UTF8.self) }
// `.sigint` is armed only by commands that end cleanly on Ctrl-C (workout follow).
let code = Strapctl.run(Array(CommandLine.arguments.dropFirst()), environment: environment, sink: sink, interrupts: .sigint)
cshims_flush_stdout()
exit(code)
