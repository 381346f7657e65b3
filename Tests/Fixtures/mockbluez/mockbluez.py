#!/usr/bin/python3
"""A scriptable mock bluetoothd for strapd's BlueZ tests.

python-dbusmock's bluez5 template provides the object manager, AgentManager1 and the
adapter; this file adds what the template lacks: LE sensors with GATT services (HR, CSC,
RSC, Cycling Power, Fitness Machine, battery, device information), StartNotify/AcquireNotify
(fd passing over a SOCK_SEQPACKET socketpair), GattManager1, pairing through the client's agent, faults, and
several adapters (adapters.py) with a device object per adapter that has seen a sensor.

Every measurement notification carries a 32-bit sequence number that only advances when a
notification is actually delivered to a subscriber, so a test can prove nothing was lost
or duplicated:
  HR  (2A37): flags 0x10 (RR present), bpm, RR1 = seq & 0xffff, RR2 = seq >> 16
  CSC (2A5B): flags 0x01, cumulative wheel revolutions = seq (uint32), event time
  RSC (2A53): flags 0x02, speed, cadence, total distance = seq (uint32)
  CPS (2A63): flags 0x33, power = 100 + seq % 200 W, balance 50 % (left), wheel
              revolutions = seq (uint32) with event time seq × 2048, crank seq × 1024
  FTMS (2AD2): flags 0x54, 36 km/h, 90 rpm, total distance = seq (uint24), power as CPS
              (kind `ftms`; kind `trainer` is the same with Cycling Power 0x1818 beside it).
              With `control_point`, either also has Supported Power/Resistance Level Range
              (0x2AD8/0x2AD6), a Fitness Machine Control Point (0x2AD9, write + indicate)
              that answers each write with an indication as a trainer does, and Machine
              Status (0x2ADA); see gatt.py's control_point_write.

Tests drive it through org.strapd.MockBlueZ at /strapmock (same connection, so the
control calls and the BlueZ signals are ordered).

Usage: mockbluez.py --config FILE [--state FILE]; prints "ready" once on the bus.
"""
import argparse
import json
import os
import time

import dbus
import dbus.mainloop.glib
import dbus.service
from dbus.lowlevel import HANDLER_RESULT_HANDLED, HANDLER_RESULT_NOT_YET_HANDLED, ErrorMessage
from gi.repository import GLib

from dbusmock import mockobject

from adapters import AdapterMixin
from gatt import CHRC, DEVICE, EXTRA_SERVICES, OM, SERVICE_OF, GattMixin, Sensor, uuid16


class Caller:
    """dbusmock hides the sender from method code; a message filter remembers it."""
    sender = None

    @staticmethod
    def filter(_bus, message):
        if message.get_type() == 1:  # method call
            Caller.sender = message.get_sender()
        return HANDLER_RESULT_NOT_YET_HANDLED


class MockBlueZ(AdapterMixin, GattMixin, dbus.service.Object):
    def __init__(self, bus, main, config, state_path):
        # dbusmock replaces dbus-python's method lookup for every object; these two
        # attributes let it fall back to the normal lookup for this plain object.
        self.methods = {}
        self.interface = 'org.strapd.MockBlueZ'
        super().__init__(bus, '/strapmock')
        self.bus = bus
        self.main = main
        self.adapter_names = config.get('adapters') or [config.get('adapter', 'hci0')]
        self.state_path = state_path
        state = {}
        if state_path and os.path.exists(state_path):
            with open(state_path) as f:
                state = json.load(f)
        self.sensors = {s['address']: Sensor(s, state) for s in config['sensors']}
        self.streaming = config.get('streaming', True)
        self.powered = {name: True for name in self.adapter_names}
        self.present = {}
        self.discovery_filter = None
        self.heard = set()
        self.applications = []    # (sender, path, [uuids])
        self.agent = None         # (sender, path, capability)
        self.pair_results = []
        self.pending_pairing = {}  # address -> the Pair call held by hold_pair
        self.events = []
        for name in self.adapter_names:
            self.add_adapter(name)
        for sensor in self.sensors.values():
            # Where BlueZ has a device object at start (cached or bonded); elsewhere only
            # discovery creates one.
            for name in sensor.known_on if sensor.known_on is not None else (self.adapter_names if config.get('known', True) else []):
                self.add_device(sensor, name)
            GLib.timeout_add(max(1, int(1000 / sensor.hz)), self.tick, sensor)

    def register_application(self, app_path):
        sender = Caller.sender
        entry = {'sender': sender, 'path': str(app_path), 'uuids': []}
        self.applications.append(entry)

        def fetched(objects):
            for _path, ifaces in objects.items():
                profile = ifaces.get('org.bluez.GattProfile1')
                if profile is not None:
                    entry['uuids'] += [str(u) for u in profile.get('UUIDs', [])]

        def failed(error):
            entry['error'] = str(error)

        # BlueZ reads the application's objects after replying, over the caller's connection.
        GLib.idle_add(lambda: self.bus.call_async(sender, app_path, OM, 'GetManagedObjects', '', [],
                                                  fetched, failed) and False)

    # ---- devices ---------------------------------------------------------------------

    def add_device(self, sensor, adapter):
        path = self.adapter_path(adapter) + '/dev_' + sensor.address.replace(':', '_')
        extra = [uuid16(service) for service, _ in EXTRA_SERVICES.get(sensor.kind, [])]
        uuids = [uuid16(SERVICE_OF[sensor.kind])] + extra + [uuid16(0x180F), uuid16(0x180A)]
        props = {
            'Address': dbus.String(sensor.address, variant_level=1),
            'AddressType': dbus.String('random', variant_level=1),
            'Name': dbus.String(sensor.name, variant_level=1),
            'Alias': dbus.String(sensor.name, variant_level=1),
            'UUIDs': dbus.Array(uuids, signature='s', variant_level=1),
            'Paired': dbus.Boolean(False, variant_level=1),
            'Bonded': dbus.Boolean(False, variant_level=1),
            'Connected': dbus.Boolean(False, variant_level=1),
            'Trusted': dbus.Boolean(False, variant_level=1),
            'Blocked': dbus.Boolean(False, variant_level=1),
            'Adapter': dbus.ObjectPath(self.adapter_path(adapter), variant_level=1),
            'RSSI': dbus.Int16(-58, variant_level=1),
            'ServicesResolved': dbus.Boolean(False, variant_level=1),
        }
        self.main.AddObject(path, DEVICE, props, [
            ('Connect', '', '', lambda d: self.connect(sensor, adapter)),
            ('Disconnect', '', '', lambda d: self.disconnect(sensor, 'org.bluez.Reason.Local', 'Connection terminated by local host',
                                                             adapter=adapter)),
            ('Pair', '', '', lambda d: self.pair(sensor, d)),
            ('CancelPairing', '', '', lambda d: self.cancel_pairing(sensor)),
        ])
        sensor.paths[adapter] = path
        self.main.EmitSignal(OM, 'InterfacesAdded', 'oa{sa{sv}}', [dbus.ObjectPath(path), {DEVICE: props}])
        self.events.append(('DeviceAdded', sensor.address, adapter))

    def device(self, sensor):
        return mockobject.objects[sensor.path]

    def remove_device(self, path):
        found = next(((s, a) for s in self.sensors.values() for a, p in s.paths.items() if p == str(path)), None)
        if found is None:
            raise dbus.exceptions.DBusException('Does Not Exist', name='org.bluez.Error.DoesNotExist')
        sensor, adapter = found
        if sensor.connected and sensor.link == adapter:
            self.disconnect(sensor, 'org.bluez.Reason.Local', 'device removed')
        if sensor.link is None:
            self.remove_gatt(sensor)
        self.main.RemoveObject(str(path))
        self.main.EmitSignal(OM, 'InterfacesRemoved', 'oas', [dbus.ObjectPath(path), [DEVICE]])
        del sensor.paths[adapter]
        # Removing the device drops BlueZ's GATT cache for it.
        sensor.faults.pop('stale_cache', None)
        self.events.append(('RemoveDevice', sensor.address))

    def connect(self, sensor, adapter):
        self.events.append(('Connect', sensor.address, adapter))
        if not self.powered[adapter]:
            raise dbus.exceptions.DBusException('Resource Not Ready', name='org.bluez.Error.NotReady')
        if sensor.faults.get('connect_abort', 0) > 0:
            sensor.faults['connect_abort'] -= 1
            raise dbus.exceptions.DBusException('le-connection-abort-by-local', name='org.bluez.Error.Failed')
        if sensor.connected and sensor.link == adapter:
            raise dbus.exceptions.DBusException('Already Connected', name='org.bluez.Error.AlreadyConnected')
        if sensor.connected:
            # One central at a time: connected elsewhere, it no longer advertises.
            raise dbus.exceptions.DBusException('Page Timeout', name='org.bluez.Error.Failed')
        self.establish(sensor, adapter)

    def establish(self, sensor, adapter):
        sensor.link = adapter
        sensor.connected = True
        self.device(sensor).UpdateProperties(DEVICE, {'Connected': dbus.Boolean(True, variant_level=1)})
        GLib.idle_add(self.resolve, sensor)

    def resolve(self, sensor):
        if not sensor.connected:
            return False
        dev = self.device(sensor)
        if sensor.faults.get('early_resolved', 0) > 0:
            # bluez#1489: the property flips before the objects are exported.
            sensor.faults['early_resolved'] -= 1
            dev.UpdateProperties(DEVICE, {'ServicesResolved': dbus.Boolean(True, variant_level=1)})
            GLib.timeout_add(400, lambda: self.export_gatt(sensor) and False)
            return False
        self.export_gatt(sensor)
        dev.UpdateProperties(DEVICE, {'ServicesResolved': dbus.Boolean(True, variant_level=1)})
        return False

    # ---- connection teardown ---------------------------------------------------------

    def disconnect(self, sensor, reason, message, signal=True, adapter=None):
        if not sensor.connected or adapter not in (None, sensor.link):
            raise dbus.exceptions.DBusException('Not Connected', name='org.bluez.Error.NotConnected')
        dev = self.device(sensor)
        sensor.connected = False
        sensor.link = None
        sensor.notifying = False
        self.release_socket(sensor)
        self.remove_gatt(sensor)
        if signal:  # newer BlueZ only; older daemons just flip Connected
            dev.EmitSignal(DEVICE, 'Disconnected', 'ss', [reason, message])
        dev.UpdateProperties(DEVICE, {'ServicesResolved': dbus.Boolean(False, variant_level=1),
                                      'Connected': dbus.Boolean(False, variant_level=1)})
        self.events.append(('Disconnected', sensor.address, reason))

    # ---- pairing ---------------------------------------------------------------------

    def pair(self, sensor, dev):
        stall = sensor.faults.pop('stall_pair', 0)
        if stall:
            # A bluetoothd that stops answering: the whole bus service blocks, as in the lab.
            time.sleep(stall)
        if sensor.faults.get('refuse_pairing'):
            self.pair_results.append((sensor.address, 'refused-by-device'))
            raise dbus.exceptions.DBusException('Authentication Failed', name='org.bluez.Error.AuthenticationFailed')
        if self.agent is None:
            # BlueZ >= 5.72 without an agent (docs/bluetooth-field-notes.md#pairing-and-bonding).
            raise dbus.exceptions.DBusException('Authentication Failed', name='org.bluez.Error.AuthenticationFailed')
        sender, agent_path, _capability = self.agent
        try:
            self.bus.call_blocking(sender, agent_path, 'org.bluez.Agent1', 'RequestAuthorization', 'o',
                                   [dbus.ObjectPath(dev.path)], timeout=10)
        except dbus.exceptions.DBusException as e:
            self.pair_results.append((sensor.address, 'rejected-by-agent:' + e.get_dbus_name()))
            raise dbus.exceptions.DBusException('Authentication Rejected', name='org.bluez.Error.AuthenticationRejected')
        dev.UpdateProperties(DEVICE, {'Paired': dbus.Boolean(True, variant_level=1),
                                      'Bonded': dbus.Boolean(True, variant_level=1)})
        self.pair_results.append((sensor.address, 'paired'))

    def hold_pair(self, message):
        """Message filter: with the fault `pair_never_ends`, a Pair call gets no answer (the
        kernel's passive scan for a sensor that stopped advertising has no time limit) until
        CancelPairing, or BlueZ's own two minutes, while the rest of the mock keeps answering."""
        if message.get_type() != 1 or message.get_interface() != DEVICE or message.get_member() != 'Pair':
            return HANDLER_RESULT_NOT_YET_HANDLED
        sensor = next((s for s in self.sensors.values() if message.get_path() in s.paths.values()), None)
        if sensor is None or not sensor.faults.pop('pair_never_ends', 0):
            return HANDLER_RESULT_NOT_YET_HANDLED
        self.events.append(('Pair', sensor.address, 'held'))
        self.pending_pairing[sensor.address] = message
        GLib.timeout_add_seconds(120, lambda: self.end_pairing(sensor, 'org.bluez.Error.AuthenticationTimeout', 'timed-out') and False)
        return HANDLER_RESULT_HANDLED

    def end_pairing(self, sensor, error, result):
        message = self.pending_pairing.pop(sensor.address, None)
        if message is None:
            return False
        self.bus.send_message(ErrorMessage(message, error, result))
        self.pair_results.append((sensor.address, result))
        return True

    def cancel_pairing(self, sensor):
        self.events.append(('CancelPairing', sensor.address))
        if not self.end_pairing(sensor, 'org.bluez.Error.AuthenticationCanceled', 'cancelled'):
            raise dbus.exceptions.DBusException('Does Not Exist', name='org.bluez.Error.DoesNotExist')

    def register_agent(self, path, capability):
        self.agent = (Caller.sender, str(path), str(capability))
        # Keep the template's bookkeeping, which its RequestDefaultAgent checks.
        manager = mockobject.objects['/org/bluez']
        if path not in manager.agent_paths:
            manager.agent_paths.append(path)
        manager.capabilities[str(path)] = capability
        self.events.append(('RegisterAgent', str(path), str(capability)))

    # ---- control interface for tests -------------------------------------------------

    @dbus.service.method('org.strapd.MockBlueZ', in_signature='ssi', out_signature='')
    def SetFault(self, address, fault, count):
        self.sensors[str(address)].faults[str(fault)] = int(count)

    @dbus.service.method('org.strapd.MockBlueZ', in_signature='ss', out_signature='')
    def Drop(self, address, reason):
        """The link drops; an empty reason imitates older BlueZ (no Disconnected signal)."""
        self.disconnect(self.sensors[str(address)], str(reason), 'Connection timed out', signal=bool(reason))

    @dbus.service.method('org.strapd.MockBlueZ', in_signature='s', out_signature='')
    def AutoConnect(self, address):
        """bluetoothd connects on its own, as a registered GattProfile1 makes it do."""
        sensor = self.sensors[str(address)]
        if not sensor.connected and sensor.paths:
            self.establish(sensor, min(sensor.paths))

    @dbus.service.method('org.strapd.MockBlueZ', in_signature='s', out_signature='')
    def CloseNotifyFd(self, address):
        """BlueZ releases an acquired notification fd while the link stays up."""
        sensor = self.sensors[str(address)]
        self.release_socket(sensor)
        chrc = self.measurement_object(sensor)
        if chrc is not None:
            chrc.props[CHRC]['NotifyAcquired'] = dbus.Boolean(False, variant_level=1)

    @dbus.service.method('org.strapd.MockBlueZ', in_signature='sy', out_signature='')
    def SetBattery(self, address, level):
        self.set_battery(self.sensors[str(address)], int(level))

    @dbus.service.method('org.strapd.MockBlueZ', in_signature='b', out_signature='')
    def SetStreaming(self, on):
        self.streaming = bool(on)

    @dbus.service.method('org.strapd.MockBlueZ', in_signature='b', out_signature='')
    def SetPowered(self, on):
        """Every adapter at once."""
        for name in self.adapter_names:
            self.set_powered(name, bool(on))

    @dbus.service.method('org.strapd.MockBlueZ', in_signature='', out_signature='')
    def RemoveAdapter(self):
        """The first adapter goes, its connections closed first."""
        self.remove_adapter(self.adapter_names[0], quietly=False)

    @dbus.service.method('org.strapd.MockBlueZ', in_signature='', out_signature='')
    def AddAdapter(self):
        self.add_adapter(self.adapter_names[0])

    @dbus.service.method('org.strapd.MockBlueZ', in_signature='s', out_signature='')
    def UnplugAdapter(self, name):
        """A dongle pulled mid-stream: its objects vanish, with no Connected=false before."""
        self.remove_adapter(str(name), quietly=True)

    @dbus.service.method('org.strapd.MockBlueZ', in_signature='s', out_signature='')
    def PullAdapter(self, name):
        """A dongle pulled as real bluetoothd 5.66 reported it in the lab (daemon-two-adapters):
        each of its links Connected=false, the adapter Powered=false, then its objects go."""
        name = str(name)
        self.set_powered(name, False)
        self.remove_adapter(name, quietly=False)

    @dbus.service.method('org.strapd.MockBlueZ', in_signature='s', out_signature='')
    def PlugAdapter(self, name):
        """The dongle is back: an adapter without device objects until discovery finds them."""
        self.add_adapter(str(name))

    @dbus.service.method('org.strapd.MockBlueZ', in_signature='', out_signature='')
    def EmitGarbage(self):
        """Signals a client must survive: wrong types, missing properties, unknown paths."""
        bogus = self.adapter_path() + '/dev_FF_FF_FF_FF_FF_FF'
        self.main.EmitSignal(OM, 'InterfacesAdded', 'oa{sa{sv}}', [dbus.ObjectPath(bogus), {
            DEVICE: {'Address': dbus.Int32(5, variant_level=1), 'Connected': dbus.String('yes', variant_level=1),
                     'UUIDs': dbus.Array([dbus.Int32(1)], signature='i', variant_level=1)}}])
        self.main.EmitSignal(OM, 'InterfacesRemoved', 'oas', [dbus.ObjectPath('/org/bluez/hci9/dev_00'), [DEVICE]])
        self.main.EmitSignal('org.freedesktop.DBus.Properties', 'PropertiesChanged', 'sa{sv}as',
                             [DEVICE, {'Connected': dbus.Boolean(True, variant_level=1)}, []])
        for sensor in self.sensors.values():
            chrc = self.measurement_object(sensor) if sensor.path else None
            if chrc is not None:
                # A Value that is not "ay" must be ignored, not delivered or crashed on.
                chrc.EmitSignal('org.freedesktop.DBus.Properties', 'PropertiesChanged', 'sa{sv}as',
                                [CHRC, {'Value': dbus.String('garbage', variant_level=1)}, []])
            if sensor.path:
                self.device(sensor).EmitSignal('org.freedesktop.DBus.Properties', 'PropertiesChanged', 'sa{sv}as',
                                               [DEVICE, {'RSSI': dbus.String('loud', variant_level=1)}, ['Name']])
        # Wrong argument count / types for ObjectManager signals.
        self.main.EmitSignal(OM, 'InterfacesAdded', 's', ['nonsense'])
        self.main.EmitSignal(OM, 'InterfacesRemoved', 'i', [7])

    @dbus.service.method('org.strapd.MockBlueZ', in_signature='', out_signature='s')
    def Stats(self):
        return json.dumps({
            'sent': {s.address: s.sent for s in self.sensors.values()},
            'start_notify': {s.address: s.start_notify_calls for s in self.sensors.values()},
            'acquire_notify': {s.address: s.acquire_calls for s in self.sensors.values()},
            'battery_start_notify': {s.address: s.battery_start_notify_calls for s in self.sensors.values()},
            'control_start_notify': {s.address: s.control_start_notify for s in self.sensors.values()},
            'connected': {s.address: s.connected for s in self.sensors.values()},
            'link': {s.address: s.link for s in self.sensors.values()},
            'devices': {s.address: sorted(s.paths) for s in self.sensors.values()},
            'filter': self.discovery_filter,
            'applications': self.applications,
            'agent': self.agent,
            'pair_results': self.pair_results,
            'events': self.events,
            'discovering': self.discovering(self.adapter_names[0]),
            'discovering_on': {name: self.discovering(name) for name in self.adapter_names},
        })

    @dbus.service.method('org.strapd.MockBlueZ', in_signature='', out_signature='')
    def Shutdown(self):
        """bluetoothd dies: sequence numbers survive in the state file for the next run."""
        if self.state_path:
            with open(self.state_path, 'w') as f:
                json.dump({s.address: s.seq for s in self.sensors.values()}, f)
        GLib.idle_add(lambda: os._exit(0))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--config', required=True)
    parser.add_argument('--state')
    args = parser.parse_args()
    with open(args.config) as f:
        config = json.load(f)

    dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
    bus = dbus.SystemBus()
    bus.add_message_filter(Caller.filter)
    bus_name = dbus.service.BusName('org.bluez', bus, allow_replacement=True, replace_existing=True,
                                    do_not_queue=True)
    main_object = mockobject.DBusMockObject(bus_name, '/', OM, {}, None, True)
    mockobject.objects['/'] = main_object
    main_object.AddTemplate('bluez5', None)
    mock = MockBlueZ(bus, main_object, config, args.state)
    bus.add_message_filter(lambda _bus, message: mock.hold_pair(message))
    bus.add_message_filter(lambda _bus, message: mock.serialize_att(message))
    mockobject.objects['/org/bluez'].AddMethod('org.bluez.AgentManager1', 'RegisterAgent', 'os', '',
                                               lambda m, p, c: mock.register_agent(p, c))
    print('ready', flush=True)
    GLib.MainLoop().run()


if __name__ == '__main__':
    main()
