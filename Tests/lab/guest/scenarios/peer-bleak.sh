# peer-bleak: strapd beside what users run today, a Python logger on bleak writing every
# notification to SQLite (guest/py/bleak_logger.py), on the same four Bumble sensors as
# daemon-four-sensors (s1 HR, s2 HR+CSC, s3 HR+RSC, s4 HR+CSC+RSC), in the same VM boot.
# One after the other, each for the same measured window, on the one adapter hci0:
#   1. strapd: scan/pair/connect through strapctl, a live.subscribe client (live_latency.py)
#      timestamps each heart-rate sample; procstat.py watches strapd for SECS; the sensors
#      pause; the store is read; strapd stops, its bonds are removed, the sensors' process ends.
#   2. the same four sensors in a new Bumble process (why: see below); bleak_logger.py finds,
#      connects and subscribes to the four
#      sensors itself, commits a row per notification and notes the time after each commit;
#      procstat.py watches it for SECS; the sensors pause; the logger stops.
# peer_report.py accounts for every notification on both sides and writes peer-table.md.
# Not at the same time: on 2 vCPUs under TCG two centrals would take CPU from each other and
# from the sensors, and the latencies would measure that contention. Not in selftest.sh's
# default list (CI); `make lab-peer` runs it (docs/benchmarks.md).
# Args: 1 measured seconds per side (default 90)  2 sensor interval (default 0.5)
#       3 record (default: strapd --record, every notification of every characteristic
#         accounted for) | norecord (strapd as installed, no raw capture: heart rate accounted
#         for through the store and the subscriber, CSC/RSC samples are derived, not 1:1)
#       4 seconds of the idle window per side (default 20): sensors paused, links up, reader on
#       5 strapd's notification path: empty for its default, acquire (AcquireNotify: a socket
#         per characteristic instead of a D-Bus message per notification) or notify
#       6 perf: profile each side over its window with `perf record -g` (an image built with
#         LAB_EXTRA_PKGS=linux-perf); the reports go to OUT/{strapd,logger}-perf*.txt. The
#         profiler's own cost lands in the measured CPU, so such a run gives the profile, not
#         the figures.
#       7 floor: during each side's window, dbus-floor (probe/dbus_floor.c, staged as
#         /host/dbus-floor) counts the same notifications' D-Bus signals and does nothing else;
#         its CPU per notification is what waking once per notification costs any process in
#         this VM (OUT/floor-{strapd,logger}.json, a row of the table). A third process on the
#         two vCPUs, so such a run is for the floor, not for comparisons with runs without it.
#         floor-io: dbus-floor --io, which also appends a record per notification to a file
#         beside strapd's store and writes a line to a reader: the floor of strapd's job.
# shellcheck source=../lib.sh
. /lab/guest/lib.sh
# shellcheck source=../daemon.sh
. /lab/guest/daemon.sh
SECS=${1:-90} INTERVAL=${2:-0.5} RECORD=${3:-record} IDLE=${4:-20} NOTIFY=${5:-} PROFILE=${6:-} FLOOR=${7:-}
[ "$NOTIFY" = default ] && NOTIFY=
if [ "$PROFILE" = perf ] && ! command -v perf > /dev/null; then
	skip "perf is not in the image (build it with LAB_EXTRA_PKGS=linux-perf)"
fi
# profile_start NAME PID [SECS HZ] / profile_end NAME: perf over the measured window (or SECS),
# reported in the guest (where the binaries and their symbols are).
profile_start() {
	[ "$PROFILE" = perf ] || return 0
	perf record -F "${4:-999}" -g -p "$2" -o "/tmp/$1.perf.data" -- sleep "${3:-$SECS}" > "$OUT/$1-perf-record.log" 2>&1 &
	PERF_PID=$!
}
profile_end() {
	[ "$PROFILE" = perf ] || return 0
	wait "$PERF_PID" 2>/dev/null
	perf report -i "/tmp/$1.perf.data" --stdio --no-children --sort dso,sym -g none > "$OUT/$1-perf-self.txt" 2>&1
	perf report -i "/tmp/$1.perf.data" --stdio --children --sort sym -g none > "$OUT/$1-perf-children.txt" 2>&1
	perf report -i "/tmp/$1.perf.data" --stdio --no-children --sort comm,dso -g none > "$OUT/$1-perf-dso.txt" 2>&1
}
# floor_start NAME / floor_end: dbus-floor beside one side's window (argument 7).
floor_start() {
	[ -n "$FLOOR" ] || return 0
	local io=()
	[ "$FLOOR" = floor-io ] && mkdir -p "/var/lib/dbus-floor-$1" && io=(--io "/var/lib/dbus-floor-$1")
	/host/dbus-floor "${io[@]}" > "/tmp/floor-$1.out" 2> "$OUT/floor-$1.err" &
	FLOOR_PID=$!
	FLOOR_NAME=$1
	python3 "$PY/procstat.py" "$FLOOR_PID" "$SECS" > "$OUT/floor-$1-stat.json" &
	FLOOR_STAT_PID=$!
}
floor_end() {
	[ -n "$FLOOR" ] || return 0
	wait "$FLOOR_STAT_PID" 2>/dev/null
	kill -TERM "$FLOOR_PID" 2>/dev/null
	wait "$FLOOR_PID" 2>/dev/null
	tail -1 "/tmp/floor-$FLOOR_NAME.out" > "$OUT/floor-$FLOOR_NAME.json"
}
daemon_require
[ -z "$FLOOR" ] || [ -x /host/dbus-floor ] || skip "no /host/dbus-floor (stage-binaries.sh builds it when cc is there)"
python3 -c 'import bleak' 2>/dev/null || skip "bleak is not installed in the image (image/pip-requirements.txt, LAB_PIP_PKGS)"
# Discovered devices stay known until paired (strapd's turn scans all four before pairing any).
sed -i 's/^#\?TemporaryTimeout = .*/TemporaryTimeout = 0/' /etc/bluetooth/main.conf
bumble_up "$OUT/sensors.log" /tmp/sensors.ready --interval "$INTERVAL" \
	--sensor s1=hr --sensor s2=hr,csc --sensor s3=hr,rsc --sensor s4=hr,csc,rsc
cp /tmp/sensors.ready "$OUT/sensors.ready"
declare -A ADDR
while read -r name addr; do ADDR[$name]=$addr; done < /tmp/sensors.ready
step "sensors: $(paste -sd' ' /tmp/sensors.ready)"
# stop_pid PID: SIGTERM, then up to 30 s for it to end (a zombie counts as ended), then SIGKILL.
stop_pid() {
	local n=60
	kill -TERM "$1" 2>/dev/null
	while [ $n -gt 0 ] && [ -e "/proc/$1" ] && [ "$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null)" != Z ]; do sleep 0.5; n=$((n - 1)); done
	kill -KILL "$1" 2>/dev/null
	wait "$1" 2>/dev/null
}

# 1. strapd. Its raw capture goes to the guest's RAM like its store (not to /out, a 9p share).
daemon_config hci0 "$NOTIFY"
REC=(--record /tmp/capture.jsonl)
[ "$RECORD" = norecord ] && REC=()
step "strapd on hci0 ${REC[*]}"
"$STRAPD" --config "$STRAPD_CONF" --state-dir "$STRAPD_STATE" --socket "$STRAPD_SOCKET" \
	--set daemon.socket_group= "${REC[@]}" >> "$STRAPD_LOG" 2>&1 &
STRAPD_PID=$!
LAB_PIDS+=("$STRAPD_PID")
n=300
while [ ! -S "$STRAPD_SOCKET" ] && [ $n -gt 0 ]; do sleep 0.1; n=$((n - 1)); done
kill -0 "$STRAPD_PID" 2>/dev/null && [ -S "$STRAPD_SOCKET" ] ||
	{ check strapd-running FAIL "no socket after 30 s; $(tail -3 "$STRAPD_LOG")"; exit 1; }
check strapd-running OK "pid $STRAPD_PID"
spawn "$OUT/live.log" python3 "$PY/live_latency.py" --socket "$STRAPD_SOCKET" --out /tmp/live.jsonl --ready-file /tmp/live.ready
LIVE_PID=${LAB_PIDS[-1]}
wait_file /tmp/live.ready 30 || { check live-subscribed FAIL "$(tail -3 "$OUT/live.log")"; exit 1; }
# All four scanned before any is paired: scanning once some links were up found nothing at all
# for 60 s in one run (no LE Set Scan Enable in btmon: the kernel did not scan), the same
# failure as daemon-four-sensors' s4-scan once in CI. Then pair + connect each (daemon.sh).
for i in 1 2 3 4; do
	t=$SECONDS
	if ctl --json scan --until "${ADDR[s$i]}" --timeout 60 > "$OUT/s$i-scan.json" 2>&1; then
		check "s$i-scan" OK "found ${ADDR[s$i]} in $((SECONDS - t)) s"
	else
		check "s$i-scan" FAIL "strapctl scan --until ${ADDR[s$i]}: $(tail -c 300 "$OUT/s$i-scan.json")"; exit 1
	fi
done
for i in 1 2 3 4; do
	attach_step pair "${ADDR[s$i]}" "s$i-" && attach_step connect "${ADDR[s$i]}" "s$i-" || exit 1
done
step "strapd's turn: measuring ${SECS}s"
profile_start strapd "$STRAPD_PID"
floor_start strapd
python3 "$PY/procstat.py" "$STRAPD_PID" "$SECS" > "$OUT/strapd-stat.json"
python3 "$PY/residency.py" "$STRAPD_PID" > "$OUT/strapd-residency.json" || true   # what the RSS is made of
floor_end
profile_end strapd
kill -USR1 "$BUMBLE_PID"; sleep 3            # the sensors pause; strapd flushes its capture every 2 s
profile_start strapd-idle "$STRAPD_PID" "$IDLE" 4999  # a few hundredths of a second of CPU: sampled often
python3 "$PY/procstat.py" "$STRAPD_PID" "$IDLE" > "$OUT/strapd-idle.json"   # the same, nothing to receive
profile_end strapd-idle
stop_pid "$LIVE_PID"
cp /tmp/live.jsonl "$OUT/live.jsonl"
store_dump "$OUT/anchored.json" || { check store-read FAIL "$(tail -2 "$OUT/anchored.err")"; exit 1; }
python3 "$PY/store_to_received.py" "$OUT/anchored.json" > "$OUT/received-store.jsonl"
stop_pid "$STRAPD_PID"
[ -e /tmp/capture.jsonl ] && cp /tmp/capture.jsonl "$OUT/capture.jsonl"

# Between the turns: fresh sensors. Once strapd had them, BlueZ's Disconnect (MGMT Disconnect,
# "Success") sent no HCI Disconnect to the Bumble adapter, so the sensors never saw the link
# drop and never advertised again: bleak could not find them. So strapd's bonds are removed
# from bluetoothd, the Bumble process (adapter and sensors) ends, and a new one with the same
# four sensors, addresses and rate comes up: a new hci adapter, no bond on either side.
for i in 1 2 3 4; do bluetoothctl remove "${ADDR[s$i]}" >> "$OUT/remove.log" 2>&1; done
stop_pid "$BUMBLE_PID"
wait_adapters_gone() { local n=100; while [ "$(dbus_adapters)" -gt 0 ] && [ $n -gt 0 ]; do sleep 0.2; n=$((n - 1)); done; }
wait_adapters_gone
spawn "$OUT/sensors-b.log" python3 "$PY/bumble_sensor.py" --ready-file /tmp/sensors-b.ready --interval "$INTERVAL" \
	--sensor s1=hr --sensor s2=hr,csc --sensor s3=hr,rsc --sensor s4=hr,csc,rsc
BUMBLE_PID=${LAB_PIDS[-1]}
wait_file /tmp/sensors-b.ready 120 && wait_adapters 1 30 ||
	{ check sensors-again FAIL "second Bumble process not ready; $(tail -3 "$OUT/sensors-b.log")"; exit 1; }
ADAPTER=$(ls /sys/class/bluetooth | head -1)

# 2. the bleak logger, its database in RAM too.
step "bleak logger on $ADAPTER"
mkdir -p /var/lib/peer
spawn "$OUT/logger.log" python3 "$PY/bleak_logger.py" --db /var/lib/peer/logger.sqlite --adapter "$ADAPTER" \
	--ready-file /tmp/logger.ready --latency-log /tmp/logger-latency.jsonl \
	"${ADDR[s1]}" "${ADDR[s2]}" "${ADDR[s3]}" "${ADDR[s4]}"
LOGGER_PID=${LAB_PIDS[-1]}
t=$SECONDS
while [ ! -e /tmp/logger.ready ] && kill -0 "$LOGGER_PID" 2>/dev/null && [ $((SECONDS - t)) -lt 300 ]; do sleep 0.5; done
[ -e /tmp/logger.ready ] || { check logger-subscribed FAIL "$(tail -5 "$OUT/logger.log")"; exit 1; }
check logger-subscribed OK "4 sensors in $((SECONDS - t)) s"
step "the logger's turn: measuring ${SECS}s"
profile_start logger "$LOGGER_PID"
floor_start logger
python3 "$PY/procstat.py" "$LOGGER_PID" "$SECS" > "$OUT/logger-stat.json"
python3 "$PY/residency.py" "$LOGGER_PID" > "$OUT/logger-residency.json" || true
floor_end
profile_end logger
kill -USR1 "$BUMBLE_PID"; sleep 3
python3 "$PY/procstat.py" "$LOGGER_PID" "$IDLE" > "$OUT/logger-idle.json"
stop_pid "$LOGGER_PID"
cp /var/lib/peer/logger.sqlite "$OUT/logger.sqlite"
cp /tmp/logger-latency.jsonl "$OUT/logger-latency.jsonl"

python3 "$PY/peer_report.py" --sensors "$OUT/sensors.log" --sensors-b "$OUT/sensors-b.log" --ready "$OUT/sensors.ready" --dir "$OUT"
