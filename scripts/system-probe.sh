#!/usr/bin/env bash
# End-to-end check of StrapSystem against the real systemd tools, outside `swift test`
# (which cannot hand a process fd 3 or replace journald's socket): builds a tiny server
# from Sources/{CShims,CSystemd,StrapWire,StrapSystem} in a scratch package, then
#  1. runs it under systemd-socket-activate with NOTIFY_SOCKET/WATCHDOG_USEC and checks
#     socket adoption, a request/reply, READY/STATUS, WATCHDOG pings, SIGHUP and SIGTERM;
#  2. runs it in a private mount namespace with a fake journald socket and checks the
#     native journal datagrams (MESSAGE/PRIORITY/SYSLOG_IDENTIFIER/DEVICE_ADDRESS).
# Needs root (unshare -m), systemd-socket-activate and Debian's /usr/bin/python3.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d /tmp/strapd-probe-XXXXXX)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT
fail() { echo "system-probe: FAIL: $*" >&2; exit 1; }
# Waits up to 20 s for a shell condition (a bound for failures, not a timing check).
await() { for _ in $(seq 400); do eval "$1" && return 0; sleep 0.05; done; fail "timed out: $1"; }

mkdir -p "$work/pkg/Sources/probe"
for m in CShims CSystemd StrapWire StrapSystem; do ln -s "$repo/Sources/$m" "$work/pkg/Sources/$m"; done
cat > "$work/pkg/Package.swift" <<'EOF'
// swift-tools-version:6.0
import PackageDescription
let package = Package(name: "probe", targets: [
    .systemLibrary(name: "CSystemd", pkgConfig: "libsystemd"),
    .target(name: "CShims"),
    .target(name: "StrapWire"),
    .target(name: "StrapSystem", dependencies: ["CSystemd", "CShims", "StrapWire"]),
    .executableTarget(name: "probe", dependencies: ["StrapSystem", "StrapWire"]),
])
EOF
cat > "$work/pkg/Sources/probe/main.swift" <<'EOF'
import Dispatch
import Glibc
import StrapSystem
import StrapWire

final class Echo: ConnectionHandler {
    func connection(_ c: Connection, received line: [UInt8]) {
        do {
            let r = try Request.parse(line: line)
            c.write(Reply.success(id: r.id, result: ["op": .string(r.op), "uid": .int(Int64(c.peer.uid))]))
        } catch { c.write(Reply.failure(error)) }
    }
    func connectionClosed(_ c: Connection, reason: CloseReason) {}
}

var env: [String: String] = [:]
var i = 0
while let p = environ[i] {
    let s = String(cString: p); i += 1
    if let eq = s.firstIndex(of: "=") { env[String(s[..<eq])] = String(s[s.index(after: eq)...]) }
}
let logger = Logger(level: .debug, sink: LogSink.detect(environment: env))
let listener: UnixListener
do {
    if let l = try UnixListener.activated() { listener = l; logger.info("adopted activated socket") }
    else { listener = try UnixListener.bind(path: CommandLine.arguments[1]); logger.info("bound") }
} catch { logger.error("listener: \(error)"); exit(1) }
let server = UnixServer(listener: listener, handler: Echo())
server.start()
let main = DispatchQueue(label: "main")
let pinger = WatchdogPinger(queue: main)
pinger?.start()
_ = try? SystemdNotifier.notify(.ready, .status("probe ready"))
logger.notice("ready", fields: ["DEVICE_ADDRESS": "AA:BB:CC:DD:EE:FF"])
let signals = SignalWatcher(signals: [SIGTERM, SIGINT, SIGHUP], queue: main) { @Sendable signo in
    logger.info("signal \(signo)")
    if signo == SIGHUP { return }
    _ = try? SystemdNotifier.notify(.stopping)
    server.stop { exit(0) }
}
signals.start()
dispatchMain()
EOF
echo "system-probe: building"
(cd "$work/pkg" && swift build 2>&1 | grep -E "error|Compiling probe" || true)
probe="$work/pkg/.build/debug/probe"
[ -x "$probe" ] || fail "build failed"

# 1. Socket activation, notify, watchdog, signals.
cat > "$work/notify.py" <<'EOF'
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM); s.bind(sys.argv[1]); s.settimeout(10)
open(sys.argv[1] + ".ready", "w").close()
while True:
    try: msg = s.recv(4096).decode()
    except socket.timeout: break
    print(msg.replace("\n", "|"), flush=True)
    if "STOPPING=1" in msg: break
EOF
/usr/bin/python3 "$work/notify.py" "$work/notify" > "$work/notify.log" & pids+=($!); npid=$!
await '[ -e "$work/notify.ready" ]'
systemd-socket-activate -l "$work/strapd.sock" -E NOTIFY_SOCKET="$work/notify" -E WATCHDOG_USEC=400000 "$probe" \
    2> "$work/probe.err" & pids+=($!); spid=$!
# systemd-socket-activate starts the program on the first connection.
reply=$(/usr/bin/python3 -c '
import socket, sys
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])
s.sendall(b"{\"id\":1,\"op\":\"status\"}\n"); print(s.makefile().readline().strip())' "$work/strapd.sock")
await '[ "$(grep -c WATCHDOG=1 "$work/notify.log")" -ge 2 ]'
kill -HUP "$spid"; await 'grep -q "signal 1$" "$work/probe.err"'
kill -TERM "$spid"; wait "$spid" && code=0 || code=$?
wait "$npid" || true
[ "$code" = 0 ] || fail "probe exited $code after SIGTERM"
[ "$reply" = '{"id":1,"ok":true,"result":{"op":"status","uid":0}}' ] || fail "reply: $reply"
grep -q "adopted activated socket" "$work/probe.err" || fail "socket not adopted"
grep -qx "READY=1|STATUS=probe ready" "$work/notify.log" || fail "no READY/STATUS"
grep -qx "STOPPING=1" "$work/notify.log" || fail "no STOPPING"
echo "system-probe: socket activation, reply, READY/STATUS, $(grep -c WATCHDOG=1 "$work/notify.log") WATCHDOG pings, SIGHUP, SIGTERM: ok"

# 2. journald native protocol, in a private mount namespace with a fake journal socket.
cat > "$work/journal.py" <<'EOF'
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM); s.bind("/run/systemd/journal/socket"); s.settimeout(5)
open(sys.argv[1], "w").close()
for _ in range(3):
    try: print(repr(s.recv(65536)), flush=True)
    except socket.timeout: break
EOF
cat > "$work/ns.sh" <<EOF
set -e
mount -t tmpfs tmpfs /run/systemd 2>/dev/null || { mkdir -p /run/systemd && mount -t tmpfs tmpfs /run/systemd; }
mkdir -p /run/systemd/journal
/usr/bin/python3 "$work/journal.py" "$work/jready" > "$work/journal.log" & j=\$!
for _ in \$(seq 200); do [ -e "$work/jready" ] && break; sleep 0.05; done
exec 2> "$work/stderr.log"
JOURNAL_STREAM=\$(stat -L -c '%d:%i' /proc/self/fd/2) "$probe" "$work/j.sock" & p=\$!
sleep 1; kill -TERM \$p; wait \$p || true
wait \$j
EOF
unshare -m sh "$work/ns.sh"
grep -q "MESSAGE=ready\\\\nPRIORITY=5\\\\nSYSLOG_IDENTIFIER=strapd\\\\nDEVICE_ADDRESS=AA:BB:CC:DD:EE:FF" "$work/journal.log" \
    || fail "journal datagrams: $(cat "$work/journal.log")"
[ ! -s "$work/stderr.log" ] || fail "logged to stderr under JOURNAL_STREAM: $(cat "$work/stderr.log")"
echo "system-probe: journald native datagrams with structured fields, nothing on stderr: ok"
