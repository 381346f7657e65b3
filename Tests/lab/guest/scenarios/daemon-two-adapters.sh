# daemon-two-adapters: a box with a built-in adapter (hci0) and a USB dongle (hci1), four
# sensors, and the dongle pulled mid-stream. Bumble provides both adapters through two
# /dev/vhci handles and the four sensors on the same virtual air (bumble_sensor.py --adapters 2);
# SIGUSR2 pulls hci1: its links drop as on a supervision timeout, it leaves the air, its
# /dev/vhci closes, the kernel unregisters it and bluetoothd removes it from D-Bus.
#   s1 (HR) is pinned to hci0 in strapd.conf ([device.ADDR] adapter = hci0); s2..s4 are not,
#   and strapd spreads them over the two adapters (fewest links first). None is paired.
# Checks: the sensors are spread (both adapters in use, s1 on hci0, as `strapctl devices`
# shows); after the pull, strapd logs the lost adapter once; every sensor that was on hci1
# comes back through hci0 by itself (no strapctl command), rediscovery included; every
# heart-rate notification sent after a sensor is back is stored exactly once (only what was in
# flight through the dongle at the pull is excused), before the pull too.
# Args: 1 seconds of streaming before and after the pull (default 10)  2 sensor interval (0.5)
# shellcheck source=../lib.sh
. /lab/guest/lib.sh
# shellcheck source=../daemon.sh
. /lab/guest/daemon.sh
SECS=${1:-10} INTERVAL=${2:-0.5}
daemon_require
bumble_up "$OUT/sensors.log" /tmp/sensors.ready --adapters 2 --interval "$INTERVAL" \
	--sensor s1=hr --sensor s2=hr --sensor s3=hr,csc --sensor s4=hr
wait_adapters 2 30 || { check adapters FAIL "bluetoothd shows $(dbus_adapters) adapter(s), not 2"; exit 1; }
check adapters OK "hci0 and hci1 on D-Bus"
declare -A ADDR
while read -r name addr; do ADDR[$name]=$addr; done < /tmp/sensors.ready
step "sensors: $(paste -sd' ' /tmp/sensors.ready)"
DAEMON_EXTRA_CONF="[device.${ADDR[s1]}]
adapter = hci0"
daemon_start "" || exit 1
for i in 1 2 3 4; do daemon_scan "${ADDR[s$i]}" "s$i-" || exit 1; done
# Connected without pairing, as most straps are: pairing makes its own connection through the
# first adapter that has a device object (hci0), and strapd then keeps that connection.
for i in 1 2 3 4; do attach_step connect "${ADDR[s$i]}" "s$i-" || exit 1; done

# devices_json FILE: strapctl --json devices; adapter_of FILE ADDR: the adapter it reports.
devices_json() { ctl --json devices > "$1" 2>&1; }
adapter_of() {
	python3 - "$1" "$2" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
devs = d.get('result', d)
devs = devs.get('devices', devs) if isinstance(devs, dict) else devs
print(next((x.get('adapter') or '-') if x.get('connected') else 'down' for x in devs if x['address'] == sys.argv[2]))
PY
}
step "streaming ${SECS}s on two adapters"
sleep "$SECS"
devices_json "$OUT/devices-before.json"
declare -A BEFORE
for i in 1 2 3 4; do BEFORE[s$i]=$(adapter_of "$OUT/devices-before.json" "${ADDR[s$i]}"); done
on1=$(for i in 1 2 3 4; do echo "${BEFORE[s$i]}"; done | grep -c '^hci1$')
on0=$(for i in 1 2 3 4; do echo "${BEFORE[s$i]}"; done | grep -c '^hci0$')
spread="s1=${BEFORE[s1]} s2=${BEFORE[s2]} s3=${BEFORE[s3]} s4=${BEFORE[s4]}"
if [ "$on0" -ge 1 ] && [ "$on1" -ge 1 ] && [ $((on0 + on1)) = 4 ]; then check spread OK "$spread"; else check spread FAIL "$spread"; fi
if [ "${BEFORE[s1]}" = hci0 ]; then check pinned OK "s1 on hci0 as strapd.conf pins it"; else check pinned FAIL "s1 on ${BEFORE[s1]}"; fi

step "pulling hci1"
kill -USR2 "$BUMBLE_PID"
# controllers: what bluetoothd lists (dbus_adapters counts Device1.Adapter values too)
controllers() { bluetoothctl list 2>/dev/null | grep -c '^Controller'; }
n=100; while { [ -e /sys/class/bluetooth/hci1 ] || [ "$(controllers)" != 1 ]; } && [ $n -gt 0 ]; do sleep 0.1; n=$((n - 1)); done
if [ ! -e /sys/class/bluetooth/hci1 ] && [ "$(controllers)" = 1 ]; then
	check adapter-pulled OK "hci1 gone from the kernel and from bluetoothd"
else
	check adapter-pulled FAIL "kernel: $(ls /sys/class/bluetooth | paste -sd' '); bluetoothd: $(controllers) controller(s)"; exit 1
fi
# every sensor connected again, through hci0, with no strapctl command (90 s at most)
t=$SECONDS back=''
while [ $((SECONDS - t)) -lt 90 ]; do
	devices_json "$OUT/devices-after.json"
	back=$(for i in 1 2 3 4; do adapter_of "$OUT/devices-after.json" "${ADDR[s$i]}"; done | paste -sd' ')
	[ "$back" = "hci0 hci0 hci0 hci0" ] && break
	sleep 1
done
if [ "$back" = "hci0 hci0 hci0 hci0" ]; then
	check came-back OK "all four on hci0 $((SECONDS - t)) s after the pull"
else
	check came-back FAIL "after 90 s: s1..s4 on $back"
fi
# one line, naming every sensor that was on hci1
gone=$(grep -a -c 'hci1.*is gone' "$STRAPD_LOG") line=$(grep -a -m1 'hci1.*is gone' "$STRAPD_LOG")
named=yes
for i in 1 2 3 4; do
	[ "${BEFORE[s$i]}" = hci1 ] && [ "${line/${ADDR[s$i]}/}" = "$line" ] && named="no: ${ADDR[s$i]} missing"
done
if [ "$gone" = 1 ] && [ "$named" = yes ]; then check adapter-lost-logged OK "$(echo "$line" | sed 's/.*strapd\[[a-z]*\]: //' | cut -c1-220)"
else check adapter-lost-logged FAIL "$gone line(s) about hci1 being gone, sensors named: $named; $line"; fi
step "streaming ${SECS}s on hci0"
sleep "$SECS"
kill -USR1 "$BUMBLE_PID"; sleep 3            # sensors stop notifying (strapd flushes its capture every 2 s)
store_dump "$OUT/anchored.json" || { check store-read FAIL "$(tail -2 "$OUT/anchored.err")"; exit 1; }
rc=0
for i in 1 2 3 4; do
	sensor_store_check "s$i" "${ADDR[s$i]}" --in-flight-excused 1.5 || rc=1
done
exit $rc
