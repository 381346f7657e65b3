#!/usr/bin/python3
"""peer-bleak's verdict and table: strapd and the bleak logger on the same four sensors.

  peer_report.py --sensors sensors.log --sensors-b sensors-b.log --ready sensors.ready --dir OUT

Reads from OUT: capture.jsonl (strapd --record), received-store.jsonl (store_to_received.py),
live.jsonl (live_latency.py), strapd-stat.json and logger-stat.json (procstat.py),
strapd-idle.json and logger-idle.json (the same, sensors paused), logger.sqlite and
logger-latency.jsonl (bleak_logger.py). Writes OUT/peer-report.json,
OUT/peer-table.md (printed too) and appends its checks to OUT/checks.jsonl.

Each turn has its own sensors' process and log (bumble_sensor.py "sent" lines): --sensors
for strapd's turn, --sensors-b for the logger's; the same four sensors and addresses. Each received stream is aligned in order with the sent one of its device and
characteristic (as check_notify.py does): missing, duplicate and unexpected are counted.
Latency = receive time - the sensor's "sent" time, both CLOCK_MONOTONIC of the one guest.
"""
import argparse
import json
import os
import sqlite3


def load(path):
    out = []
    if not os.path.exists(path):
        return out
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line.startswith('{'):
                out.append(json.loads(line))
    return out


def sent(sensor_log, addr):
    out = []
    for e in load(sensor_log):
        if e.get('event') == 'sent':
            e['device'] = addr[e['sensor']]
            out.append(e)
    return out


def group(events):
    g = {}
    for e in events:
        g.setdefault((e['device'].upper(), e['uuid']), []).append(e)
    return g


def match(s, r):
    if r.get('hex'):
        return s['hex'] == r['hex']
    value = r.get('value', (r.get('values') or {}).get('heartRate'))   # live sample / store sample
    return value is not None and s['values'].get('heartRate') == value


def align(sent, received, uuids=None):
    """Per (device, uuid): matched pairs and the counts of missing / duplicate / unexpected."""
    S, R = group(sent), group(received)
    pairs, res = [], {'sent': 0, 'received': 0, 'matched': 0, 'missing': 0, 'duplicate': 0, 'unexpected': 0}
    for key in sorted(set(S) | set(R)):
        if uuids and key[1] not in uuids:
            continue
        ss, rs, p, last = S.get(key, []), R.get(key, []), 0, None
        res['sent'] += len(ss)
        res['received'] += len(rs)
        for r in rs:
            j = next((k for k in range(p, len(ss)) if match(ss[k], r)), None)
            if j is None:
                res['duplicate' if last is not None and match(last, r) else 'unexpected'] += 1
                continue
            res['missing'] += j - p
            pairs.append((ss[j], r))
            last, p = ss[j], j + 1
        res['missing'] += len(ss) - p
    res['matched'] = len(pairs)
    return pairs, res


def pct(xs, q):
    if not xs:
        return None
    xs = sorted(xs)
    return xs[min(len(xs) - 1, max(0, int(round(q / 100 * len(xs) + 0.5)) - 1))]


def lat(pairs):
    ms = [(r['t'] - s['t']) * 1000 for s, r in pairs if r.get('t') is not None]
    return {'n': len(ms), 'p50_ms': pct(ms, 50), 'p99_ms': pct(ms, 99), 'max_ms': max(ms) if ms else None,
            'min_ms': min(ms) if ms else None}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--sensors', required=True)
    ap.add_argument('--sensors-b', required=True)
    ap.add_argument('--ready', required=True)
    ap.add_argument('--dir', required=True)
    args = ap.parse_args()
    D = lambda n: os.path.join(args.dir, n)   # noqa: E731
    addr = dict(line.split() for line in open(args.ready) if line.strip())
    sent_a, sent_b = sent(args.sensors, addr), sent(args.sensors_b, addr)
    hr = {'2a37'}

    cap = [{'device': e['device'], 'uuid': e['characteristic'], 'hex': e['hex'], 't': e.get('mono')}
           for e in load(D('capture.jsonl')) if e.get('event') == 'notification']
    store = load(D('received-store.jsonl'))
    live = [e for e in load(D('live.jsonl')) if e.get('event') == 'sample']
    live_dropped = sum(e.get('count') or 0 for e in load(D('live.jsonl')) if e.get('event') == 'dropped')
    rows = []
    if os.path.exists(D('logger.sqlite')):
        db = sqlite3.connect(D('logger.sqlite'))
        rows = [{'device': a, 'uuid': u[4:8], 'hex': bytes(d).hex()} for a, u, d in
                db.execute('SELECT address, characteristic, data FROM notifications ORDER BY id')]
    llog = load(D('logger-latency.jsonl'))

    recorded = os.path.exists(D('capture.jsonl'))   # strapd ran with --record (peer-bleak's default)
    _, a_cap = align(sent_a, cap)
    _, a_store = align(sent_a, store, hr)
    live_pairs, a_live = align(sent_a, live, hr)
    _, b_db = align(sent_b, rows)
    b_pairs, b_lat = align(sent_b, llog)
    b_hr_pairs = [(s, r) for s, r in b_pairs if s['uuid'] == '2a37']
    st_s = json.load(open(D('strapd-stat.json'))) if os.path.exists(D('strapd-stat.json')) else {}
    st_l = json.load(open(D('logger-stat.json'))) if os.path.exists(D('logger-stat.json')) else {}
    L_s, L_l, L_all = lat(live_pairs), lat(b_hr_pairs), lat(b_pairs)
    # the sensors' loop sleeps INTERVAL between ticks, so under load they send fewer per second
    in_win = lambda ev, st: sum(1 for e in ev if st and st['t0'] <= e['t'] <= st['t1'])   # noqa: E731
    n_s, n_l = in_win(sent_a, st_s), in_win(sent_b, st_l)
    per_s = st_s['cpu_s'] * 1000 / n_s if n_s else None
    per_l = st_l['cpu_s'] * 1000 / n_l if n_l else None
    idle_s = json.load(open(D('strapd-idle.json'))) if os.path.exists(D('strapd-idle.json')) else {}
    idle_l = json.load(open(D('logger-idle.json'))) if os.path.exists(D('logger-idle.json')) else {}
    rep = {'strapd': {'capture': a_cap, 'store_hr': a_store, 'live_hr': a_live, 'live_dropped': live_dropped,
                      'latency_hr': L_s, 'proc': st_s, 'idle': idle_s,
                      'window_notifications': n_s, 'cpu_ms_per_notification': per_s},
           'logger': {'sqlite': b_db, 'committed': b_lat, 'latency_hr': L_l, 'latency_all': L_all, 'proc': st_l, 'idle': idle_l,
                      'window_notifications': n_l, 'cpu_ms_per_notification': per_l}}

    def clean(r, need_sent=True):
        return r['missing'] == 0 and r['duplicate'] == 0 and r['unexpected'] == 0 and (r['sent'] > 0 or not need_sent)
    checks = [
        ('strapd-accounted', (clean(a_cap) or not recorded) and clean(a_store) and clean(a_live) and live_dropped == 0,
         'capture %s; store HR %s; live HR %s, dropped %d' % (a_cap, a_store, a_live, live_dropped)),
        ('logger-accounted', clean(b_db) and clean(b_lat), 'sqlite %s; commit times %s' % (b_db, b_lat)),
        ('measured', bool(st_s) and bool(st_l) and L_s['n'] > 0 and L_l['n'] > 0,
         'strapd %s; logger %s' % (st_s, st_l)),
    ]
    with open(D('checks.jsonl'), 'a') as f:
        for n, ok, d in checks:
            f.write(json.dumps({'name': n, 'ok': ok, 'detail': d}) + '\n')

    def mib(kb):
        return '%.1f' % (kb / 1024) if kb else '—'

    def ms(x):
        return '%.1f' % x if x is not None else '—'

    def ratio(a, b):
        return '%.2f' % (a / b) if a and b else '—'
    rss_s, rss_l = st_s.get('rss_peak_kb'), st_l.get('rss_peak_kb')
    cpu_s, cpu_l = st_s.get('cpu_s_per_h'), st_l.get('cpu_s_per_h')
    p99_s, p99_l = L_s['p99_ms'], L_l['p99_ms']
    verdict = lambda ok: 'met' if ok else 'NOT met'   # noqa: E731
    t = ['| | strapd | bleak logger | strapd / logger | target |', '|---|---|---|---|---|',
         '| RSS peak in the window (MiB; smaps_rollup) | %s | %s | %s | ≤ 0.20: %s |' % (
             mib(rss_s), mib(rss_l), ratio(rss_s, rss_l), verdict(rss_s and rss_l and rss_s <= rss_l / 5)),
         '| RSS at the end (MiB) | %s | %s | %s | |' % (
             mib(st_s.get('rss_end_kb')), mib(st_l.get('rss_end_kb')), ratio(st_s.get('rss_end_kb'), st_l.get('rss_end_kb'))),
         '| of it anonymous / mapped files (MiB) | %s / %s | %s / %s | | |' % (
             mib(st_s.get('anon_kb')), mib(st_s.get('file_kb')), mib(st_l.get('anon_kb')), mib(st_l.get('file_kb'))),
         '| the peak: s into the window, anonymous / mapped files (MiB) | %s s, %s / %s | %s s, %s / %s | | |' % (
             st_s.get('peak_at_s', '—'), mib(st_s.get('peak_anon_kb')), mib(st_s.get('peak_file_kb')),
             st_l.get('peak_at_s', '—'), mib(st_l.get('peak_anon_kb')), mib(st_l.get('peak_file_kb'))),
         '| VmRSS (top, ps) peak / at the end (MiB) | %s / %s | %s / %s | | |' % (
             mib(st_s.get('vmrss_peak_kb')), mib(st_s.get('vmrss_end_kb')), mib(st_l.get('vmrss_peak_kb')), mib(st_l.get('vmrss_end_kb'))),
         '| VmHWM, lifetime peak (MiB) | %s | %s | %s | |' % (
             mib(st_s.get('hwm_kb')), mib(st_l.get('hwm_kb')), ratio(st_s.get('hwm_kb'), st_l.get('hwm_kb'))),
         '| CPU (s per hour) | %s | %s | %s | ≤ 0.33: %s |' % (
             cpu_s, cpu_l, ratio(cpu_s, cpu_l), verdict(cpu_s is not None and cpu_l and cpu_s <= cpu_l / 3)),
         '| notifications sent in the window (per s) | %d (%.1f) | %d (%.1f) | | |' % (
             n_s, n_s / st_s['window_s'] if st_s else 0, n_l, n_l / st_l['window_s'] if st_l else 0),
         '| CPU per notification in the window (ms) | %s | %s | %s | |' % (ms(per_s), ms(per_l), ratio(per_s, per_l)),
         '| CPU, sensors paused, links up (s per hour) | %s | %s | %s | |' % (
             idle_s.get('cpu_s_per_h'), idle_l.get('cpu_s_per_h'), ratio(idle_s.get('cpu_s_per_h'), idle_l.get('cpu_s_per_h'))),
         '| HR latency p50 (ms) | %s | %s | %s | |' % (ms(L_s['p50_ms']), ms(L_l['p50_ms']), ratio(L_s['p50_ms'], L_l['p50_ms'])),
         '| HR latency p99 (ms) | %s | %s | %s | ≤ 1: %s |' % (
             ms(p99_s), ms(p99_l), ratio(p99_s, p99_l), verdict(p99_s is not None and p99_l and p99_s <= p99_l)),
         '| HR latency max (ms) | %s | %s | | |' % (ms(L_s['max_ms']), ms(L_l['max_ms'])),
         '| notifications sent (all chars) | %d | %d | | |' % (len(sent_a), b_db['sent']),
         '| received / missing / dup / unexpected | %s | %d / %d / %d / %d (SQLite) | | |' % (
             '%d / %d / %d / %d (capture)' % (a_cap['matched'], a_cap['missing'], a_cap['duplicate'], a_cap['unexpected'])
             if recorded else 'no --record: heart rate only, next row',
             b_db['matched'], b_db['missing'], b_db['duplicate'], b_db['unexpected']),
         '| HR sent / at the reader / missing | %d / %d / %d (live; store %d) | %d / %d / %d (after commit) | | |' % (
             a_live['sent'], a_live['matched'], a_live['missing'], a_store['matched'],
             sum(1 for s in sent_b if s['uuid'] == '2a37'), L_l['n'],
             sum(1 for s in sent_b if s['uuid'] == '2a37') - L_l['n']),
         '| CPU window (s) / threads | %s / %s | %s / %s | | |' % (
             st_s.get('window_s'), st_s.get('threads'), st_l.get('window_s'), st_l.get('threads'))]
    floor = {}
    for side, st, n in (('strapd', st_s, n_s), ('logger', st_l, n_l)):
        f_st = json.load(open(D('floor-%s-stat.json' % side))) if os.path.exists(D('floor-%s-stat.json' % side)) else {}
        f_n = json.load(open(D('floor-%s.json' % side))) if os.path.exists(D('floor-%s.json' % side)) else {}
        if f_st and n:
            floor[side] = {'proc': f_st, 'signals': f_n.get('signals'), 'io': f_n.get('io', False),
                           'cpu_ms_per_notification': f_st['cpu_s'] * 1000 / n}
    if floor:
        rep['floor'] = floor
        f_s, f_l = floor.get('strapd', {}), floor.get('logger', {})
        t.append('| dbus-floor%s beside it: CPU per notification (ms), signals seen | %s, %s | %s, %s | %s | |' % (
            ' --io' if f_s.get('io') or f_l.get('io') else '', ms(f_s.get('cpu_ms_per_notification')), f_s.get('signals'), ms(f_l.get('cpu_ms_per_notification')),
            f_l.get('signals'), ratio(f_s.get('cpu_ms_per_notification'), per_l)))
    t.append('')
    t.append('Logger latency over every characteristic (n %d): p50 %s ms, p99 %s ms.' % (
        L_all['n'], ms(L_all['p50_ms']), ms(L_all['p99_ms'])))
    rep['table'] = t
    with open(D('peer-report.json'), 'w') as f:
        json.dump(rep, f, indent=1, sort_keys=True)
    with open(D('peer-table.md'), 'w') as f:
        f.write('\n'.join(t) + '\n')
    print('\n'.join(t))
    for n, ok, d in checks:
        print('%s %s: %s' % ('PASS' if ok else 'FAIL', n, d))
    return 0 if all(ok for _, ok, _ in checks) else 1


if __name__ == '__main__':
    raise SystemExit(main())
