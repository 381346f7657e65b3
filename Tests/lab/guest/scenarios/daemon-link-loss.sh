# daemon-link-loss: the sensor disappears mid-stream (its adapter powers off: the link drops
# as for a strap out of range) and returns 12 s later. strapd must reconnect by itself (no
# strapctl command after the first connect), the gap must be visible in the data (no
# samples for the outage, sensor seq numbers jump), and nothing sent after the reconnect
# (or before the loss) may be lost or duplicated. A workout runs across it all: the drop
# must not end it, and the saved workout holds samples from before and after the gap.
# Args: 1 seconds before the loss (default 8)  2 outage seconds (default 12)
#       3 seconds of streaming after strapd has resumed (default 10)
# Skips (77) until strapd exists. Assumed CLI: guest/daemon.sh.
# shellcheck source=../lib.sh
. /lab/guest/lib.sh
# shellcheck source=../daemon.sh
. /lab/guest/daemon.sh
BEFORE=${1:-8} OUTAGE=${2:-12} AFTER=${3:-10}
daemon_require
stack_up 2 $DAEMON_BTVIRT || { check stack-up FAIL "stack_up 2 failed"; exit 1; }
PERIPH=$(start_sensor hci0 s1 --agent --services hr --interval 0.5 --vanish-at "$BEFORE" --vanish-for "$OUTAGE") ||
	{ check sensor-ready FAIL ""; exit 1; }
daemon_start hci1 || exit 1
daemon_attach "$PERIPH" || exit 1
ctl --json workout start --activity cycling --location indoor --device "$PERIPH" > "$OUT/workout-start.json" 2>&1 ||
	{ check workout-started FAIL "$(tail -c 300 "$OUT/workout-start.json")"; exit 1; }
WORKOUT=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["result"]["session"]["session"])' "$OUT/workout-start.json")
check workout-started OK "session $WORKOUT on $PERIPH"
S=$OUT/sensor-s1.log
ev_after() {   # ev_after EVENT_A EVENT_B: t of the first EVENT_B after the first EVENT_A
	python3 - "$S" "$1" "$2" <<'PYEOF'
import json, sys
a = None
for l in open(sys.argv[1]):
    if not l.startswith('{'): continue
    e = json.loads(l)
    if a is None and e['event'] == sys.argv[2]: a = e['t']
    elif a is not None and e['event'] == sys.argv[3]: print(e['t']); break
PYEOF
}
n=$((BEFORE + OUTAGE + 60)); while [ -z "$(ev_after return connected)" ] && [ $n -gt 0 ]; do sleep 1; n=$((n - 1)); done
lost=$(ev_after vanish disconnected)
check link-lost "$([ -n "$lost" ] && echo OK || echo FAIL)" "sensor saw the link drop at t=${lost:-never}"
back=$(ev_after return connected)
check reconnected-by-itself "$([ -n "$back" ] && echo OK || echo FAIL)" "reconnected at t=${back:-never} (sensor returned at t=$(ev_after vanish return))"
# The link is back; strapd streams again once it has re-resolved and re-subscribed. Wait for
# a notification in its capture (flushed every 2 s) that the sensor sent after its return,
# then stream AFTER seconds more, so the exactly-once check has data after the reconnect.
ret=$(ev_after vanish return)
resumed_at() {
	python3 - "$OUT/capture.jsonl" "${ret:-1e9}" <<'PYEOF'
import json, sys
try:
    for l in open(sys.argv[1]):
        e = json.loads(l) if l.startswith('{') else {}
        if e.get('event') == 'notification' and e.get('mono', 0) > float(sys.argv[2]):
            print(e['mono']); break
except (OSError, ValueError):
    pass
PYEOF
}
n=60; while [ -z "$(resumed_at)" ] && [ $n -gt 0 ]; do sleep 1; n=$((n - 1)); done
again=$(resumed_at)
check resumed-streaming "$([ -n "$again" ] && echo OK || echo FAIL)" \
	"first notification after the return at t=${again:-never} ($(python3 -c "import sys; print('%.1f s after the return' % (float(sys.argv[1]) - float(sys.argv[2])) if sys.argv[1] else 'not within 60 s')" "$again" "${ret:-0}"))"
step "streaming ${AFTER}s after strapd resumed"
sleep "$AFTER"
ctl --json workout show "$WORKOUT" > "$OUT/workout-before-end.json" 2>&1
state=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["result"]["session"]["state"])' "$OUT/workout-before-end.json" 2>/dev/null)
check workout-continued "$([ "$state" = running ] && echo OK || echo FAIL)" "state after the link loss and return: ${state:-$(tail -c 200 "$OUT/workout-before-end.json")}"
ctl --json workout end "$WORKOUT" > "$OUT/workout.json" 2>&1 || check workout-saved FAIL "$(tail -c 300 "$OUT/workout.json")"
kill "$(cat "$OUT/sensor-s1.pid")"; sleep 3
store_check --sensor "$S" --min-count 10 --resubscribe-excused
python3 - "$OUT/received.jsonl" "$S" "$OUTAGE" <<'PYEOF' >> "$OUT/checks.jsonl"
import datetime, json, sys
rx = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
sent = [json.loads(l) for l in open(sys.argv[2]) if l.startswith('{')]
seqs = [e['seq'] for e in sent if e['event'] == 'sent' and e['uuid'] == '2a37']
seq_gap = max((b - a for a, b in zip(seqs, seqs[1:])), default=0)
def ts(s):
    return datetime.datetime.fromisoformat(s.replace('Z', '+00:00')).timestamp()
starts = [ts(r['start']) for r in rx if r.get('uuid') == '2a37' and r.get('start')]
gap = max((b - a for a, b in zip(starts, starts[1:])), default=0)
ok = gap >= float(sys.argv[3]) * 0.75 and seq_gap > 1
print(json.dumps({'name': 'gap-visible', 'ok': ok,
                  'detail': 'largest gap between stored HR samples %.1f s (outage %s s); sensor seq jump %d' % (gap, sys.argv[3], seq_gap)}))
PYEOF
tail -1 "$OUT/checks.jsonl"
# The saved workout spans the outage: HR samples of its device inside its span on both sides
# of a gap of about the outage, and its duration counts the outage (a drop is a gap, not an end).
python3 - "$OUT/received.jsonl" "$OUT/workout.json" "$OUTAGE" <<'PYEOF' >> "$OUT/checks.jsonl"
import datetime, json, sys
def ts(s):
    return datetime.datetime.fromisoformat(s.replace('Z', '+00:00')).timestamp()
try:
    w = json.load(open(sys.argv[2]))['result']['workout']
except (OSError, ValueError, KeyError) as e:
    print(json.dumps({'name': 'workout-saved', 'ok': False, 'detail': 'no saved workout: %s' % e})); sys.exit()
print(json.dumps({'name': 'workout-saved', 'ok': bool(w.get('uuid')), 'detail': 'workout %s, %s s' % (w.get('uuid'), w['summary'].get('elapsedTime'))}))
start, end, outage = ts(w['start']), ts(w['end']), float(sys.argv[3])
rx = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
inside = sorted(ts(r['start']) for r in rx if r.get('uuid') == '2a37' and r.get('start') and start < ts(r['start']) <= end)
gap = max((b - a for a, b in zip(inside, inside[1:])), default=0)
i = max(range(len(inside) - 1), key=lambda k: inside[k + 1] - inside[k], default=0)
before, after = i + 1, len(inside) - i - 1
ok = gap >= outage * 0.75 and before >= 3 and after >= 3 and w['summary'].get('heartRateAverage') is not None \
    and w['summary'].get('elapsedTime', 0) >= (end - start) * 0.95
print(json.dumps({'name': 'workout-spans-gap', 'ok': ok,
                  'detail': '%d HR samples before and %d after a %.1f s gap inside the workout (%.1f s, elapsed %s s, avg HR %s)'
                            % (before, after, gap, end - start, w['summary'].get('elapsedTime'), w['summary'].get('heartRateAverage'))}))
PYEOF
tail -2 "$OUT/checks.jsonl"
