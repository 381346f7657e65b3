# powercut: one boot of a power-cut series (Tests/lab/powercut.sh on the host boots this again
# and again on the same virtual disk). The store lives on its own ext4 disk (/dev/vda); the
# reader's log lives on the host (/state, 9p), like a reader on another machine.
#   boot I > 1  judges cut I-1: store_scan.py reads the segments as the cut left them, strapd
#               opens the store with nothing recording, powercut.py check compares it with what
#               the reader was given and what the live subscriber saw (check.json in /state/cut-N)
#   boot I ≤ N  records: strapd on the simulator (4 sensors at 10× real time, sync = MODE), an
#               anchored follower and a live subscriber (powercut.py follow); after a random 3–10 s
#               the guest is cut with `echo b > /proc/sysrq-trigger`: an immediate reset, no sync,
#               no unmount, so whatever the guest kernel had not written to the disk is gone, as
#               when the plug is pulled (qemu runs with -no-reboot, so the reset ends the VM).
# Args: MODE (always|interval|none)  I (this boot, from 1)  N (cuts in the series)  [SLACK seconds]
# shellcheck source=../lib.sh
. /lab/guest/lib.sh
# shellcheck source=../daemon.sh
. /lab/guest/daemon.sh
MODE=${1:?mode} I=${2:?boot} N=${3:?cuts} SLACK=${4:-1.0}
daemon_require
[ -d /state ] || { check state-share FAIL "no /state share (run-lab.sh -S)"; exit 1; }
SOCK=/run/strapd/strapd.sock STORE_DISK=/dev/vda MNT=/mnt/disk
mkdir -p /run/strapd "$MNT"

modprobe virtio_blk 2>/dev/null; modprobe ext4 2>/dev/null
n=50; while [ ! -b $STORE_DISK ] && [ $n -gt 0 ]; do sleep 0.1; n=$((n - 1)); done
[ -b $STORE_DISK ] || { check disk-ready FAIL "no $STORE_DISK (run-lab.sh -D; virtio_blk in the image?)"; exit 1; }
if [ "$I" = 1 ]; then
	mkfs.ext4 -q -F $STORE_DISK || { check disk-ready FAIL "mkfs.ext4 failed"; exit 1; }
fi
# Mounting replays ext4's journal after a cut, as a real boot does; the defaults (data=ordered,
# barriers on) are what a Raspberry Pi or a laptop runs.
mount -t ext4 $STORE_DISK "$MNT" || { check disk-ready FAIL "mount $STORE_DISK failed"; exit 1; }
check disk-ready OK "$STORE_DISK on $MNT ($(findmnt -no OPTIONS "$MNT"))"
STATE=$MNT/strapd

# strapd_up LOG [ARGS...]: strapd on the disk's store in sync mode MODE; sets SPID.
strapd_up() {
	local log=$1; shift
	rm -f $SOCK
	"$STRAPD" --state-dir "$STATE" --socket $SOCK --set daemon.socket_group= --set store.sync="$MODE" \
		--log-level info "$@" >> "$log" 2>&1 &
	SPID=$!
	LAB_PIDS+=("$SPID")
	local n=300
	while [ ! -S $SOCK ] && [ $n -gt 0 ] && kill -0 $SPID 2>/dev/null; do sleep 0.1; n=$((n - 1)); done
	[ -S $SOCK ] && kill -0 $SPID 2>/dev/null
}
strapd_down() { kill -TERM "$SPID" 2>/dev/null; wait "$SPID" 2>/dev/null; }

START=0
if [ "$I" -gt 1 ]; then
	CUT=/state/cut-$((I - 1))
	step "judging cut $((I - 1)) of $N (sync = $MODE)"
	python3 "$PY/store_scan.py" "$STATE/store" --out "$CUT/scan-before.json"
	if strapd_up "$CUT/strapd-after.log"; then
		check store-opens OK "$(grep -m1 'listening' "$CUT/strapd-after.log" | sed 's/.*listening/listening/')"
	else
		check store-opens FAIL "$(tail -3 "$CUT/strapd-after.log")"; exit 1
	fi
	python3 "$PY/store_scan.py" "$STATE/store" --out "$CUT/scan-after.json"
	python3 "$PY/powercut.py" check --socket $SOCK --dir "$CUT" --mode "$MODE" \
		--before "$CUT/scan-before.json" --after "$CUT/scan-after.json" --slack "$SLACK" > "$CUT/check.out" 2>&1
	python3 - "$CUT/check.json" "$CUT/strapd-after.log" <<'EOF' | while read -r name ok detail; do check "$name" "$ok" "$detail"; done
import json, sys
r = json.load(open(sys.argv[1]))
log = open(sys.argv[2]).read()
for name, ok in r['verdict'].items():
    print(name, 'OK' if ok else 'FAIL', json.dumps({k: r[k] for k in ('given', 'givenMissing', 'givenChanged', 'readerLast',
          'latest', 'aheadReply', 'servedOutsideIntact', 'tornBefore', 'lost', 'lossWindow', 'lossBound')}))
# a tail the cut tore must have been cut off by strapd, and said so
torn = bool(r['tornBefore'])
print('torn-tail-reported', 'OK' if (not torn or 'tail truncated' in log) else 'FAIL', 'torn' if torn else 'clean')
EOF
	[ -s "$CUT/check.json" ] || check judged FAIL "$(tail -5 "$CUT/check.out")"
	START=$(python3 -c 'import json,sys; print(max(json.load(open(sys.argv[1]))["latest"], 0))' "$CUT/check.json" 2>/dev/null || echo 0)
	strapd_down
fi
if [ "$I" -gt "$N" ]; then
	step "series done"
	exit 0
fi

CUT=/state/cut-$I
mkdir -p "$CUT"
echo "$START" > "$CUT/start"
step "recording for cut $I of $N (sync = $MODE) from anchor $START"
strapd_up "$OUT/strapd.log" --simulate=4 --simulate-speed 10 ||
	{ check strapd-running FAIL "$(tail -3 "$OUT/strapd.log")"; exit 1; }
check strapd-running OK "pid $SPID, simulator 4 sensors at 10x"
START_MONO=$(python3 -c 'import time; print(time.monotonic())')
spawn "$OUT/reader.log" python3 "$PY/powercut.py" follow --socket $SOCK --anchor "$START" --dir "$CUT"
wait_file "$CUT/following" 30 || { check reader-following FAIL "$(tail -3 "$OUT/reader.log")"; exit 1; }
check reader-following OK "from anchor $START"
DELAY=$((3 + RANDOM % 8))
sleep "$DELAY"
check cut OK "after ${DELAY}s, $(wc -l < "$CUT/given.jsonl") items given so far"
# The result must reach the host before the power goes: the EXIT trap never runs after this.
trap - EXIT
write_result 0
echo 0 > "$OUT/exit-code"
# One process notes the time (on the host, flushed) and pulls the plug a few microseconds
# later, so that loss windows are measured against the moment of the cut.
exec python3 -c 'import json, os, sys, time
with open(sys.argv[1], "w") as f:
    f.write(json.dumps({"mono": time.monotonic(), "wall": time.time(), "startMono": float(sys.argv[2]), "delay": int(sys.argv[3])}) + "\n")
    f.flush()
with open("/proc/sysrq-trigger", "w") as t:
    t.write("b")
time.sleep(30)' "$CUT/cut.json" "$START_MONO" "$DELAY"
