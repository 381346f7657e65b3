#!/usr/bin/python3
"""Turn strapd's raw capture (`strapd --record FILE`, docs/capture-format.md) into
check_notify.py's received lines: every notification strapd received, in arrival order.

  capture_to_received.py capture.jsonl [--device ADDRESS] > received.jsonl
"""
import argparse
import json
import sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('capture')
    ap.add_argument('--device')
    args = ap.parse_args()
    with open(args.capture) as f:
        for line in f:
            line = line.strip()
            if not line.startswith('{'):
                continue
            e = json.loads(line)
            if e.get('event') != 'notification':
                continue
            if args.device and e.get('device', '').upper() != args.device.upper():
                continue
            print(json.dumps({'uuid': e['characteristic'], 'hex': e['hex'], 't': e.get('mono'),
                              'device': e.get('device'), 'mode': 'capture'}))
    return 0


if __name__ == '__main__':
    sys.exit(main())
