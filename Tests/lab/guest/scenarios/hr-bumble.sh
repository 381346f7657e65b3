# hr-bumble: the peer is Google's Bumble stack (PyPI bumble, pinned in
# image/pip-requirements.txt), which also provides the controller bluetoothd uses, through
# /dev/vhci: bluetoothd sees ONE adapter (hci0), as on a real machine, and the sensor sends
# plain ATT Handle Value Notifications (0x1B) like real straps (BlueZ-to-BlueZ uses 0x23).
# Same check as hr-btvirt: exactly once, in order, decoded by strapctl to the sent values.
# Skips (77) when bumble is not in the image (LAB_PIP_PKGS= or PyPI unreachable at build).
# Args: 1 chars (default 2a37,2a5b,2a53)  2 modes (default notify,acquire)
#       3 seconds per char and mode (default 5)  4 notification interval (default 0.5)
# shellcheck source=../lib.sh
. /lab/guest/lib.sh
CHARS=${1:-2a37,2a5b,2a53} MODES=${2:-notify,acquire} DURATION=${3:-5} INTERVAL=${4:-0.5}
python3 -c 'import bumble' 2>/dev/null || skip "bumble is not installed in the image (image/pip-requirements.txt, LAB_PIP_PKGS)"
[ -x "$STRAPCTL" ] || { check strapctl-present FAIL "$STRAPCTL missing: run-lab.sh -H DIR with a static strapctl"; exit 1; }
stack_up 0 || { check stack-up FAIL "stack_up 0 failed"; exit 1; }
step "bumble sensor + controller on /dev/vhci"
spawn "$OUT/sensor-bumble.log" python3 "$PY/bumble_sensor.py" --services hr,csc,rsc --interval "$INTERVAL" \
	--ready-file /tmp/sensor.ready
wait_file /tmp/sensor.ready 120 || { check sensor-ready FAIL "bumble sensor not ready"; tail "$OUT/sensor-bumble.log"; exit 1; }
wait_adapters 1 30 || { check adapter FAIL "no adapter reached bluetoothd"; tail "$OUT/sensor-bumble.log"; exit 1; }
PERIPH=$(cat /tmp/sensor.ready)
bluetoothctl list
step "central on hci0 -> $PERIPH"
python3 "$PY/central.py" --adapter hci0 --address "$PERIPH" --chars "$CHARS" --modes "$MODES" \
	--duration "$DURATION" --json "$OUT/central.json" > "$OUT/central.log"
rc=$?
grep -v '"event": "notify"' "$OUT/central.log" | grep -v summary
step "central exit code $rc"
check central "$([ $rc = 0 ] && echo OK || echo FAIL)" "central.py exit $rc"
sleep 1
python3 "$PY/check_notify.py" --sensor "$OUT/sensor-bumble.log" --central "$OUT/central.log" \
	--strapctl "$STRAPCTL" --report "$OUT/notify-check.json" --checks "$OUT/checks.jsonl"
