#!/usr/bin/env bash
# The end-to-end lab for CI (.ci/run, after the unit and integration tests): the whole lab,
# the same scenario list as `make lab` (Tests/lab/selftest.sh), each VM with its own hard
# limit. LAB_CI_SCENARIOS overrides the list ("name|scenario args|limit" lines, as in
# selftest.sh). Cold machine, 2 cores, TCG: about 15 minutes with the image built from
# nothing and the static binaries built (docs/testing.md has the measured table).
#
# Skips (exit 0, with a clear "lab-ci: SKIPPED: ..." line) only when this host genuinely
# cannot run the lab: not root, qemu-system-x86 not installable, or the guest kernel cannot
# provide /dev/vhci (the smoke scenario runs first and tells). Any other problem fails.
# Two runs sharing one LAB_CACHE take turns (Tests/lab/lock.sh).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
skip() { echo "lab-ci: SKIPPED: $*"; echo "lab-ci: the end-to-end lab did NOT run on this host"; exit 0; }

[ "$(id -u)" = 0 ] || skip "not root (the lab needs debootstrap/chroot and a VM); run as root or via sudo"
if ! command -v qemu-system-x86_64 >/dev/null; then
	export DEBIAN_FRONTEND=noninteractive
	# An install interrupted earlier (a killed CI run) leaves dpkg half-configured, and every
	# apt-get install then refuses until it is finished: finish it first, or the lab skips.
	{ dpkg --configure -a; apt-get update -qq && apt-get install -y -qq --no-install-recommends qemu-system-x86; } > /dev/null 2>&1 ||
		skip "qemu-system-x86 is not installed and apt-get could not install it"
fi

export LAB_CACHE=${LAB_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/strapd-lab}
[ -n "${LAB_CI_SCENARIOS:-}" ] && export LAB_SCENARIOS=$LAB_CI_SCENARIOS
RES=$LAB_CACHE/out/ci
echo "lab-ci: load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
Tests/lab/selftest.sh "$RES"
rc=$?
echo "lab-ci: load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
if [ $rc = 77 ] && grep -qs -e 'modprobe hci_vhci failed' -e '/dev/vhci missing' "$RES"/smoke/scenario.log; then
	skip "the guest kernel cannot provide /dev/vhci (modprobe hci_vhci failed in the VM; see $RES/smoke/scenario.log)"
fi
[ $rc = 77 ] && skip "see selftest output above"
exit $rc
