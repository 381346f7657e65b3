#!/usr/bin/python3
"""The reader and the judge of the power-cut scenario (guest/scenarios/powercut.sh).

  powercut.py follow --socket PATH --anchor N --dir CUTDIR
      An anchored follower from anchor N and a live subscriber, on two connections. Every item
      the follower is given goes to CUTDIR/given.jsonl (the item exactly as served), every live
      sample to CUTDIR/live.jsonl with CLOCK_MONOTONIC on arrival. Both are flushed after each
      read, and CUTDIR is on the host (9p): what is in them was given before the cut and
      survives it, like a reader on another machine. CUTDIR/following appears with the first item.

  powercut.py check --socket PATH --dir CUTDIR --mode always|interval|none --interval-ms MS
                    --before SCAN.json --after SCAN.json [--slack S]
      After the reboot, with strapd up on the cut store and nothing recording: every item the
      reader was given is still served with the same anchor, uuid and content (always, interval;
      for none, those the store kept), the reader's last anchor is refused with anchorAhead exactly
      when it is past the store's end, every served anchor lies in a record whose CRC holds
      (store_scan.py after strapd opened the store), and the live samples that were lost were all
      recorded within the last interval (plus SLACK seconds) before the cut. Writes CUTDIR/check.json.
"""
import argparse
import collections
import json
import os
import select
import socket
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import store_scan  # noqa: E402


class Conn:
    def __init__(self, path):
        self.s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.s.connect(path)
        self.buf = b''

    def send(self, obj):
        self.s.sendall((json.dumps(obj) + '\n').encode())

    def lines(self):
        """The complete lines one recv brings ([] never: raises EOFError at the end)."""
        chunk = self.s.recv(1 << 20)
        if not chunk:
            raise EOFError
        self.buf += chunk
        *lines, self.buf = self.buf.split(b'\n')
        return [json.loads(l) for l in lines if l.strip()]

    def reply(self, obj):
        self.send(obj)
        while True:
            for m in self.lines():
                if m.get('id') == obj['id'] and 'event' not in m:
                    return m


def follow(a):
    os.makedirs(a.dir, exist_ok=True)
    given = open(os.path.join(a.dir, 'given.jsonl'), 'a')
    live = open(os.path.join(a.dir, 'live.jsonl'), 'a')
    f, l = Conn(a.socket), Conn(a.socket)
    l.send({'id': 'l', 'op': 'live.subscribe'})
    f.send({'id': 'f', 'op': 'samples.anchored', 'anchor': a.anchor, 'limit': 1000, 'follow': True})
    announced = False
    while True:
        try:
            ready, _, _ = select.select([f.s, l.s], [], [])
            _follow_step(ready, f, l, given, live)
        except EOFError:
            return 0   # strapd stopped (or the power is about to go)
        if not announced and given.tell() > 0:
            open(os.path.join(a.dir, 'following'), 'w').close()
            announced = True


def _follow_step(ready, f, l, given, live):
    """One select round: log what each connection brought, flushed, so it reaches the host."""
    if l.s in ready:
        t = time.monotonic()
        for m in l.lines():
            if m.get('event') in ('sample', 'dropped'):
                live.write(json.dumps({'m': t, 'event': m['event'], 'data': m['data']}) + '\n')
        live.flush()
    if f.s in ready:
        items = []
        for m in f.lines():
            if m.get('event') == 'added':
                items.append(m['data'])
            elif m.get('ok') is True:
                items += m['result']['added']
            elif m.get('ok') is False or m.get('event') == 'error':
                given.write(json.dumps({'error': m}) + '\n')
                given.flush()
                raise EOFError
        for it in items:
            given.write(json.dumps(it, sort_keys=True) + '\n')
        given.flush()


def read_jsonl(path):
    try:
        with open(path) as f:
            out = []
            for line in f:
                try:
                    out.append(json.loads(line))
                except ValueError:
                    pass   # a line cut by the power loss (the file lives on the host, so rare)
            return out
    except FileNotFoundError:
        return []


def stored_from(conn, anchor):
    """Every item past `anchor`, and the store's end (or the anchorAhead reply)."""
    items = {}
    while True:
        r = conn.reply({'id': 'q', 'op': 'samples.anchored', 'anchor': anchor, 'limit': 10000})
        if not r.get('ok'):
            return items, anchor, r
        page = r['result']
        for it in page['added']:
            items[it['anchor']] = it
        if not page['added'] and not page['deleted']:
            return items, page['anchor'], None
        anchor = page['anchor']


def key(item):
    return ((item.get('device') or {}).get('address'), item.get('type'), item.get('start'))


def check(a):
    given = [g for g in read_jsonl(os.path.join(a.dir, 'given.jsonl')) if 'anchor' in g]
    errors = [g for g in read_jsonl(os.path.join(a.dir, 'given.jsonl')) if 'error' in g]
    live = read_jsonl(os.path.join(a.dir, 'live.jsonl'))
    with open(os.path.join(a.dir, 'cut.json')) as f:
        cut = json.load(f)
    with open(os.path.join(a.dir, 'start')) as f:
        start = int(f.read())
    with open(a.before) as f:
        before = json.load(f)
    with open(a.after) as f:
        after = json.load(f)
    conn = Conn(a.socket)
    stored, latest, refused = stored_from(conn, 0)
    if refused is not None:
        latest = -1   # the store refused anchor 0: nothing below can be judged
    r = {'mode': a.mode, 'start': start, 'latest': latest, 'given': len(given), 'readerErrors': len(errors),
         'stored': len(stored), 'storedSinceStart': sum(1 for k in stored if k > start)}

    # 1. what the reader was given
    missing = [g['anchor'] for g in given if g['anchor'] not in stored]
    changed = [g['anchor'] for g in given if g['anchor'] in stored and stored[g['anchor']] != g]
    r.update(givenMissing=len(missing), givenChanged=len(changed), firstMissing=missing[:5], firstChanged=changed[:5])

    # 2. the reader's last anchor: anchorAhead exactly when it is past the store's end
    last = max([g['anchor'] for g in given], default=start)
    reply = conn.reply({'id': 'a', 'op': 'samples.anchored', 'anchor': last, 'limit': 1})
    code = None if reply.get('ok') else (reply.get('error') or {}).get('code')
    told = (reply.get('error') or {}).get('data', {}).get('latestAnchor')
    r.update(readerLast=last, readerAhead=last > latest, aheadReply=code or 'ok', aheadLatest=told)
    r['aheadToldRight'] = (code == 'anchorAhead' and told == latest) if last > latest else reply.get('ok') is True

    # 3. every served anchor lies in a record whose checksum holds
    bad = [k for k in stored if not store_scan.covered(after['valid'], k)]
    r['servedOutsideIntact'] = len(bad)
    r['tornBefore'] = [s['file'] + ':' + s['stop'] for s in before['segments'] if s['stop'] != 'eof']
    r['tornAfter'] = [s['file'] + ':' + s['stop'] for s in after['segments'] if s['stop'] != 'eof']
    r['scanLatest'] = after['latest']

    # 4. what recording lost: live samples of this run not in the store
    kept = collections.Counter(key(it) for k, it in stored.items() if k > start)
    lost_m = []
    for e in live:
        if e['event'] != 'sample':
            continue
        k = key(e['data'])
        if kept[k] > 0:
            kept[k] -= 1
        else:
            lost_m.append(e['m'])
    r['liveSamples'] = sum(1 for e in live if e['event'] == 'sample')
    r['liveDropped'] = sum(e['data'].get('count', 0) for e in live if e['event'] == 'dropped')
    r['lost'] = len(lost_m)
    r['lossWindow'] = round(cut['mono'] - min(lost_m), 3) if lost_m else 0.0
    r['cutAfterStart'] = round(cut['mono'] - cut.get('startMono', cut['mono']), 3)

    bound = {'always': 0.0, 'interval': a.interval_ms / 1000.0}.get(a.mode)
    r['lossBound'] = None if bound is None else round(bound + a.slack, 3)
    verdict = {
        'given-kept': (a.mode == 'none' and r['givenChanged'] == 0) or (r['givenMissing'] == 0 and r['givenChanged'] == 0),
        'ahead-told': r['aheadToldRight'],
        'served-intact': r['servedOutsideIntact'] == 0 and not r['tornAfter'] and refused is None,
        'loss-bounded': bound is None or r['lossWindow'] <= bound + a.slack,
        'live-complete': r['liveDropped'] == 0 and r['liveSamples'] > 0,
        'reader-clean': not errors,
    }
    r['verdict'] = verdict
    with open(os.path.join(a.dir, 'check.json'), 'w') as f:
        json.dump(r, f, indent=1)
    print(json.dumps(r))
    return 0 if all(verdict.values()) else 1


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest='cmd', required=True)
    fo = sub.add_parser('follow')
    fo.add_argument('--socket', required=True)
    fo.add_argument('--anchor', type=int, required=True)
    fo.add_argument('--dir', required=True)
    ch = sub.add_parser('check')
    ch.add_argument('--socket', required=True)
    ch.add_argument('--dir', required=True)
    ch.add_argument('--mode', required=True, choices=['always', 'interval', 'none'])
    ch.add_argument('--interval-ms', type=int, default=100)
    ch.add_argument('--before', required=True)
    ch.add_argument('--after', required=True)
    ch.add_argument('--slack', type=float, default=1.0)
    a = ap.parse_args()
    return follow(a) if a.cmd == 'follow' else check(a)


if __name__ == '__main__':
    sys.exit(main())
