# daemon-link-loss: the sensor disappears mid-stream (its adapter powers off: the link drops
# as for a strap out of range) and returns 20 s later. strapd must reconnect by itself (no
# strapctl command after the first connect), the gap must be visible in the data (no
# samples for the outage, sensor seq numbers jump), and nothing sent after the reconnect
# (or before the loss) may be lost or duplicated.
# Args: 1 seconds before the loss (default 12)  2 outage seconds (default 20)
#       3 seconds of streaming after the reconnect (default 15)
# Skips (77) until strapd exists. Assumed CLI: guest/daemon.sh.
# shellcheck source=../lib.sh
. /lab/guest/lib.sh
# shellcheck source=../daemon.sh
. /lab/guest/daemon.sh
BEFORE=${1:-12} OUTAGE=${2:-20} AFTER=${3:-15}
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
step "streaming ${AFTER}s after the reconnect"
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
