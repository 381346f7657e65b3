# daemon-bluetoothd-restart: bluetoothd is restarted (SIGTERM, start again) mid-stream.
# strapd must survive, resynchronise (org.bluez reappears: adapters, devices, GATT objects
# are new) and resume recording; nothing the sensor sent while connected may be lost or
# duplicated. The fake sensor registers itself again on the new bluetoothd.
# Args: 1 seconds before the restart (default 10)  2 seconds after resuming (default 15)
# Skips (77) until strapd exists. Assumed CLI: guest/daemon.sh.
# shellcheck source=../lib.sh
. /lab/guest/lib.sh
# shellcheck source=../daemon.sh
. /lab/guest/daemon.sh
BEFORE=${1:-10} AFTER=${2:-15}
daemon_require
stack_up 2 $DAEMON_BTVIRT || { check stack-up FAIL "stack_up 2 failed"; exit 1; }
PERIPH=$(start_sensor hci0 s1 --agent --services hr --interval 0.5) || { check sensor-ready FAIL ""; exit 1; }
daemon_start hci1 || exit 1
daemon_attach "$PERIPH" || exit 1
sleep "$BEFORE"
step "restarting bluetoothd (pid $BLUETOOTHD_PID)"
kill "$BLUETOOTHD_PID"; wait "$BLUETOOTHD_PID" 2>/dev/null
sleep 2
T_RESTART=$(cut -d' ' -f1 /proc/uptime)
start_bluetoothd
wait_adapters 2 30 && check bluetoothd-restarted OK "new pid $BLUETOOTHD_PID, 2 adapters" ||
	{ check bluetoothd-restarted FAIL "adapters: $(dbus_adapters)"; exit 1; }
S=$OUT/sensor-s1.log
n=90
until python3 -c 'import json,sys; t=float(sys.argv[2]); sys.exit(0 if any(json.loads(l).get("event")=="sent" and json.loads(l)["t"]>t+5 for l in open(sys.argv[1]) if l.startswith("{")) else 1)' "$S" "$T_RESTART" || [ $n = 0 ]; do sleep 1; n=$((n - 1)); done
kill -0 "$STRAPD_PID" 2>/dev/null && check strapd-survived OK "pid $STRAPD_PID" || check strapd-survived FAIL "$(tail -3 "$STRAPD_LOG")"
resumed=$(grep -c '"event": "sent"' "$S")
check resumed "$([ $n -gt 0 ] && echo OK || echo FAIL)" "sensor sending again after the restart: $([ $n -gt 0 ] && echo yes || echo 'no, within 90 s'); $resumed sent in total"
sleep "$AFTER"
kill "$(cat "$OUT/sensor-s1.pid")"; sleep 3
store_check --sensor "$S" --min-count 10
