# shellcheck shell=bash
# Sourced by build-image.sh, run-lab.sh and selftest.sh: one lab run per $LAB_CACHE at a time.
# A second run sharing the cache would rebuild the image under a running VM or replace its
# result folders, and two TCG VMs on a 2-core machine starve each other (docs/testing.md).
# The outermost script takes the lock (fd 9, inherited by what it starts, so the scripts
# it calls see LAB_CACHE_LOCKED and do not wait for their own parent). LAB_LOCK_WAIT
# (seconds, default 3600) bounds the wait.
lab_lock() {
	[ -z "${LAB_CACHE_LOCKED:-}" ] || return 0
	mkdir -p "$LAB_CACHE"
	exec 9>> "$LAB_CACHE/lab.lock"
	if ! flock -n 9; then
		echo "lab: another lab run holds $LAB_CACHE/lab.lock; waiting up to ${LAB_LOCK_WAIT:-3600} s" >&2
		flock -w "${LAB_LOCK_WAIT:-3600}" 9 || { echo "lab: gave up waiting for $LAB_CACHE/lab.lock" >&2; return 1; }
	fi
	export LAB_CACHE_LOCKED=$$
}
