# hr-bumble: strapd against Google's Bumble stack (PyPI bumble, pinned in
# image/pip-requirements.txt), which also provides the controller bluetoothd uses, through
# /dev/vhci: bluetoothd sees ONE adapter (hci0), as on a real machine, and the sensor sends
# plain ATT Handle Value Notifications (0x1B) like real straps (BlueZ-to-BlueZ can use 0x23).
# strapctl scan -> pair -> connect, stream; then every notification the sensor logged as
# sent must be in strapd's store (heart rate) and raw capture (HR, CSC, RSC) exactly once,
# decoded by strapctl to the sent values.
# Skips (77) when bumble is not in the image (LAB_PIP_PKGS= or PyPI unreachable at build).
# Args: 1 notification path: start | acquire (default start)  2 seconds of streaming (default 12)
#       3 notification interval (default 0.5)
# shellcheck source=../lib.sh
. /lab/guest/lib.sh
# shellcheck source=../daemon.sh
. /lab/guest/daemon.sh
NOTIFY=${1:-start} SECS=${2:-12} INTERVAL=${3:-0.5}
daemon_require
step "bumble sensor + controller on /dev/vhci"
bumble_up "$OUT/sensor-bumble.log" /tmp/sensor.ready --services hr,csc,rsc --interval "$INTERVAL"
PERIPH=$(cat /tmp/sensor.ready)
daemon_start hci0 "$NOTIFY" || exit 1
daemon_attach "$PERIPH" || exit 1
step "streaming ${SECS}s"
sleep "$SECS"
kill -USR1 "$BUMBLE_PID"; sleep 3            # the sensor stops notifying (hci0 stays); strapd flushes its capture every 2 s
kill -0 "$STRAPD_PID" 2>/dev/null && check strapd-alive OK "" || check strapd-alive FAIL "strapd exited: $(tail -3 "$STRAPD_LOG")"
store_check --sensor "$OUT/sensor-bumble.log" --min-count 10
