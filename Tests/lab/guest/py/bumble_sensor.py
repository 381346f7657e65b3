#!/usr/bin/python3
"""Fake BLE fitness sensor on Google's Bumble stack (PyPI: bumble), attached via /dev/vhci.

Layout (one process):
  kernel hci0 <-> /dev/vhci <-> Bumble Controller "adapter"   <- bluetoothd's only adapter
                                    | bumble LocalLink (virtual air)
                                Bumble Controller "sensor" <-> Bumble Host + Device:
                                    GATT server (HR 0x180D, CSC 0x1816, RSC 0x1814, or the
                                    power meter CPS 0x1818 / trainer FTMS 0x1826 of
                                    bumble_trainer.py), advertising
So bluetoothd sees exactly one adapter, as on a real machine, and the peer is a foreign
stack that sends plain ATT Handle Value Notifications, like a real sensor. With --adapters 2
there is a second Bumble controller behind a second /dev/vhci (hci1) on the same air: a box
with a built-in adapter and a USB dongle; SIGUSR2 pulls the dongle (pull()).
Values come from the same deterministic sequences as fake_sensor.py (blelab.ENCODERS), and
every notification handed to a subscribed connection is logged as fake_sensor.py does:
{"event": "sent", "uuid", "seq", "hex", "values"} (check_notify.py's input).
SIGHUP takes every sensor out of range for --outage seconds: both sides of its links drop as on
a supervision timeout (0x08), and it leaves the air (no advertising reaches anyone) until it
comes back and advertises again; {"event": "vanish"} and {"event": "return"} mark it.
"""
import argparse
import asyncio
import os
import signal
import struct
import sys

from bumble.controller import Controller
from bumble.core import UUID, AdvertisingData, PhysicalTransport
from bumble.device import Device
from bumble.gatt import Characteristic, Service
from bumble.hci import Address
from bumble.host import Host
from bumble.link import LocalLink
from bumble.transport import open_transport
from bumble.transport.common import AsyncPipeSink

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import blelab as L  # noqa: E402
import bumble_trainer as T  # noqa: E402

RD = Characteristic.Permissions.READABLE


class Link(LocalLink):
    """LocalLink whose LE ACL data carries the address the connection was made with.

    bumble 0.0.236's LocalLink.send_acl_data always tags LE data with the sender's
    *random* address. The kernel (Linux 6.1) connects with its public address but has
    set a random address for scanning, so the sensor side drops every ATT packet
    ("!!! no connection for <random address>") and GATT discovery never finishes.
    """

    def send_acl_data(self, sender_controller, destination_address, transport, data):
        if transport != PhysicalTransport.LE:
            return super().send_acl_data(sender_controller, destination_address, transport, data)
        conn = sender_controller.le_connections.get(destination_address)
        source = conn.self_address if conn else sender_controller.random_address
        dest = self.find_le_controller(destination_address)
        if dest is not None:
            asyncio.get_running_loop().call_soon(dest.on_link_acl_data, source, transport, data)


def chrc(uuid16, props, value):
    return Characteristic(UUID.from_16_bits(uuid16), props, RD, bytes(value))


def build_sensor(link, name, address, which, interval, control_log=None):
    """One Bumble controller + device on the shared link, with its GATT services."""
    ctrl = Controller(name, link=link, public_address=address)
    device = Device(name=name, address=Address(address), host=Host(ctrl, AsyncPipeSink(ctrl)))
    device.lab_controller = ctrl   # pull() drops the sensor's links from this side
    services, notifiers, uuids = [], [], []

    def enc(uuid):
        return lambda seq: L.ENCODERS[uuid](seq, interval)
    if 'hr' in which:
        m = chrc(L.HR_MEASUREMENT, Characteristic.Properties.NOTIFY, enc('2a37')(0)[0])
        services.append(Service(UUID.from_16_bits(L.HRS), [
            m, chrc(L.BODY_SENSOR_LOCATION, Characteristic.Properties.READ, b'\x01')]))
        notifiers.append((m, '2a37', enc('2a37')))
        uuids.append(L.HRS)
    if 'csc' in which:
        m = chrc(L.CSC_MEASUREMENT, Characteristic.Properties.NOTIFY, enc('2a5b')(0)[0])
        services.append(Service(UUID.from_16_bits(L.CSCS), [
            m, chrc(L.CSC_FEATURE, Characteristic.Properties.READ, b'\x03\x00'),
            chrc(L.SENSOR_LOCATION, Characteristic.Properties.READ, b'\x0c')]))
        notifiers.append((m, '2a5b', enc('2a5b')))
        uuids.append(L.CSCS)
    if 'rsc' in which:
        m = chrc(L.RSC_MEASUREMENT, Characteristic.Properties.NOTIFY, enc('2a53')(0)[0])
        services.append(Service(UUID.from_16_bits(L.RSCS), [
            m, chrc(L.RSC_FEATURE, Characteristic.Properties.READ, b'\x07\x00')]))
        notifiers.append((m, '2a53', enc('2a53')))
        uuids.append(L.RSCS)
    if 'cp' in which:
        service, m, encode = T.power_meter_service(interval)
        services.append(service)
        notifiers.append((m, '2a63', encode))
        uuids.append(T.CPS)
    service_data = b''
    if 'ftms' in which:
        trainer = T.Trainer(name, device, interval, control_log)
        services.append(trainer.service)
        notifiers.append((trainer.ibd, '2ad2', trainer.encode_ibd))
        uuids.append(T.FTMS)
        # FTMS §3.1.1: Service Data with "Fitness Machine Available" and the type, indoor bike
        service_data = struct.pack('<HBH', T.FTMS, 0x01, 1 << 5)
    device.add_services(services)
    for m, _, _ in notifiers:
        m.on('subscription', lambda conn, notify, indicate, u=m.uuid:
             L.emit('subscription', sensor=name, uuid=str(u), notify=notify, indicate=indicate))
    device.on('connection', lambda conn: L.emit('connection', sensor=name, peer=str(conn.peer_address)))
    device.on('disconnection', lambda reason: L.emit('disconnection', sensor=name, reason=reason))
    device.advertising_data = bytes(AdvertisingData([
        (AdvertisingData.FLAGS, bytes([0x06])),
        (AdvertisingData.INCOMPLETE_LIST_OF_16_BIT_SERVICE_CLASS_UUIDS,
         b''.join(struct.pack('<H', u) for u in uuids)),
        (AdvertisingData.COMPLETE_LOCAL_NAME, name.encode()),
        (AdvertisingData.APPEARANCE, struct.pack('<H', 0x0341 if 'hr' in which else 0x0480)),
    ] + ([(AdvertisingData.SERVICE_DATA_16_BIT_UUID, service_data)] if service_data else [])))
    return device, notifiers, uuids


def pull(link, adapter, transport, sensors):
    """The dongle is pulled: its links drop (each sensor sees a supervision timeout, 0x08, and
    advertises again), it leaves the air, and its /dev/vhci closes, so the kernel unregisters
    the hci device and bluetoothd removes the adapter from D-Bus."""
    ctrl = adapter
    mine = {c.self_address for c in ctrl.le_connections.values()} | {ctrl.public_address, ctrl.random_address}
    dropped = []
    for name, device, _ in sensors:
        sc = device.lab_controller
        for conn in list(sc.le_connections.values()):
            if conn.peer_address in mine:
                sc.on_le_disconnected(conn, 0x08)
                dropped.append(name)
                # check_notify.py --in-flight-excused: what was on its way through the dongle
                # may be lost; what the sensor sends once subscribed again may not.
                L.emit('linkdrop', sensor=name, reason='adapter pulled')
    link.remove_controller(ctrl)
    asyncio.get_running_loop().create_task(transport.close())
    L.emit('pulled', adapter=str(ctrl.public_address), dropped=dropped)


def out_of_range(link, adapters, sensors, seconds):
    """Every sensor walks out of range: its links drop on both sides as on a supervision timeout
    (the kernel gets Disconnection Complete 0x08, as from a real controller), and its controller
    leaves the air, so its advertising reaches no one, until it returns `seconds` later and
    advertises again (the Bumble host restarts advertising after a disconnection)."""
    loop = asyncio.get_running_loop()
    for name, device, _ in sensors:
        sc = device.lab_controller
        if sc.link is None:
            continue                      # already away
        ours = {sc.public_address, sc.random_address}
        for ctrl, _ in adapters:
            for conn in list(ctrl.le_connections.values()):
                if conn.peer_address in ours:
                    ctrl.on_le_disconnected(conn, 0x08)
        for conn in list(sc.le_connections.values()):
            sc.on_le_disconnected(conn, 0x08)
        link.remove_controller(sc)
        sc.link = None
        L.emit('vanish', sensor=name, seconds=seconds)

        def back(sc=sc, name=name):
            sc.link = link
            link.add_controller(sc)
            L.emit('return', sensor=name)
        loop.call_later(seconds, back)


async def run(args):
    link = Link()
    adapters = []
    for i in range(args.adapters):
        transport = await open_transport('vhci')
        address = args.adapter_address if i == 0 else '00:BB:00:00:00:%02X' % (i + 1)
        ctrl = Controller('adapter%d' % i, host_source=transport.source, host_sink=transport.sink,
                          link=link, public_address=address)
        adapters.append((ctrl, transport))
    specs = args.sensor or ['%s=%s' % (args.name, args.services)]
    sensors, addresses = [], []
    for i, spec in enumerate(specs):
        name, _, services = spec.partition('=')
        address = args.address if len(specs) == 1 else 'F0:F0:00:00:00:%02X' % (i + 1)
        device, notifiers, uuids = build_sensor(link, name, address, set((services or args.services).split(',')),
                                                args.interval, args.control_log)
        await device.power_on()
        await device.start_advertising(auto_restart=True)
        sensors.append((name, device, notifiers))
        addresses.append(address)
        L.emit('ready', sensor=name, address=address, adapter_address=args.adapter_address,
               services=['%04x' % u for u in uuids])
    if args.ready_file:
        with open(args.ready_file, 'w') as f:
            if len(sensors) == 1:
                f.write(addresses[0] + '\n')
            else:
                for (name, _, _), address in zip(sensors, addresses):
                    f.write('%s %s\n' % (name, address))

    seq = 0
    loop = asyncio.get_running_loop()
    paused = {'on': False}       # SIGUSR1: stop notifying (the controller, i.e. hci0, stays)

    def linked(device):
        """Whether an adapter's controller still holds this sensor's link. A stopping bluetoothd
        resets hci0: the adapter's side of the link goes at once, the sensor's only with the
        disconnection that follows, and a notification in between is dropped by the link
        ("no connection for ...") without leaving: it was never sent to strapd."""
        sc = device.lab_controller
        ours = {sc.public_address, sc.random_address}
        return any(c.peer_address in ours for ctrl, _ in adapters for c in ctrl.le_connections.values())

    def pause():
        paused['on'] = True
        L.emit('paused', seq=seq)
    loop.add_signal_handler(signal.SIGUSR1, pause)
    if len(adapters) > 1:   # SIGUSR2: the last adapter is pulled (pull())
        loop.add_signal_handler(signal.SIGUSR2, lambda: pull(link, *adapters.pop(), sensors))
    loop.add_signal_handler(signal.SIGHUP, lambda: out_of_range(link, adapters, sensors, args.outage))
    end = loop.time() + args.duration if args.duration > 0 else None
    while end is None or loop.time() < end:
        await asyncio.sleep(args.interval)
        seq += 1
        for name, device, notifiers in sensors:
            if paused['on']:
                break
            for m, short, encode in notifiers:
                value, values = encode(seq)
                subscribed = any(subs.get(m.handle) and subs[m.handle][0] & 1
                                 for subs in device.gatt_server.subscribers.values())
                await device.notify_subscribers(m, value)
                if subscribed and linked(device):
                    L.emit('sent', sensor=name, uuid=short, seq=seq, hex=value.hex(), values=values)
    L.emit('exit', ticks=seq)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--services', default='hr,csc,rsc',
                    help='comma list of hr, csc, rsc, cp (power meter), ftms (trainer: bumble_trainer.py)')
    ap.add_argument('--name', default='BumbleSensor')
    ap.add_argument('--address', default='F0:F0:00:00:00:01', help='sensor (random static) address')
    ap.add_argument('--adapter-address', default='00:BB:00:00:00:01', help="hci0's public address")
    ap.add_argument('--adapters', type=int, default=1,
                    help='adapters behind /dev/vhci (hci0, hci1, ...; public addresses 00:BB:00:00:00:01, 02, ...); '
                         'SIGUSR2 pulls the last one, as a USB dongle is pulled')
    ap.add_argument('--interval', type=float, default=1.0)
    ap.add_argument('--duration', type=float, default=0)
    ap.add_argument('--sensor', action='append', metavar='NAME=SERVICES',
                    help='several sensors on one link (repeat; addresses F0:F0:00:00:00:01, 02, ...); '
                         'the ready file then lists "NAME ADDRESS" lines')
    ap.add_argument('--ready-file')
    ap.add_argument('--control-log', help="a trainer's control point writes, one JSON line each (bumble_trainer.py)")
    ap.add_argument('--outage', type=float, default=10.0,
                    help='seconds out of range after SIGHUP (out_of_range())')
    args = ap.parse_args()
    try:
        asyncio.run(run(args))
    except KeyboardInterrupt:
        pass


if __name__ == '__main__':
    main()
