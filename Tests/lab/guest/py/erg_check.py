#!/usr/bin/python3
"""daemon-erg's judge: what the Bumble trainer received against the plan strapd rode.

  erg_check.py --control trainer-control.jsonl --sensor sensor-trainer.log --workout workout.json
               --start WALL --end WALL --loss WALL --targets 150,220,120 --slack 5 --resume-slack 10
               --checks checks.jsonl --report erg-report.txt

Inputs: the trainer's log of control point writes (bumble_trainer.py; every line has the
monotonic `t` and the epoch `wall`), its event log (connections, vanish/return, the Indoor Bike
Data it sent; monotonic `t`, turned into epoch time with the control log's offset), the saved
workout (`strapctl --json workout end`: its laps' starts are the step boundaries strapd took),
and the epoch times the scenario noted: workout start, out-of-range signal, workout end.

Checks (lib.sh's JSON lines): erg-step1/2/3 (each step's target accepted within --slack of its
boundary: the workout's start, then lap 2's and lap 3's starts), link-lost (the link dropped in
step 2), erg-resumed (on the next connection: Request Control, then the step's target before any
other, within --resume-slack of the reconnection), erg-targets-in-order (per connection, the
accepted targets are the plan's, and no write was refused), erg-reset (a Reset accepted within
--slack of the end, the last write), trainer-power-followed (Indoor Bike Data reached each
target), workout-laps (3 laps, starting at the plan's step boundaries within --slack). The
report is the timeline in words, also printed.
"""
import argparse
import datetime
import json
import time


def load(path):
    out = []
    try:
        with open(path) as f:
            for line in f:
                if line.startswith('{'):
                    try:
                        out.append(json.loads(line))
                    except ValueError:
                        pass
    except OSError:
        pass
    return out


def epoch(text):
    return datetime.datetime.fromisoformat(text.replace('Z', '+00:00')).timestamp()


def main():
    ap = argparse.ArgumentParser()
    for a in ('--control', '--sensor', '--workout', '--checks', '--report'):
        ap.add_argument(a, required=True)
    for a in ('--start', '--end', '--loss', '--slack', '--resume-slack'):
        ap.add_argument(a, type=float, required=True)
    ap.add_argument('--targets', required=True)
    ap.add_argument('--steps', required=True, help='step seconds, e.g. 30,50,30')
    args = ap.parse_args()
    targets = [int(x) for x in args.targets.split(',')]
    steps = [float(x) for x in args.steps.split(',')]
    writes = load(args.control)
    events = load(args.sensor)
    checks, report = [], []

    def check(name, ok, detail):
        checks.append({'name': name, 'ok': bool(ok), 'detail': detail})

    def rel(t):
        return '+%.1f s' % (t - args.start) if t is not None else 'never'

    # monotonic -> epoch: from the control log's own pairs, else from this process (same guest
    # clocks; the guest has no network, so nothing steps its wall clock)
    offset = writes[0]['wall'] - writes[0]['t'] if writes else time.time() - time.monotonic()

    def wall(e):
        return e['t'] + offset

    try:
        with open(args.workout) as f:
            w = json.load(f)['result']['workout']
        laps = [epoch(lap['start']) for lap in w.get('laps', []) if lap.get('start')]
    except (OSError, ValueError, KeyError, TypeError) as e:
        w, laps = None, []
        check('workout-saved', False, 'no saved workout in %s: %s' % (args.workout, e))
    if w is not None:
        check('workout-saved', bool(w.get('uuid')), 'workout %s, %d laps' % (w.get('uuid'), len(laps)))
    nominal = [args.start, args.start + steps[0], args.start + steps[0] + steps[1]]
    bounds = [args.start] + laps[1:3]
    lap_ok = len(laps) == 3 and all(abs(a - b) <= args.slack for a, b in zip(laps, nominal))
    check('workout-laps', lap_ok, '%d laps starting at %s (plan: %s)'
          % (len(laps), ', '.join(rel(t) for t in laps), ', '.join(rel(t) for t in nominal)))

    accepted = [x for x in writes if x['opName'] == 'setTargetPower' and x['resultName'] == 'success']
    conns = sorted({x['connection'] for x in writes})
    loss = next((wall(e) for e in events if e['event'] == 'vanish'), None)
    back = next((wall(e) for e in events if e['event'] == 'return'), None)
    reconnect = next((wall(e) for e in events if e['event'] == 'trainer-connection'
                      and back is not None and wall(e) >= back), None)

    def first_target(value, after, conn=None):
        return next((x for x in accepted if x['target'] == value and x['wall'] >= after - 0.5
                     and (conn is None or x['connection'] == conn)), None)

    # step 1: from the workout's start, on the first connection
    for i, (value, boundary) in enumerate(zip(targets, bounds + [None] * 3)):
        name = 'erg-step%d' % (i + 1)
        if boundary is None:
            check(name, False, 'no lap %d in the saved workout to time step %d by' % (i + 1, i + 1))
            continue
        x = first_target(value, boundary)
        ok = x is not None and x['wall'] - boundary <= args.slack
        check(name, ok, 'step %d (%d W) begins %s; target %d W accepted %s (%s)'
              % (i + 1, value, rel(boundary), value, rel(x['wall']) if x else 'never',
                 '%.1f s after the boundary, connection %s' % (x['wall'] - boundary, x['connection']) if x else
                 'writes seen: %s' % [(y['opName'], y['target'], y['resultName']) for y in writes][:8]))
        report.append('erg: step %d %d W begins %s; the trainer got %d W %s' % (i + 1, value, rel(boundary), value,
                                                                              rel(x['wall']) if x else 'never'))

    in_step2 = loss is not None and len(bounds) > 2 and bounds[1] < loss < bounds[2]
    lost = next((e for e in events if e['event'] == 'control-lost'), None)
    check('link-lost', in_step2 and back is not None,
          'out of range %s (step 2: %s to %s), back %s, strapd reconnected %s; trainer control lost: %s'
          % (rel(loss), rel(bounds[1]) if len(bounds) > 1 else '?', rel(bounds[2]) if len(bounds) > 2 else '?',
             rel(back), rel(reconnect), 'yes' if lost else 'no (strapd did not hold control)'))
    after = [x for x in writes if reconnect is not None and x['wall'] >= reconnect]
    rc = next((x for x in after if x['opName'] == 'requestControl' and x['resultName'] == 'success'), None)
    first = next((x for x in after if x['opName'] == 'setTargetPower' and x['resultName'] == 'success'), None)
    ok = rc is not None and first is not None and rc['wall'] <= first['wall'] and first['target'] == targets[1] \
        and first['wall'] - reconnect <= args.resume_slack
    check('erg-resumed', ok, 'reconnected %s; Request Control %s; first target %s W %s (%s)'
          % (rel(reconnect), rel(rc['wall']) if rc else 'never', first['target'] if first else '-',
             rel(first['wall']) if first else 'never',
             '%.1f s after the reconnection' % (first['wall'] - reconnect) if first and reconnect else 'not resumed'))
    report.append('erg: link lost %s for %s s; reconnected %s; Request Control %s; target %s W %s'
                  % (rel(loss), '%.0f' % (back - loss) if back and loss else '?', rel(reconnect),
                     rel(rc['wall']) if rc else 'never', first['target'] if first else '-',
                     rel(first['wall']) if first else 'never'))

    def collapsed(values):
        out = []
        for v in values:
            if not out or out[-1] != v:
                out.append(v)
        return out
    per_conn = {c: collapsed([x['target'] for x in accepted if x['connection'] == c]) for c in conns}
    refused = [(x['connection'], x['opName'], x['target'], x['resultName']) for x in writes if x['resultName'] != 'success']
    want = [targets[:2], targets[1:]]
    ok = [per_conn.get(c) for c in conns] == want and not refused
    check('erg-targets-in-order', ok, 'accepted targets per connection %s (want %s); refused writes: %s'
          % ([per_conn.get(c) for c in conns], want, refused or 'none'))

    resets = [x for x in writes if x['opName'] == 'reset' and x['resultName'] == 'success' and x['wall'] >= args.end - 0.5]
    r = resets[0] if resets else None
    ok = r is not None and r['wall'] - args.end <= args.slack and writes[-1] is resets[-1]
    check('erg-reset', ok, 'workout end %s; Reset accepted %s%s'
          % (rel(args.end), rel(r['wall']) if r else 'never',
             '' if not r or writes[-1] is resets[-1] else '; written after it: %s' % writes[-1]['opName']))
    report.append('erg: workout end %s; the trainer got Reset %s' % (rel(args.end), rel(r['wall']) if r else 'never'))

    sent = [(wall(e), e['values']['power']) for e in events if e['event'] == 'sent' and e.get('uuid') == '2ad2']
    windows = [(targets[0], bounds[0], bounds[1] if len(bounds) > 1 else None),
               (targets[1], bounds[1] if len(bounds) > 1 else None, loss),
               (targets[1], reconnect, bounds[2] if len(bounds) > 2 else None),
               (targets[2], bounds[2] if len(bounds) > 2 else None, args.end)]
    reached = []
    for value, a, b in windows:
        last = [p for t, p in sent if a is not None and b is not None and a <= t < b]
        reached.append((value, last[-1] if last else None))
    check('trainer-power-followed', all(p is not None and abs(p - v) <= 5 for v, p in reached),
          'Indoor Bike Data power at the end of each stretch (target, power): %s' % reached)
    report.append('erg: Indoor Bike Data power at the end of each stretch (target W, power W): %s' % reached)

    with open(args.checks, 'a') as f:
        for c in checks:
            f.write(json.dumps(c) + '\n')
    with open(args.report, 'w') as f:
        f.write('\n'.join(report) + '\n')
    print('\n'.join(report))
    return 0 if all(c['ok'] for c in checks) else 1


if __name__ == '__main__':
    raise SystemExit(main())
