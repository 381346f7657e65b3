"""Shared helpers of the strapd lab's BlueZ D-Bus peer (fake_sensor.py) and the sensors' encoders.

Only dbus-python and PyGObject (Debian: python3-dbus, python3-gi) are used.
The encoders return (payload, values): values are what was encoded, named and scaled like
`strapctl decode`'s JSON, so a check can compare strapd's decoders with what was sent
without trusting a second decoder.
"""
import json
import struct
import sys
import time

BLUEZ = 'org.bluez'
OM_IFACE = 'org.freedesktop.DBus.ObjectManager'
PROPS_IFACE = 'org.freedesktop.DBus.Properties'
ADAPTER_IFACE = 'org.bluez.Adapter1'
DEVICE_IFACE = 'org.bluez.Device1'
GATT_MANAGER_IFACE = 'org.bluez.GattManager1'
GATT_SERVICE_IFACE = 'org.bluez.GattService1'
GATT_CHRC_IFACE = 'org.bluez.GattCharacteristic1'
ADV_MANAGER_IFACE = 'org.bluez.LEAdvertisingManager1'
ADV_IFACE = 'org.bluez.LEAdvertisement1'

HRS, CSCS, RSCS = 0x180D, 0x1816, 0x1814
HR_MEASUREMENT, BODY_SENSOR_LOCATION = 0x2A37, 0x2A38
CSC_MEASUREMENT, CSC_FEATURE, SENSOR_LOCATION = 0x2A5B, 0x2A5C, 0x2A5D
RSC_MEASUREMENT, RSC_FEATURE = 0x2A53, 0x2A54


def uuid16(n):
    """Full 128-bit UUID string of a 16-bit Bluetooth SIG UUID."""
    return '0000%04x-0000-1000-8000-00805f9b34fb' % n


def to_uuid(text):
    """Accept '2a37', '0x2A37' or a full UUID; return the lowercase 128-bit form."""
    t = text.lower()
    if t.startswith('0x'):
        t = t[2:]
    if len(t) == 4:
        return uuid16(int(t, 16))
    return t


def short(uuid):
    return uuid[4:8] if uuid.endswith('-0000-1000-8000-00805f9b34fb') else uuid


def emit(event, **fields):
    """One JSON line per event on stdout; 't' is the guest's monotonic clock, shared by
    every process in the VM, so sensor and central logs can be compared in time."""
    rec = {'t': round(time.monotonic(), 4), 'event': event}
    rec.update(fields)
    print(json.dumps(rec, sort_keys=True), flush=True)


def die(msg, code=1):
    emit('error', message=msg)
    sys.exit(code)


# --- GATT measurement encoders (peripheral side): deterministic in seq -----------------

def encode_hr(seq):
    """Heart Rate Measurement: uint8 HR, contact detected, one RR; energy every 10th (flags 0x1e)."""
    hr = 70 + seq % 30
    rr = round(60.0 / hr * 1024)
    flags = 0x16
    body = bytes([hr])
    values = {'heartRate': hr, 'contact': 'detected', 'rrIntervals': [rr], 'energyExpended': None}
    if seq % 10 == 0:
        flags |= 0x08
        energy = (seq // 10) & 0xFFFF
        body += struct.pack('<H', energy)
        values['energyExpended'] = energy
    return bytes([flags]) + body + struct.pack('<H', rr), values


def encode_csc(seq, interval):
    """CSC Measurement with wheel and crank data (flags 0x03)."""
    t = seq * interval
    wheel_revs = int(t * 3.97)                     # ~30 km/h on a 2.1 m wheel
    wheel_evt = int(t * 1024) & 0xFFFF
    crank_revs = int(t * 1.5) & 0xFFFF             # 90 rpm
    crank_evt = int(t * 1024) & 0xFFFF
    values = {'wheelRevolutions': wheel_revs, 'lastWheelEventTime': wheel_evt,
              'crankRevolutions': crank_revs, 'lastCrankEventTime': crank_evt}
    return bytes([0x03]) + struct.pack('<IHHH', wheel_revs, wheel_evt, crank_revs, crank_evt), values


def encode_rsc(seq):
    """RSC Measurement: speed (1/256 m/s), cadence, stride (1/100 m), total distance
    (1/10 m), running (flags 0x07)."""
    speed = int((3.0 + (seq % 10) * 0.1) * 256)
    cadence = 170 + seq % 10
    stride = 100 + seq % 20
    distance = 30 * seq
    values = {'speed': speed / 256.0, 'cadence': cadence, 'strideLength': stride / 100.0,
              'totalDistance': distance / 10.0, 'running': True}
    return bytes([0x07]) + struct.pack('<HBHI', speed, cadence, stride, distance), values


ENCODERS = {'2a37': lambda seq, interval: encode_hr(seq),
            '2a5b': encode_csc,
            '2a53': lambda seq, interval: encode_rsc(seq)}
