#!/bin/bash
# Build what the guest runs and stage it in one host folder that run-lab.sh shares as /host:
#   DIR/strapctl   swift build -c release --static-swift-stdlib --product strapctl
#   DIR/strapd     the same, once Package.swift has a strapd product (daemon scenarios)
#   DIR/root/      make install DESTDIR=DIR/root, when strapd exists (daemon-systemd)
# The static Swift stdlib makes the binaries run in the guest without /opt/swift (they need
# glibc >= 2.35, libsystemd0, libbluetooth3, libmosquitto1: all in the image).
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
if [ ! -x "$DIR/strapd" ] || ! printf '%s\n' "${products[@]}" | grep -qx strapd; then
	rm -rf "$DIR/strapd" "$DIR/root"            # never run a stale daemon
fi
if [ -x "$DIR/strapd" ] && grep -q '^install:' Makefile; then
	rm -rf "$DIR/root"
	echo "stage-binaries: make install DESTDIR=$DIR/root"
	make --no-print-directory install DESTDIR="$DIR/root" > "$DIR/install.log" 2>&1 ||
		{ tail -5 "$DIR/install.log"; exit 1; }
fi
ls -la "$DIR"
