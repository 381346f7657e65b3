"""The lab's power meter and smart trainer, for bumble_sensor.py (--services cp / ftms).

Power meter: Cycling Power 0x1818 with CP Measurement 0x2A63 (notify: instantaneous power and
crank revolution data), CP Feature 0x2A65 (crank revolution data supported) and Sensor Location
0x2A5D (left crank).

Trainer: Fitness Machine 0x1826 as an indoor bike: Indoor Bike Data 0x2AD2 (notify: speed,
cadence, power), Fitness Machine Feature 0x2ACC, Supported Resistance Level Range 0x2AD6 (0-100.0
step 1.0), Supported Power Range 0x2AD8 (0-2000 W step 1), Fitness Machine Status 0x2ADA
(notify) and the Fitness Machine Control Point 0x2AD9 (write + indicate), answered the way a
trainer does (FTMS v1.0 §4.16):
  - a write while the writer has not enabled indications on 0x2AD9 gets ATT error 0xFD (CCCD
    improperly configured) and no indication;
  - Request Control (0x00) -> success, unless another connection holds control (0x05);
  - every other procedure needs control on THIS connection, else 0x05 Control Not Permitted;
  - Set Target Power (0x05, sint16 W) outside the power range, or of the wrong length -> 0x03
    Invalid Parameter; Set Target Resistance Level (0x04, uint8 in 0.1) likewise;
  - Reset (0x01) -> success; the target and control are dropped;
  - Start/Resume (0x07), Stop/Pause (0x08) -> success; any other op code -> 0x02.
The answer is the indication [0x80, op code, result], sent after the write response, followed by
a Machine Status notification of what changed (0x08 target power, 0x07 resistance, 0x01 reset,
0x04 started, 0x02 stopped). Control, and the target with it, are lost when the controlling
link drops (the trainer falls back to the rider's own power), so a central must ask again on the
next connection. Without a target the rider rides at about 100 W; with one, the power follows
it with a lag (time constant 1.5 s), as a trainer's brake does.

Every control point write is logged as one JSON line (to --control-log, and to stdout):
{"event": "control-point", "t" (monotonic), "wall" (epoch s), "trainer", "connection" (1 for the
first link of this trainer, 2 for the next, ...), "peer", "hex", "op", "opName", "target" (W or
resistance level, decoded; null for others), "result", "resultName"}.
"""
import asyncio
import json
import math
import struct
import time

from bumble.att import ATT_Error
from bumble.core import UUID
from bumble.gatt import Characteristic, CharacteristicValue, Service

import blelab as L

CPS, CP_MEASUREMENT, CP_FEATURE = 0x1818, 0x2A63, 0x2A65
FTMS, FM_FEATURE, INDOOR_BIKE_DATA = 0x1826, 0x2ACC, 0x2AD2
RESISTANCE_RANGE, POWER_RANGE, FM_CONTROL_POINT, FM_STATUS = 0x2AD6, 0x2AD8, 0x2AD9, 0x2ADA

POWER_MIN, POWER_MAX, POWER_STEP = 0, 2000, 1
RESISTANCE_MIN, RESISTANCE_MAX, RESISTANCE_STEP = 0, 1000, 10      # in 0.1
FREE_RIDE_WATTS = 100
LAG_SECONDS = 1.5

OP_NAMES = {0x00: 'requestControl', 0x01: 'reset', 0x02: 'setTargetSpeed', 0x03: 'setTargetInclination',
            0x04: 'setTargetResistanceLevel', 0x05: 'setTargetPower', 0x06: 'setTargetHeartRate',
            0x07: 'startOrResume', 0x08: 'stopOrPause', 0x11: 'setIndoorBikeSimulationParameters',
            0x12: 'setWheelCircumference', 0x13: 'spinDownControl', 0x14: 'setTargetedCadence'}
SUCCESS, NOT_SUPPORTED, INVALID_PARAMETER, FAILED, NOT_PERMITTED = 0x01, 0x02, 0x03, 0x04, 0x05
RESULT_NAMES = {SUCCESS: 'success', NOT_SUPPORTED: 'opCodeNotSupported', INVALID_PARAMETER: 'invalidParameter',
                FAILED: 'operationFailed', NOT_PERMITTED: 'controlNotPermitted'}
CCCD_IMPROPERLY_CONFIGURED = 0xFD
RD = Characteristic.Permissions.READABLE
WR = Characteristic.Permissions.WRITEABLE


def chrc(uuid16, props, value, permissions=RD):
    return Characteristic(UUID.from_16_bits(uuid16), props, permissions, value)


# --- power meter -------------------------------------------------------------------------

def encode_cp(seq, interval):
    """CP Measurement with crank revolution data (flags 0x0020): a deterministic power around
    200 W and 90 rpm; the crank event time is that of the last whole revolution."""
    t = seq * interval
    power = 180 + (seq * 7) % 41
    revs = int(t * 1.5)
    event = int(revs / 1.5 * 1024) & 0xFFFF
    values = {'instantaneousPower': power, 'crankRevolutions': revs & 0xFFFF, 'lastCrankEventTime': event}
    return struct.pack('<HhHH', 0x0020, power, revs & 0xFFFF, event), values


def power_meter_service(interval):
    """(service, measurement characteristic, encoder) of the power meter."""
    m = chrc(CP_MEASUREMENT, Characteristic.Properties.NOTIFY, encode_cp(0, interval)[0])
    service = Service(UUID.from_16_bits(CPS), [
        m,
        chrc(CP_FEATURE, Characteristic.Properties.READ, struct.pack('<I', 1 << 3)),
        chrc(L.SENSOR_LOCATION, Characteristic.Properties.READ, b'\x05'),
    ])
    return service, m, lambda seq: encode_cp(seq, interval)


# --- trainer -----------------------------------------------------------------------------

class Trainer:
    """One FTMS indoor bike: its GATT service, its control point and its brake."""

    def __init__(self, name, device, interval, control_log=None):
        self.name, self.device, self.interval = name, device, interval
        self.control_log = control_log
        self.connections = {}          # bumble Connection -> its number (1, 2, ...)
        self.count = 0
        self.controller = None         # the Connection holding control
        self.target = None             # W, or None: free ride
        self.power = float(FREE_RIDE_WATTS)
        self.ibd = chrc(INDOOR_BIKE_DATA, Characteristic.Properties.NOTIFY, self.encode_ibd(0)[0])
        self.status = chrc(FM_STATUS, Characteristic.Properties.NOTIFY, b'\x00')
        self.control_point = chrc(FM_CONTROL_POINT,
                                  Characteristic.Properties.WRITE | Characteristic.Properties.INDICATE,
                                  CharacteristicValue(write=self.on_write), WR)
        machine = (1 << 1) | (1 << 14)               # cadence, power measurement
        targets = (1 << 2) | (1 << 3)                # resistance, power target setting
        self.service = Service(UUID.from_16_bits(FTMS), [
            chrc(FM_FEATURE, Characteristic.Properties.READ, struct.pack('<II', machine, targets)),
            self.ibd,
            chrc(RESISTANCE_RANGE, Characteristic.Properties.READ,
                 struct.pack('<hhH', RESISTANCE_MIN, RESISTANCE_MAX, RESISTANCE_STEP)),
            chrc(POWER_RANGE, Characteristic.Properties.READ, struct.pack('<hhH', POWER_MIN, POWER_MAX, POWER_STEP)),
            self.control_point,
            self.status,
        ])
        device.on('connection', self.on_connection)

    # links

    def on_connection(self, conn):
        self.count += 1
        self.connections[conn] = self.count
        L.emit('trainer-connection', sensor=self.name, connection=self.count, peer=str(conn.peer_address))
        conn.on('disconnection', lambda reason, c=conn: self.on_disconnection(c, reason))

    def on_disconnection(self, conn, reason):
        n = self.connections.pop(conn, None)
        if conn is self.controller:
            # A trainer that lost its controller stops holding the target: the rider is back
            # on free ride, and the next connection has to ask for control again.
            self.controller, self.target = None, None
            L.emit('control-lost', sensor=self.name, connection=n, reason=reason)

    # the brake

    def encode_ibd(self, seq):
        """Indoor Bike Data (flags 0x0044: speed, cadence, power), one tick of the brake on."""
        goal = self.target if self.target is not None else FREE_RIDE_WATTS + (seq % 5)
        self.power += (goal - self.power) * (1 - math.exp(-self.interval / LAG_SECONDS))
        power = int(round(self.power))
        cadence = 180 + (seq % 3) * 2                      # 1/2 rpm: 90-92 rpm
        speed = int(round(6.0 * max(power, 0) ** (1 / 3) * 100))   # 1/100 km/h
        values = {'speed': speed / 100, 'cadence': cadence / 2, 'power': power}
        return struct.pack('<HHHh', 0x0044, speed, cadence, power), values

    # the control point

    def indications_on(self, conn):
        cccd = self.device.gatt_server.subscribers.get(conn, {}).get(self.control_point.handle)
        return bool(cccd) and cccd[0] & 0x02 != 0

    def on_write(self, conn, value):
        value = bytes(value)
        op = value[0] if value else None
        if not self.indications_on(conn):
            self.log(conn, value, op, None, CCCD_IMPROPERLY_CONFIGURED, 'cccdImproperlyConfigured')
            raise ATT_Error(error_code=CCCD_IMPROPERLY_CONFIGURED, att_handle=self.control_point.handle)
        target, result, status = self.procedure(conn, value)
        self.log(conn, value, op, target, result, RESULT_NAMES.get(result, '?'))
        # The indication follows the write response (the write callback returns first).
        asyncio.get_running_loop().create_task(self.answer(conn, op if op is not None else 0, result, status))

    def procedure(self, conn, value):
        """(decoded target, result code, Machine Status bytes or None) of one request."""
        op, body = (value[0], value[1:]) if value else (None, b'')
        if op is None:
            return None, INVALID_PARAMETER, None
        if op == 0x00:
            if len(body) != 0:
                return None, INVALID_PARAMETER, None
            if self.controller is not None and self.controller is not conn:
                return None, NOT_PERMITTED, None
            self.controller = conn
            return None, SUCCESS, None
        if op not in (0x01, 0x04, 0x05, 0x07, 0x08):
            return None, NOT_SUPPORTED, None
        if self.controller is not conn:
            return self.decoded(op, body), NOT_PERMITTED, None
        if op == 0x01:
            self.controller, self.target = None, None
            return None, SUCCESS, b'\x01'
        if op == 0x05:
            if len(body) != 2:
                return None, INVALID_PARAMETER, None
            watts = struct.unpack('<h', body)[0]
            if not POWER_MIN <= watts <= POWER_MAX or (watts - POWER_MIN) % POWER_STEP:
                return watts, INVALID_PARAMETER, None
            self.target = watts
            return watts, SUCCESS, b'\x08' + body
        if op == 0x04:
            if len(body) != 1 or not RESISTANCE_MIN <= body[0] <= RESISTANCE_MAX:
                return self.decoded(op, body), INVALID_PARAMETER, None
            self.target = None                     # resistance mode: the brake no longer holds a power
            return body[0] / 10, SUCCESS, b'\x07' + body
        if op == 0x07:
            return None, SUCCESS, b'\x04'
        return None, SUCCESS, b'\x02' + (body[:1] or b'\x01')

    @staticmethod
    def decoded(op, body):
        if op == 0x05 and len(body) == 2:
            return struct.unpack('<h', body)[0]
        if op == 0x04 and len(body) == 1:
            return body[0] / 10
        return None

    async def answer(self, conn, op, result, status):
        await asyncio.sleep(0.005)
        try:
            await self.device.indicate_subscriber(conn, self.control_point, bytes([0x80, op, result]))
            if status is not None:
                await self.device.notify_subscribers(self.status, status)
        except Exception as e:   # the link went while answering: nothing to answer to
            L.emit('answer-lost', sensor=self.name, op=op, error=repr(e))

    def log(self, conn, value, op, target, result, result_name):
        rec = {'t': round(time.monotonic(), 4), 'wall': round(time.time(), 4), 'event': 'control-point',
               'trainer': self.name, 'connection': self.connections.get(conn), 'peer': str(conn.peer_address),
               'hex': value.hex(), 'op': op, 'opName': OP_NAMES.get(op, 'unknown'), 'target': target,
               'result': result, 'resultName': result_name}
        line = json.dumps(rec, sort_keys=True)
        print(line, flush=True)
        if self.control_log:
            with open(self.control_log, 'a') as f:
                f.write(line + '\n')
