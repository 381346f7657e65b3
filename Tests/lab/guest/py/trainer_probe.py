#!/usr/bin/python3
"""Drive the lab's Bumble trainer and power meter (bumble_trainer.py) through real bluetoothd
with bleak, as any FTMS app would, and check they answer like the real devices.

  trainer_probe.py --trainer ADDR --power-meter ADDR --bumble-pid PID --checks FILE [--adapter hci0]

Trainer: the feature and the two ranges read as served; a write before indications are on is
refused at the ATT level (0xFD); Set Target Power before Request Control gets 0x05; Request
Control, then a target, get success, a Machine Status "target power changed" follows, and the
power in Indoor Bike Data moves to the target; an out-of-range target gets 0x03; Reset succeeds
and drops control (the next target gets 0x05); then the link is lost (SIGHUP to the Bumble
process: out of range for its --outage) and, on the next connection, a target is refused until
control is requested again. Power meter: CP Feature and Sensor Location read, CP Measurement
notifies power and crank revolutions. Each check is one JSON line {"name", "ok", "detail"}
appended to --checks (lib.sh's format) and printed.
"""
import argparse
import asyncio
import json
import os
import signal
import struct
import time

from bleak import BleakClient, BleakScanner


def u(n):
    return '0000%04x-0000-1000-8000-00805f9b34fb' % n


CP, IBD, STATUS = u(0x2AD9), u(0x2AD2), u(0x2ADA)
checks_file = None
failed = False


def check(name, ok, detail):
    global failed
    failed |= not ok
    line = json.dumps({'name': name, 'ok': bool(ok), 'detail': detail})
    with open(checks_file, 'a') as f:
        f.write(line + '\n')
    print('[%8.2f] check %s: %s (%s)' % (time.monotonic(), name, 'OK' if ok else 'FAIL', detail), flush=True)


class Session:
    """One connection to the trainer with the control point's indications and Indoor Bike Data
    and Machine Status notifications collected."""

    def __init__(self, client):
        self.client = client
        self.indications = asyncio.Queue()
        self.powers = []
        self.statuses = []
        self.extra = 0       # indications beyond one per request

    async def subscribe(self):
        await self.client.start_notify(CP, lambda _, data: self.indications.put_nowait(bytes(data)))
        await self.client.start_notify(IBD, lambda _, data: self.powers.append(struct.unpack_from('<h', data, 6)[0]))
        await self.client.start_notify(STATUS, lambda _, data: self.statuses.append(bytes(data).hex()))

    async def request(self, payload):
        """Write one request and wait for its indication (the one for this op code); returns its
        hex, or why there is none. An indication for another op code is a late copy of an earlier
        answer (after a reconnect bluetoothd delivered each one twice to this process: the first
        connection's notify session, kept for the same D-Bus client, came back with the link);
        it is counted and skipped."""
        await asyncio.sleep(0.3)
        while not self.indications.empty():
            self.indications.get_nowait()
            self.extra += 1
        await self.client.write_gatt_char(CP, payload, response=True)
        deadline = time.monotonic() + 5
        while True:
            try:
                got = await asyncio.wait_for(self.indications.get(), max(0.0, deadline - time.monotonic()))
            except asyncio.TimeoutError:
                return 'no indication within 5 s'
            if len(got) >= 2 and got[1] == payload[0]:
                return got.hex()
            self.extra += 1

def target(watts):
    return bytes([0x05]) + struct.pack('<h', watts)


async def connect(address, adapter):
    device = await BleakScanner.find_device_by_address(address, timeout=60, bluez={'adapter': adapter})
    if device is None:
        raise SystemExit('%s not found in 60 s' % address)
    client = BleakClient(device, bluez={'adapter': adapter})
    await client.connect()
    return client


async def trainer(args):
    client = await connect(args.trainer, args.adapter)
    feature = (await client.read_gatt_char(u(0x2ACC))).hex()
    power_range = struct.unpack('<hhH', await client.read_gatt_char(u(0x2AD8)))
    resistance_range = struct.unpack('<hhH', await client.read_gatt_char(u(0x2AD6)))
    check('trainer-reads', feature == '024000000c000000' and power_range == (0, 2000, 1) and resistance_range == (0, 1000, 10),
          'feature %s, power range %s, resistance range %s' % (feature, power_range, resistance_range))
    try:
        await client.write_gatt_char(CP, b'\x00', response=True)
        check('trainer-needs-indications', False, 'a write before indications were on was accepted')
    except Exception as e:   # bleak reports the ATT error through BlueZ
        check('trainer-needs-indications', True, 'refused: %s' % str(e)[:120])
    s = Session(client)
    await s.subscribe()
    r = await s.request(target(200))
    check('trainer-target-needs-control', r == '800505', 'Set Target Power 200 W before Request Control -> %s' % r)
    r1 = await s.request(b'\x00')
    r2 = await s.request(target(200))
    t0 = time.monotonic()
    while time.monotonic() - t0 < 15 and not (s.powers and abs(s.powers[-1] - 200) <= 3):
        await asyncio.sleep(0.2)
    check('trainer-control-and-target', r1 == '800001' and r2 == '800501' and '08c800' in s.statuses,
          'Request Control -> %s, Set Target Power 200 W -> %s, Machine Status %s' % (r1, r2, s.statuses))
    check('trainer-power-follows', bool(s.powers) and abs(s.powers[-1] - 200) <= 3,
          'Indoor Bike Data power %s W, %.1f s after the target (last 8: %s)'
          % (s.powers[-1] if s.powers else None, time.monotonic() - t0, s.powers[-8:]))
    r = await s.request(target(2500))
    check('trainer-range', r == '800503', 'Set Target Power 2500 W (range 0-2000) -> %s' % r)
    r1 = await s.request(b'\x01')
    await asyncio.sleep(0.5)
    r2 = await s.request(target(150))
    check('trainer-reset', r1 == '800101' and r2 == '800505' and '01' in s.statuses,
          'Reset -> %s (Machine Status %s), then Set Target Power 150 W -> %s' % (r1, s.statuses[-1:], r2))
    r1 = await s.request(b'\x00')
    r2 = await s.request(target(180))
    t_loss = time.monotonic()
    os.kill(args.bumble_pid, signal.SIGHUP)
    n = 0
    while client.is_connected and n < 150:
        await asyncio.sleep(0.1)
        n += 1
    check('trainer-link-lost', r1 == '800001' and r2 == '800501' and not client.is_connected,
          'held control with 180 W (%s, %s); link down %.1f s after the out-of-range signal' % (r1, r2, time.monotonic() - t_loss))
    await asyncio.sleep(args.outage)
    client = await connect(args.trainer, args.adapter)
    s = Session(client)
    await s.subscribe()
    back = time.monotonic() - t_loss
    r0 = await s.request(target(180))
    r1 = await s.request(b'\x00')
    r2 = await s.request(target(180))
    check('trainer-control-per-link', r0 == '800505' and r1 == '800001' and r2 == '800501',
          'reconnected %.1f s after the loss; Set Target Power -> %s, Request Control -> %s, Set Target Power -> %s; '
          'indications beyond one per request on this link: %d' % (back, r0, r1, r2, s.extra))
    await s.request(b'\x01')
    await client.disconnect()


async def power_meter(args):
    client = await connect(args.power_meter, args.adapter)
    feature = struct.unpack('<I', await client.read_gatt_char(u(0x2A65)))[0]
    location = (await client.read_gatt_char(u(0x2A5D))).hex()
    got = []
    await client.start_notify(u(0x2A63), lambda _, data: got.append(bytes(data)))
    t0 = time.monotonic()
    while len(got) < 5 and time.monotonic() - t0 < 15:
        await asyncio.sleep(0.2)
    decoded = [struct.unpack('<HhHH', d) for d in got if len(d) == 8]
    ok = feature == 0x08 and location == '05' and len(decoded) >= 5 and all(d[0] == 0x20 and 150 <= d[1] <= 250 for d in decoded)
    check('power-meter', ok, 'CP Feature 0x%x, Sensor Location %s, %d CP Measurements (flags, W, crank revs, event): %s'
          % (feature, location, len(got), decoded[:3]))
    await client.disconnect()


async def main():
    global checks_file
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--trainer', required=True)
    ap.add_argument('--power-meter', required=True)
    ap.add_argument('--bumble-pid', type=int, required=True)
    ap.add_argument('--outage', type=float, default=5)
    ap.add_argument('--adapter', default='hci0')
    ap.add_argument('--checks', required=True)
    args = ap.parse_args()
    checks_file = args.checks
    await power_meter(args)
    await trainer(args)
    raise SystemExit(1 if failed else 0)


if __name__ == '__main__':
    asyncio.run(main())
