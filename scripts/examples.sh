#!/usr/bin/env bash
# The seed's HealthKit patterns as programs on StrapKit (Examples/, docs/client.md *Examples*),
# each run against the debug `strapd --simulate` and checked by what it prints:
#   heart-rate-tracker  two runs, strapd restarted under the second: it resumes from the first's
#                       saved anchor, goes on across the restart, and prints no sample twice
#   workout-manager     a cycling session with live statistics, lap, pause, resume, end; a second
#                       process mirrors it and sends a message the primary prints
#   daily-statistics    daily and hourly collections, then live updates
#   characteristics     "not set" for noData, then the values set through profile.set
# Prints `example NAME: ok|FAILED` per program, followed by what it printed (only when it failed
# with EXAMPLES_QUIET=1), and closes
# with `examples: N passed, N failed`; exits non-zero when one failed.
set -uo pipefail
cd "$(dirname "$0")/.."
top=$PWD
strapd_bin=${STRAPD_BIN:-$top/.build/debug/strapd}
[ -x "$strapd_bin" ] || swift build --product strapd >/dev/null || { echo "examples: 0 passed, 1 failed (strapd did not build)"; exit 1; }
if ! (cd Examples && swift build >"$top/.build/examples-build.log" 2>&1); then
  cat "$top/.build/examples-build.log"
  echo "examples: 0 passed, 1 failed (the Examples package did not build)"
  exit 1
fi
bin=$top/Examples/.build/debug
work=$(mktemp -d /tmp/strapd-examples-XXXXXX)
sock=$work/s.sock
daemon=
stop_daemon() {
  [ -n "$daemon" ] && kill -TERM "$daemon" 2>/dev/null && wait "$daemon" 2>/dev/null
  daemon=
}
start_daemon() {
  "$strapd_bin" --simulate --state-dir "$work/state" --socket "$sock" --set daemon.socket_group= \
    --log-level warning 2>>"$work/strapd.log" &
  daemon=$!
  for _ in $(seq 200); do [ -S "$sock" ] && return 0; sleep 0.05; done
  echo "strapd did not start:"; cat "$work/strapd.log"; return 1
}
cleanup() { stop_daemon; rm -rf "$work"; }
trap cleanup EXIT
export STRAPD_SOCKET=$sock
passed=0 failed=0
report() {   # NAME OK(0|1) OUTPUT-FILES...
  local name=$1 ok=$2; shift 2
  if [ "$ok" -eq 1 ]; then echo "example $name: ok"; passed=$((passed + 1))
  else echo "example $name: FAILED"; failed=$((failed + 1)); fi
  # What each printed, so the run's log shows the examples at work (EXAMPLES_QUIET=1: failures only).
  if [ "$ok" -eq 0 ] || [ -z "${EXAMPLES_QUIET:-}" ]; then
    for f in "$@"; do echo "  --- $(basename "$f" .txt)"; sed 's/^/  /' "$f"; done
  fi
}
start_daemon || { echo "examples: 0 passed, 4 failed (strapd did not start)"; exit 1; }

# heart-rate-tracker: a run; then a second from its saved anchor, with strapd restarted (same
# state) under it once it has printed two samples: StrapKit reconnects and the follow goes on.
t1=$work/tracker-1.txt t2=$work/tracker-2.txt ok=0
if timeout 30 "$bin/heart-rate-tracker" --anchor-file "$work/hr.anchor" --count 5 >"$t1" 2>&1; then
  timeout 40 "$bin/heart-rate-tracker" --anchor-file "$work/hr.anchor" --count 6 >"$t2" 2>&1 &
  tracker=$!
  for _ in $(seq 200); do [ "$(grep -c '^heart rate' "$t2")" -ge 2 ] && break; kill -0 "$tracker" 2>/dev/null || break; sleep 0.1; done
  before=$(grep -c '^heart rate' "$t2")
  stop_daemon; start_daemon
  if wait "$tracker"; then
    saved=$(grep -oE '^saved anchor [0-9]+' "$t1" | grep -oE '[0-9]+$')
    anchors2=$(grep '^heart rate' "$t2" | grep -oE 'anchor [0-9]+' | grep -oE '[0-9]+')
    first2=$(head -1 <<<"$anchors2")
    dups=$(cat "$t1" "$t2" | grep -oE 'uuid [0-9A-Fa-f-]+' | sort | uniq -d | wc -l)
    grep -q '^heart rate' "$t1" && [ -n "$saved" ] && [ -n "$first2" ] && [ "$before" -ge 2 ] \
      && grep -q "^resuming from saved anchor $saved\$" "$t2" && [ "$first2" -gt "$saved" ] && [ "$dups" -eq 0 ] \
      && grep -q '^reconnected' "$t2" && [ "$(grep -c '^heart rate' "$t2")" -ge 6 ] && [ "$anchors2" = "$(sort -n -u <<<"$anchors2")" ] && ok=1
  fi
fi
report heart-rate-tracker $ok "$t1" "$t2"

# workout-manager: the primary in the background; the mirror once the primary waits for it.
p=$work/manager.txt m=$work/mirror.txt ok=0
timeout 60 "$bin/workout-manager" --wait 30 >"$p" 2>&1 &
primary=$!
for _ in $(seq 300); do grep -q '^waiting up to' "$p" && break; kill -0 "$primary" 2>/dev/null || break; sleep 0.1; done
timeout 30 "$bin/workout-manager" --mirror >"$m" 2>&1
mirror_status=$?
wait "$primary"
primary_status=$?
[ $primary_status -eq 0 ] && [ $mirror_status -eq 0 ] && grep -q '^sent a message' "$m" \
  && grep -q '^message from mirror: .*hello from the mirror' "$p" && grep -q '^lap 1' "$p" \
  && grep -q '^heart rate: average' "$p" && grep -qE '^saved workout .*cycling, [1-9][0-9]* laps' "$p" && ok=1
report workout-manager $ok "$p" "$m"

# daily-statistics: the collections, then two live updates.
s=$work/statistics.txt ok=0
timeout 40 "$bin/daily-statistics" --updates 2 >"$s" 2>&1 && grep -q '^interval .*count [1-9]' "$s" \
  && grep -q '^day 0: count [1-9]' "$s" && grep -q '^update 2: interval' "$s" && ok=1
report daily-statistics $ok "$s"

# characteristics: noData first, then what profile.set stored.
c=$work/characteristics.txt ok=0
if timeout 20 "$bin/characteristics" --set 1990-04-01,female >"$c" 2>&1; then
  [ "$(grep -E '^(date of birth|biological sex):' "$c" | tr '\n' '|')" = \
    "date of birth: not set|biological sex: not set|date of birth: 1990-4-1|biological sex: female|" ] && ok=1
fi
report characteristics $ok "$c"

echo "examples: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
