#!/usr/bin/python3
"""Turn strapd's store (the JSON of `strapctl --json anchored`) into check_notify.py's
received lines, one per notification, in anchor order.

  store_to_received.py anchored.json [--device ADDRESS] > received.jsonl

Contract this relies on (docs/protocol.md#shapes and #samplesanchored; to be confirmed when
strapd lands): the answer is {"added": [sample, ...], ...}; a sample carries "anchor",
"device": {"address"}, "start", and, so that the lab can count notifications exactly once,
"metadata": {"characteristic": "2a37", "raw": "<payload hex>"} on every sample derived from a
notification. Samples of one
notification (e.g. CSC speed, cadence, distance) share device, characteristic, raw and start
and count once. Without "raw", heart-rate samples ("type": "heartRate") are matched on their
value (check_notify.py value matching) and other types are ignored.
"""
import argparse
import json
import sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('anchored')
    ap.add_argument('--device', help='only samples of this device address')
    args = ap.parse_args()
    with open(args.anchored) as f:
        text = f.read().strip()
    docs = []
    try:
        docs = [json.loads(text)]
    except json.JSONDecodeError:            # NDJSON (follow mode, or one sample per line)
        docs = [json.loads(l) for l in text.splitlines() if l.strip().startswith('{')]
    samples = []
    for d in docs:
        d = d.get('result', d)
        samples += d.get('added', []) if 'added' in d else ([d] if 'anchor' in d else [])
    samples.sort(key=lambda s: s.get('anchor', 0))
    seen = set()
    for s in samples:
        dev = (s.get('device') or {}).get('address', '')
        if args.device and dev.upper() != args.device.upper():
            continue
        md = s.get('metadata') or {}
        chrc = str(md.get('characteristic', '')).lower().replace('0x', '')[-4:]
        raw = md.get('raw') or md.get('hex')
        if raw:
            key = (dev, chrc, raw, s.get('start'))
            if key in seen:
                continue
            seen.add(key)
            print(json.dumps({'uuid': chrc, 'hex': raw.replace(' ', '').lower(), 'anchor': s.get('anchor'),
                              'start': s.get('start'), 'device': dev}))
        elif s.get('type') == 'heartRate' and isinstance(s.get('value'), (int, float)):
            print(json.dumps({'uuid': '2a37', 'values': {'heartRate': s['value']}, 'anchor': s.get('anchor'),
                              'start': s.get('start'), 'device': dev}))
    return 0


if __name__ == '__main__':
    sys.exit(main())
