# systemd-smoke: the guest boots with systemd as PID 1 (run-lab.sh does this for every
# scenario named systemd-* and for daemon-systemd); dbus comes from dbus.socket, bluetoothd
# from Debian's bluetooth.service, and this scenario runs as lab-scenario.service.
# Proves what daemon-systemd needs: units start, D-Bus activation works, adapters appear.
# shellcheck source=../lib.sh
. /lab/guest/lib.sh
check pid1-systemd "$([ "$(cat /proc/1/comm)" = systemd ] && echo OK || echo FAIL)" "PID 1 is $(cat /proc/1/comm), $(systemctl --version | head -1)"
step "systemctl is-system-running: $(systemctl is-system-running)"
stack_up 2 || { check stack-up FAIL "stack_up 2 failed"; journalctl -u bluetooth --no-pager | tail; exit 1; }
st=$(systemctl is-active bluetooth.service)
check bluetooth.service "$([ "$st" = active ] && echo OK || echo FAIL)" "$st; $(systemctl show -p MainPID,ExecMainStartTimestampMonotonic bluetooth.service | paste -sd' ')"
n=$(dbus_adapters)
check adapters-on-dbus "$([ "$n" = 2 ] && echo OK || echo FAIL)" "$n adapters"
if [ -x "$STRAPCTL" ]; then
	out=$(systemd-run --wait --pipe --quiet "$STRAPCTL" decode 2a37 164a3e03 2>&1)
	case $out in
	*'"heartRate":74'*) check strapctl-static OK "via systemd-run: $out" ;;
	*) check strapctl-static FAIL "$out" ;;
	esac
else
	check strapctl-static FAIL "$STRAPCTL not shared (run-lab.sh -H DIR)"
fi
step "systemd-analyze: $(systemd-analyze 2>&1 | head -1)"
systemctl list-units --no-pager --state=failed
journalctl -u bluetooth.service --no-pager -o short-monotonic > "$OUT/bluetoothd.log"
step done
