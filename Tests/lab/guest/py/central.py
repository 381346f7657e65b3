#!/usr/bin/python3
"""BLE central through bluetoothd's D-Bus API: the lab's reference central (what the non-daemon scenarios use).

scan (SetDiscoveryFilter + StartDiscovery) -> Connect -> ServicesResolved ->
for each wanted characteristic:
  mode 'notify':  StartNotify, PropertiesChanged(Value) for --duration s, StopNotify
  mode 'acquire': AcquireNotify -> (fd, mtu); one notification per SEQPACKET read
-> Disconnect. JSON lines on stdout, a summary in --json, exit 0 only if every
(characteristic, mode) pair got at least --min-count notifications.

Each subscription window is logged: {"event": "subscribe"} before StartNotify/AcquireNotify
and {"event": "unsubscribe"} when the central stops wanting values; it then keeps receiving
for --drain s (values already in flight) before StopNotify / closing the fd. A notification
the sensor sent before "unsubscribe" must therefore have arrived (check_notify.py).
"""
import argparse
import json
import os
import select
import sys
import time

import dbus
import dbus.mainloop.glib
from gi.repository import GLib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import blelab as L  # noqa: E402


class Central:
    def __init__(self, args):
        self.args = args
        dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
        self.bus = dbus.SystemBus()
        self.om = dbus.Interface(self.bus.get_object(L.BLUEZ, '/'), L.OM_IFACE)
        self.apath = '/org/bluez/' + args.adapter
        self.loop = GLib.MainLoop()
        self.summary = {'adapter': args.adapter, 'results': {}, 'timings': {}}

    # -- small event-loop helpers -------------------------------------------------
    def run_until(self, cond, timeout):
        """Iterate the GLib loop until cond() is truthy or timeout seconds pass."""
        end = time.monotonic() + timeout
        ctx = self.loop.get_context()
        while time.monotonic() < end:
            r = cond()
            if r:
                return r
            ctx.iteration(False) or time.sleep(0.02)
        return cond()

    def call_async(self, method, *a, timeout=60):
        box = {}
        method(*a, reply_handler=lambda *r: box.setdefault('ok', r),
               error_handler=lambda e: box.setdefault('err', e), timeout=timeout)
        self.run_until(lambda: box, timeout + 1)
        if 'err' in box:
            raise box['err']
        if 'ok' not in box:
            raise TimeoutError('%s timed out' % method)
        return box['ok']

    def objects(self):
        return self.om.GetManagedObjects()

    # -- steps ------------------------------------------------------------------------
    def resolve_adapter(self):
        """--adapter is a name (hci1) or a controller address (00:AA:01:01:00:01)."""
        want = self.args.adapter
        for path, ifs in self.objects().items():
            a = ifs.get(L.ADAPTER_IFACE)
            if a is not None and (path == '/org/bluez/' + want or
                                  str(a.get('Address', '')).upper() == want.upper()):
                return str(path)
        return None

    def power_on(self):
        path = self.run_until(self.resolve_adapter, 30)
        if not path:
            raise RuntimeError('adapter %s not found' % self.args.adapter)
        self.apath = path
        self.summary['adapter'] = path.rsplit('/', 1)[-1]
        props = dbus.Interface(self.bus.get_object(L.BLUEZ, self.apath), L.PROPS_IFACE)
        props.Set(L.ADAPTER_IFACE, 'Powered', dbus.Boolean(True))
        self.summary['adapter_address'] = str(props.Get(L.ADAPTER_IFACE, 'Address'))
        L.emit('adapter', path=self.apath, address=self.summary['adapter_address'])

    def find_device(self):
        want = L.to_uuid(self.args.service)
        addr = (self.args.address or '').upper()

        def match():
            for path, ifs in self.objects().items():
                d = ifs.get(L.DEVICE_IFACE)
                if not d or not path.startswith(self.apath + '/'):
                    continue
                if addr and str(d.get('Address', '')).upper() != addr:
                    continue
                if want in [str(u) for u in d.get('UUIDs', [])]:
                    return path, d
            return None

        found = match()
        t0 = time.monotonic()
        if not found:
            adapter = dbus.Interface(self.bus.get_object(L.BLUEZ, self.apath), L.ADAPTER_IFACE)
            adapter.SetDiscoveryFilter({'Transport': 'le', 'UUIDs': dbus.Array([want], signature='s')})
            adapter.StartDiscovery()
            L.emit('scan-start', service=want[4:8])
            deadline = time.monotonic() + self.args.scan_timeout
            step = self.args.rescan if self.args.rescan > 0 else self.args.scan_timeout
            found = self.run_until(match, min(step, self.args.scan_timeout))
            while not found and time.monotonic() < deadline:
                # btvirt reports an advertiser once per scan start and the kernel may drop
                # that report (see fake_sensor.py --readvertise): start a new scan
                try:
                    adapter.StopDiscovery()
                except dbus.DBusException:
                    pass
                adapter.StartDiscovery()
                L.emit('rescan')
                found = self.run_until(match, min(step, max(0.0, deadline - time.monotonic())))
            try:
                adapter.StopDiscovery()
            except dbus.DBusException:
                pass
        if not found:
            raise RuntimeError('no device advertising %s within %ss' % (want, self.args.scan_timeout))
        path, d = found
        self.summary['timings']['scan_s'] = round(time.monotonic() - t0, 3)
        self.summary['device'] = {'path': path, 'address': str(d.get('Address')),
                                  'name': str(d.get('Name', d.get('Alias', ''))),
                                  'rssi': int(d['RSSI']) if 'RSSI' in d else None,
                                  'adv_uuids': [str(u)[4:8] for u in d.get('UUIDs', [])]}
        L.emit('found', **self.summary['device'])
        return path

    def connect(self, dpath):
        dev = dbus.Interface(self.bus.get_object(L.BLUEZ, dpath), L.DEVICE_IFACE)
        props = dbus.Interface(dev, L.PROPS_IFACE)
        t0 = time.monotonic()
        self.call_async(dev.Connect, timeout=60)
        t1 = time.monotonic()
        ok = self.run_until(lambda: bool(props.Get(L.DEVICE_IFACE, 'ServicesResolved')), 60)
        t2 = time.monotonic()
        if not ok:
            raise RuntimeError('services not resolved')
        self.summary['timings'].update(connect_s=round(t1 - t0, 3), resolve_s=round(t2 - t1, 3))
        L.emit('connected', connect_s=round(t1 - t0, 3), resolve_s=round(t2 - t1, 3))
        return dev

    def gatt_tree(self, dpath):
        services, chrcs = {}, {}
        for path, ifs in self.objects().items():
            if not path.startswith(dpath + '/'):
                continue
            if L.GATT_SERVICE_IFACE in ifs:
                services[path] = str(ifs[L.GATT_SERVICE_IFACE]['UUID'])
            if L.GATT_CHRC_IFACE in ifs:
                c = ifs[L.GATT_CHRC_IFACE]
                chrcs[path] = {'uuid': str(c['UUID']), 'flags': [str(f) for f in c['Flags']],
                               'service': str(c['Service'])}
        self.summary['gatt'] = {
            'services': sorted(u[4:8] if u.endswith('-0000-1000-8000-00805f9b34fb') else u
                               for u in services.values()),
            'characteristics': sorted(c['uuid'][4:8] for c in chrcs.values())}
        L.emit('gatt', **self.summary['gatt'])
        return chrcs

    def via_notify(self, cpath, uuid):
        got = []

        def changed(iface, changed_props, invalidated, path=None):
            if iface == L.GATT_CHRC_IFACE and 'Value' in changed_props:
                v = bytes(changed_props['Value'])
                got.append((time.monotonic(), v))
                L.emit('notify', uuid=uuid[4:8], mode='notify', hex=v.hex(), **L.decode(uuid, v))

        m = self.bus.add_signal_receiver(changed, 'PropertiesChanged', L.PROPS_IFACE, L.BLUEZ, cpath)
        chrc = dbus.Interface(self.bus.get_object(L.BLUEZ, cpath), L.GATT_CHRC_IFACE)
        L.emit('subscribe', uuid=uuid[4:8], mode='notify')
        self.call_async(chrc.StartNotify, timeout=30)
        self.run_until(lambda: False, self.args.duration)
        L.emit('unsubscribe', uuid=uuid[4:8], mode='notify')
        self.run_until(lambda: False, self.args.drain)
        self.call_async(chrc.StopNotify, timeout=30)
        m.remove()
        return got

    def via_acquire(self, cpath, uuid):
        chrc = dbus.Interface(self.bus.get_object(L.BLUEZ, cpath), L.GATT_CHRC_IFACE)
        L.emit('subscribe', uuid=uuid[4:8], mode='acquire')
        fd_obj, mtu = self.call_async(chrc.AcquireNotify, dbus.Dictionary({}, signature='sv'), timeout=30)
        fd = fd_obj.take()
        L.emit('acquired', uuid=uuid[4:8], fd=fd, mtu=int(mtu))
        got = []
        end = time.monotonic() + self.args.duration
        stop_logged = False
        while time.monotonic() < end + self.args.drain:
            if not stop_logged and time.monotonic() >= end:
                L.emit('unsubscribe', uuid=uuid[4:8], mode='acquire')
                stop_logged = True
            r, _, _ = select.select([fd], [], [], max(0.0, min(0.2, end + self.args.drain - time.monotonic())))
            if r:
                v = os.read(fd, int(mtu) + 8)
                if not v:
                    L.emit('acquire-eof', uuid=uuid[4:8])
                    break
                got.append((time.monotonic(), v))
                L.emit('notify', uuid=uuid[4:8], mode='acquire', hex=v.hex(), **L.decode(uuid, v))
            self.loop.get_context().iteration(False)
        os.close(fd)          # closing the fd ends the subscription in bluetoothd
        return got

    def run(self):
        t_start = time.monotonic()
        self.power_on()
        dpath = self.find_device()
        dev = self.connect(dpath)
        chrcs = self.gatt_tree(dpath)
        ok = True
        for c in self.args.chars.split(','):
            uuid = L.to_uuid(c)
            cpath = next((p for p, v in chrcs.items() if v['uuid'] == uuid), None)
            if not cpath:
                L.emit('missing-characteristic', uuid=uuid)
                ok = False
                continue
            for mode in self.args.modes.split(','):
                try:
                    got = self.via_notify(cpath, uuid) if mode == 'notify' else self.via_acquire(cpath, uuid)
                    err = None
                except dbus.DBusException as e:
                    got, err = [], '%s: %s' % (e.get_dbus_name(), e.get_dbus_message())
                    L.emit('error', uuid=uuid[4:8], mode=mode, message=err)
                gaps = [round(b[0] - a[0], 3) for a, b in zip(got, got[1:])]
                res = {'count': len(got), 'error': err,
                       'first': got[0][1].hex() if got else None,
                       'last': got[-1][1].hex() if got else None,
                       'decoded_last': L.decode(uuid, got[-1][1]) if got else None,
                       'max_gap_s': max(gaps) if gaps else None}
                self.summary['results']['%s/%s' % (uuid[4:8], mode)] = res
                if len(got) < self.args.min_count:
                    ok = False
        t0 = time.monotonic()
        try:
            self.call_async(dev.Disconnect, timeout=30)
        except dbus.DBusException as e:
            L.emit('error', step='disconnect', message=str(e))
        self.summary['timings']['disconnect_s'] = round(time.monotonic() - t0, 3)
        self.summary['timings']['total_s'] = round(time.monotonic() - t_start, 3)
        self.summary['ok'] = ok
        return ok


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--adapter', default='hci1', help='central adapter: name (hci1) or address')
    ap.add_argument('--address', help='only this peer address')
    ap.add_argument('--service', default='180d', help='service UUID to scan for')
    ap.add_argument('--chars', default='2a37', help='comma list of characteristic UUIDs')
    ap.add_argument('--modes', default='notify,acquire', help='comma list: notify, acquire')
    ap.add_argument('--duration', type=float, default=10, help='seconds per characteristic and mode')
    ap.add_argument('--scan-timeout', type=float, default=60)
    ap.add_argument('--rescan', type=float, default=5, help='restart discovery every S s until found (0: never)')
    ap.add_argument('--min-count', type=int, default=3)
    ap.add_argument('--drain', type=float, default=1.0, help='keep receiving S s after "unsubscribe"')
    ap.add_argument('--json', help='write the summary here')
    args = ap.parse_args()
    c = Central(args)
    try:
        ok = c.run()
    except Exception as e:      # keep a summary even on failure
        c.summary['ok'] = ok = False
        c.summary['exception'] = '%s: %s' % (type(e).__name__, e)
        L.emit('error', message=c.summary['exception'])
    if args.json:
        with open(args.json, 'w') as f:
            json.dump(c.summary, f, indent=2, sort_keys=True)
    L.emit('summary', **c.summary)
    sys.exit(0 if ok else 1)


if __name__ == '__main__':
    main()
