#!/usr/bin/python3
"""Fake BLE fitness sensor served by bluetoothd on one adapter (the peripheral side).

Registers a GATT application (GattManager1.RegisterApplication) with
  Heart Rate 0x180D (0x2A37 notify, 0x2A38 read),
  Cycling Speed and Cadence 0x1816 (0x2A5B notify, 0x2A5C read, 0x2A5D read),
  Running Speed and Cadence 0x1814 (0x2A53 notify, 0x2A54 read),
and an LE advertisement (LEAdvertisingManager1.RegisterAdvertisement) carrying the
service UUIDs. Every --interval seconds (one "tick", numbered seq = 1, 2, ...) each
notifying characteristic gets the value of a deterministic sequence (blelab.encode_*).

Log (stdout, JSON lines, guest monotonic time 't'): every notification handed to bluetoothd
is one {"event": "sent", "uuid", "seq", "hex", "values"} line, values named like
`strapctl decode`'s JSON. A notification is sent (and logged) only while a central is
connected and subscribed and the sensor is not "vanished", so a check can demand that
every "sent" line arrives exactly once.

bluetoothd restarts: the sensor watches org.bluez's owner and registers its application,
advertisement (and agent) again on the new bluetoothd.

Link loss: SIGUSR1 makes the sensor vanish (advertising stops, its adapter is powered off:
the link drops as for a strap out of range; ticks go on unsent, so the gap is visible in seq), SIGUSR2 brings
it back (adapter powered on, advertising again). --vanish-at/--vanish-for do the same on a
timer, counted from the first subscription.

--readvertise S (default 2): while no central is connected, register a fresh advertisement
every S seconds: btvirt's emulated controller reports an advertiser only once per scan or
advertising enable, and the kernel drops a report that lands before its discovery state is
"finding"; real radios advertise continuously. The new one (two object paths, taken in turn)
is registered before the old one is withdrawn, so the sensor never stops advertising: its
adapter shares bluetoothd with the central's, and bluetoothd sends one management command at
a time. A central's Pair Device waits, holding that queue, for an advertiser; had the old
advertisement been withdrawn first, the new one would queue behind the pairing that waits
for it (docs/testing.md, pitfall 9).
"""
import argparse
import os
import signal
import sys

import dbus
import dbus.mainloop.glib
import dbus.service
from gi.repository import GLib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import blelab as L  # noqa: E402

APP_PATH = '/lab/sensor'
ADV_PATHS = ('/lab/sensor/adv0', '/lab/sensor/adv1')


class State:
    def __init__(self):
        self.connected = set()     # device paths connected on our adapter
        self.vanished = False
        self.first_subscription = None


class Characteristic(dbus.service.Object):
    def __init__(self, bus, state, service, index, uuid16, flags, value=b'', encoder=None):
        self.path = '%s/char%d' % (service.path, index)
        self.uuid = L.uuid16(uuid16)
        self.flags = flags
        self.value = bytes(value)
        self.encoder = encoder
        self.service = service
        self.state = state
        self.notifying = False
        self.sent = 0
        self.on_subscribe = None
        dbus.service.Object.__init__(self, bus, self.path)

    def properties(self):
        return {L.GATT_CHRC_IFACE: {
            'Service': dbus.ObjectPath(self.service.path),
            'UUID': self.uuid,
            'Flags': dbus.Array(self.flags, signature='s'),
        }}

    @dbus.service.method(L.PROPS_IFACE, in_signature='s', out_signature='a{sv}')
    def GetAll(self, interface):
        return self.properties().get(interface, {})

    @dbus.service.method(L.GATT_CHRC_IFACE, in_signature='a{sv}', out_signature='ay')
    def ReadValue(self, options):
        L.emit('read', uuid=L.short(self.uuid))
        return dbus.Array(self.value, signature='y')

    @dbus.service.method(L.GATT_CHRC_IFACE, in_signature='aya{sv}')
    def WriteValue(self, value, options):
        L.emit('write', uuid=L.short(self.uuid), value=bytes(value).hex())

    @dbus.service.method(L.GATT_CHRC_IFACE)
    def StartNotify(self):
        self.notifying = True
        L.emit('start-notify', uuid=L.short(self.uuid))
        if self.on_subscribe:
            self.on_subscribe()

    @dbus.service.method(L.GATT_CHRC_IFACE)
    def StopNotify(self):
        self.notifying = False
        L.emit('stop-notify', uuid=L.short(self.uuid), sent=self.sent)

    @dbus.service.signal(L.PROPS_IFACE, signature='sa{sv}as')
    def PropertiesChanged(self, interface, changed, invalidated):
        pass

    def tick(self, seq):
        if not self.encoder:
            return
        self.value, values = self.encoder(seq)
        if self.notifying and self.state.connected and not self.state.vanished:
            self.PropertiesChanged(L.GATT_CHRC_IFACE,
                                   {'Value': dbus.Array(self.value, signature='y')}, [])
            self.sent += 1
            L.emit('sent', uuid=L.short(self.uuid), seq=seq, hex=self.value.hex(), values=values)


class Service(dbus.service.Object):
    def __init__(self, bus, index, uuid16):
        self.path = '%s/service%d' % (APP_PATH, index)
        self.uuid = L.uuid16(uuid16)
        self.chrcs = []
        dbus.service.Object.__init__(self, bus, self.path)

    def properties(self):
        return {L.GATT_SERVICE_IFACE: {'UUID': self.uuid, 'Primary': True}}

    @dbus.service.method(L.PROPS_IFACE, in_signature='s', out_signature='a{sv}')
    def GetAll(self, interface):
        return self.properties().get(interface, {})


class Application(dbus.service.Object):
    def __init__(self, bus):
        self.services = []
        dbus.service.Object.__init__(self, bus, APP_PATH)

    @dbus.service.method(L.OM_IFACE, out_signature='a{oa{sa{sv}}}')
    def GetManagedObjects(self):
        objs = {}
        for s in self.services:
            objs[dbus.ObjectPath(s.path)] = s.properties()
            for c in s.chrcs:
                objs[dbus.ObjectPath(c.path)] = c.properties()
        return objs


class Advertisement(dbus.service.Object):
    def __init__(self, bus, path, name, uuids):
        self.props = {
            'Type': 'peripheral',
            'ServiceUUIDs': dbus.Array(uuids, signature='s'),
            'LocalName': dbus.String(name),
            'Appearance': dbus.UInt16(0x0341),   # heart rate belt
            'Discoverable': dbus.Boolean(True),
        }
        dbus.service.Object.__init__(self, bus, path)

    @dbus.service.method(L.PROPS_IFACE, in_signature='s', out_signature='a{sv}')
    def GetAll(self, interface):
        return self.props if interface == L.ADV_IFACE else {}

    @dbus.service.method(L.ADV_IFACE)
    def Release(self):
        L.emit('adv-released')


class Agent(dbus.service.Object):
    """NoInputNoOutput pairing agent: accepts Just Works pairing from the central."""
    AGENT_IFACE = 'org.bluez.Agent1'

    @dbus.service.method(AGENT_IFACE)
    def Release(self):
        pass

    @dbus.service.method(AGENT_IFACE, in_signature='os')
    def AuthorizeService(self, device, uuid):
        L.emit('agent', call='AuthorizeService', device=str(device), uuid=str(uuid))

    @dbus.service.method(AGENT_IFACE, in_signature='o')
    def RequestAuthorization(self, device):
        L.emit('agent', call='RequestAuthorization', device=str(device))

    @dbus.service.method(AGENT_IFACE, in_signature='ou')
    def RequestConfirmation(self, device, passkey):
        L.emit('agent', call='RequestConfirmation', device=str(device), passkey=int(passkey))

    @dbus.service.method(AGENT_IFACE)
    def Cancel(self):
        L.emit('agent', call='Cancel')


def build(bus, state, which, interval):
    app = Application(bus)
    idx = 0

    def enc(uuid):
        return lambda seq: L.ENCODERS[uuid](seq, interval)
    if 'hr' in which:
        s = Service(bus, idx, L.HRS)
        s.chrcs = [Characteristic(bus, state, s, 0, L.HR_MEASUREMENT, ['notify'], enc('2a37')(0)[0], enc('2a37')),
                   Characteristic(bus, state, s, 1, L.BODY_SENSOR_LOCATION, ['read'], b'\x01')]
        app.services.append(s)
        idx += 1
    if 'csc' in which:
        s = Service(bus, idx, L.CSCS)
        s.chrcs = [Characteristic(bus, state, s, 0, L.CSC_MEASUREMENT, ['notify'], enc('2a5b')(0)[0], enc('2a5b')),
                   Characteristic(bus, state, s, 1, L.CSC_FEATURE, ['read'], b'\x03\x00'),
                   Characteristic(bus, state, s, 2, L.SENSOR_LOCATION, ['read'], b'\x0c')]
        app.services.append(s)
        idx += 1
    if 'rsc' in which:
        s = Service(bus, idx, L.RSCS)
        s.chrcs = [Characteristic(bus, state, s, 0, L.RSC_MEASUREMENT, ['notify'], enc('2a53')(0)[0], enc('2a53')),
                   Characteristic(bus, state, s, 1, L.RSC_FEATURE, ['read'], b'\x07\x00')]
        app.services.append(s)
    return app


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--adapter', default='hci0', help='adapter name, e.g. hci0')
    ap.add_argument('--services', default='hr,csc,rsc', help='comma list of hr,csc,rsc')
    ap.add_argument('--name', default='LabSensor', help='advertised local name')
    ap.add_argument('--interval', type=float, default=1.0, help='seconds between notifications')
    ap.add_argument('--duration', type=float, default=0, help='exit after N seconds (0: run until SIGTERM)')
    ap.add_argument('--ready-file', help='created (with our address) once app and advertisement are registered')
    ap.add_argument('--readvertise', type=float, default=2.0,
                    help='re-register the advertisement every S s while unconnected (0: never)')
    ap.add_argument('--agent', action='store_true', help='register a NoInputNoOutput agent (Just Works pairing)')
    ap.add_argument('--vanish-at', type=float, default=0,
                    help='vanish S s after the first subscription (0: only on SIGUSR1)')
    ap.add_argument('--vanish-for', type=float, default=20, help='come back after S s (with --vanish-at)')
    args = ap.parse_args()
    which = set(args.services.split(','))

    dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
    bus = dbus.SystemBus()
    apath = '/org/bluez/' + args.adapter
    adapter = bus.get_object(L.BLUEZ, apath, follow_name_owner_changes=True)
    aprops = dbus.Interface(adapter, L.PROPS_IFACE)
    aprops.Set(L.ADAPTER_IFACE, 'Powered', dbus.Boolean(True))
    address = str(aprops.Get(L.ADAPTER_IFACE, 'Address'))

    state = State()
    app = build(bus, state, which, args.interval)
    uuids = [L.short(s.uuid) for s in app.services]
    advs = [Advertisement(bus, path, args.name, uuids) for path in ADV_PATHS]
    rstate = {'busy': False, 'count': 0, 'current': ADV_PATHS[0]}
    loop = GLib.MainLoop()
    pending = {'app', 'adv'}
    om = dbus.Interface(bus.get_object(L.BLUEZ, '/', follow_name_owner_changes=True), L.OM_IFACE)

    # connection tracking (signals, plus the state at start)
    def device_changed(iface, changed, invalidated, path=None):
        if iface != L.DEVICE_IFACE or 'Connected' not in changed or not path.startswith(apath + '/'):
            return
        if bool(changed['Connected']):
            state.connected.add(path)
            L.emit('connected', device=path)
        else:
            state.connected.discard(path)
            L.emit('disconnected', device=path)
    bus.add_signal_receiver(device_changed, 'PropertiesChanged', L.PROPS_IFACE, L.BLUEZ,
                            path_keyword='path')

    def refresh_connected(*_):
        now = set()
        for path, ifs in om.GetManagedObjects().items():
            d = ifs.get(L.DEVICE_IFACE)
            if d and path.startswith(apath + '/') and bool(d.get('Connected', False)):
                now.add(str(path))
        for p in now - state.connected:
            L.emit('connected', device=p)
        state.connected = now
    # a new device object arrives already connected (InterfacesAdded, no PropertiesChanged)
    bus.add_signal_receiver(refresh_connected, 'InterfacesAdded', L.OM_IFACE, L.BLUEZ)
    refresh_connected()

    def registered(what):
        def cb():
            pending.discard(what)
            L.emit('registered', what=what)
            if not pending:
                L.emit('ready', adapter=args.adapter, address=address, name=args.name, services=uuids)
                if args.ready_file and not os.path.exists(args.ready_file):
                    with open(args.ready_file, 'w') as f:
                        f.write(address + '\n')
        return cb

    def failed(what):
        def cb(err):
            L.emit('error', what=what, message=str(err))
            loop.quit()
        return cb

    adv_mgr = dbus.Interface(adapter, L.ADV_MANAGER_IFACE)

    def register_all():
        dbus.Interface(adapter, L.GATT_MANAGER_IFACE).RegisterApplication(
            APP_PATH, {}, reply_handler=registered('app'), error_handler=failed('app'))
        adv_mgr.RegisterAdvertisement(rstate['current'], {}, reply_handler=registered('adv'), error_handler=failed('adv'))
    register_all()
    if args.agent:
        Agent(bus, '/lab/agent')
        am = dbus.Interface(bus.get_object(L.BLUEZ, '/org/bluez'), 'org.bluez.AgentManager1')
        am.RegisterAgent('/lab/agent', 'NoInputNoOutput')
        am.RequestDefaultAgent('/lab/agent')

    # bluetoothd restarted: our registrations died with it; register again on the new one.
    owner = {'name': bus.get_name_owner(L.BLUEZ)}

    def bluez_owner(new):
        if new and owner['name'] and new != owner['name']:
            L.emit('bluetoothd-restarted', owner=new)
            state.connected.clear()
            pending.update({'app', 'adv'})

            def again():
                try:
                    aprops.Set(L.ADAPTER_IFACE, 'Powered', dbus.Boolean(True))
                    register_all()
                    if args.agent:
                        am = dbus.Interface(bus.get_object(L.BLUEZ, '/org/bluez'), 'org.bluez.AgentManager1')
                        am.RegisterAgent('/lab/agent', 'NoInputNoOutput')
                        am.RequestDefaultAgent('/lab/agent')
                except dbus.DBusException as e:
                    L.emit('error', what='re-register', message=str(e))
                    return True          # adapter not back yet: try again
                return False
            GLib.timeout_add(1000, again)
        if new:
            owner['name'] = new
        elif owner['name']:
            # our registration died with bluetoothd, and no StopNotify will come: nobody is
            # subscribed until the new bluetoothd calls StartNotify again
            L.emit('bluetoothd-gone')
            state.connected.clear()
            for s in app.services:
                for c in s.chrcs:
                    c.notifying = False
    bus.watch_name_owner(L.BLUEZ, bluez_owner)

    seq = [0]

    def tick():
        seq[0] += 1
        for s in app.services:
            for c in s.chrcs:
                c.tick(seq[0])
        return True

    GLib.timeout_add(int(args.interval * 1000), tick)

    def readvertise():
        if pending or rstate['busy'] or state.connected or state.vanished:
            return True
        rstate['busy'] = True
        old = rstate['current']
        new = ADV_PATHS[1 - ADV_PATHS.index(old)]

        def done(*_):
            rstate['busy'] = False
            rstate['count'] += 1

        def registered_new(*_):
            rstate['current'] = new
            # vanished meanwhile: the new one must not outlive the vanish (ghost links)
            for path in ((old, new) if state.vanished else (old,)):
                adv_mgr.UnregisterAdvertisement(path, reply_handler=done, error_handler=lambda e: done())

        def failed_new(e):
            L.emit('error', what='readvertise', message=str(e))
            done()
        adv_mgr.RegisterAdvertisement(new, {}, reply_handler=registered_new, error_handler=failed_new)
        return True

    def vanish():
        # Stop advertising first, then power the adapter off (drops the link). Powering off
        # alone is not enough with btvirt: the kernel does not tell the emulated controller
        # that advertising stopped, and btvirt then completes a central's LE Create
        # Connection to the powered-off controller (a ghost link that never encrypts).
        if state.vanished:
            return False
        state.vanished = True
        L.emit('vanish', seq=seq[0])

        def power_off(*_):
            aprops.Set(L.ADAPTER_IFACE, 'Powered', dbus.Boolean(False))
            L.emit('powered-off', seq=seq[0])
        # both: a readvertise in flight may be registering the other one
        other = ADV_PATHS[1 - ADV_PATHS.index(rstate['current'])]
        adv_mgr.UnregisterAdvertisement(other, reply_handler=lambda: None, error_handler=lambda e: None)
        adv_mgr.UnregisterAdvertisement(rstate['current'], reply_handler=power_off, error_handler=power_off)
        return False

    def reappear():
        if not state.vanished:
            return False
        aprops.Set(L.ADAPTER_IFACE, 'Powered', dbus.Boolean(True))
        state.vanished = False
        L.emit('return', seq=seq[0])
        readvertise()
        return False

    def first_subscription():
        refresh_connected()
        if state.first_subscription is None:
            state.first_subscription = seq[0]
            if args.vanish_at > 0:
                GLib.timeout_add(int(args.vanish_at * 1000), vanish)
                GLib.timeout_add(int((args.vanish_at + args.vanish_for) * 1000), reappear)
    for s in app.services:
        for c in s.chrcs:
            c.on_subscribe = first_subscription

    if args.readvertise > 0:
        GLib.timeout_add(int(args.readvertise * 1000), readvertise)
    if args.duration > 0:
        GLib.timeout_add(int(args.duration * 1000), loop.quit)
    GLib.unix_signal_add(GLib.PRIORITY_DEFAULT, signal.SIGTERM, loop.quit)
    GLib.unix_signal_add(GLib.PRIORITY_DEFAULT, signal.SIGINT, loop.quit)
    GLib.unix_signal_add(GLib.PRIORITY_DEFAULT, signal.SIGUSR1, lambda: vanish() or True)
    GLib.unix_signal_add(GLib.PRIORITY_DEFAULT, signal.SIGUSR2, lambda: reappear() or True)
    loop.run()
    sent = {L.short(c.uuid): c.sent for s in app.services for c in s.chrcs if c.encoder}
    L.emit('exit', ticks=seq[0], sent=sent, readvertised=rstate['count'])


if __name__ == '__main__':
    main()
