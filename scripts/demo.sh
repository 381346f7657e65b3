#!/usr/bin/env bash
# The main job: strapd on simulated sensors (real GATT bytes through the real pipeline),
# watched live with strapctl, a short workout session run through strapctl (shown with its
# heart-rate chart, its HRV, exported as FIT), then statistics of what was recorded; strapd-web
# in front of it the whole time, its dashboard URL printed (and opened where there is a
# display). No root, no hardware.
#   DEMO_SECONDS=20 (how long to watch)   DEMO_SENSORS=3 (simulated sensors)
#   DEMO_WEB_PORT=0 (strapd-web's loopback port; 0: a free one, as 8420 may be taken)
#   TMPDIR (where its throwaway state directory goes; default /tmp)
set -euo pipefail
cd "$(dirname "$0")/.."
SECS=${DEMO_SECONDS:-20}
SENSORS=${DEMO_SENSORS:-3}
WEB_PORT=${DEMO_WEB_PORT:-0}
echo "building strapd, strapctl and strapd-web..."
swift build --product strapd >/dev/null
swift build --product strapctl >/dev/null
swift build --product strapd-web >/dev/null
BIN=.build/debug
# Under $TMPDIR when set (scripts/demo-open.sh gives it a private one), else /tmp. A short
# one: strapd's socket path must fit sun_path's 108 bytes.
DIR=$(mktemp -d "${TMPDIR:-/tmp}/strapd-demo.XXXXXX")
SOCK=$DIR/strapd.sock
cleanup() {
  # Uninterrupted: `make demo` ended by SIGTERM to its process group gets a second SIGTERM
  # from make, which forwards it to its children, and it would cut this short.
  trap '' INT TERM
  [ -n "${WEBPID:-}" ] && kill -TERM "$WEBPID" 2>/dev/null && wait "$WEBPID" 2>/dev/null || true
  [ -n "${PID:-}" ] && kill -TERM "$PID" 2>/dev/null && wait "$PID" 2>/dev/null || true
  rm -rf "$DIR"
}
trap cleanup EXIT

"$BIN/strapd" --simulate="$SENSORS" --simulate-scenario demo --state-dir "$DIR/state" --socket "$SOCK" \
  --set daemon.socket_group= --log-level notice 2> "$DIR/strapd.log" &
PID=$!
for _ in $(seq 50); do [ -S "$SOCK" ] && break; sleep 0.1; done
[ -S "$SOCK" ] || { echo "strapd did not start:"; cat "$DIR/strapd.log"; exit 1; }
export STRAPD_SOCKET=$SOCK

# strapd-web as the same user as strapd, so strapd grants it everything; under systemd it is
# its own dynamic user with [access]'s read (docs/web.md).
mkdir -m 0700 "$DIR/web"
"$BIN/strapd-web" --listen "127.0.0.1:$WEB_PORT" --socket "$SOCK" --state-dir "$DIR/web" 2> "$DIR/strapd-web.log" &
WEBPID=$!
for _ in $(seq 50); do [ -s "$DIR/web/url" ] && break; sleep 0.1; done
if URL=$("$BIN/strapctl" web url --state-dir "$DIR/web" 2>&1); then
  echo
  echo "== strapd-web: the live dashboard while the demo runs (strapctl web url --state-dir $DIR/web):"
  echo "   $URL"
  if { [ -n "${DISPLAY:-}" ] || [ -n "${WAYLAND_DISPLAY:-}" ]; } && command -v xdg-open > /dev/null; then
    xdg-open "$URL" > /dev/null 2>&1 || echo "   (xdg-open failed: open it by hand)"
  fi
else
  echo "strapd-web did not start ($URL):"; cat "$DIR/strapd-web.log"; exit 1
fi

echo
echo "== strapd --simulate=$SENSORS running (state in $DIR); watching live for ${SECS}s"
timeout --foreground "$SECS" "$BIN/strapctl" live || true
echo
echo "== a workout through strapctl: profile, start (cycling, indoor), lap, pause, resume, end"
HRM=5E:1A:00:00:48:00   # the simulated heart-rate strap and speed/cadence sensor
CSC=5E:1A:00:00:5B:00
"$BIN/strapctl" profile set weight=72.5 dateOfBirth=1990-04-01 biologicalSex=female restingHeartRate=52 \
  device.$CSC.wheelCircumference=2.105
"$BIN/strapctl" workout start --activity cycling --location indoor --device "$HRM" --device "$CSC" --meta route=demo
"$BIN/strapctl" workout follow > "$DIR/follow.txt" 2>&1 &   # piped: one plain line per event
FOLLOW=$!
sleep 4; "$BIN/strapctl" workout lap --meta split=1
sleep 3; "$BIN/strapctl" workout pause
sleep 2; "$BIN/strapctl" workout resume
sleep 3; "$BIN/strapctl" workout list
WORKOUT=$("$BIN/strapctl" workout end | awk 'NR == 1 { print $2 }')
wait "$FOLLOW" || true
echo
echo "== what strapctl workout follow printed meanwhile"
sed '/^saved as workout/q' "$DIR/follow.txt"
echo
echo "== strapctl workout show $WORKOUT   (heart-rate chart: braille on a UTF-8 terminal, ASCII when piped)"
"$BIN/strapctl" workout show "$WORKOUT"
echo
echo "== strapctl workout hrv $WORKOUT"
"$BIN/strapctl" workout hrv "$WORKOUT" || true
echo
echo "== strapctl workout export $WORKOUT --format fit -o $DIR"
"$BIN/strapctl" workout export "$WORKOUT" --format fit -o "$DIR"
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
kill -TERM "$WEBPID"; wait "$WEBPID" 2>/dev/null || true
WEBPID=
kill -TERM "$PID"; wait "$PID" 2>/dev/null || true
PID=
echo
echo "== strapd log"
cat "$DIR/strapd.log"
echo
echo "== strapd-web log (the dashboard is gone with it)"
cat "$DIR/strapd-web.log"
