# daemon-link-loss: the sensor disappears mid-stream (its adapter powers off: the link drops
# as for a strap out of range) and returns 12 s later. strapd must reconnect by itself (no
# strapctl command after the first connect), the gap must be visible in the data (no
# samples for the outage, sensor seq numbers jump), and nothing sent after the reconnect
# (or before the loss) may be lost or duplicated.
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
