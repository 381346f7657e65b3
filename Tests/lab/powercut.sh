#!/bin/bash
# Power cuts: for each sync mode, a series of boots of the lab guest on one virtual disk that
# holds the store (guest/scenarios/powercut.sh): boot 1 formats it and records, boots 2..N each
# judge the previous cut and record again, boot N+1 judges the last cut. Each recording boot
# ends with the guest reset without sync (sysrq b), so the guest's unwritten page cache is lost
# as in a power failure.
#
#   powercut.sh [-n CUTS] [-m "always interval none"] [-H HOSTDIR] [-s SLACK] OUTDIR
#
# Results: OUTDIR/MODE/boot-I (run-lab.sh result folders), OUTDIR/MODE/state/cut-I (the
# reader's logs and check.json), OUTDIR/powercut-table.md (powercut_report.py).
# Exit 0 when every boot passed and the report holds (see powercut_report.py), 1 otherwise,
# 125 setup error. Needs root and the lab image (selftest.sh builds it; make lab-powercut).
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
CUTS=3 MODES="always interval none" HOSTDIR=${LAB_HOSTDIR:-$HERE/../../.build/lab-host} SLACK=1.0
while getopts "n:m:H:s:h" o; do
	case $o in
	n) CUTS=$OPTARG ;; m) MODES=$OPTARG ;; H) HOSTDIR=$OPTARG ;; s) SLACK=$OPTARG ;;
	*) sed -n '2,14p' "$0"; exit 125 ;;
	esac
done
shift $((OPTIND - 1))
[ $# = 1 ] || { sed -n '2,14p' "$0"; exit 125; }
OUT=$1
[ -x "$HOSTDIR/strapd" ] || { echo "powercut: no staged strapd in $HOSTDIR (Tests/lab/stage-binaries.sh)" >&2; exit 125; }
rm -rf "$OUT"
mkdir -p "$OUT"
fails=0
for mode in $MODES; do
	mkdir -p "$OUT/$mode/state"
	disk=$OUT/$mode/disk.img
	truncate -s 512M "$disk"
	for ((i = 1; i <= CUTS + 1; i++)); do
		t=$SECONDS
		"$HERE/run-lab.sh" -o "$OUT/$mode/boot-$i" -t 240 -H "$HOSTDIR" -D "$disk" -S "$OUT/$mode/state" \
			powercut "$mode" "$i" "$CUTS" "$SLACK" > "$OUT/$mode/boot-$i.txt" 2>&1 < /dev/null
		rc=$?
		r=PASS
		[ $rc = 0 ] || { r="FAIL (exit $rc)"; fails=$((fails + 1)); }
		printf 'powercut: %-8s boot %2d/%d  %-14s %4ss  %s\n' "$mode" "$i" "$((CUTS + 1))" "$r" "$((SECONDS - t))" "$OUT/$mode/boot-$i.txt"
		[ $rc = 0 ] || grep -E 'check-result: FAIL' "$OUT/$mode/boot-$i.txt" | head -5 | sed 's/^/powercut:     /'
	done
	rm -f "$disk"   # 512 MiB sparse each; the judgement is in state/
done
python3 "$HERE/powercut_report.py" "$OUT" $MODES > "$OUT/powercut-table.md"
rrc=$?
cat "$OUT/powercut-table.md"
[ $fails = 0 ] && [ $rrc = 0 ]
