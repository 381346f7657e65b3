import CShims
import Glibc

/// stdout and stderr for the executables' own lines (usage, version, start failures), through
/// the C shim: Swift 6 may not touch the `stdout`/`stderr` globals.
public enum StandardStreams {
    /// Under systemd stdout is a pipe; line-buffered, each line reaches the journal at once.
    public static func lineBufferStdout() { cshims_stdout_line_buffered() }

    public static func writeStderr(_ text: String) {
        text.withCString { cshims_write_stderr($0, strlen($0)) }
    }
}
