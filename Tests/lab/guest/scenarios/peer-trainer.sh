# peer-trainer: the lab's Bumble power meter and FTMS trainer (guest/py/bumble_trainer.py)
# checked on their own, through real bluetoothd, with no strapd: bleak (guest/py/trainer_probe.py,
# what any FTMS app does) connects to both through hci0, Bumble's adapter behind /dev/vhci.
# Trainer: reads, the control point's rules (indications first, control first, range, reset,
# control lost with the link: an out-of-range of --outage seconds, SIGHUP to the Bumble process),
# a target reaching Indoor Bike Data's power. Power meter: feature, location, CP Measurement.
# Then the trainer's own JSON-lines log of control point writes must agree with what bleak wrote.
# This is the peers' self-check: daemon-erg relies on them behaving like this.
# Args: 1 outage seconds (default 5)
# shellcheck source=../lib.sh
. /lab/guest/lib.sh
# shellcheck source=../daemon.sh
. /lab/guest/daemon.sh
OUTAGE=${1:-5}
python3 -c 'import bleak' 2>/dev/null || skip "bleak is not installed in the image (image/pip-requirements.txt, LAB_PIP_PKGS)"
CONTROL=$OUT/trainer-control.jsonl
bumble_up "$OUT/sensors.log" /tmp/sensors.ready --interval 0.5 --outage "$OUTAGE" --control-log "$CONTROL" \
	--sensor pm=cp --sensor trainer=ftms
declare -A ADDR
while read -r name addr; do ADDR[$name]=$addr; done < /tmp/sensors.ready
step "power meter ${ADDR[pm]}, trainer ${ADDR[trainer]}"
timeout 180 python3 "$PY/trainer_probe.py" --trainer "${ADDR[trainer]}" --power-meter "${ADDR[pm]}" \
	--bumble-pid "$BUMBLE_PID" --outage "$OUTAGE" --checks "$OUT/checks.jsonl" > "$OUT/probe.log" 2>&1
rc=$?
cat "$OUT/probe.log"
# exit 1: some of its checks failed (recorded); anything else: it did not finish
case $rc in 0) check probe-finished OK "" ;; 1) check probe-finished OK "with failed checks" ;;
*) check probe-finished FAIL "trainer_probe.py exit $rc: $(tail -2 "$OUT/probe.log" | paste -sd' ')" ;; esac
# The trainer's log, one line per write: what bleak wrote, in order, with the results it saw.
python3 - "$CONTROL" <<'PYEOF' >> "$OUT/checks.jsonl"
import json, sys
try:
    log = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
except OSError as e:
    log = []
got = [(e['connection'], e['opName'], e['target'], e['resultName']) for e in log]
want = [(1, 'requestControl', None, 'cccdImproperlyConfigured'),
        (1, 'setTargetPower', 200, 'controlNotPermitted'), (1, 'requestControl', None, 'success'),
        (1, 'setTargetPower', 200, 'success'), (1, 'setTargetPower', 2500, 'invalidParameter'),
        (1, 'reset', None, 'success'), (1, 'setTargetPower', 150, 'controlNotPermitted'),
        (1, 'requestControl', None, 'success'), (1, 'setTargetPower', 180, 'success'),
        (2, 'setTargetPower', 180, 'controlNotPermitted'), (2, 'requestControl', None, 'success'),
        (2, 'setTargetPower', 180, 'success'), (2, 'reset', None, 'success')]
ok = got == want
detail = '%d writes logged, as written' % len(got) if ok else 'logged %s, expected %s' % (got, want)
print(json.dumps({'name': 'control-log', 'ok': ok, 'detail': detail}))
PYEOF
tail -1 "$OUT/checks.jsonl"
grep -q '"ok": false' "$OUT/checks.jsonl" && exit 1
exit 0
