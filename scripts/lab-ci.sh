#!/usr/bin/env bash
# The bounded end-to-end lab suite for CI (.ci/run, after the unit and integration tests):
# smoke + hr-btvirt + daemon-pair-connect (the real strapd, static build) by default (LAB_CI_SCENARIOS overrides, "name|scenario args" lines as in
# Tests/lab/selftest.sh). Cold machine: host tools + image build ~95 s, then ~35 s + ~80 s.
#
# Skips (exit 0, with a clear "lab-ci: SKIPPED: ..." line) only when this host genuinely
# cannot run the lab: not root, qemu-system-x86 not installable, or the guest kernel cannot
# provide /dev/vhci. Any other problem fails.
set -uo pipefail
cd "$(dirname "$0")/.."
skip() { echo "lab-ci: SKIPPED: $*"; echo "lab-ci: the end-to-end lab did NOT run on this host"; exit 0; }

[ "$(id -u)" = 0 ] || skip "not root (the lab needs debootstrap/chroot and a VM); run as root or via sudo"
if ! command -v qemu-system-x86_64 >/dev/null; then
	export DEBIAN_FRONTEND=noninteractive
	{ apt-get update -qq && apt-get install -y -qq --no-install-recommends qemu-system-x86; } > /dev/null 2>&1 ||
		skip "qemu-system-x86 is not installed and apt-get could not install it"
fi

export LAB_SCENARIOS=${LAB_CI_SCENARIOS:-"smoke|smoke
hr-btvirt|hr-btvirt
daemon-pair-connect|daemon-pair-connect acquire 15 0.5"}
Tests/lab/selftest.sh "${LAB_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/strapd-lab}/out/ci"
rc=$?
RES=${LAB_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/strapd-lab}/out/ci
if [ $rc != 0 ] && grep -qs -e 'modprobe hci_vhci failed' -e '/dev/vhci missing' "$RES"/smoke/scenario.log; then
	skip "the guest kernel cannot provide /dev/vhci (modprobe hci_vhci failed in the VM; see $RES/smoke/scenario.log)"
fi
[ $rc = 77 ] && skip "see selftest output above"
exit $rc
