# Helpers sourced by guest/scenarios/*.sh (bash, inside the lab guest).
#
# Stack:
#   stack_up N [btvirt options]  hci_vhci + dbus-daemon + btmon + bluetoothd + btvirt -lN,
#                                waits until bluetoothd shows N adapters on D-Bus
#                                (N=0: no btvirt, e.g. when Bumble provides the controller)
#   wait_adapters N SECS         wait until bluetoothd shows N adapters
#   start_sensor ADAPTER NAME [fake_sensor.py options]
#                                fake sensor on ADAPTER, log $OUT/sensor-NAME.log (JSON lines),
#                                pid in $OUT/sensor-NAME.pid; prints its address
#   spawn LOG CMD...             start a background process, killed on exit
#   wait_file FILE SECS          wait until FILE exists
#   step MSG                     timestamped progress line (guest uptime)
# Results (the host asserts on $OUT/result.json, see Tests/lab/check-result.py):
#   check NAME OK|FAIL DETAIL    record one check (JSON line in $OUT/checks.jsonl)
#   check_cmd NAME CMD...        record a check that passes when CMD exits 0
#   skip REASON                  record the scenario as skipped and exit 77
# result.json is written on exit: {"scenario", "exit_code", "skipped", "reason", "ok", "checks"}.
OUT=${OUT:-/out}
# shellcheck disable=SC2034  # PY and STRAPCTL are used by the scenarios
PY=/lab/guest/py
# Binaries shared from the host (/host, run-lab.sh -H DIR) are copied into the guest's RAM
# root fs once: every exec straight from the 9p share re-reads the whole ~10 MB static
# binary (about 3 s per strapctl run under TCG, against well under 0.1 s from RAM).
for _b in strapctl strapd strapctl.real; do
	if [ -x "/host/$_b" ] && ! cmp -s "/host/$_b" "/usr/local/bin/$_b"; then
		cp "/host/$_b" "/usr/local/bin/$_b"
	fi
done
STRAPCTL=${STRAPCTL:-/usr/local/bin/strapctl}
STRAPD=${STRAPD:-/usr/local/bin/strapd}
[ -x /host/strapctl ] || STRAPCTL=/host/strapctl        # absent: checks report it
[ -x /host/strapd ] || STRAPD=/host/strapd
LAB_PIDS=()
LAB_SKIP_REASON=''

step() { printf '[%8.2f] %s\n' "$(cut -d' ' -f1 /proc/uptime)" "$*"; }

json_str() {   # JSON string literal of $1
	local s=${1//\\/\\\\}
	s=${s//\"/\\\"}
	s=${s//$'\n'/\\n}
	s=${s//$'\t'/ }
	printf '"%s"' "$s"
}

check() {
	local name=$1 ok=false detail=${3:-}
	[ "$2" = OK ] && ok=true
	printf '{"name": %s, "ok": %s, "detail": %s}\n' "$(json_str "$name")" "$ok" "$(json_str "$detail")" >> "$OUT/checks.jsonl"
	step "check $name: $2 ${detail:+($detail)}"
}

check_cmd() {
	local name=$1; shift
	local out
	if out=$("$@" 2>&1); then check "$name" OK "$(echo "$out" | tail -1)"; else check "$name" FAIL "$(echo "$out" | tail -3)"; fi
}

skip() {
	LAB_SKIP_REASON=$1
	echo "SKIP: $1"
	exit 77
}

write_result() {
	local rc=$1
	python3 - "$OUT" "${LAB_SCENARIO:-unknown}" "$rc" "$LAB_SKIP_REASON" <<'PYEOF'
import json, os, sys
out, scenario, rc, reason = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
checks = []
try:
    with open(os.path.join(out, 'checks.jsonl')) as f:
        checks = [json.loads(l) for l in f if l.strip()]
except FileNotFoundError:
    pass
skipped = rc == 77
ok = (rc == 0 and bool(checks) and all(c['ok'] for c in checks))
with open(os.path.join(out, 'result.json'), 'w') as f:
    json.dump({'scenario': scenario, 'exit_code': rc, 'skipped': skipped, 'reason': reason,
               'ok': ok, 'checks': checks}, f, indent=1)
PYEOF
}

spawn() {
	local log=$1; shift
	"$@" > "$log" 2>&1 &
	LAB_PIDS+=($!)
}

lab_cleanup() {
	local rc=$? i f
	for f in "$OUT"/sensor-*.pid; do [ -f "$f" ] && kill "$(cat "$f")" 2>/dev/null; done
	for ((i = ${#LAB_PIDS[@]} - 1; i >= 0; i--)); do
		kill "${LAB_PIDS[i]}" 2>/dev/null
	done
	wait 2>/dev/null
	write_result "$rc"
	exit "$rc"
}
trap lab_cleanup EXIT
: > "$OUT/checks.jsonl"

wait_file() {
	local f=$1 n=$(($2 * 10))
	while [ ! -e "$f" ] && [ $n -gt 0 ]; do sleep 0.1; n=$((n - 1)); done
	[ -e "$f" ]
}

# Number of adapters bluetoothd exports on D-Bus (0 if bluetoothd is not up).
dbus_adapters() {
	dbus-send --system --print-reply --dest=org.bluez / \
		org.freedesktop.DBus.ObjectManager.GetManagedObjects 2>/dev/null |
		grep -c 'object path "/org/bluez/hci[0-9]*"$'
}

wait_adapters() {
	local t=$((SECONDS + $2))
	while [ "$(dbus_adapters)" -lt "$1" ] && [ $SECONDS -lt $t ]; do sleep 0.2; done
	[ "$(dbus_adapters)" -ge "$1" ]
}

# bluetoothd: under systemd as PID 1 through bluetooth.service, else started here.
start_bluetoothd() {
	if [ "${LAB_INIT:-}" = systemd ]; then
		step "systemctl start bluetooth.service"
		systemctl start bluetooth.service || return 1
	else
		step "bluetoothd ${BLUETOOTHD_ARGS:-}"
		# shellcheck disable=SC2086
		/usr/libexec/bluetooth/bluetoothd -n ${BLUETOOTHD_ARGS:-} >> "$OUT/bluetoothd.log" 2>&1 &
		BLUETOOTHD_PID=$!
		LAB_PIDS+=("$BLUETOOTHD_PID")
	fi
}

stack_up() {
	local n=${1:-2}; shift
	step "modprobe hci_vhci"
	modprobe hci_vhci || { echo "modprobe hci_vhci failed"; return 1; }
	[ -c /dev/vhci ] || { echo "/dev/vhci missing"; return 1; }
	if [ "${LAB_INIT:-}" != systemd ]; then
		step "dbus-daemon"
		mkdir -p /run/dbus
		dbus-daemon --system --fork || return 1
	fi
	step "btmon -> $OUT/hci.btsnoop"
	spawn "$OUT/btmon.log" btmon -w "$OUT/hci.btsnoop"
	start_bluetoothd || return 1
	[ "$n" -gt 0 ] || return 0            # N=0: the caller attaches its own controller
	# Under TCG a starved vCPU can miss the kernel's 2 s HCI command timeout while
	# btvirt brings its controllers up ("hciN: Opcode 0x0c03 failed: -110"); that
	# controller then never reaches bluetoothd. Recreate the controllers if so.
	local attempt t pid
	for attempt in 1 2 3; do
		step "btvirt $* -l$n (attempt $attempt)"
		btvirt "$@" -l"$n" >> "$OUT/btvirt.log" 2>&1 &
		pid=$!
		t=$((SECONDS + 25))
		while [ "$(dbus_adapters)" -lt "$n" ] && [ $SECONDS -lt $t ]; do
			sleep 0.2
			dmesg | grep -q 'Bluetooth: hci[0-9]*: Opcode 0x0c03 failed: -110' && break
		done
		if [ "$(dbus_adapters)" -ge "$n" ]; then
			LAB_PIDS+=("$pid")
			BTVIRT_PID=$pid
			step "$n adapters up"
			bluetoothctl list
			return 0
		fi
		echo "only $(dbus_adapters) of $n adapters reached bluetoothd; kernel says:"
		dmesg | grep -i 'bluetooth: hci' | tail -5
		kill "$pid"; wait "$pid" 2>/dev/null
		dmesg -C
		t=100
		while [ -n "$(ls /sys/class/bluetooth 2>/dev/null)" ] && [ $t -gt 0 ]; do sleep 0.1; t=$((t - 1)); done
	done
	return 1
}

# start_sensor ADAPTER NAME [fake_sensor.py options...]  -> prints the sensor's address
start_sensor() {
	local adapter=$1 name=$2; shift 2
	rm -f "/tmp/sensor-$name.ready"
	python3 "$PY/fake_sensor.py" --adapter "$adapter" --name "$name" \
		--ready-file "/tmp/sensor-$name.ready" "$@" >> "$OUT/sensor-$name.log" 2>&1 &
	echo $! > "$OUT/sensor-$name.pid"
	LAB_PIDS+=($!)
	wait_file "/tmp/sensor-$name.ready" 60 || { echo "sensor $name not ready" >&2; tail "$OUT/sensor-$name.log" >&2; return 1; }
	cat "/tmp/sensor-$name.ready"
}

# The adapter that is not the given sensor address (for two-controller setups).
other_adapter() {
	bluetoothctl list | awk -v p="$1" '/^Controller/ && $2 != p {print $2; exit}'
}

# adapter name (hciN) of a controller address
adapter_name() {
	local a
	for a in /sys/class/bluetooth/hci*; do
		[ -e "$a" ] || continue
		if hciconfig "${a##*/}" 2>/dev/null | grep -qi "BD Address: $1"; then echo "${a##*/}"; return 0; fi
	done
	return 1
}
