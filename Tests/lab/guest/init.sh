#!/bin/bash
# Second-stage init of the strapd lab guest, read live from the host's Tests/lab (/lab).
# Kernel command line (set by run-lab.sh):
#   lab.scenario=NAME   runs /lab/guest/scenarios/NAME.sh
#   lab.timeout=SECS    limit for the scenario inside the guest (the host's limit is 30 s more)
#   lab.init=systemd    hand PID 1 to systemd, which runs the scenario as lab-scenario.service
#                       (scenarios whose name starts with "systemd-" or "daemon-systemd")
# Scenario arguments: /out/lab-args, one per line (written by run-lab.sh).
# Results go to /out (host folder, tag "labout"): scenario.log, exit-code, result.json
# (written by the scenario through lib.sh), dmesg.txt, guest-times.txt, logs, btmon trace.
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root LANG=C.UTF-8 PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1

O9P=trans=virtio,version=9p2000.L,msize=262144
SCENARIO='' TIMEOUT=300 INIT=script
for w in $(cat /proc/cmdline); do
	case $w in
	lab.scenario=*) SCENARIO=${w#lab.scenario=} ;;
	lab.timeout=*) TIMEOUT=${w#lab.timeout=} ;;
	lab.init=*) INIT=${w#lab.init=} ;;
	esac
done
up() { cut -d' ' -f1 /proc/uptime; }
# run-lab.sh -S: a read-write host folder kept across boots (a power-cut series keeps its
# reader's logs there). Probed quietly: most boots have none.
mount_state() {
	mkdir -p /state
	mount -t 9p -o "$O9P" labstate /state 2>/dev/null && echo "lab-init: state share at /state" || rmdir /state
}

if [ "$INIT" = systemd ] && [ "$$" = 1 ]; then
	# systemd as PID 1: it mounts /run, /dev/pts, ... itself. We only attach the result and
	# host shares (kept across the exec) and install the unit that runs the scenario.
	mount -t 9p -o "$O9P" labout /out || echo "lab-init: no labout share"
	mount -t 9p -o "$O9P,ro" labhost /host 2>/dev/null && echo "lab-init: host share at /host"
	mount_state
	echo "guest_uptime_at_init=$(up)" > /out/guest-times.txt
	echo "lab-init: handing PID 1 to systemd for scenario '$SCENARIO' (uptime $(up)s)"
	cat > /etc/systemd/system/lab-scenario.service <<UNIT
[Unit]
Description=strapd lab scenario $SCENARIO
Wants=dbus.socket
After=dbus.socket basic.target

[Service]
Type=oneshot
Environment=LAB_INIT=systemd PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1 HOME=/root LANG=C.UTF-8
ExecStart=/lab/guest/run-scenario.sh $SCENARIO $TIMEOUT
StandardOutput=journal+console
StandardError=journal+console
UNIT
	# Units a test VM never needs (no network, no real hardware, no logins).
	for u in getty.target systemd-networkd.service systemd-timesyncd.service apt-daily.timer \
		apt-daily-upgrade.timer e2scrub_all.timer fstrim.timer systemd-logind.service; do
		ln -sf /dev/null "/etc/systemd/system/$u"
	done
	exec /lib/systemd/systemd --unit=lab-scenario.service --log-level=notice \
		--show-status=false systemd.journald.forward_to_console=0
fi

mkdir -p /dev/pts /dev/shm
mount -t devpts devpts /dev/pts
mount -t tmpfs tmpfs /dev/shm
mount -t tmpfs tmpfs /run
mount -t tmpfs tmpfs /tmp
dmesg -n 1                                   # keep kernel chatter off the console
ip link set lo up 2>/dev/null
mount -t 9p -o "$O9P" labout /out || echo "lab-init: no labout share, results stay in the guest"
mount -t 9p -o "$O9P,ro" labhost /host 2>/dev/null && echo "lab-init: host share at /host"
mount_state
echo "guest_uptime_at_init=$(up)" > /out/guest-times.txt
exec /lab/guest/run-scenario.sh "$SCENARIO" "$TIMEOUT"
