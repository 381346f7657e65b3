import CShims
import StrapControl

let output = Strapctl.run(Array(CommandLine.arguments.dropFirst()))
output.stdout.withCString { cshims_write_stdout($0, strlen($0)) }
output.stderr.withCString { cshims_write_stderr($0, strlen($0)) }
cshims_flush_stdout()
exit(output.exitCode)
