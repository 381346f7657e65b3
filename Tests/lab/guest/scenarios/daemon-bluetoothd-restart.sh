# daemon-bluetoothd-restart: bluetoothd is restarted (SIGTERM, start again) mid-stream.
# strapd must survive, resynchronise (org.bluez reappears: adapter, device and GATT objects
# are new, the link was dropped when bluetoothd powered the adapter off) and resume
# recording by itself; nothing the sensor sent while subscribed may be lost or duplicated.
# The sensor is a Bumble peer (bumble_sensor.py) behind strapd's single adapter, a separate
# stack like a real strap: its GATT database and bond survive the restart. (With the fake
# sensor on a second adapter of the same bluetoothd, the restart also emptied the sensor's
# GATT database until it re-registered; strapd connected first, found no characteristics,
# disconnected to clear the cache, and the guest's 6.1 kernel oopsed in hci_chan_del
# (l2cap_sock_release), taking the new bluetoothd with it.)
# Args: 1 seconds before the restart (default 8)  2 seconds after resuming (default 10)
# shellcheck source=../lib.sh
. /lab/guest/lib.sh
# shellcheck source=../daemon.sh
. /lab/guest/daemon.sh
BEFORE=${1:-8} AFTER=${2:-10}
daemon_require
S=$OUT/sensor-s1.log
bumble_up "$S" /tmp/sensor.ready --name s1 --services hr --interval 0.5
PERIPH=$(cat /tmp/sensor.ready)
daemon_start hci0 || exit 1
daemon_attach "$PERIPH" || exit 1
sleep "$BEFORE"
step "restarting bluetoothd (pid $BLUETOOTHD_PID)"
kill "$BLUETOOTHD_PID"; wait "$BLUETOOTHD_PID" 2>/dev/null
sleep 2
T_RESTART=$(cut -d' ' -f1 /proc/uptime)
start_bluetoothd
if wait_adapters 1 30; then check bluetoothd-restarted OK "new pid $BLUETOOTHD_PID, adapter back"
else check bluetoothd-restarted FAIL "adapters: $(dbus_adapters)"; exit 1; fi
# Resumed: the sensor sends to a subscribed strapd again, 5 s after the restart or later.
n=90
until python3 -c 'import json,sys; t=float(sys.argv[2]); sys.exit(0 if any(json.loads(l).get("event")=="sent" and json.loads(l)["t"]>t+5 for l in open(sys.argv[1]) if l.startswith("{")) else 1)' "$S" "$T_RESTART" || [ $n = 0 ]; do sleep 1; n=$((n - 1)); done
if kill -0 "$STRAPD_PID" 2>/dev/null; then check strapd-survived OK "pid $STRAPD_PID"
else check strapd-survived FAIL "$(tail -3 "$STRAPD_LOG")"; fi
resumed=$(grep -c '"event": "sent"' "$S")
check resumed "$([ $n -gt 0 ] && echo OK || echo FAIL)" "sensor sending again after the restart: $([ $n -gt 0 ] && echo yes || echo 'no, within 90 s'); $resumed sent in total"
sleep "$AFTER"
kill -USR1 "$BUMBLE_PID"; sleep 3            # the sensor stops notifying; strapd flushes its capture every 2 s
store_check --sensor "$S" --min-count 10
