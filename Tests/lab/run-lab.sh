#!/bin/bash
# Boot the lab guest once, run one scenario inside it, collect the results, check them, power off.
#
#   run-lab.sh [-o OUTDIR] [-t SECS] [-H HOSTDIR] [-D DISK] [-S STATEDIR] [-A auto|kvm|tcg] SCENARIO [ARGS...]
#
#   SCENARIO  guest/scenarios/SCENARIO.sh; ARGS are passed to it unchanged
#   -o  host folder for the results (default $LAB_CACHE/out/SCENARIO; an earlier result
#       folder is replaced, any other non-empty folder is refused)
#   -t  hard limit for the whole VM in seconds (default 600; the guest gets 30 s less, so it
#       still reports; qemu is killed at the limit)
#   -H  host folder shared read-only at /host in the guest (static strapctl/strapd builds)
#   -D  a raw disk image attached as the guest's /dev/vda (virtio, the host's page cache
#       behind it: what the guest wrote to it survives the guest, what it had not does not)
#   -S  host folder shared read-write at /state: kept across boots, e.g. of a power-cut series
#   -A  accelerator (default auto: KVM only with a hardware kvm_intel/kvm_amd, else TCG)
#
# Scenarios whose name starts with "systemd-" or is "daemon-systemd" boot with systemd as PID 1.
# After the VM, check-result.py asserts on OUTDIR/result.json (written in the guest).
# Exit code: 0 passed, 77 skipped, 124 the VM hit the hard limit, 125 setup error,
# anything else failed (the scenario's exit code, or 1 when the host check failed).
set -uo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
LAB_CACHE=${LAB_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/strapd-lab}
OUT='' LIMIT=600 HOSTDIR='' DISK='' STATEDIR='' ACCEL=${LAB_ACCEL:-auto}
MEM=${LAB_MEM:-2048} SMP=${LAB_SMP:-2}
usage() { sed -n '2,20p' "$0"; exit 125; }
while getopts "o:t:H:D:S:A:h" o; do
	case $o in
	o) OUT=$OPTARG ;; t) LIMIT=$OPTARG ;; H) HOSTDIR=$OPTARG ;; A) ACCEL=$OPTARG ;;
	D) DISK=$OPTARG ;; S) STATEDIR=$OPTARG ;;
	*) usage ;;
	esac
done
shift $((OPTIND - 1))
[ $# -ge 1 ] || usage
SCENARIO=$1; shift
OUT=${OUT:-$LAB_CACHE/out/$SCENARIO}

# shellcheck source=lock.sh
. "$HERE/lock.sh"
lab_lock || exit 125
for f in vmlinuz initrd.img; do
	[ -f "$LAB_CACHE/$f" ] || { echo "run-lab: $LAB_CACHE/$f missing; run Tests/lab/build-image.sh first" >&2; exit 125; }
done
[ -f "$HERE/guest/scenarios/$SCENARIO.sh" ] || { echo "run-lab: no scenario $SCENARIO (ls $HERE/guest/scenarios)" >&2; exit 125; }
command -v qemu-system-x86_64 >/dev/null || { echo "run-lab: qemu-system-x86_64 missing (apt-get install qemu-system-x86)" >&2; exit 125; }

if [ "$ACCEL" = auto ]; then
	# A /dev/kvm backed by a non-hardware module (kvm_pvm in nested sandboxes) boots an
	# unmodified kernel far slower than TCG (or not at all), so only trust kvm_intel/kvm_amd.
	ACCEL=tcg
	if [ -w /dev/kvm ] && { [ -d /sys/module/kvm_intel ] || [ -d /sys/module/kvm_amd ]; }; then ACCEL=kvm; fi
fi
case $ACCEL in
kvm) ACCEL_OPTS=(-accel kvm -cpu host) ;;
tcg) ACCEL_OPTS=(-accel tcg,thread=multi,tb-size=512 -cpu max) ;;
*) echo "run-lab: bad accelerator $ACCEL" >&2; exit 125 ;;
esac

if [ -d "$OUT" ] && [ -n "$(ls -A "$OUT")" ]; then
	[ -f "$OUT/lab-args" ] || { echo "run-lab: $OUT is not empty and not a lab result folder" >&2; exit 125; }
	rm -rf "$OUT"
fi
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
printf '%s\n' "$@" > "$OUT/lab-args"
SHARES=(-virtfs "local,path=$HERE,mount_tag=labscripts,security_model=none,readonly=on"
	-virtfs "local,path=$OUT,mount_tag=labout,security_model=none")
if [ -n "$HOSTDIR" ]; then
	[ -d "$HOSTDIR" ] || { echo "run-lab: -H $HOSTDIR is not a folder" >&2; exit 125; }
	SHARES+=(-virtfs "local,path=$(cd "$HOSTDIR" && pwd),mount_tag=labhost,security_model=none,readonly=on")
fi
if [ -n "$STATEDIR" ]; then
	[ -d "$STATEDIR" ] || { echo "run-lab: -S $STATEDIR is not a folder" >&2; exit 125; }
	SHARES+=(-virtfs "local,path=$(cd "$STATEDIR" && pwd),mount_tag=labstate,security_model=none")
fi
DRIVES=()
if [ -n "$DISK" ]; then
	[ -f "$DISK" ] || { echo "run-lab: -D $DISK is not a file" >&2; exit 125; }
	DRIVES=(-drive "file=$DISK,format=raw,if=virtio,cache=writeback")
fi
GUEST_LIMIT=$((LIMIT > 60 ? LIMIT - 30 : LIMIT))
INIT=script
case $SCENARIO in systemd-* | daemon-systemd) INIT=systemd ;; esac

echo "run-lab: scenario=$SCENARIO init=$INIT accel=$ACCEL limit=${LIMIT}s out=$OUT"
T0=$(date +%s.%N)
timeout -k 10 "$LIMIT" qemu-system-x86_64 \
	"${ACCEL_OPTS[@]}" -machine q35 -smp "$SMP" -m "$MEM" \
	-kernel "$LAB_CACHE/vmlinuz" -initrd "$LAB_CACHE/initrd.img" \
	-append "console=ttyS0 panic=-1 quiet lab.scenario=$SCENARIO lab.timeout=$GUEST_LIMIT lab.init=$INIT" \
	"${SHARES[@]}" "${DRIVES[@]}" \
	-nic none -display none -monitor none -serial stdio -no-reboot \
	< /dev/null 2>&1 | tee "$OUT/console.log"
QRC=${PIPESTATUS[0]}
WALL=$(echo "$(date +%s.%N) $T0" | awk '{printf "%.1f", $1 - $2}')
echo "host_wall_seconds=$WALL accel=$ACCEL init=$INIT qemu_rc=$QRC" >> "$OUT/guest-times.txt"

if [ "$QRC" = 124 ] || [ "$QRC" = 137 ]; then
	echo "run-lab: VM killed after ${LIMIT}s (hard limit); partial results in $OUT"; exit 124
fi
RC=$(cat "$OUT/exit-code" 2>/dev/null || echo 125)
python3 "$HERE/check-result.py" "$OUT" "$SCENARIO"
CRC=$?
echo "run-lab: scenario $SCENARIO guest exit $RC, host check exit $CRC, VM wall time ${WALL}s, results in $OUT"
[ "$CRC" = 0 ] && exit 0
[ "$CRC" = 77 ] && exit 77
[ "$RC" != 0 ] && [ "$RC" != 77 ] && exit "$RC"
exit 1
