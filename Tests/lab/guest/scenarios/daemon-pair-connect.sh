# daemon-pair-connect: strapd (static release build, /host/strapd) on hci1 against the fake
# sensor (HR + CSC + RSC, Just Works agent) on hci0: strapctl scan -> pair -> connect, stream,
# then every notification the sensor logged as sent must be in strapd's store exactly once
# (strapctl --json anchored) and decode to the values the sensor encoded.
# Args: 1 notification path: acquire | start (default acquire; strapd.conf [bluetooth] notify)
#       2 seconds of streaming (default 12)  3 sensor interval (default 0.5)
#       4 stall: first pair while the sensor has stopped advertising (daemon.sh stalled_pair)
# Skips (77) until strapd exists. Assumed CLI: guest/daemon.sh.
# shellcheck source=../lib.sh
. /lab/guest/lib.sh
# shellcheck source=../daemon.sh
. /lab/guest/daemon.sh
NOTIFY=${1:-acquire} SECS=${2:-12} INTERVAL=${3:-0.5} STALL=${4:-}
daemon_require
stack_up 2 $DAEMON_BTVIRT || { check stack-up FAIL "stack_up 2 failed"; exit 1; }
PERIPH=$(start_sensor hci0 s1 --agent --services hr,csc,rsc --interval "$INTERVAL") || { check sensor-ready FAIL ""; exit 1; }
daemon_start hci1 "$NOTIFY" || exit 1
if [ "$STALL" = stall ]; then
	daemon_scan "$PERIPH" || exit 1
	stalled_pair "$PERIPH" s1
	# BlueZ may drop the device it had only seen advertising once the pairing failed:
	# as a user would, scan until the sensor is back, then pair.
	daemon_scan "$PERIPH" after-stall- || exit 1
	daemon_pair_connect "$PERIPH" || exit 1
else
	daemon_attach "$PERIPH" || exit 1
fi
step "streaming ${SECS}s"
sleep "$SECS"
kill "$(cat "$OUT/sensor-s1.pid")"; sleep 3       # sensor stops sending; give the store time to sync
kill -0 "$STRAPD_PID" 2>/dev/null && check strapd-alive OK "" || check strapd-alive FAIL "strapd exited: $(tail -3 "$STRAPD_LOG")"
store_check --sensor "$OUT/sensor-s1.log" --min-count 10
