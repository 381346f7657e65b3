# Helpers for the scenarios that run strapd in the guest (daemon-*, hr-example, hr-bumble),
# sourced after lib.sh. daemon_require skips (exit 77) when no strapd was staged in /host.
# Everything the scenarios use of strapd's and strapctl's command lines is here:
#   strapd  --config FILE --state-dir DIR --socket PATH --record FILE --log-level debug
#   strapd.conf  [bluetooth] adapter = hciN ; pair_agent = yes ; notify_mode = notify|acquire
#   strapctl --socket PATH [--json] scan --until ADDR [--timeout S] | pair ADDR | connect ADDR | status
#   strapctl --socket PATH --json anchored [--anchor N]   -> {"added": [...], "anchor": N}
#   samples carry metadata.characteristic + metadata.raw (store_to_received.py)
# No EATT in the daemon scenarios: after LE pairing between the two btvirt controllers the
# guest's 6.1 kernel oopses in hci_chan_del (list corruption, from l2cap_sock_release when
# bluetoothd closes an EATT channel) and bluetoothd dies. Real straps do not speak EATT
# either, so one ATT channel is also the realistic setting. LAB_EATT=1 keeps BlueZ's default.
if [ -z "${LAB_EATT:-}" ]; then
	sed -i 's/^#\?Channels = .*/Channels = 1/' /etc/bluetooth/main.conf
fi
# LE-only controllers (btvirt -L), like real straps: with btvirt's default dual-mode
# controllers LE Secure Connections pairing derives a BR/EDR link key (CTKD), bluetoothd then
# tries a BR/EDR connection and the guest's 6.1 kernel oopsed in hci_chan_del
# (l2cap_sock_release) while bluetoothd closed the socket; bluetoothd died with it.
DAEMON_BTVIRT=${LAB_DAEMON_BTVIRT--L}
STRAPD_SOCKET=${STRAPD_SOCKET:-/run/strapd/strapd.sock}
STRAPD_STATE=${STRAPD_STATE:-/var/lib/strapd}
STRAPD_CONF=${STRAPD_CONF:-/etc/strapd/strapd.conf}
STRAPD_LOG=$OUT/strapd.log

daemon_require() {
	[ -x /host/strapd ] || skip "strapd not built yet (no strapd in the host folder shared as /host; build it with swift build -c release --static-swift-stdlib and pass run-lab.sh -H)"
	[ -x "$STRAPCTL" ] || skip "strapctl not shared as /host/strapctl"
}

ctl() { "$STRAPCTL" --socket "$STRAPD_SOCKET" "$@"; }
# decoder for the checks: the static strapctl (strapctl.real when a wrapper is staged)
DECODER=$STRAPCTL
[ -x /usr/local/bin/strapctl.real ] && DECODER=/usr/local/bin/strapctl.real
# every check of a run shares decoded payloads (store and capture checks see the same ones)
DECODE_CACHE=/tmp/decode-cache.json

# daemon_config ADAPTER [NOTIFY_PATH]   (ADAPTER empty: every adapter; DAEMON_EXTRA_CONF appended)
daemon_config() {
	mkdir -p "$(dirname "$STRAPD_CONF")" "$STRAPD_STATE" "$(dirname "$STRAPD_SOCKET")"
	{
		echo "[bluetooth]"
		echo "adapter = $1"
		# The scenarios pair through strapctl: strapd's own agent (opt-in) confirms Just Works.
		echo "pair_agent = yes"
		case "${2:-}" in
		acquire) echo "notify_mode = acquire" ;;
		start|notify) echo "notify_mode = notify" ;;
		esac
		# more sections from the scenario, e.g. a [device.ADDR] pin
		[ -n "${DAEMON_EXTRA_CONF:-}" ] && printf '%s\n' "$DAEMON_EXTRA_CONF"
	} > "$STRAPD_CONF"
	cp "$STRAPD_CONF" "$OUT/strapd.conf"
}

# daemon_start ADAPTER [NOTIFY_PATH]: strapd in the background, waits for its socket.
daemon_start() {
	daemon_config "$@"
	step "strapd on $1 (notify path ${2:-default})"
	"$STRAPD" --config "$STRAPD_CONF" --state-dir "$STRAPD_STATE" --socket "$STRAPD_SOCKET" \
		--set daemon.socket_group= --record "$OUT/capture.jsonl" --log-level debug >> "$STRAPD_LOG" 2>&1 &
	STRAPD_PID=$!
	LAB_PIDS+=("$STRAPD_PID")
	local n=300
	while [ ! -S "$STRAPD_SOCKET" ] && [ $n -gt 0 ] && kill -0 "$STRAPD_PID" 2>/dev/null; do sleep 0.1; n=$((n - 1)); done
	if [ -S "$STRAPD_SOCKET" ] && kill -0 "$STRAPD_PID" 2>/dev/null; then
		check strapd-running OK "pid $STRAPD_PID, socket $STRAPD_SOCKET"
	else
		check strapd-running FAIL "no socket after 30 s; $(tail -3 "$STRAPD_LOG")"
		return 1
	fi
}

# bumble_up LOG READY_FILE ARGS...: the Bumble peer(s) (bumble_sensor.py ARGS) behind the one
# adapter bluetoothd sees (stack_up 0: Bumble provides the controller through /dev/vhci);
# sets BUMBLE_PID. Skips (77) without bumble in the image; any other failure ends the scenario.
bumble_up() {
	local log=$1 ready=$2
	shift 2
	python3 -c 'import bumble' 2>/dev/null || skip "bumble is not installed in the image (image/pip-requirements.txt, LAB_PIP_PKGS)"
	stack_up 0 || { check stack-up FAIL "stack_up 0 failed"; exit 1; }
	spawn "$log" python3 "$PY/bumble_sensor.py" --ready-file "$ready" "$@"
	BUMBLE_PID=${LAB_PIDS[-1]}
	wait_file "$ready" 120 || { check sensor-ready FAIL "bumble sensor(s) not ready"; tail "$log"; exit 1; }
	wait_adapters 1 30 || { check adapter FAIL "no adapter reached bluetoothd"; tail "$log"; exit 1; }
}

# daemon_attach ADDRESS [PREFIX]: scan until ADDRESS shows up -> pair -> connect, through
# strapctl. `scan --until` ends the scan as soon as strapd reports the address; the 60 s are
# only the limit (btvirt's advertising reports can be dropped, pitfall 2 in docs/testing.md).
daemon_attach() {
	local addr=$1 prefix=${2:-}
	daemon_scan "$addr" "$prefix" || return 1
	daemon_pair_connect "$addr" "$prefix"
}

# daemon_scan ADDRESS [PREFIX]: strapctl scan --until ADDRESS (60 s at most). Scenarios with
# several sensors scan for all of them before connecting any: with links up, the emulated
# controllers sometimes never started scanning at all (pitfall 10 in docs/testing.md).
daemon_scan() {
	local addr=$1 prefix=${2:-} t=$SECONDS
	if ctl --json scan --until "$addr" --timeout 60 > "$OUT/${prefix}scan.json" 2>&1; then
		check "${prefix}scan" OK "found $addr in $((SECONDS - t)) s"
	else
		check "${prefix}scan" FAIL "strapctl scan --until $addr: $(tail -c 300 "$OUT/${prefix}scan.json")"
		return 1
	fi
}

# daemon_pair_connect ADDRESS [PREFIX]: pair, then connect, each retried once (attach_step).
daemon_pair_connect() {
	local addr=$1 prefix=${2:-}
	attach_step pair "$addr" "$prefix" || return 1
	attach_step connect "$addr" "$prefix" || return 1
}

# attach_step pair|connect ADDRESS PREFIX: the strapctl command, retried once when it fails.
# A failure says whose it was: bluez_probe asks bluetoothd directly, and strapd's own log
# names any BlueZ call it left unanswered ("D-Bus: … unanswered"). The emulated controller
# under a loaded CI host has stalled bluetoothd for 25 s at a time; one retry tells such a
# stall from a strapd fault, and the check reports both attempts.
attach_step() {
	local cmd=$1 addr=$2 prefix=$3 t first="" attempt
	for attempt in 1 2; do
		t=$SECONDS
		if ctl "$cmd" "$addr" > "$OUT/${prefix}$cmd.txt" 2>&1; then
			local extra=""; [ "$cmd" = pair ] && extra="; $(device_prop "$addr" Paired)"
			check "${prefix}$cmd" OK "${first:+attempt 1 FAILED ($first); attempt 2: }$((SECONDS - t)) s$extra"
			return 0
		fi
		local why; why="$(tail -2 "$OUT/${prefix}$cmd.txt" | paste -sd' ') [$(bluez_probe)] [strapd: $(strapd_unanswered)]"
		cp "$OUT/${prefix}$cmd.txt" "$OUT/${prefix}$cmd.attempt$attempt.txt"
		[ $attempt = 1 ] && { first=$why; continue; }
		check "${prefix}$cmd" FAIL "attempt 1: $first; attempt 2: $why"
		return 1
	done
}

# stalled_pair ADDRESS NAME: the fake sensor NAME stops advertising (SIGUSR1: advertisement
# withdrawn, adapter off) just after strapd found it, as a strap walking out of range. The
# kernel's search for it has no time limit and bluetoothd's own is two minutes, during which
# its one management-command queue is held; `strapctl pair` must end by itself with strapd's
# cancel (org.bluez.Error.AuthenticationTimeout), and bluetoothd must be free again: the
# sensor, back (SIGUSR2), registers its advertising through that same queue, and the pairing
# that follows (daemon_pair_connect) needs it too.
stalled_pair() {
	local addr=$1 name=$2 pid t n=100
	pid=$(cat "$OUT/sensor-$name.pid")
	kill -USR1 "$pid"
	while ! grep -q '"event": "powered-off"' "$OUT/sensor-$name.log" && [ $n -gt 0 ]; do sleep 0.1; n=$((n - 1)); done
	t=$SECONDS
	if ctl pair "$addr" > "$OUT/stalled-pair.txt" 2>&1; then
		check stalled-pair FAIL "paired a sensor that was not advertising"
	elif grep -q AuthenticationTimeout "$OUT/stalled-pair.txt" && grep -q "cancelling it" "$STRAPD_LOG"; then
		check stalled-pair OK "ended by strapd's cancel after $((SECONDS - t)) s: $(tail -1 "$OUT/stalled-pair.txt")"
	else
		check stalled-pair FAIL "after $((SECONDS - t)) s: $(tail -2 "$OUT/stalled-pair.txt" | paste -sd' ') [$(bluez_probe)]"
	fi
	kill -USR2 "$pid"
}

# bluez_probe: whether bluetoothd answers D-Bus right now, and how fast.
bluez_probe() {
	local t0 t1
	t0=$(date +%s%N)
	if timeout 5 busctl --system --timeout=4 call org.bluez / org.freedesktop.DBus.ObjectManager GetManagedObjects > /dev/null 2>&1; then
		t1=$(date +%s%N); echo "bluetoothd answers D-Bus ($(((t1 - t0) / 1000000)) ms)"
	else
		echo "bluetoothd does NOT answer D-Bus within 4 s: a stuck bluetoothd, not strapd"
	fi
}

# strapd_unanswered: the last BlueZ call strapd logged as unanswered, if any.
strapd_unanswered() {
	{ cat "$OUT"/strapd*.log 2>/dev/null; journalctl -u strapd.service -o cat --no-pager 2>/dev/null; } |
		grep -a "unanswered for" | tail -1 | head -c 200
}

# device_prop ADDRESS PROP: "PROP: value" for the device as seen by any adapter (bluetoothctl info)
device_prop() { bluetoothctl info "$1" 2>/dev/null | grep -m1 "$2:" | sed 's/^[[:space:]]*//'; }

# store_dump FILE: every page of samples.anchored from anchor 0 (a reply is at most 2 MiB,
# so a long run takes several pages), one JSON reply per line.
store_dump() {
	local file=$1 anchor=0 next pages=0
	: > "$file"
	while [ $pages -lt 1000 ]; do
		ctl --json anchored --anchor "$anchor" --limit 5000 > "$file.page" 2>> "$OUT/anchored.err" || return 1
		cat "$file.page" >> "$file"
		next=$(python3 -c 'import json,sys; d=json.loads(open(sys.argv[1]).read().strip().splitlines()[-1]); print(d.get("result", d).get("anchor", 0))' "$file.page") || return 1
		[ "$next" = "$anchor" ] && break
		anchor=$next; pages=$((pages + 1))
	done
	rm -f "$file.page"
}

# sensor_store_check NAME ADDRESS [check_notify options...]: one of several Bumble sensors
# (its lines of $OUT/sensors.log) against the heart-rate samples stored for ADDRESS in
# $OUT/anchored.json (store_dump), exactly once and decoded; checks prefixed "NAME-".
sensor_store_check() {
	local name=$1 addr=$2
	shift 2
	grep "\"sensor\": \"$name\"" "$OUT/sensors.log" > "$OUT/sensor-$name.log"
	python3 "$PY/store_to_received.py" "$OUT/anchored.json" --device "$addr" > "$OUT/received-$name.jsonl"
	python3 "$PY/check_notify.py" --received "$OUT/received-$name.jsonl" --sensor "$OUT/sensor-$name.log" --uuids 2a37 \
		--prefix "$name-" --strapctl "$DECODER" --decode-cache "$DECODE_CACHE" --report "$OUT/notify-check-$name.json" \
		--checks "$OUT/checks.jsonl" "$@"
}

# store_check [check_notify options...]: dump the store, convert, run the exactly-once check.
store_check() {
	store_dump "$OUT/anchored.json" ||
		{ check store-read FAIL "strapctl --json anchored: $(tail -2 "$OUT/anchored.err")"; return 1; }
	python3 "$PY/store_to_received.py" "$OUT/anchored.json" > "$OUT/received.jsonl"
	# The store keeps decoded samples: one heartRate sample per 0x2A37 notification, matched
	# on its value; CSC/RSC samples are derived (rates need two packets) and are not 1:1.
	python3 "$PY/check_notify.py" --received "$OUT/received.jsonl" --strapctl "$DECODER" --decode-cache "$DECODE_CACHE" --uuids 2a37 \
		--report "$OUT/notify-check.json" --checks "$OUT/checks.jsonl" "$@"
	# The store keeps decoded samples (heart rate matched by value above); every raw
	# notification, of every characteristic, is in strapd's --record capture.
	if [ -s "$OUT/capture.jsonl" ]; then
		python3 "$PY/capture_to_received.py" "$OUT/capture.jsonl" > "$OUT/captured.jsonl"
		python3 "$PY/check_notify.py" --received "$OUT/captured.jsonl" --strapctl "$DECODER" --decode-cache "$DECODE_CACHE" --prefix capture- \
			--report "$OUT/capture-check.json" --checks "$OUT/checks.jsonl" "$@"
	fi
}
