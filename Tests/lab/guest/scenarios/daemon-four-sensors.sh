# daemon-four-sensors: four fake sensors at once (btvirt -l5: sensors on hci0..hci3, strapd on
# hci4): s1 HR, s2 HR+CSC, s3 HR+RSC, s4 HR+CSC+RSC. Each is scanned, paired and connected
# through strapctl; after streaming, each sensor's notifications must be in the store
# exactly once, attributed to the right device.
# Args: 1 seconds of streaming (default 20)  2 sensor interval (default 0.5)
# Skips (77) until strapd exists. Assumed CLI: guest/daemon.sh.
# shellcheck source=../lib.sh
. /lab/guest/lib.sh
# shellcheck source=../daemon.sh
. /lab/guest/daemon.sh
SECS=${1:-20} INTERVAL=${2:-0.5}
daemon_require
stack_up 5 $DAEMON_BTVIRT || { check stack-up FAIL "stack_up 5 failed"; exit 1; }
SERVICES=(hr hr,csc hr,rsc hr,csc,rsc)
ADDR=()
for i in 1 2 3 4; do
	ADDR[i]=$(start_sensor "hci$((i - 1))" "s$i" --agent --services "${SERVICES[i - 1]}" --interval "$INTERVAL") ||
		{ check sensor-ready FAIL "s$i"; exit 1; }
done
daemon_start hci4 || exit 1
for i in 1 2 3 4; do daemon_attach "${ADDR[i]}" "s$i-" || exit 1; done
step "streaming ${SECS}s from 4 sensors"
sleep "$SECS"
for i in 1 2 3 4; do kill "$(cat "$OUT/sensor-s$i.pid")"; done; sleep 3
ctl --json anchored --anchor 0 > "$OUT/anchored.json" 2> "$OUT/anchored.err" ||
	{ check store-read FAIL "$(tail -2 "$OUT/anchored.err")"; exit 1; }
rc=0
for i in 1 2 3 4; do
	python3 "$PY/store_to_received.py" "$OUT/anchored.json" --device "${ADDR[i]}" > "$OUT/received-s$i.jsonl"
	python3 "$PY/check_notify.py" --received "$OUT/received-s$i.jsonl" --sensor "$OUT/sensor-s$i.log" \
		--prefix "s$i-" --strapctl "$DECODER" --report "$OUT/notify-check-s$i.json" --checks "$OUT/checks.jsonl" || rc=1
done
exit $rc
