# daemon-erg: strapd rides a 3-step power plan on the lab's Bumble FTMS trainer
# (guest/py/bumble_trainer.py, checked alone by peer-trainer) through real bluetoothd, in ERG:
# each step's power target must reach the trainer's control point at the step's boundary, a
# 10 s link loss in the middle of step 2 (the trainer out of range: both sides of the link drop
# as on a supervision timeout, it stops being heard, then advertises again) must end with
# strapd, on the new connection, asking for control again and setting step 2's target again,
# and ending the workout must reset the trainer (op 0x01).
#   trainer: connected without pairing, as trainers are; strapd's trainer service (issue 35,
#   docs/trainer.md) takes control and sets the targets. The trainer logs every control point
#   write (trainer-control.jsonl); erg_check.py judges that log against the laps strapd took.
# A strapd that does not control the trainer fails at trainer-controlled, 20 s after the
# workout's start, and the scenario ends there (no long wait for what cannot come).
# Args: 1 step seconds "S1,S2,S3" (default 30,50,30)  2 outage seconds (default 10)
#       3 seconds into step 2 at which the link is lost (default 15)
#       4 seconds into step 3 at which the workout ends (default 15, less than S3)
#       5 slack in seconds between a step's boundary and its target on the trainer (default 5)
#       6 "continue": go on after a failed trainer-controlled, to see the rest of the timeline
#         (the link loss, strapd's reconnect, the laps) with a strapd that does not control yet
# shellcheck source=../lib.sh
. /lab/guest/lib.sh
# shellcheck source=../daemon.sh
. /lab/guest/daemon.sh
STEPS=${1:-30,50,30} OUTAGE=${2:-10} LOSS_AT=${3:-15} END_AT=${4:-15} SLACK=${5:-5} GATE=${6:-stop}
IFS=, read -r S1 S2 S3 <<< "$STEPS"
TARGETS=150,220,120
daemon_require
CONTROL=$OUT/trainer-control.jsonl
S=$OUT/sensor-trainer.log
bumble_up "$S" /tmp/sensor.ready --name trainer --services ftms --interval 0.5 --outage "$OUTAGE" --control-log "$CONTROL"
TRAINER=$(cat /tmp/sensor.ready)
daemon_start hci0 || exit 1
daemon_scan "$TRAINER" || exit 1
attach_step connect "$TRAINER" "" || exit 1
now() { python3 -c 'import time; print("%.3f" % time.time())'; }
# wait_until EPOCH: sleep until that wall-clock time (the steps are timed from the start)
wait_until() { python3 -c 'import sys, time; time.sleep(max(0.0, float(sys.argv[1]) - time.time()))' "$1"; }
at() { python3 -c 'import sys; print("%.3f" % (float(sys.argv[1]) + sum(float(x) for x in sys.argv[2:])))' "$@"; }

cat > "$OUT/plan.json" <<EOF
{"name": "lab ERG", "activity": "cycling", "blocks": [{"iterations": 1, "steps": [
 {"purpose": "work", "goal": {"time": $S1}, "target": {"power": {"watts": [150, 150]}}, "displayName": "150 W"},
 {"purpose": "work", "goal": {"time": $S2}, "target": {"power": {"watts": [220, 220]}}, "displayName": "220 W"},
 {"purpose": "recovery", "goal": {"time": $S3}, "target": {"power": {"watts": [120, 120]}}, "displayName": "120 W"}]}]}
EOF
if ctl --json plan save "$OUT/plan.json" > "$OUT/plan-save.json" 2>&1 &&
	PLAN=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["result"]["uuid"])' "$OUT/plan-save.json"); then
	check plan-saved OK "plan $PLAN: ${S1} s at 150 W, ${S2} s at 220 W, ${S3} s at 120 W"
else
	check plan-saved FAIL "$(tail -c 300 "$OUT/plan-save.json")"; exit 1
fi
T_START=$(now)
ctl --json workout start --activity cycling --location indoor --device "$TRAINER" --plan "$PLAN" > "$OUT/workout-start.json" 2>&1 ||
	{ check workout-started FAIL "$(tail -c 300 "$OUT/workout-start.json")"; exit 1; }
WORKOUT=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["result"]["session"]["session"])' "$OUT/workout-start.json")
check workout-started OK "session $WORKOUT on the plan, trainer $TRAINER"
end_workout() { T_END=$(now); ctl --json workout end "$WORKOUT" > "$OUT/workout.json" 2>&1; }

# The gate: step 1's target on the trainer. Without it nothing later can pass; say why and stop.
# (Deadlines by the clock: under TCG each grep costs a good part of a second.)
t=$((SECONDS + 20))
until grep -q '"opName": "setTargetPower".*"resultName": "success"' "$CONTROL" 2>/dev/null || [ $SECONDS -ge $t ]; do sleep 0.5; done
if ! grep -q '"opName": "setTargetPower".*"resultName": "success"' "$CONTROL" 2>/dev/null; then
	writes=$(python3 -c 'import json,sys; print([(e["opName"], e["target"], e["resultName"]) for e in map(json.loads, open(sys.argv[1]))])' "$CONTROL" 2>/dev/null)
	check trainer-controlled FAIL "no Set Target Power accepted by the trainer within 20 s of the workout's start: strapd does not control the trainer (control point writes: ${writes:-none}; strapd log: $(grep -a -i -m3 'trainer\|2ad9\|control point' "$STRAPD_LOG" | cut -c1-160 | paste -sd' '))"
	[ "$GATE" = continue ] || { end_workout; exit 1; }
else
	check trainer-controlled OK "$(grep -m1 '"opName": "setTargetPower"' "$CONTROL" | cut -c1-200)"
fi

step "step 2 from +${S1} s; out of range at +$((S1 + LOSS_AT)) s for ${OUTAGE} s"
wait_until "$(at "$T_START" "$S1" "$LOSS_AT")"
T_LOSS=$(now)
kill -HUP "$BUMBLE_PID"
# back, and strapd connected again by itself (no strapctl command)
t=$((SECONDS + OUTAGE + 60))
until [ "$(grep -c '"event": "trainer-connection"' "$S")" -ge 2 ] || [ $SECONDS -ge $t ]; do sleep 0.5; done
step "trainer: $(grep -c '"event": "trainer-connection"' "$S") connection(s) so far"
wait_until "$(at "$T_START" "$S1" "$S2" "$END_AT")"
step "ending the workout in step 3"
end_workout
sleep 8                                   # strapd's end: the saved workout, then the trainer's Reset
ctl workout show "$WORKOUT" > "$OUT/workout-show.txt" 2>&1
cat "$OUT/workout-show.txt"
kill -USR1 "$BUMBLE_PID"
python3 "$PY/erg_check.py" --control "$CONTROL" --sensor "$S" --workout "$OUT/workout.json" \
	--start "$T_START" --end "$T_END" --loss "$T_LOSS" --targets "$TARGETS" --steps "$STEPS" \
	--slack "$SLACK" --resume-slack $((SLACK * 2)) --checks "$OUT/checks.jsonl" --report "$OUT/erg-report.txt"
rc=$?
grep -E '"name": "(erg-|link-lost|trainer-power|workout-)' "$OUT/checks.jsonl" |
	python3 -c 'import json,sys; [print("check: %-24s %s  %s" % (c["name"], "OK  " if c["ok"] else "FAIL", c["detail"])) for c in map(json.loads, sys.stdin)]'
grep -q '"ok": false' "$OUT/checks.jsonl" && rc=1
exit $rc
