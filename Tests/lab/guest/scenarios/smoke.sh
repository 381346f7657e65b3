# smoke: the Bluetooth stack comes up: hci_vhci, dbus, bluetoothd 5.66, two btvirt
# controllers on D-Bus; and, when /host/strapctl is shared, the static strapctl runs here.
# Args: [btvirt options...]
# shellcheck source=../lib.sh
. /lab/guest/lib.sh
stack_up 2 "$@" || { check stack-up FAIL "stack_up 2 failed"; exit 1; }
check_cmd hci_vhci-loaded grep '^hci_vhci ' /proc/modules
check_cmd dev-vhci test -c /dev/vhci
check_cmd dbus-daemon pgrep -x dbus-daemon
check_cmd bluetoothd pgrep -x bluetoothd
check_cmd bluetoothd-5.66 sh -c '/usr/libexec/bluetooth/bluetoothd -v | grep -x 5.66'
check_cmd btvirt pgrep -x btvirt
n=$(dbus_adapters)
check adapters-on-dbus "$([ "$n" = 2 ] && echo OK || echo FAIL)" "$n adapters in bluetoothd's ObjectManager"
step "btmgmt info"
btmgmt info
step "bluetoothctl show"
for a in $(bluetoothctl list | awk '/^Controller/{print $2}'); do bluetoothctl show "$a"; done
if [ -x "$STRAPCTL" ]; then
	out=$("$STRAPCTL" decode 2a37 164a3e03 2>&1)
	echo "strapctl decode 2a37 164a3e03 -> $out"
	case $out in
	*'"heartRate":74'*) check strapctl-static OK "$out" ;;
	*) check strapctl-static FAIL "$out" ;;
	esac
else
	echo "note: $STRAPCTL not shared (run-lab.sh -H DIR); strapctl check left out"
fi
step "done"
