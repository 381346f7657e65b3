#!/usr/bin/python3
"""A live.subscribe client of strapd that timestamps every heart-rate sample on arrival.

  live_latency.py --socket PATH --out FILE [--ready-file FILE]

Subscribes to heartRate samples (one per 0x2A37 notification, docs/protocol.md) and keeps,
per sample event, CLOCK_MONOTONIC right after the line was read (the guest clock the sensors'
"sent" lines use), the device, the value and the payload (metadata.raw, when present). The
lines go to FILE at SIGTERM; `dropped` events are kept too, so a loss on the socket shows.
"""
import argparse
import json
import signal
import socket
import sys
import time


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--socket', required=True)
    ap.add_argument('--out', required=True)
    ap.add_argument('--ready-file')
    args = ap.parse_args()
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(args.socket)
    s.sendall(b'{"id":1,"op":"live.subscribe","types":["heartRate"]}\n')
    got = []

    def finish(*_):
        with open(args.out, 'w') as f:
            for t, line in got:
                e = json.loads(line)
                d = e.get('data') or {}
                md = d.get('metadata') or {}
                f.write(json.dumps({'t': t, 'event': e.get('event'), 'device': (d.get('device') or {}).get('address'),
                                    'uuid': md.get('characteristic', '2a37'), 'value': d.get('value'),
                                    'hex': (md.get('raw') or '').replace(' ', '').lower() or None,
                                    'count': d.get('count'), 'ok': e.get('ok')}) + '\n')
        sys.exit(0)
    signal.signal(signal.SIGTERM, finish)
    buf = b''
    while True:
        chunk = s.recv(65536)
        t = time.monotonic()
        if not chunk:
            finish()
        buf += chunk
        *lines, buf = buf.split(b'\n')
        for line in lines:
            if not line.strip():
                continue
            got.append((t, line))
            if args.ready_file and len(got) == 1:
                open(args.ready_file, 'w').close()


if __name__ == '__main__':
    main()
