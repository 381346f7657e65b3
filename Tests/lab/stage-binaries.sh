#!/bin/bash
# Build what the guest runs and stage it in one host folder that run-lab.sh shares as /host:
#   DIR/strapctl   swift build -c release --static-swift-stdlib --product strapctl
#   DIR/strapd     the same, once Package.swift has a strapd product (daemon scenarios)
#   DIR/root/      make install DESTDIR=DIR/root, when strapd exists (daemon-systemd)
#   DIR/deb/       the Debian package of HEAD (scripts/deb.sh), when debian/ exists (daemon-systemd deb)
#   DIR/deb/prev/  the package of LAB_PREV_DEB_REF (default release 0.1.0's commit), built once per commit
#                  into $LAB_CACHE/deb/<commit> (systemd-deb-upgrade; docs/packaging.md)
#   DIR/dbus-floor probe/dbus_floor.c (peer-bleak's "floor": the least CPU a process woken by
#                  every notification costs in the VM), when a C compiler is there
# The static Swift stdlib makes the binaries run in the guest without /opt/swift (they need
# glibc >= 2.35, libsystemd0, libbluetooth3, and libmosquitto1 for [mqtt]: all in the image).
#   stage-binaries.sh [DIR]      (default: <repo>/.build/lab-host)
set -euo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
DIR=${1:-$REPO/.build/lab-host}
SWIFT=${SWIFT:-swift}
mkdir -p "$DIR"
cd "$REPO"
products=(strapctl)
grep -Eq 'executableTarget\(name: *"strapd"' Package.swift && products+=(strapd)
for p in "${products[@]}"; do
	echo "stage-binaries: swift build -c release --static-swift-stdlib --product $p"
	"$SWIFT" build -c release --static-swift-stdlib --product "$p" 2>&1 | tail -2
	bin=$("$SWIFT" build -c release --static-swift-stdlib --show-bin-path)/$p
	cp "$bin" "$DIR/$p.new" && mv "$DIR/$p.new" "$DIR/$p"
done
if command -v cc > /dev/null && pkg-config --exists libsystemd; then
	# shellcheck disable=SC2046
	cc -O2 -Wall -o "$DIR/dbus-floor" Tests/lab/probe/dbus_floor.c $(pkg-config --cflags --libs libsystemd)
fi
# The static link must keep ICU's time zones (Package.swift, namedTimeZones): without them
# every named zone is "unknown" in the shipped binaries, and the debug tests cannot see it.
if printf '%s\n' "${products[@]}" | grep -qx strapd; then
	T=$(mktemp -d)
	"$DIR/strapd" --simulate=1 --state-dir "$T/s" --socket "$T/s.sock" --set daemon.socket_group= > "$T/log" 2>&1 &
	pid=$!
	for _ in $(seq 100); do [ -S "$T/s.sock" ] && break; sleep 0.1; done
	if "$DIR/strapctl" --socket "$T/s.sock" stats --type heartRate --option average --interval 1h \
		--tz Europe/Berlin --from -2h > "$T/out" 2>&1; then
		echo "stage-binaries: static strapd and strapctl resolve named time zones (Europe/Berlin)"
	else
		cat "$T/out" "$T/log"; echo "stage-binaries: the static binaries cannot resolve Europe/Berlin"
		kill "$pid"; rm -rf "$T"; exit 1
	fi
	kill "$pid"; wait "$pid" 2>/dev/null || true; rm -rf "$T"
fi
if [ ! -x "$DIR/strapd" ] || ! printf '%s\n' "${products[@]}" | grep -qx strapd; then
	rm -rf "$DIR/strapd" "$DIR/root"            # never run a stale daemon
fi
if [ -x "$DIR/strapd" ] && grep -q '^install:' Makefile; then
	rm -rf "$DIR/root"
	echo "stage-binaries: make install DESTDIR=$DIR/root"
	make --no-print-directory install DESTDIR="$DIR/root" > "$DIR/install.log" 2>&1 ||
		{ tail -5 "$DIR/install.log"; exit 1; }
fi
rm -rf "$DIR/deb"
if [ -f debian/control ]; then
	# Reused when make test's deb stage built it from this commit. A failed package does not
	# stop the other scenarios: daemon-systemd-deb then fails on the missing /host/deb.
	if scripts/deb.sh > "$DIR/deb.log" 2>&1; then
		mkdir -p "$DIR/deb" && cp "$(cat .build/deb/built-deb)" "$DIR/deb/"
		# strapd-web's package beside it (daemon-systemd-deb installs both).
		web=$(cat .build/deb/built-web-deb 2>/dev/null || true)
		[ -z "$web" ] || cp "$web" "$DIR/deb/"
		echo "stage-binaries: $(ls "$DIR/deb")"
	else
		tail -n 5 "$DIR/deb.log"; echo "stage-binaries: scripts/deb.sh failed; no package staged ($DIR/deb.log)"
	fi
fi
# Release 0.1.0 by its commit, not the tag v0.1.0: a clone or mirror without tags still has it.
prev_ref=${LAB_PREV_DEB_REF:-0e885f723f2baba4037f8f3b7225db3852b19438}
prev=$(git rev-parse -q --verify "$prev_ref^{commit}" || true)
if [ -n "$prev" ] && [ -d "$DIR/deb" ]; then
	# The previous package is a full release build of another commit: once per commit, kept in
	# the lab cache without its build tree (only the .deb is reused).
	pdir=${LAB_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/strapd-lab}/deb/$prev
	if DEB_DIR=$pdir scripts/deb.sh "$prev" > "$DIR/deb-prev.log" 2>&1; then
		rm -rf "$pdir/src" "$pdir/src.index"
		mkdir -p "$DIR/deb/prev" && cp "$(cat "$pdir/built-deb")" "$DIR/deb/prev/"
		echo "stage-binaries: previous package $(ls "$DIR/deb/prev") (${prev_ref:0:12})"
	else
		tail -n 5 "$DIR/deb-prev.log"; echo "stage-binaries: the previous package failed ($DIR/deb-prev.log)"
	fi
fi
ls -la "$DIR"
