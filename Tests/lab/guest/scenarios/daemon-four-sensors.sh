# daemon-four-sensors: four sensors at once on strapd's single adapter: s1 HR, s2 HR+CSC,
# s3 HR+RSC, s4 HR+CSC+RSC. The peers are Bumble controllers on one virtual link behind
# hci0 (bumble_sensor.py --sensor ...): btvirt 5.66 cannot do this, its LE Connection
# Complete gives a peer the central's connection handle, so a central's second connection
# is unusable ("Unknown Connection Identifier" on the peer). Each sensor is scanned, paired
# and connected through strapctl; after streaming, each sensor's notifications must be in
# the store exactly once, attributed to the right device.
# Args: 1 seconds of streaming (default 12)  2 sensor interval (default 0.5)
# Skips (77) until strapd exists, or without bumble in the image. Assumed CLI: guest/daemon.sh.
# shellcheck source=../lib.sh
. /lab/guest/lib.sh
# shellcheck source=../daemon.sh
. /lab/guest/daemon.sh
SECS=${1:-12} INTERVAL=${2:-0.5}
daemon_require
bumble_up "$OUT/sensors.log" /tmp/sensors.ready --interval "$INTERVAL" \
	--sensor s1=hr --sensor s2=hr,csc --sensor s3=hr,rsc --sensor s4=hr,csc,rsc
declare -A ADDR
while read -r name addr; do ADDR[$name]=$addr; done < /tmp/sensors.ready
step "sensors: $(paste -sd' ' /tmp/sensors.ready)"
daemon_start hci0 || exit 1
# All four found before any is connected (daemon.sh, daemon_scan): the s4 scan once found
# nothing in CI while three links were up.
for i in 1 2 3 4; do daemon_scan "${ADDR[s$i]}" "s$i-" || exit 1; done
for i in 1 2 3 4; do daemon_pair_connect "${ADDR[s$i]}" "s$i-" || exit 1; done
step "streaming ${SECS}s from 4 sensors"
sleep "$SECS"
kill -USR1 "$BUMBLE_PID"; sleep 3            # sensors stop notifying; hci0 stays (strapd flushes its capture every 2 s)
store_dump "$OUT/anchored.json" || { check store-read FAIL "$(tail -2 "$OUT/anchored.err")"; exit 1; }
rc=0
for i in 1 2 3 4; do
	# Heart rate from the store (one sample per notification); every characteristic from
	# strapd's raw --record capture (see store_check in daemon.sh).
	sensor_store_check "s$i" "${ADDR[s$i]}" || rc=1
	python3 "$PY/capture_to_received.py" "$OUT/capture.jsonl" --device "${ADDR[s$i]}" > "$OUT/captured-s$i.jsonl"
	python3 "$PY/check_notify.py" --received "$OUT/captured-s$i.jsonl" --sensor "$OUT/sensor-s$i.log" \
		--prefix "s$i-capture-" --strapctl "$DECODER" --decode-cache "$DECODE_CACHE" --report "$OUT/capture-check-s$i.json" --checks "$OUT/checks.jsonl" || rc=1
done
exit $rc
