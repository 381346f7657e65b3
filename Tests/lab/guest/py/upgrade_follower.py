#!/usr/bin/python3
"""The client of the package-upgrade scenario (guest/scenarios/systemd-deb-upgrade.sh).

  upgrade_follower.py follow --socket PATH --out GIVEN.jsonl [--ready FILE]
      An anchored follower from anchor 0 (samples.anchored with follow) that outlives strapd's
      restarts as a client should: on end of stream or a refused connection it connects again
      (every 0.2 s, 120 s at most) and asks from the last anchor it was given. Every item goes
      to GIVEN.jsonl as served, flushed; every reconnection to stdout. FILE appears with the
      first item. Ends on SIGTERM.

  upgrade_follower.py check --given GIVEN.jsonl --store ANCHORED.json
      Every sample in the store (the JSON of `strapctl --json anchored`, all pages) was given
      exactly once, and nothing else was. Prints one JSON line: {"ok", "stored", "given",
      "missing", "duplicated", "unknown"}; exit 0 when ok.
"""
import argparse
import collections
import json
import os
import socket
import sys
import time


def lines(sock, buf):
    chunk = sock.recv(1 << 20)
    if not chunk:
        raise EOFError
    buf += chunk
    *done, rest = buf.split(b'\n')
    return [json.loads(l) for l in done if l.strip()], rest


def follow(a):
    out = open(a.out, 'a')
    anchor, announced, sessions = 0, False, 0
    deadline = None
    while True:
        try:
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.connect(a.socket)
        except OSError as e:
            deadline = deadline or time.monotonic() + 120
            if time.monotonic() > deadline:
                print('gave up reconnecting: %s' % e, flush=True)
                return 1
            time.sleep(0.2)
            continue
        deadline = None
        sessions += 1
        print('session %d from anchor %d' % (sessions, anchor), flush=True)
        s.sendall((json.dumps({'id': 'f', 'op': 'samples.anchored', 'anchor': anchor, 'limit': 1000,
                               'follow': True}) + '\n').encode())
        buf = b''
        try:
            while True:
                msgs, buf = lines(s, buf)
                for m in msgs:
                    items = []
                    if m.get('event') == 'added':
                        items = [m['data']]
                    elif m.get('ok') is True:
                        items = m['result']['added']
                        anchor = max(anchor, m['result'].get('anchor', anchor))
                    elif m.get('ok') is False or m.get('event') == 'error':
                        print('error: %s' % json.dumps(m), flush=True)
                        raise EOFError
                    for it in items:
                        out.write(json.dumps(it, sort_keys=True) + '\n')
                        anchor = max(anchor, it.get('anchor', anchor))
                    if items:
                        out.flush()
                        if not announced and a.ready:
                            open(a.ready, 'w').close()
                            announced = True
        except (EOFError, OSError) as e:
            print('stream ended (%s) at anchor %d' % (type(e).__name__, anchor), flush=True)
            s.close()


def store_items(path):
    items = {}
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            doc = json.loads(line)
            for it in doc.get('result', doc).get('added', []):
                items[it['anchor']] = it
    return items


def check(a):
    stored = store_items(a.store)
    given = collections.Counter()
    with open(a.given) as f:
        for line in f:
            if line.strip():
                given[json.loads(line)['anchor']] += 1
    missing = sorted(set(stored) - set(given))
    duplicated = sorted(k for k, n in given.items() if n > 1)
    unknown = sorted(set(given) - set(stored))
    ok = bool(stored) and not missing and not duplicated and not unknown
    print(json.dumps({'ok': ok, 'stored': len(stored), 'given': sum(given.values()),
                      'missing': missing[:20], 'duplicated': duplicated[:20], 'unknown': unknown[:20]}))
    return 0 if ok else 1


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest='cmd', required=True)
    fo = sub.add_parser('follow')
    fo.add_argument('--socket', required=True)
    fo.add_argument('--out', required=True)
    fo.add_argument('--ready')
    ch = sub.add_parser('check')
    ch.add_argument('--given', required=True)
    ch.add_argument('--store', required=True)
    a = ap.parse_args()
    return follow(a) if a.cmd == 'follow' else check(a)


if __name__ == '__main__':
    sys.exit(main())
