# daemon-systemd: systemd is PID 1 (run-lab.sh boots daemon-systemd that way). The project's
# own units, as installed by `make install` on the host into DESTDIR=<host dir>/root, are
# copied into the guest: strapd.socket is started, the first strapctl call activates
# strapd.service (Type=notify: active only after READY=1), then the usual pair/connect/
# stream and the exactly-once store check. strapd must keep feeding systemd's watchdog
# (WatchdogSec= in the unit), a user in group strapd reads the store through the 0660
# socket ([access] read = group:strapd), a user outside it is refused (exit 4). Up to the
# sensor's end, strapd's journal holds no warning at all.
# bluetoothd runs as Debian's bluetooth.service; dbus comes from dbus.socket.
# With "deb" as the second argument strapd comes from its Debian package instead: the .deb
# stage-binaries.sh put in /host/deb is installed with dpkg -i (no build tool in the guest) and
# everything after is the same scenario on the package's files (docs/packaging.md).
# Args: 1 seconds of streaming (default 10), 2 install|deb (default install)
# Skips (77) until strapd exists. Assumed CLI: guest/daemon.sh.
# shellcheck source=../lib.sh
. /lab/guest/lib.sh
# shellcheck source=../daemon.sh
. /lab/guest/daemon.sh
SECS=${1:-10}
FROM=${2:-install}
daemon_require
check pid1-systemd "$([ "$(cat /proc/1/comm)" = systemd ] && echo OK || echo FAIL)" "PID 1 is $(cat /proc/1/comm)"
if [ "$FROM" = deb ]; then
	deb=$(ls /host/deb/strapd_*.deb 2>/dev/null | head -1)
	[ -n "$deb" ] || { check package-installed FAIL "no /host/deb/strapd_*.deb (stage-binaries.sh stages it)"; exit 1; }
	# policy-rc.d is Debian's switch for "install, do not start": the postinst still creates
	# the user and the state directory and enables the units, and the lab's configuration and
	# adapters are in place before strapd first starts, as in the make-install variant.
	printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d; chmod 0755 /usr/sbin/policy-rc.d
	dpkg -i "$deb" > "$OUT/dpkg.log" 2>&1; drc=$?
	rm -f /usr/sbin/policy-rc.d
	status=$(dpkg-query -W -f='${Version} ${db:Status-Abbrev}' strapd 2>&1)
	check package-installed "$([ $drc = 0 ] && case $status in *' ii '*) true ;; *) false ;; esac && echo OK || echo FAIL)" \
		"dpkg -i $(basename "$deb"): exit $drc, $status; $(tail -n 2 "$OUT/dpkg.log" | paste -sd'|' | head -c 200)"
	enabled=$(systemctl is-enabled strapd.service strapd.socket 2>&1 | paste -sd' ')
	check package-enabled "$([ "$enabled" = "enabled enabled" ] && echo OK || echo FAIL)" "strapd.service, strapd.socket: $enabled"
	state=$(stat -c '%U:%G %a' /var/lib/strapd 2>&1)
	conffiles=$(dpkg-query -W -f='${Conffiles}' strapd | awk '{print $1}' | paste -sd' ')
	check package-user-and-state "$(getent passwd strapd > /dev/null && [ "$state" = "strapd:strapd 750" ] &&
		[ "$conffiles" = /etc/strapd/strapd.conf ] && echo OK || echo FAIL)" \
		"user: $(getent passwd strapd | cut -d: -f1,6), /var/lib/strapd: $state, conffiles: $conffiles"
	# The checks run the packaged strapctl too.
	STRAPCTL=/usr/bin/strapctl DECODER=/usr/bin/strapctl
else
	[ -d /host/root ] || { check units-installed FAIL "no /host/root: the host runs make install DESTDIR=<host dir>/root (selftest.sh does)"; exit 1; }
	cp -a /host/root/. /
	systemd-sysusers >/dev/null 2>&1
	systemctl daemon-reload
fi
units=$(systemctl list-unit-files 'strapd*' --no-legend | awk '{print $1}' | paste -sd' ')
case $units in
*strapd.service*strapd.socket* | *strapd.socket*strapd.service*) check units-installed OK "$units" ;;
*) check units-installed FAIL "found: ${units:-none}"; exit 1 ;;
esac
# Configuration and users before any adapter exists: udev/60-strapd.rules starts strapd as
# soon as one appears, and strapd reads both when it starts.
daemon_config hci1
printf '[access]\nread = group:strapd\n' >> "$STRAPD_CONF"
useradd -M -N -G strapd labreader; useradd -M -N labother
stack_up 2 $DAEMON_BTVIRT || { check stack-up FAIL "stack_up 2 failed"; exit 1; }
STRAPD_SOCKET=$(systemctl show -p Listen strapd.socket --value | awk '{print $1}')
STRAPD_SOCKET=${STRAPD_SOCKET:-/run/strapd/strapd.sock}
systemctl start strapd.socket
st=$(systemctl is-active strapd.socket)
check strapd.socket-active "$([ "$st" = active ] && echo OK || echo FAIL)" "$st, listening on $STRAPD_SOCKET"
before=$(systemctl is-active strapd.service)
ctl status > "$OUT/status.txt" 2>&1; src=$?
after=$(systemctl is-active strapd.service)
# udev/60-strapd.rules starts strapd as soon as an adapter appears, so the service may already
# be running here; either way it must serve the socket systemd passed it (its log says so).
adopted=$(journalctl -u strapd.service -o cat --no-pager 2>/dev/null | grep -c "listening on socket-activated fd")
check socket-activation "$([ $src = 0 ] && [ "$after" = active ] && { [ "$before" != active ] || [ "$adopted" -gt 0 ]; } && echo OK || echo FAIL)" \
	"strapd.service $before -> $after on the first strapctl call (exit $src); socket-activated fd adopted: $adopted"
typ=$(systemctl show -p Type --value strapd.service)
check strapd-notify-ready "$([ "$typ" = notify ] && [ "$after" = active ] && echo OK || echo FAIL)" \
	"Type=$typ, $(systemctl show -p ActiveState,StatusText strapd.service | paste -sd' ')"
STRAPD_PID=$(systemctl show -p MainPID --value strapd.service)
WD0=$(systemctl show -p WatchdogTimestampMonotonic --value strapd.service)
PERIPH=$(start_sensor hci0 s1 --agent --services hr --interval 0.5) || { check sensor-ready FAIL ""; exit 1; }
daemon_attach "$PERIPH" || exit 1
sleep "$SECS"
# A clean start and a clean stream log no warning: neither strapd's own (priority <= warning)
# nor one of libdispatch's, which it writes to stderr and the journal files at info
# ("Failed to set thread priority for worker thread": a QoS class the sandbox cannot honour).
warnings=$(journalctl -u strapd.service -p warning --no-pager -o cat 2>/dev/null)
stray=$(journalctl -u strapd.service --no-pager -o cat 2>/dev/null | grep -E "Failed to set thread priority|errno=[0-9]")
check no-warnings-at-start "$([ -z "$warnings$stray" ] && echo OK || echo FAIL)" \
	"$(printf '%s\n%s' "$warnings" "$stray" | grep -v '^$' | head -5 | paste -sd'|' | head -c 400)"
kill "$(cat "$OUT/sensor-s1.pid")"; sleep 3
store_check --sensor "$OUT/sensor-s1.log" --min-count 10; rc=$?
# systemd stamps WatchdogTimestamp at every WATCHDOG=1; strapd pings at half WatchdogSec
# (15 s), so a new stamp must come within 45 s of the first reading (usually it already has).
wdstamp() { systemctl show -p WatchdogTimestampMonotonic --value strapd.service; }
n=45; while [ "$(wdstamp)" -le "${WD0:-0}" ] && [ $n -gt 0 ]; do sleep 1; n=$((n - 1)); done
wd=$(systemctl show -p WatchdogUSec,WatchdogTimestampMonotonic,NRestarts,ActiveState strapd.service | paste -sd' ')
WD1=$(wdstamp)
check watchdog "$([ "${WD1:-0}" -gt "${WD0:-0}" ] && [ "$(systemctl show -p WatchdogUSec --value strapd.service)" != 0 ] &&
	[ "$(systemctl show -p NRestarts --value strapd.service)" = 0 ] && echo OK || echo FAIL)" "first ping at ${WD0:-?} us, now: $wd"
# strapd.socket is 0660 strapd:strapd: the group lets a user connect, [access] read lets it read.
out=$(runuser -u labreader -- "$STRAPCTL" --socket "$STRAPD_SOCKET" --json anchored --limit 1 2>&1); src=$?
check group-member-reads "$([ $src = 0 ] && case $out in *'"added"'*) true ;; *) false ;; esac && echo OK || echo FAIL)" \
	"labreader ($(id -Gn labreader)): exit $src, $(echo "$out" | head -c 160)"
out=$(runuser -u labother -- "$STRAPCTL" --socket "$STRAPD_SOCKET" status 2>&1); src=$?
check outsider-refused "$([ $src = 4 ] && echo OK || echo FAIL)" "labother ($(id -Gn labother)): exit $src, $out"
if [ "$FROM" = deb ]; then
	# strapd-web from its own package, under systemd as shipped: installed off, then enabled by
	# the administrator; socket-activated on 127.0.0.1:8420, DynamicUser=, reading strapd
	# through the group the unit adds (docs/web.md, "Under systemd").
	webdeb=$(ls /host/deb/strapd-web_*.deb 2>/dev/null | head -1)
	if [ -z "$webdeb" ]; then
		check web-package-installed-off FAIL "no /host/deb/strapd-web_*.deb (stage-binaries.sh stages it)"
	else
		dpkg -i "$webdeb" > "$OUT/dpkg-web.log" 2>&1; wrc=$?
		wst=$(systemctl is-enabled strapd-web.service strapd-web.socket 2>&1 | paste -sd' ')
		wact=$(systemctl is-active strapd-web.service strapd-web.socket 2>&1 | paste -sd' ')
		check web-package-installed-off "$([ $wrc = 0 ] && [ "$wst" = "disabled disabled" ] && [ "$wact" = "inactive inactive" ] && echo OK || echo FAIL)" \
			"dpkg -i $(basename "$webdeb"): exit $wrc; enabled: $wst; active: $wact; $(tail -n 1 "$OUT/dpkg-web.log" | head -c 160)"
		systemctl enable --now strapd-web.service > "$OUT/web-enable.log" 2>&1
		# The token and URL file appear once strapd-web has started (the enable starts it).
		n=30; url=
		while [ $n -gt 0 ]; do url=$(/usr/bin/strapctl web url 2>/dev/null) && [ -n "$url" ] && break; sleep 1; n=$((n - 1)); done
		# python3 is in the image (Bumble); urllib is a real HTTP client over strapd-web.socket.
		web=$(python3 - "$url" <<'PY' 2>&1
import re, sys, urllib.request
url = sys.argv[1]
token = re.search(r"token=([0-9a-f]+)", url).group(1)
base = url.split("/?")[0].rstrip("/")
def get(path):
    req = urllib.request.Request(base + path, headers={"Authorization": "Bearer " + token})
    with urllib.request.urlopen(req, timeout=10) as r:
        return r.status, r.read().decode()
status, page = get("/")
mstatus, metrics = get("/metrics")
up = "strapd_up 1" in metrics.splitlines()
stored = [l for l in metrics.splitlines() if l.startswith('strapd_samples_total{type="heartRate"}')]
print(f"dashboard {status} {'strapd' in page}; metrics {mstatus} up={up} {stored[:1]}")
PY
)
		pid=$(systemctl show -p MainPID --value strapd-web.service)
		wuser=$(ps -o user= -p "$pid" 2>/dev/null | tr -d ' ')
		check web-under-systemd "$(case $web in *'dashboard 200 True; metrics 200 up=True ['*'heartRate'*) true ;; *) false ;; esac &&
			[ -n "$wuser" ] && [ "$wuser" != root ] && echo OK || echo FAIL)" \
			"url: ${url:-none}; $web; strapd-web pid ${pid:-?} runs as ${wuser:-?}"
		journalctl -u strapd-web.service -u strapd-web.socket --no-pager -o short-monotonic > "$OUT/strapd-web.log"
	fi
fi
journalctl -u strapd.service -u strapd.socket --no-pager -o short-monotonic > "$OUT/strapd.log"
journalctl -u bluetooth.service --no-pager -o short-monotonic > "$OUT/bluetoothd.log"
exit $rc
