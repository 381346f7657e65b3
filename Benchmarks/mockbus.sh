# Sourced by the host benchmarks that run strapd or a peer against the test suite's mock
# bluetoothd (Tests/Fixtures/mockbluez) on a private bus, without a Bluetooth controller.
#
#   runtime PID / threads PID  the run time in ns of all PID's threads (schedstat: exact, where
#                              utime+stime are 10 ms ticks) and their ids: a thread that ends
#                              in a window takes its share with it, so compare the ids too
#   strapd_events DIR CTL      the pipeline events of the strapd on DIR/s.sock so far
#   mockbus_start DIR          a dbus-daemon listening in DIR; sets MOCKBUS (its address)
#   mockbluez_start DIR HZ KNOWN [NAME]
#                              the mock with four sensors (hr, hr, csc, rsc) notifying HZ times
#                              a second each; KNOWN true: bluetoothd has them cached at start,
#                              false: only discovery finds them. Sets MOCKBLUEZ (its pid).
# Both append their pids to the caller's pids array (its cleanup kills them).
runtime() { cat /proc/"$1"/task/*/schedstat | awk '{s += $1} END{printf "%d", s}'; }
threads() { ls /proc/"$1"/task | sort | tr '\n' ' '; }
strapd_events() { "$2" --socket "$1/s.sock" status | awk '/pipeline:/{print $5}'; }
mockbus_start() {
	sed "s|LISTEN_DIR|$1|" "$repo/Tests/Fixtures/mockbluez/bus.conf" > "$1/bus.conf"
	dbus-daemon --config-file="$1/bus.conf" --nofork --nopidfile --nosyslog --print-address=1 > "$1/address" 2>/dev/null &
	pids+=($!)
	for _ in $(seq 100); do [ -s "$1/address" ] && break; sleep 0.05; done
	MOCKBUS=$(head -1 "$1/address")
}
mockbluez_start() {
	local dir=$1 hz=$2 known=$3 name=${4:-mock} sensors="" n kind
	for n in 1 2 3 4; do
		kind=$(echo "hr hr csc rsc" | cut -d' ' -f$n)
		sensors="$sensors${sensors:+,}{\"address\":\"C0:00:00:00:00:0$n\",\"kind\":\"$kind\",\"hz\":$hz}"
	done
	echo "{\"streaming\":true,\"known\":$known,\"adapters\":[\"hci0\"],\"sensors\":[$sensors]}" > "$dir/$name.json"
	DBUS_SYSTEM_BUS_ADDRESS=$MOCKBUS /usr/bin/python3 -u "$repo/Tests/Fixtures/mockbluez/mockbluez.py" \
		--config "$dir/$name.json" --state "$dir/$name-state.json" > "$dir/$name.log" 2>&1 &
	MOCKBLUEZ=$!
	pids+=($MOCKBLUEZ)
	for _ in $(seq 200); do grep -q ready "$dir/$name.log" && break; sleep 0.05; done
}
# strapd_streaming DIR STATE_DIR STRAPD STRAPCTL [ARGS...]: strapd in BlueZ mode on MOCKBUS
# (socket DIR/s.sock, store in STATE_DIR, extra ARGS), its four sensors paired and connected
# through strapctl and one `strapctl live` subscriber on it. Sets STRAPD_PID.
strapd_streaming() {
	local dir=$1 state=$2 daemon=$3 ctl=$4 n
	shift 4
	printf '[daemon]\nstate_dir = %s\nsocket = %s/s.sock\nsocket_group =\n[bluetooth]\npair_agent = yes\n' "$state" "$dir" > "$dir/strapd.conf"
	DBUS_SYSTEM_BUS_ADDRESS=$MOCKBUS "$daemon" --config "$dir/strapd.conf" "$@" > "$dir/strapd.log" 2>&1 &
	STRAPD_PID=$!
	pids+=($STRAPD_PID)
	for _ in $(seq 1800); do [ -S "$dir/s.sock" ] && break; sleep 0.05; done   # 90 s: a slow strapd (valgrind on a loaded machine)
	# strapd sees org.bluez on the bus a moment after its socket is up (longer under valgrind).
	for _ in $(seq 60); do "$ctl" --socket "$dir/s.sock" pair "C0:00:00:00:00:01" > /dev/null 2>&1 && break; sleep 0.5; done
	for n in 1 2 3 4; do
		"$ctl" --socket "$dir/s.sock" pair "C0:00:00:00:00:0$n" > /dev/null
		"$ctl" --socket "$dir/s.sock" connect "C0:00:00:00:00:0$n" > /dev/null
	done
	"$ctl" --socket "$dir/s.sock" live > /dev/null 2>&1 &
	pids+=($!)
}
