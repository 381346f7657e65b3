# hr-example: BlueZ's own packaged peer (bluez-test-scripts, run unmodified):
#   example-gatt-server      (Heart Rate 0x180D, Battery 0x180F, a test service)
#   example-advertisement    (advertises 180D/180F as "TestAdvertisement")
# Both take "the first adapter"; we find out which one advertises and run the reference
# central on the other. Check: every received payload is one the example printed as sent,
# in order, once; strapctl decodes each to the printed values. (The example logs no
# times, so values sent around StopNotify may be missing without failing: --allow-missing.)
# Args: 1 modes (default notify,acquire)  2 seconds per mode (default 8)
# shellcheck source=../lib.sh
. /lab/guest/lib.sh
MODES=${1:-notify,acquire} DURATION=${2:-8}
EX=/usr/share/doc/bluez-test-scripts/examples
[ -x "$STRAPCTL" ] || { check strapctl-present FAIL "$STRAPCTL missing: run-lab.sh -H DIR with a static strapctl"; exit 1; }
stack_up 2 || { check stack-up FAIL "stack_up 2 failed"; exit 1; }

step "example-gatt-server + example-advertisement"
spawn "$OUT/example-gatt-server.log" python3 "$EX/example-gatt-server"
spawn "$OUT/example-advertisement.log" python3 "$EX/example-advertisement"

PERIPH='' CENTRAL=''
for _ in $(seq 100); do
	for a in $(bluetoothctl list | awk '/^Controller/{print $2}'); do
		if bluetoothctl show "$a" | grep -q 'ActiveInstances: 0x01'; then PERIPH=$a; else CENTRAL=$a; fi
	done
	[ -n "$PERIPH" ] && grep -q 'GATT application registered' "$OUT/example-gatt-server.log" && break
	PERIPH=; sleep 0.3
done
[ -n "$PERIPH" ] || { check example-peer FAIL "example peripheral did not come up"; cat "$OUT"/example-*.log; exit 1; }
step "examples advertise on $PERIPH; central on $CENTRAL"

python3 "$PY/central.py" --adapter "$CENTRAL" --address "$PERIPH" --chars 2a37 --modes "$MODES" \
	--duration "$DURATION" --json "$OUT/central.json" > "$OUT/central.log"
rc=$?
grep -v '"event": "notify"' "$OUT/central.log" | grep -v summary
step "central exit code $rc"
check central "$([ $rc = 0 ] && echo OK || echo FAIL)" "central.py exit $rc"
sleep 1
python3 "$PY/example_log.py" < "$OUT/example-gatt-server.log" > "$OUT/sensor-example.log"
python3 "$PY/check_notify.py" --sensor "$OUT/sensor-example.log" --central "$OUT/central.log" --allow-missing \
	--prefix example- --strapctl "$STRAPCTL" --report "$OUT/notify-check.json" --checks "$OUT/checks.jsonl"
