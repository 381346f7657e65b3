import CShims
import Glibc
import StrapControl

// Streaming commands (scan, live, anchored --follow) print as events arrive.
let sink = OutputSink(isTerminal: isatty(1) == 1, errorIsTerminal: isatty(2) == 1, columns: Terminal.columns(fd: 1),
                      stdout: { text in text.withCString { cshims_write_stdout($0, strlen($0)) }; cshims_flush_stdout() },
                      stderr: { text in text.withCString { cshims_write_stderr($0, strlen($0)) } },
                      stdoutBytes: { bytes in
                          bytes.withUnsafeBufferPointer { p in
                              p.withMemoryRebound(to: CChar.self) { cshims_write_stdout($0.baseAddress, $0.count) }
                          }
                          cshims_flush_stdout()
                      })
var environment: [String: String] = [:]
for name in Terminal.environmentNames {
    if let s = getenv(name) { environment[name] = String(decoding: UnsafeRawBufferPointer(start: s, count: strlen(s)), as: UTF8.self) }
}
// `.sigint` is armed only by commands that end cleanly on Ctrl-C (workout follow, workout export).
let code = Strapctl.run(Array(CommandLine.arguments.dropFirst()), environment: environment, sink: sink, interrupts: .sigint)
cshims_flush_stdout()
exit(code)
