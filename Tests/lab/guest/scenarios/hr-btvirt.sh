# hr-btvirt: fake sensor (GATT HR/CSC/RSC + advertising) on hci0, the reference central on
# hci1, both through bluetoothd's D-Bus API, two btvirt controllers on one virtual air.
# The central subscribes through StartNotify (PropertiesChanged) and AcquireNotify (fd).
# Check (check_notify.py): every notification the sensor sent while subscribed arrived
# exactly once, in order, and our static `strapctl decode` (shared as /host/strapctl)
# decodes each payload to the values the sensor encoded.
# Args (all optional):
#   1 characteristics (default 2a37,2a5b,2a53)   2 modes (default notify,acquire)
#   3 seconds per characteristic and mode (default 5)   4 sensor interval s (default 0.5)
#   5 extra btvirt options as one word list (e.g. "-L")
# shellcheck source=../lib.sh
. /lab/guest/lib.sh
CHARS=${1:-2a37,2a5b,2a53} MODES=${2:-notify,acquire} DURATION=${3:-5} INTERVAL=${4:-0.5}
[ -x "$STRAPCTL" ] || { check strapctl-present FAIL "$STRAPCTL missing: run-lab.sh -H DIR with a static strapctl"; exit 1; }
# shellcheck disable=SC2086
stack_up 2 ${5:-} || { check stack-up FAIL "stack_up 2 failed"; exit 1; }

step "fake sensor on hci0"
PERIPH=$(start_sensor hci0 hr --services hr,csc,rsc --interval "$INTERVAL") || { check sensor-ready FAIL ""; exit 1; }
step "sensor ready at $PERIPH"

step "central on hci1: chars=$CHARS modes=$MODES ${DURATION}s each"
python3 "$PY/central.py" --adapter hci1 --address "$PERIPH" --chars "$CHARS" --modes "$MODES" \
	--duration "$DURATION" --json "$OUT/central.json" > "$OUT/central.log"
rc=$?
grep -v '"event": "notify"' "$OUT/central.log" | grep -v summary
step "central exit code $rc"
check central "$([ $rc = 0 ] && echo OK || echo FAIL)" "central.py exit $rc"
kill "$(cat "$OUT/sensor-hr.pid")"; sleep 1

step "check: sensor log vs central log, decoded by $STRAPCTL"
python3 "$PY/check_notify.py" --sensor "$OUT/sensor-hr.log" --central "$OUT/central.log" \
	--strapctl "$STRAPCTL" --report "$OUT/notify-check.json" --checks "$OUT/checks.jsonl"
