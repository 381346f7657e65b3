#!/usr/bin/python3
"""A stand-in for strapd, for testing the lab's daemon scenarios before strapd exists.

NOT the product: a small Python daemon that implements exactly the interface the daemon
scenarios assume (Tests/lab/guest/daemon.sh), so those scenarios, the fake sensor's link
loss / bluetoothd-restart behaviour and the store check can be exercised now:
  standin_strapd.py --config FILE --state-dir DIR --socket PATH [--log-level L]
  strapd.conf: [bluetooth] adapter = hciN ; notify = acquire|start
Socket: NDJSON requests {"id", "op", ...} -> {"id", "ok", "result"|"error"} with the ops
status, devices.scan {timeout}, devices.pair {address}, devices.connect {address},
samples.anchored {anchor}. Samples carry metadata.characteristic and metadata.raw.
Connected devices are reconnected after link loss and after a bluetoothd restart.
Systemd: sends READY=1 on $NOTIFY_SOCKET; takes a listening socket from LISTEN_FDS.
"""
import argparse
import configparser
import datetime
import json
import os
import socket
import sys

import dbus
import dbus.mainloop.glib
import dbus.service
from gi.repository import GLib

BLUEZ = 'org.bluez'
OM = 'org.freedesktop.DBus.ObjectManager'
PROPS = 'org.freedesktop.DBus.Properties'
ADAPTER = 'org.bluez.Adapter1'
DEVICE = 'org.bluez.Device1'
CHRC = 'org.bluez.GattCharacteristic1'
WANTED = {'00002a37-0000-1000-8000-00805f9b34fb': 'heartRate',
          '00002a5b-0000-1000-8000-00805f9b34fb': 'cyclingSpeedCadence',
          '00002a53-0000-1000-8000-00805f9b34fb': 'runningSpeedCadence'}
SERVICES = ['0000180d-0000-1000-8000-00805f9b34fb', '00001816-0000-1000-8000-00805f9b34fb',
            '00001814-0000-1000-8000-00805f9b34fb']


def log(*a):
    print(datetime.datetime.now().strftime('%H:%M:%S.%f')[:-3], *a, file=sys.stderr, flush=True)


def now_iso():
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec='milliseconds').replace('+00:00', 'Z')


class Agent(dbus.service.Object):
    """The daemon's own pairing agent: NoInputNoOutput, accepts Just Works (strapd pairs
    straps that have no display or keys)."""
    IFACE = 'org.bluez.Agent1'

    @dbus.service.method(IFACE)
    def Release(self):
        pass

    @dbus.service.method(IFACE, in_signature='os')
    def AuthorizeService(self, device, uuid):
        log('agent: AuthorizeService', device, uuid)

    @dbus.service.method(IFACE, in_signature='o')
    def RequestAuthorization(self, device):
        log('agent: RequestAuthorization', device)

    @dbus.service.method(IFACE, in_signature='ou')
    def RequestConfirmation(self, device, passkey):
        log('agent: RequestConfirmation', device, passkey)

    @dbus.service.method(IFACE)
    def Cancel(self):
        log('agent: Cancel')


class Daemon:
    def __init__(self, args):
        cfg = configparser.ConfigParser()
        cfg.read(args.config)
        self.adapter = cfg.get('bluetooth', 'adapter', fallback='hci0')
        self.notify = cfg.get('bluetooth', 'notify', fallback='acquire')
        self.apath = '/org/bluez/' + self.adapter
        os.makedirs(args.state_dir, exist_ok=True)
        self.store_path = os.path.join(args.state_dir, 'samples.jsonl')
        self.samples = []
        if os.path.exists(self.store_path):
            self.samples = [json.loads(l) for l in open(self.store_path) if l.strip()]
        self.store = open(self.store_path, 'a')
        self.bus = dbus.SystemBus()
        self.wanted = {}          # address -> {'subs': [...], 'name': str}
        self.bus.add_signal_receiver(self.props_changed, 'PropertiesChanged', PROPS, BLUEZ, path_keyword='path')
        self.agent = Agent(self.bus, '/strapd/agent')
        self.bus.watch_name_owner(BLUEZ, self.owner_changed)
        self.owner = None
        GLib.timeout_add(2000, self.maintain)

    # --- BlueZ -----------------------------------------------------------------------
    def objects(self):
        return dbus.Interface(self.bus.get_object(BLUEZ, '/'), OM).GetManagedObjects()

    def dev_path(self, address):
        return '%s/dev_%s' % (self.apath, address.upper().replace(':', '_'))

    def register_agent(self):
        try:
            am = dbus.Interface(self.bus.get_object(BLUEZ, '/org/bluez'), 'org.bluez.AgentManager1')
            am.RegisterAgent('/strapd/agent', 'NoInputNoOutput')
            am.RequestDefaultAgent('/strapd/agent')
            log('agent registered')
        except dbus.DBusException as e:
            log('agent registration failed:', e)

    def owner_changed(self, new):
        if new:
            GLib.idle_add(lambda: self.register_agent() and False)
        if self.owner and new and new != self.owner:
            log('bluetoothd restarted: resynchronising')
        if not new:
            log('bluetoothd gone')
            for w in self.wanted.values():
                self.drop_subs(w)
        self.owner = new or None

    def props_changed(self, iface, changed, invalidated, path=None):
        if iface != DEVICE:
            return
        for addr, w in self.wanted.items():
            if path == self.dev_path(addr):
                if 'Connected' in changed and not changed['Connected']:
                    log('link lost:', addr)
                    self.drop_subs(w)
                if changed.get('ServicesResolved'):
                    GLib.idle_add(self.subscribe, addr)

    def drop_subs(self, w):
        for s in w['subs']:
            try:
                if s[0] == 'fd':
                    GLib.source_remove(s[2])
                    os.close(s[1])
                else:
                    s[1].remove()
            except Exception:
                pass
        w['subs'] = []

    def maintain(self):
        """Reconnect wanted devices that are not connected (link loss, bluetoothd restart)."""
        try:
            self._maintain()
        except Exception:                 # noqa: BLE001 - keep the timer alive, say why
            import traceback
            log('maintain failed:', traceback.format_exc())
        return True

    def _maintain(self):
        if not self.owner:
            return
        for addr, w in list(self.wanted.items()):
            if w.get('connecting'):
                continue
            try:
                p = dbus.Interface(self.bus.get_object(BLUEZ, self.dev_path(addr), introspect=False), PROPS)
                connected = bool(p.Get(DEVICE, 'Connected'))
                resolved = bool(p.Get(DEVICE, 'ServicesResolved'))
            except dbus.DBusException as e:
                log('device %s not available (%s): discovering' % (addr, e.get_dbus_name()))
                self.start_discovery()
                continue
            if (connected, resolved) != w.get('state'):
                w['state'] = (connected, resolved)
                log('device %s connected=%s services-resolved=%s subscriptions=%d' % (
                    addr, connected, resolved, len(w['subs'])))
            if not connected:
                w['connecting'] = True
                log('reconnecting', addr)

                def done(*_a, w=w):
                    w['connecting'] = False

                def failed(e, w=w):
                    log('connect failed:', e)
                    w['connecting'] = False
                dev = dbus.Interface(self.bus.get_object(BLUEZ, self.dev_path(addr), introspect=False), DEVICE)
                dev.Connect(reply_handler=done, error_handler=failed, timeout=45)
            elif resolved and not w['subs']:
                self.subscribe(addr)

    def start_discovery(self):
        try:
            a = dbus.Interface(self.bus.get_object(BLUEZ, self.apath), ADAPTER)
            a.SetDiscoveryFilter({'Transport': 'le'})
            a.StartDiscovery()
        except dbus.DBusException:
            pass

    def subscribe(self, addr):
        w = self.wanted.get(addr)
        if w is None or w['subs']:
            return False
        dpath = self.dev_path(addr)
        for path, ifs in self.objects().items():
            c = ifs.get(CHRC)
            if not c or not path.startswith(dpath + '/') or str(c['UUID']) not in WANTED:
                continue
            uuid = str(c['UUID'])
            ch = dbus.Interface(self.bus.get_object(BLUEZ, path), CHRC)
            if self.notify == 'acquire':
                fd_obj, mtu = ch.AcquireNotify(dbus.Dictionary({}, signature='sv'))
                fd = fd_obj.take()

                def readable(fd_, cond, addr=addr, uuid=uuid, mtu=int(mtu)):
                    try:
                        v = os.read(fd_, mtu + 8)
                    except OSError:
                        v = b''
                    if not v:
                        return False
                    self.record(addr, uuid, v)
                    return True
                src = GLib.io_add_watch(fd, GLib.PRIORITY_DEFAULT, GLib.IO_IN | GLib.IO_HUP, readable)
                w['subs'].append(('fd', fd, src))
            else:
                def changed(iface, ch_, inv, addr=addr, uuid=uuid):
                    if iface == CHRC and 'Value' in ch_:
                        self.record(addr, uuid, bytes(ch_['Value']))
                m = self.bus.add_signal_receiver(changed, 'PropertiesChanged', PROPS, BLUEZ, path)
                ch.StartNotify()
                w['subs'].append(('sig', m))
            log('subscribed', addr, uuid[4:8], self.notify)
        return False

    def record(self, addr, uuid, value):
        t = now_iso()
        s = {'uuid': '%s-%d' % (addr, len(self.samples) + 1), 'anchor': len(self.samples) + 1,
             'type': WANTED[uuid], 'value': value[1] if uuid.startswith('00002a37') else None,
             'unit': 'count/min' if uuid.startswith('00002a37') else None, 'start': t, 'end': t,
             'device': {'id': addr, 'address': addr, 'name': self.wanted[addr].get('name', '')},
             'metadata': {'characteristic': uuid[4:8], 'raw': value.hex()}}
        self.samples.append(s)
        self.store.write(json.dumps(s) + '\n')
        self.store.flush()

    # --- socket ops --------------------------------------------------------------------
    def op(self, req, reply):
        op = req.get('op')
        if op == 'status':
            return reply({'adapter': self.adapter, 'devices': sorted(self.wanted), 'samples': len(self.samples)})
        if op == 'samples.anchored':
            a = int(req.get('anchor', 0))
            added = [s for s in self.samples if s['anchor'] > a]
            return reply({'added': added, 'deleted': [], 'anchor': added[-1]['anchor'] if added else a})
        if op == 'devices.scan':
            return self.scan(float(req.get('timeout', 30)), reply)
        if op in ('devices.pair', 'devices.connect'):
            addr = str(req['address']).upper()
            dev = dbus.Interface(self.bus.get_object(BLUEZ, self.dev_path(addr)), DEVICE)
            if op == 'devices.pair':
                dev.Pair(reply_handler=lambda: reply({'paired': addr}),
                         error_handler=lambda e: reply(error=str(e)), timeout=60)
            else:
                self.wanted[addr] = {'subs': [], 'name': '', 'connecting': True}

                def connected():
                    self.wanted[addr]['connecting'] = False
                    reply({'connected': addr})
                dev.Connect(reply_handler=connected, error_handler=lambda e: reply(error=str(e)), timeout=60)
            return None
        return reply(error='unknownOp %s' % op)

    def scan(self, timeout, reply):
        self.start_discovery()
        state = {'first': None, 'left': timeout}

        def found():
            out = []
            for path, ifs in self.objects().items():
                d = ifs.get(DEVICE)
                if d and path.startswith(self.apath + '/') and not d.get('Connected') and \
                        any(str(u) in SERVICES for u in d.get('UUIDs', [])):
                    out.append({'address': str(d['Address']), 'name': str(d.get('Name', ''))})
            return out

        def poll():
            state['left'] -= 0.5
            devs = found()
            if devs and state['first'] is None:
                state['first'] = state['left']
            if (state['first'] is not None and state['first'] - state['left'] >= 3) or state['left'] <= 0:
                try:
                    dbus.Interface(self.bus.get_object(BLUEZ, self.apath), ADAPTER).StopDiscovery()
                except dbus.DBusException:
                    pass
                reply({'devices': devs})
                return False
            return True
        GLib.timeout_add(500, poll)


def serve(daemon, sock):
    def on_client(src, cond):
        conn, _ = sock.accept()
        buf = [b'']

        def readable(fd, cond):
            data = conn.recv(65536)
            if not data:
                conn.close()
                return False
            buf[0] += data
            while b'\n' in buf[0]:
                line, buf[0] = buf[0].split(b'\n', 1)
                req = json.loads(line)

                def reply(result=None, error=None, rid=req.get('id')):
                    msg = {'id': rid, 'ok': error is None}
                    if error is None:
                        msg['result'] = result
                    else:
                        msg['error'] = {'code': 'internal', 'message': error}
                    try:
                        conn.sendall((json.dumps(msg) + '\n').encode())
                    except OSError:
                        pass
                try:
                    daemon.op(req, reply)
                except Exception as e:      # noqa: BLE001
                    reply(error='%s: %s' % (type(e).__name__, e))
            return True
        GLib.io_add_watch(conn.fileno(), GLib.PRIORITY_DEFAULT, GLib.IO_IN | GLib.IO_HUP, readable)
        return True
    GLib.io_add_watch(sock.fileno(), GLib.PRIORITY_DEFAULT, GLib.IO_IN, on_client)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--config', default='/etc/strapd/strapd.conf')
    ap.add_argument('--state-dir', default='/var/lib/strapd')
    ap.add_argument('--socket', default='/run/strapd/strapd.sock')
    ap.add_argument('--log-level', default='info')
    args = ap.parse_args()
    dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
    if os.environ.get('LISTEN_FDS') == '1' and os.environ.get('LISTEN_PID') == str(os.getpid()):
        sock = socket.socket(fileno=3)
    else:
        os.makedirs(os.path.dirname(args.socket), exist_ok=True)
        if os.path.exists(args.socket):
            os.unlink(args.socket)
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.bind(args.socket)
        sock.listen(8)
    d = Daemon(args)
    serve(d, sock)
    ns = os.environ.get('NOTIFY_SOCKET')
    if ns:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        s.sendto(b'READY=1\nSTATUS=stand-in ready', '\0' + ns[1:] if ns.startswith('@') else ns)
    log('stand-in strapd ready: adapter', d.adapter, 'notify', d.notify)
    GLib.MainLoop().run()


if __name__ == '__main__':
    main()
