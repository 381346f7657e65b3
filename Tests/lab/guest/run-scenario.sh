#!/bin/bash
# Runs one scenario with a time limit, records its exit code and powers the guest off.
# Called by init.sh (script init) or by lab-scenario.service (systemd as PID 1).
#   run-scenario.sh NAME TIMEOUT     arguments from /out/lab-args
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root LANG=C.UTF-8 PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1
SCENARIO=$1 TIMEOUT=$2 ARGS=()
[ -s /out/lab-args ] && mapfile -t ARGS < /out/lab-args
up() { cut -d' ' -f1 /proc/uptime; }
echo "lab-init: kernel $(uname -r), PID 1 $(cat /proc/1/comm), scenario '$SCENARIO' ${ARGS[*]}, timeout ${TIMEOUT}s, uptime $(up)s"
echo "lab-init: cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-) x$(nproc), mem $(free -m | awk '/Mem:/{print $2}')MiB"

SCRIPT=/lab/guest/scenarios/$SCENARIO.sh
rc=127
if [ -n "$SCENARIO" ] && [ -f "$SCRIPT" ]; then
	cd /tmp || exit 1
	LAB_SCENARIO=$SCENARIO timeout -k 5 "$TIMEOUT" bash "$SCRIPT" "${ARGS[@]}" 2>&1 | tee /out/scenario.log
	rc=${PIPESTATUS[0]}
	[ "$rc" = 124 ] && echo "lab-init: scenario timed out after ${TIMEOUT}s (guest limit)"
else
	echo "lab-init: no such scenario: '$SCENARIO' (see /lab/guest/scenarios)"
fi
echo "guest_uptime_at_end=$(up)" >> /out/guest-times.txt
echo "$rc" > /out/exit-code
dmesg > /out/dmesg.txt 2>/dev/null
[ "$(cat /proc/1/comm)" = systemd ] && journalctl -b --no-pager -o short-monotonic > /out/journal.txt 2>/dev/null
echo "lab-init: scenario exit code $rc, uptime $(up)s, powering off"
sync
umount /out 2>/dev/null
echo o > /proc/sysrq-trigger
sleep 30
