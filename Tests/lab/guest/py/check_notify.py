#!/usr/bin/python3
"""Exactly-once and decoder check: what a sensor logged as sent vs what strapd received.

  check_notify.py --sensor sensor.log [--sensor ...] --received received.jsonl
                  --strapctl /usr/local/bin/strapctl [--decode-cache FILE]
                  [--min-count N] [--report FILE] [--checks FILE] [--prefix NAME]
                  [--uuids LIST] [--tail-excused N] [--resubscribe-excused]
                  [--in-flight-excused SECS]

Sensor logs: JSON lines with {"event": "sent", "uuid", "seq", "hex", "values", "t"}
(fake_sensor.py, bumble_sensor.py, example_log.py). Received: JSON lines of {"uuid", "hex"}
in arrival order, converted from strapd's store (store_to_received.py) or its --record
capture (capture_to_received.py). Every sent line is required: a sensor only logs what it
sends while connected and subscribed. A received line without "hex" but with "values" is
matched on those values (a subset of the sent ones).

For each characteristic the received payloads are aligned in order with the sent ones:
  missing     sent and never received
  duplicate   received again right after its own match
  unexpected  received but never sent (or out of order)
  excused     not received, but allowed to be: --tail-excused, --resubscribe-excused
Every matched payload is decoded by `strapctl decode UUID HEX` (our Swift decoders, the
static binary) and compared field by field with the values the sensor logged as encoded.
Checks go to --checks as JSON lines {"name", "ok", "detail"} (lib.sh's format), the full
report to --report. Exit 0 when every check passed.
"""
import argparse
import concurrent.futures
import json
import math
import os
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
    """strapctl decode with a cache shared by every check of a run (--decode-cache): the store
    and the capture checks decode the same payloads, and so do sensors on one sequence."""

    def __init__(self, strapctl, cache_path=None):
        self.strapctl = strapctl
        self.cache_path = cache_path
        self.cache = {}
        if cache_path and os.path.exists(cache_path):
            with open(cache_path) as f:
                self.cache = {tuple(k.split(' ', 1)): v for k, v in json.load(f).items()}
        self.calls = 0
        self.seconds = 0.0

    def run(self, key):
        p = subprocess.run([self.strapctl, 'decode', key[0], key[1]], capture_output=True, text=True)
        if p.returncode == 0:
            return json.loads(p.stdout)
        return {'_error': 'exit %d: %s' % (p.returncode, p.stderr.strip())}

    def prefetch(self, keys):
        """Decodes what the cache lacks, two at a time (the guest has 2 vCPUs)."""
        todo = sorted(set(keys) - set(self.cache))
        if not todo:
            return
        t0 = time.monotonic()
        with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
            for key, got in zip(todo, pool.map(self.run, todo)):
                self.cache[key] = got
        self.seconds += time.monotonic() - t0
        self.calls += len(todo)
        if self.cache_path:
            with open(self.cache_path, 'w') as f:
                json.dump({' '.join(k): v for k, v in self.cache.items()}, f)

    def __call__(self, uuid, hexstr):
        key = (uuid, hexstr)
        if key not in self.cache:
            self.prefetch([key])
        return self.cache[key]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--sensor', action='append', required=True)
    ap.add_argument('--received', required=True)
    ap.add_argument('--strapctl', default='/usr/local/bin/strapctl')
    ap.add_argument('--decode-cache', help='JSON file shared by the checks of one run')
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
    ap.add_argument('--in-flight-excused', type=float, default=0, metavar='SECS',
                    help='excuse what was sent in the SECS before each "linkdrop" of the sensor (an adapter '
                         'pulled mid-stream loses what was on its way through it), and what it logged '
                         'as sent after the drop, before its next "connection"')
    args = ap.parse_args()

    sent = {}
    returns = []
    drops = []
    connections = []
    for path in args.sensor:
        for e in load(path):
            if e.get('event') == 'return':
                returns.append(e['t'])
            if e.get('event') == 'linkdrop':
                drops.append(e['t'])
            if e.get('event') == 'connection':
                connections.append(e['t'])
            if e.get('event') == 'sent':
                if args.uuids and e['uuid'] not in args.uuids.split(','):
                    continue
                sent.setdefault(e['uuid'], []).append(e)
    received = {}
    for e in load(args.received):
        if args.uuids and e['uuid'] not in args.uuids.split(','):
            continue
        received.setdefault(e['uuid'], []).append(dict(e, mode=e.get('mode', 'store')))

    decode = Decoder(args.strapctl, args.decode_cache)
    decode.prefetch([(u, e['hex']) for u, es in sent.items() for e in es])
    checks, report = [], {'characteristics': {}}
    for uuid in sorted(set(sent) | set(received)):
        S = sorted(sent.get(uuid, []), key=lambda e: e['seq'])
        R = received.get(uuid, [])
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
            missing += S[p:j]
            matched.append((S[j], r))
            p = j + 1
        missing += S[p:]
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

        if args.in_flight_excused:
            def linkless_until(t0):
                # what the sensor logged as sent after its link dropped and before it was
                # connected again had no link to go over (2026-12-03 CI: a Bumble send 0.18 s
                # after the pull, logged as sent)
                return min((c for c in connections if c > t0), default=t0)

            def in_flight(s):
                t = s.get('t', -1)
                return any(t0 - args.in_flight_excused <= t <= linkless_until(t0) for t0 in drops)
            excused += [s for s in missing if in_flight(s)]
            missing = [s for s in missing if not in_flight(s)]

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
                'seq_range': [S[0]['seq'], S[-1]['seq']] if S else None}
        report['characteristics'][uuid] = info
        ok = (not missing and not duplicates and not unexpected
              and len(matched) >= args.min_count)
        checks.append({'name': '%sdelivery-%s' % (args.prefix, uuid), 'ok': ok,
                       'detail': 'sent %d, received %d, matched %d %s, missing %s, duplicates %d, unexpected %d, '
                                 'excused %d' % (
                                     len(S), len(R), len(matched), per_mode, info['missing'] or 0,
                                     len(duplicates), len(unexpected), len(excused))})
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
