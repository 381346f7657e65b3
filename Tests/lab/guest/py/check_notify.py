#!/usr/bin/python3
"""Exactly-once and decoder check: what a sensor logged as sent vs what a central received.

  check_notify.py --sensor sensor.log [--sensor ...] --central central.log
                  [--received received.jsonl] --strapctl /host/strapctl
                  [--min-count N] [--report FILE] [--checks FILE] [--prefix NAME]
                  [--uuids LIST] [--tail-excused N] [--resubscribe-excused] [--allow-missing]

Sensor logs: JSON lines with {"event": "sent", "uuid", "seq", "hex", "values", "t"}
(fake_sensor.py, bumble_sensor.py). Received: central.py's log ({"event": "notify", "uuid",
"mode", "hex", "t"} plus "subscribe"/"unsubscribe" windows), or --received, JSON lines of
{"uuid", "hex"} in arrival order (e.g. converted from strapd's store by store_to_received.py; then every sent line is
required, because a sensor only sends while connected and subscribed). A received line
without "hex" but with "values" is matched on those values (a subset of the sent ones).

For each characteristic the received payloads are aligned in order with the sent ones:
  missing     sent while the central was subscribed (before its "unsubscribe") and never received
  duplicate   received again right after its own match
  unexpected  received but never sent (or out of order)
  excused     sent after the central's "unsubscribe" and not received (in flight when it stopped)
Every matched payload is decoded by `strapctl decode UUID HEX` (our Swift decoders, the
static binary) and compared field by field with the values the sensor logged as encoded.
Checks go to --checks as JSON lines {"name", "ok", "detail"} (lib.sh's format), the full
report to --report. Exit 0 when every check passed.
"""
import argparse
import json
import math
import subprocess
import sys
import time


def load(path):
    out = []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line.startswith('{'):
                try:
                    out.append(json.loads(line))
                except json.JSONDecodeError:
                    pass
    return out


def same(a, b):
    if isinstance(a, float) or isinstance(b, float):
        if a is None or b is None:
            return a is b
        return math.isclose(float(a), float(b), rel_tol=1e-9, abs_tol=1e-9)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return a == b


class Decoder:
    def __init__(self, strapctl):
        self.strapctl = strapctl
        self.cache = {}
        self.calls = 0
        self.seconds = 0.0

    def __call__(self, uuid, hexstr):
        key = (uuid, hexstr)
        if key not in self.cache:
            t0 = time.monotonic()
            p = subprocess.run([self.strapctl, 'decode', uuid, hexstr], capture_output=True, text=True)
            self.seconds += time.monotonic() - t0
            self.calls += 1
            if p.returncode == 0:
                self.cache[key] = json.loads(p.stdout)
            else:
                self.cache[key] = {'_error': 'exit %d: %s' % (p.returncode, p.stderr.strip())}
        return self.cache[key]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--sensor', action='append', required=True)
    ap.add_argument('--central')
    ap.add_argument('--received')
    ap.add_argument('--strapctl', default='/host/strapctl')
    ap.add_argument('--min-count', type=int, default=3)
    ap.add_argument('--report')
    ap.add_argument('--checks')
    ap.add_argument('--prefix', default='')
    ap.add_argument('--uuids', help='comma list: check only these characteristics')
    ap.add_argument('--resubscribe-excused', action='store_true',
                    help='after each "return" of the sensor, excuse what it sent before the first '
                         'notification received again: a bonded sensor notifies as soon as the link is '
                         'up, and bluetoothd drops those until the central has re-subscribed')
    ap.add_argument('--tail-excused', type=int, default=0, metavar='N',
                    help='excuse the last N sent values of each characteristic when not received: a peer '
                         'that logs a value before handing it over can be stopped in between')
    ap.add_argument('--allow-missing', action='store_true',
                    help='report but do not fail on missing ones (peers that log no send times)')
    args = ap.parse_args()

    sent = {}
    returns = []
    for path in args.sensor:
        for e in load(path):
            if e.get('event') == 'return':
                returns.append(e['t'])
            if e.get('event') == 'sent':
                if args.uuids and e['uuid'] not in args.uuids.split(','):
                    continue
                sent.setdefault(e['uuid'], []).append(e)
    windows = None
    received = {}
    if args.central:
        windows = {}
        for e in load(args.central):
            ev = e.get('event')
            if ev == 'notify':
                received.setdefault(e['uuid'], []).append(e)
            elif ev == 'subscribe':
                windows.setdefault(e['uuid'], []).append([e['mode'], e['t'], math.inf])
            elif ev == 'unsubscribe':
                w = windows.get(e['uuid'], [])
                if w and w[-1][2] == math.inf:
                    w[-1][2] = e['t']
    if args.received:
        for e in load(args.received):
            received.setdefault(e['uuid'], []).append(dict(e, mode=e.get('mode', 'store')))

    decode = Decoder(args.strapctl)
    checks, report = [], {'characteristics': {}}
    for uuid in sorted(set(sent) | set(received)):
        S = sorted(sent.get(uuid, []), key=lambda e: e['seq'])
        R = received.get(uuid, [])
        W = None if windows is None else windows.get(uuid, [])

        def required(s):
            return W is None or s.get('t') is None or any(w[1] <= s['t'] < w[2] for w in W)
        p = 0
        matched, missing, excused, duplicates, unexpected = [], [], [], [], []
        def match(s, r):
            if r.get('hex') is not None:
                return s['hex'] == r['hex']
            return all(same(v, s['values'].get(k)) for k, v in r.get('values', {}).items())
        for r in R:
            j = next((k for k in range(p, len(S)) if match(S[k], r)), None)
            if j is None:
                if matched and match(matched[-1][0], r):
                    duplicates.append(r)
                else:
                    unexpected.append(r)
                continue
            for s in S[p:j]:
                (missing if required(s) else excused).append(s)
            matched.append((S[j], r))
            p = j + 1
        for s in S[p:]:
            (missing if required(s) else excused).append(s)
        if args.tail_excused:
            tail = {s['seq'] for s in S[-args.tail_excused:]}
            excused += [s for s in missing if s['seq'] in tail]
            missing = [s for s in missing if s['seq'] not in tail]
        if args.resubscribe_excused:
            # Sent after the sensor came back but before the first payload received again.
            got_t = [m[0].get('t', 0) for m in matched]
            def before_resubscribe(s):
                t = s.get('t', -1)
                return any(t0 <= t and not any(t0 <= g < t for g in got_t) for t0 in returns)
            excused += [s for s in missing if before_resubscribe(s)]
            missing = [s for s in missing if not before_resubscribe(s)]

        per_mode = {}
        for s, r in matched:
            per_mode[r.get('mode', '?')] = per_mode.get(r.get('mode', '?'), 0) + 1
        mismatches = []
        for s, r in matched:
            got = decode(uuid, s['hex'])
            bad = {k: [v, got.get(k)] for k, v in s['values'].items() if '_error' in got or not same(v, got.get(k))}
            if bad:
                mismatches.append({'seq': s['seq'], 'hex': s['hex'], 'sent': s['values'], 'strapctl': got})
        info = {'sent': len(S), 'received': len(R), 'matched': len(matched), 'per_mode': per_mode,
                'missing': [s['seq'] for s in missing], 'excused': [s['seq'] for s in excused],
                'duplicates': [r.get('hex', r.get('values')) for r in duplicates],
                'unexpected': [r.get('hex', r.get('values')) for r in unexpected],
                'decode_mismatches': mismatches[:5], 'decode_mismatch_count': len(mismatches),
                'seq_range': [S[0]['seq'], S[-1]['seq']] if S else None,
                'windows': W}
        report['characteristics'][uuid] = info
        ok = ((args.allow_missing or not missing) and not duplicates and not unexpected
              and len(matched) >= args.min_count)
        checks.append({'name': '%sdelivery-%s' % (args.prefix, uuid), 'ok': ok,
                       'detail': 'sent %d, received %d, matched %d %s, missing %s, duplicates %d, unexpected %d, '
                                 'excused (after unsubscribe or before re-subscription) %d' % (
                                     len(S), len(R), len(matched), per_mode, info['missing'] or 0,
                                     len(duplicates), len(unexpected), len(excused))})
        if W is not None:
            for w in W:
                n = per_mode.get(w[0], 0)
                checks.append({'name': '%sreceived-%s-%s' % (args.prefix, uuid, w[0]), 'ok': n >= args.min_count,
                               'detail': '%d notifications (min %d)' % (n, args.min_count)})
        checks.append({'name': '%sdecode-%s' % (args.prefix, uuid), 'ok': bool(matched) and not mismatches,
                       'detail': 'strapctl decode agrees with the encoded values for %d of %d payloads%s' % (
                           len(matched) - len(mismatches), len(matched),
                           '; first mismatch %s' % json.dumps(mismatches[0]) if mismatches else '')})
    if not sent:
        checks.append({'name': args.prefix + 'sensor-sent', 'ok': False, 'detail': 'the sensor logged no sent notification'})
    report['strapctl'] = {'path': args.strapctl, 'invocations': decode.calls,
                          'seconds': round(decode.seconds, 2)}
    report['checks'] = checks
    if args.report:
        with open(args.report, 'w') as f:
            json.dump(report, f, indent=1, sort_keys=True)
    if args.checks:
        with open(args.checks, 'a') as f:
            for c in checks:
                f.write(json.dumps(c) + '\n')
    for c in checks:
        print('%s %s: %s' % ('PASS' if c['ok'] else 'FAIL', c['name'], c['detail']))
    print('strapctl decode: %d invocations, %.1f s' % (decode.calls, decode.seconds))
    sys.exit(0 if all(c['ok'] for c in checks) else 1)


if __name__ == '__main__':
    main()
