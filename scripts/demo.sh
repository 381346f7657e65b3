#!/usr/bin/env bash
# The main job: strapd on simulated sensors (real GATT bytes through the real pipeline),
# watched live with strapctl, then statistics of what was recorded. No root, no hardware.
#   DEMO_SECONDS=20 (how long to watch)   DEMO_SENSORS=3 (simulated sensors)
set -euo pipefail
cd "$(dirname "$0")/.."
SECS=${DEMO_SECONDS:-20}
SENSORS=${DEMO_SENSORS:-3}
echo "building strapd and strapctl..."
swift build --product strapd >/dev/null
swift build --product strapctl >/dev/null
BIN=.build/debug
DIR=$(mktemp -d /tmp/strapd-demo.XXXXXX)
SOCK=$DIR/strapd.sock
cleanup() {
  [ -n "${PID:-}" ] && kill -TERM "$PID" 2>/dev/null && wait "$PID" 2>/dev/null || true
  rm -rf "$DIR"
}
trap cleanup EXIT

"$BIN/strapd" --simulate="$SENSORS" --state-dir "$DIR/state" --socket "$SOCK" \
  --set daemon.socket_group= --log-level notice 2> "$DIR/strapd.log" &
PID=$!
for _ in $(seq 50); do [ -S "$SOCK" ] && break; sleep 0.1; done
[ -S "$SOCK" ] || { echo "strapd did not start:"; cat "$DIR/strapd.log"; exit 1; }
export STRAPD_SOCKET=$SOCK

echo
echo "== strapd --simulate=$SENSORS running (state in $DIR); watching live for ${SECS}s"
timeout --foreground "$SECS" "$BIN/strapctl" live || true
echo
echo "== strapctl devices"
"$BIN/strapctl" devices
echo
echo "== strapctl stats (what was recorded)"
for spec in "heartRate average" "heartRate maximum" "cyclingSpeed average" "cyclingCadence average" \
            "cyclingDistance sum" "runningSpeed average" "runningDistance sum"; do
  set -- $spec
  printf '%-16s %-8s ' "$1" "$2"
  "$BIN/strapctl" stats --type "$1" --option "$2" 2>&1 | tr '\n' ' ' || true
  echo
done
echo
echo "== heart rate per minute (a statistics collection)"
"$BIN/strapctl" stats --type heartRate --option average --interval 1m --from -2m --to now || true
echo
echo "== strapctl status"
"$BIN/strapctl" status
kill -TERM "$PID"; wait "$PID" 2>/dev/null || true
PID=
echo
echo "== strapd log"
cat "$DIR/strapd.log"
