#!/usr/bin/python3
"""Turn BlueZ example-gatt-server's stdout into check_notify.py's sensor log format.

The example prints "Updating value: [dbus.Byte(6), dbus.Byte(97)]" before each Heart Rate
Measurement it hands to bluetoothd (flags 0x06, random HR 90-130, energy expended every
10th). It logs no time, so the check cannot tell a value sent after the central
unsubscribed (the example's timer fires once more after StopNotify) from a lost one:
hr-example uses --allow-missing and still fails on duplicates, reordering and decoding.
  example_log.py < example-gatt-server.log > sensor-example.log
"""
import json
import re
import sys

seq = 0
for line in sys.stdin:
    if not line.startswith('Updating value:'):
        continue
    b = bytes(int(x) for x in re.findall(r'Byte\((\d+)\)', line))
    seq += 1
    values = {'heartRate': b[1], 'contact': 'detected', 'rrIntervals': None,
              'energyExpended': (b[2] | b[3] << 8) if b[0] & 0x08 else None}
    print(json.dumps({'event': 'sent', 'uuid': '2a37', 'seq': seq, 'hex': b.hex(), 'values': values}))
