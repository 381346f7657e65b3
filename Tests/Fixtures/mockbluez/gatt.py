"""GATT side of the mock bluetoothd: sensor state, exported services and characteristics,
and notification delivery (StartNotify/PropertiesChanged and AcquireNotify sockets).

Every measurement notification carries a 32-bit sequence number that only advances when a
notification is actually delivered to a subscriber (see mockbluez.py for the layouts).
"""
import socket
import struct

import dbus
from dbus.lowlevel import HANDLER_RESULT_HANDLED, HANDLER_RESULT_NOT_YET_HANDLED, ErrorMessage, MethodReturnMessage
from gi.repository import GLib

from dbusmock import mockobject

DEVICE = 'org.bluez.Device1'
ADAPTER = 'org.bluez.Adapter1'
SERVICE = 'org.bluez.GattService1'
CHRC = 'org.bluez.GattCharacteristic1'
BATTERY = 'org.bluez.Battery1'
GATT_MANAGER = 'org.bluez.GattManager1'
OM = 'org.freedesktop.DBus.ObjectManager'


def uuid16(short):
    return f'0000{short:04x}-0000-1000-8000-00805f9b34fb'


MEASUREMENT = {'hr': 0x2A37, 'csc': 0x2A5B, 'rsc': 0x2A53, 'cps': 0x2A63, 'ftms': 0x2AD2, 'trainer': 0x2AD2}
SERVICE_OF = {'hr': 0x180D, 'csc': 0x1816, 'rsc': 0x1814, 'cps': 0x1818, 'ftms': 0x1826, 'trainer': 0x1826}
# A trainer offers Cycling Power beside FTMS; its 0x2A63 has no StartNotify here, so a client
# that subscribes to it fails (strapd streams Indoor Bike Data alone from such a device).
EXTRA_SERVICES = {'trainer': [(0x1818, [(0x2A63, ['notify'], []), (0x2A65, ['read'], [0x0C, 0, 0, 0])])]}


def payload(kind, seq):
    if kind == 'hr':
        return bytes([0x10, 60 + seq % 120]) + struct.pack('<HH', seq & 0xFFFF, seq >> 16)
    if kind == 'csc':
        return bytes([0x01]) + struct.pack('<IH', seq, (seq * 1024) & 0xFFFF)
    if kind == 'cps':
        # Balance of the left pedal 50 %, one wheel revolution per 2048 ticks, one crank
        # revolution per 1024 ticks: 1 rev/s, 60 rpm.
        return (struct.pack('<HhB', 0x0033, 100 + seq % 200, 100) + struct.pack('<IH', seq, (seq * 2048) & 0xFFFF)
                + struct.pack('<HH', seq & 0xFFFF, (seq * 1024) & 0xFFFF))
    if kind in ('ftms', 'trainer'):
        # Speed 36 km/h, cadence 90 rpm, total distance = seq (uint24), power.
        return struct.pack('<HHH', 0x0054, 3600, 180) + struct.pack('<I', seq & 0xFFFFFF)[:3] + struct.pack('<h', 100 + seq % 200)
    return bytes([0x02]) + struct.pack('<HBI', 768, 85, seq)


class Sensor:
    def __init__(self, spec, state):
        self.address = spec['address']
        self.name = spec.get('name', 'Mock ' + spec['kind'].upper())
        self.kind = spec['kind']
        self.hz = spec.get('hz', 4)
        self.in_range = True
        self.connected = False
        self.faults = {}
        self.seq = state.get(self.address, 0)
        self.notifying = False
        self.sock = None          # our end of an AcquireNotify socketpair
        self.gatt_paths = []
        # Adapter name → this sensor's device object there; `link`: the adapter connected through.
        self.paths = {}
        self.link = None
        self.known_on = spec.get('known_on')
        self.sent = self.seq
        self.start_notify_calls = 0
        self.acquire_calls = 0
        self.battery = 87
        self.battery_notify = spec.get('battery_notify', True)
        self.battery_notifying = False
        self.battery_start_notify_calls = 0
        # A controllable trainer (kinds ftms/trainer): Fitness Machine Control Point and Status.
        self.control_point = spec.get('control_point', False)
        self.control_granted = False
        self.control_notifying = set()     # 0x2AD9 / 0x2ADA with notifications enabled
        self.control_start_notify = {}     # '2ad9' -> StartNotify calls
        self.att_queue = []                # StartNotify calls held by the fault `att_delay`

    @property
    def path(self):
        """The device object in use: the connected one, else the first adapter's."""
        if self.link is not None:
            return self.paths.get(self.link)
        return self.paths[min(self.paths)] if self.paths else None


class GattMixin:
    """Methods of MockBlueZ that deal with GATT; expects self.main (the dbusmock root)."""

    def export_gatt(self, sensor):
        if not sensor.connected or sensor.gatt_paths:
            return False
        stale = sensor.faults.get('stale_cache', False)
        services = [(SERVICE_OF[sensor.kind], self.primary_characteristics(sensor, stale))]
        services += EXTRA_SERVICES.get(sensor.kind, [])
        services += [(0x180F, [(0x2A19, ['read', 'notify'] if sensor.battery_notify else ['read'], [sensor.battery])]),
                     (0x180A, [(0x2A29, ['read'], list(b'Strap Mock')), (0x2A24, ['read'], list(sensor.kind.encode())),
                               (0x2A25, ['read'], list(sensor.address.encode())), (0x2A26, ['read'], list(b'1.0'))])]
        handle = 0x0a
        for svc_uuid, chars in services:
            svc_path = f'{sensor.path}/service{handle:04x}'
            svc_props = {'UUID': dbus.String(uuid16(svc_uuid), variant_level=1),
                         'Device': dbus.ObjectPath(sensor.path, variant_level=1),
                         'Primary': dbus.Boolean(True, variant_level=1)}
            self.main.AddObject(svc_path, SERVICE, svc_props, [])
            sensor.gatt_paths.append(svc_path)
            self.main.EmitSignal(OM, 'InterfacesAdded', 'oa{sa{sv}}', [dbus.ObjectPath(svc_path), {SERVICE: svc_props}])
            handle += 1
            for chr_uuid, flags, value in chars:
                self.add_characteristic(sensor, svc_path, handle, chr_uuid, flags, value)
                handle += 2
        dev = self.device(sensor)
        if BATTERY not in dev.props:
            dev.AddProperties(BATTERY, {'Percentage': dbus.Byte(sensor.battery, variant_level=1)})
            self.main.EmitSignal(OM, 'InterfacesAdded', 'oa{sa{sv}}',
                                 [dbus.ObjectPath(sensor.path), {BATTERY: dev.props[BATTERY]}])
        return False

    def primary_characteristics(self, sensor, stale):
        chars = []
        if not stale:
            chars.append((MEASUREMENT[sensor.kind], ['notify'], []))
        if sensor.kind == 'hr':
            chars += [(0x2A38, ['read'], [1]), (0x2A39, ['write'], [])]
        elif sensor.kind == 'csc':
            chars += [(0x2A5C, ['read'], [3, 0])]
        elif sensor.kind == 'cps':
            # Feature: wheel and crank revolution data; Sensor Location 5: left crank.
            chars += [(0x2A65, ['read'], [0x0C, 0, 0, 0]), (0x2A5D, ['read'], [5])]
        elif sensor.kind in ('ftms', 'trainer'):
            chars += [(0x2ACC, ['read'], [0x86, 0x44, 0, 0, 0x0C, 0x20, 0, 0])]
            if sensor.control_point:
                # Supported Power Range 0-2000 W step 1; Resistance Level 0-20.0 step 1.0.
                chars += [(0x2AD8, ['read'], list(struct.pack('<hhH', 0, 2000, 1))),
                          (0x2AD6, ['read'], list(struct.pack('<hhH', 0, 200, 10))),
                          (0x2AD9, ['write', 'indicate'], []), (0x2ADA, ['notify'], [])]
        else:
            chars += [(0x2A54, ['read'], [0, 0])]
        return chars

    def add_characteristic(self, sensor, svc_path, handle, uuid, flags, value):
        path = f'{svc_path}/char{handle:04x}'
        props = {'UUID': dbus.String(uuid16(uuid), variant_level=1),
                 'Service': dbus.ObjectPath(svc_path, variant_level=1),
                 'Value': dbus.Array(value, signature='y', variant_level=1),
                 'Notifying': dbus.Boolean(False, variant_level=1),
                 'Flags': dbus.Array(flags, signature='s', variant_level=1)}
        methods = [('ReadValue', 'a{sv}', 'ay', lambda c, o: dbus.Array(c.props[CHRC]['Value'], signature='y')),
                   ('WriteValue', 'aya{sv}', '', lambda c, v, o: self.write_value(sensor, uuid, v))]
        if uuid == MEASUREMENT.get(sensor.kind):
            methods += [('StartNotify', '', '', lambda c: self.start_notify(sensor, c)),
                        ('StopNotify', '', '', lambda c: self.stop_notify(sensor, c)),
                        ('AcquireNotify', 'a{sv}', 'hq', lambda c, o: self.acquire_notify(sensor, c))]
            props['NotifyAcquired'] = dbus.Boolean(False, variant_level=1)
        elif uuid in (0x2AD9, 0x2ADA):
            methods += [('StartNotify', '', '', lambda c: self.start_control_notify(sensor, c, uuid)),
                        ('StopNotify', '', '', lambda c: sensor.control_notifying.discard(uuid))]
        elif uuid == 0x2A19 and 'notify' in flags:
            methods += [('StartNotify', '', '', lambda c: self.start_battery_notify(sensor, c))]
        self.main.AddObject(path, CHRC, props, methods)
        sensor.gatt_paths.append(path)
        self.main.EmitSignal(OM, 'InterfacesAdded', 'oa{sa{sv}}', [dbus.ObjectPath(path), {CHRC: props}])

    def write_value(self, sensor, uuid, value):
        self.events.append(('WriteValue', sensor.address, f'{uuid:04x}', list(map(int, value))))
        if uuid == 0x2AD9:
            self.control_point_write(sensor, list(map(int, value)))

    # ---- one ATT bearer ------------------------------------------------------------------

    def serialize_att(self, message):
        """Message filter: with the fault `att_delay` (milliseconds), a sensor's StartNotify calls
        are answered one at a time, in the order asked, each that long after the previous one,
        as bluetoothd's CCC writes queue on the one ATT bearer; a CCC takes effect when its
        write is answered, so a measurement enabled after the control point streams after it."""
        if message.get_type() != 1 or message.get_interface() != CHRC or message.get_member() != 'StartNotify':
            return HANDLER_RESULT_NOT_YET_HANDLED
        sensor = next((s for s in self.sensors.values() if message.get_path() in s.gatt_paths), None)
        if sensor is None or not sensor.faults.get('att_delay'):
            return HANDLER_RESULT_NOT_YET_HANDLED
        sensor.att_queue.append(message)
        if len(sensor.att_queue) == 1:
            GLib.timeout_add(sensor.faults['att_delay'], self.att_answer, sensor)
        return HANDLER_RESULT_HANDLED

    def att_answer(self, sensor):
        message = sensor.att_queue.pop(0)
        chrc = mockobject.objects.get(message.get_path())
        try:
            if chrc is None or not sensor.connected:
                raise dbus.exceptions.DBusException('Not Connected', name='org.bluez.Error.NotConnected')
            short = int(str(chrc.props[CHRC]['UUID'])[4:8], 16)
            if short in (0x2AD9, 0x2ADA):
                self.start_control_notify(sensor, chrc, short)
            elif short == 0x2A19:
                self.start_battery_notify(sensor, chrc)
            else:
                self.start_notify(sensor, chrc)
            self.bus.send_message(MethodReturnMessage(message))
        except dbus.exceptions.DBusException as e:
            self.bus.send_message(ErrorMessage(message, e.get_dbus_name(), e.get_dbus_message()))
        if sensor.att_queue:
            GLib.timeout_add(sensor.faults['att_delay'], self.att_answer, sensor)
        return False

    # ---- fitness machine control ---------------------------------------------------------

    def start_control_notify(self, sensor, chrc, uuid):
        key = f'{uuid:04x}'
        sensor.control_start_notify[key] = sensor.control_start_notify.get(key, 0) + 1
        if sensor.faults.get('refuse_control_notify', 0) > 0:
            # The CCC write fails (a trainer that wants encryption, say): StartNotify errors.
            sensor.faults['refuse_control_notify'] -= 1
            raise dbus.exceptions.DBusException('Not paired', name='org.bluez.Error.NotPermitted')
        sensor.control_notifying.add(uuid)
        chrc.UpdateProperties(CHRC, {'Notifying': dbus.Boolean(True, variant_level=1)})

    def control_point_write(self, sensor, value):
        """As a trainer answers: the write response, then an indication [0x80, op, result]."""
        if 0x2AD9 not in sensor.control_notifying:
            # ATT error 0xFD (CCC improperly configured), as bluetoothd passes it on.
            raise dbus.exceptions.DBusException('Operation failed with ATT error: 0xfd', name='org.bluez.Error.Failed')
        op = value[0] if value else 0xFF
        if op == 0x00:          # Request Control
            sensor.control_granted = True
            result = 0x01
        elif not sensor.control_granted:
            result = 0x05       # Control Not Permitted
        elif op in (0x01, 0x04, 0x05, 0x07, 0x08, 0x11):
            result = 0x01       # Reset, target resistance/power, start/resume, stop/pause, simulation
            if op == 0x01:
                sensor.control_granted = False
        else:
            result = 0x02       # Op Code Not Supported
        GLib.idle_add(lambda: self.control_value(sensor, 0x2AD9, [0x80, op, result]) and False)
        if op == 0x05 and result == 0x01 and len(value) >= 3:
            # Machine Status: Target Power Changed, with the new target.
            GLib.idle_add(lambda: self.control_value(sensor, 0x2ADA, [0x08, value[1], value[2]]) and False)

    def control_value(self, sensor, uuid, data):
        chrc = self.characteristic_object(sensor, uuid)
        if chrc is None or not sensor.connected or uuid not in sensor.control_notifying:
            return False
        chrc.UpdateProperties(CHRC, {'Value': dbus.Array(data, signature='y', variant_level=1)})
        self.events.append(('Indicate' if uuid == 0x2AD9 else 'Notify', sensor.address, f'{uuid:04x}', data))
        return True

    def remove_gatt(self, sensor):
        for path in reversed(sensor.gatt_paths):
            iface = CHRC if '/char' in path else SERVICE
            self.main.RemoveObject(path)
            self.main.EmitSignal(OM, 'InterfacesRemoved', 'oas', [dbus.ObjectPath(path), [iface]])
        sensor.gatt_paths = []
        sensor.battery_notifying = False
        # A new connection: the trainer forgets who had control, and the CCCs are off.
        sensor.control_granted = False
        sensor.control_notifying = set()

    # ---- notifications ---------------------------------------------------------------

    def start_notify(self, sensor, chrc):
        sensor.start_notify_calls += 1
        if sensor.sock is not None:
            raise dbus.exceptions.DBusException('Notify acquired', name='org.bluez.Error.NotPermitted')
        if not sensor.notifying:
            sensor.notifying = True
            chrc.UpdateProperties(CHRC, {'Notifying': dbus.Boolean(True, variant_level=1)})
        if sensor.faults.get('notify_before_reply', 0) > 0:
            # bluetoothd forwards a notification that arrives before the CCC write response
            # (a bonded sensor notifies as soon as the link is up): the Value change goes out
            # before this reply.
            sensor.faults['notify_before_reply'] -= 1
            self.notify(sensor)
        # A sensor notifies as soon as its CCC is written: right after this reply.
        GLib.idle_add(lambda: self.notify(sensor) and False)

    def start_battery_notify(self, sensor, chrc):
        sensor.battery_start_notify_calls += 1
        sensor.battery_notifying = True
        chrc.UpdateProperties(CHRC, {'Notifying': dbus.Boolean(True, variant_level=1)})

    def set_battery(self, sensor, level):
        """The level changes on the sensor: notified to a subscriber and kept for reads. Battery1
        is left alone, as if BlueZ's battery plugin had not caught up yet."""
        sensor.battery = level
        chrc = self.characteristic_object(sensor, 0x2A19)
        if chrc is None:
            return
        chrc.props[CHRC]['Value'] = dbus.Array([level], signature='y', variant_level=1)
        if sensor.connected and sensor.battery_notifying:
            chrc.UpdateProperties(CHRC, {'Value': dbus.Array([level], signature='y', variant_level=1)})

    def stop_notify(self, sensor, chrc):
        sensor.notifying = False
        chrc.UpdateProperties(CHRC, {'Notifying': dbus.Boolean(False, variant_level=1)})

    def acquire_notify(self, sensor, chrc):
        sensor.acquire_calls += 1
        if sensor.notifying or sensor.sock is not None:
            raise dbus.exceptions.DBusException('Notify already active', name='org.bluez.Error.NotPermitted')
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        sensor.sock = ours
        fd = dbus.types.UnixFd(theirs)
        theirs.close()
        chrc.props[CHRC]['NotifyAcquired'] = dbus.Boolean(True, variant_level=1)

        def hangup(_fd, _cond):
            if sensor.sock is ours:
                self.release_socket(sensor)
            return False
        GLib.io_add_watch(ours.fileno(), GLib.IO_HUP | GLib.IO_ERR, hangup)
        GLib.idle_add(lambda: self.notify(sensor) and False)
        return (fd, dbus.UInt16(23))

    def release_socket(self, sensor):
        if sensor.sock is not None:
            sensor.sock.close()
            sensor.sock = None

    def measurement_object(self, sensor):
        return self.characteristic_object(sensor, MEASUREMENT[sensor.kind])

    def characteristic_object(self, sensor, short):
        for path in sensor.gatt_paths:
            obj = mockobject.objects.get(path)
            if obj is not None and CHRC in obj.props and str(obj.props[CHRC]['UUID']) == uuid16(short):
                return obj
        return None

    def notify(self, sensor):
        if not sensor.connected:
            return False
        data = payload(sensor.kind, sensor.seq)
        if sensor.sock is not None:
            try:
                sensor.sock.send(data)
            except OSError:
                self.release_socket(sensor)
                return False
        elif sensor.notifying:
            chrc = self.measurement_object(sensor)
            if chrc is None:
                return False
            chrc.UpdateProperties(CHRC, {'Value': dbus.Array(list(data), signature='y', variant_level=1)})
        else:
            return False
        sensor.seq += 1
        sensor.sent = sensor.seq
        return True

    def tick(self, sensor):
        if self.streaming:
            self.notify(sensor)
        return True
