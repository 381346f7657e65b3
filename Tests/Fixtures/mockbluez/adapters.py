"""Adapter side of the mock bluetoothd: one or more adapters (built-in + USB dongle), their
power, discovery, and their disappearance the way bluetoothd reports an unplugged dongle.

A sensor has one device object per adapter that has seen it (BlueZ keeps them apart, bonds
included); an adapter that is not discovering finds no new sensor.
"""
import dbus
from gi.repository import GLib

from dbusmock import mockobject
from dbusmock.templates import bluez5

from gatt import ADAPTER, BATTERY, DEVICE, GATT_MANAGER, OM


class AdapterMixin:
    """Methods of MockBlueZ that deal with adapters; expects self.main, self.sensors,
    self.events, self.heard (the (address, adapter) pairs advertised in the adapter's present
    discovery), self.add_device and self.disconnect."""

    def adapter_path(self, name=None):
        return '/org/bluez/' + (name or self.adapter_names[0])

    def adapter_object(self, name):
        return mockobject.objects.get(self.adapter_path(name)) if self.present.get(name) else None

    def add_adapter(self, name):
        bluez5.AddAdapter(self.main, name, 'strapd-mock')
        adapter = mockobject.objects[self.adapter_path(name)]
        adapter.AddMethod(ADAPTER, 'StartDiscovery', '', '', lambda a: self.start_discovery(a, name))
        adapter.AddMethod(ADAPTER, 'StopDiscovery', '', '', lambda a: self.stop_discovery(a, name))
        adapter.AddMethod(ADAPTER, 'SetDiscoveryFilter', 'a{sv}', '', lambda a, f: self.set_filter(a, f, name))
        adapter.AddMethod(ADAPTER, 'RemoveDevice', 'o', '', lambda a, p: self.remove_device(p))
        adapter.AddMethods(GATT_MANAGER, [
            ('RegisterApplication', 'oa{sv}', '', lambda a, p, o: self.register_application(p)),
            ('UnregisterApplication', 'o', '', lambda a, p: None),
        ])
        adapter.props[ADAPTER]['Powered'] = dbus.Boolean(self.powered[name], variant_level=1)
        self.present[name] = True
        self.events.append(('AdapterAdded', name))

    def remove_adapter(self, name, quietly):
        """`quietly`: as bluetoothd reports a dongle pulled mid-stream, only InterfacesRemoved
        (the GATT objects, each device, then the adapter), no Connected=false first.
        Otherwise connections are closed first, as for an adapter removed on purpose."""
        for sensor in self.sensors.values():
            if sensor.link == name:
                if quietly:
                    sensor.connected = False
                    sensor.notifying = False
                    self.release_socket(sensor)
                    self.remove_gatt(sensor)
                    sensor.link = None
                else:
                    self.disconnect(sensor, 'org.bluez.Reason.Local', 'adapter removed')
            path = sensor.paths.pop(name, None)
            if path is not None:
                interfaces = [DEVICE] + ([BATTERY] if BATTERY in mockobject.objects[path].props else [])
                self.main.RemoveObject(path)
                self.main.EmitSignal(OM, 'InterfacesRemoved', 'oas', [dbus.ObjectPath(path), interfaces])
        # Whatever is left below it (nothing, unless a test added objects), then the adapter.
        bluez5.RemoveAdapterWithDevices(self.main, name)
        self.present[name] = False
        self.events.append(('AdapterRemoved', name))

    def set_powered(self, name, on):
        self.powered[name] = on
        if not on:
            for sensor in self.sensors.values():
                if sensor.connected and sensor.link == name:
                    self.disconnect(sensor, 'org.bluez.Reason.Local', 'adapter powered off')
        adapter = self.adapter_object(name)
        if adapter is not None:
            adapter.UpdateProperties(ADAPTER, {'Powered': dbus.Boolean(on, variant_level=1)})

    # ---- discovery -------------------------------------------------------------------

    def set_filter(self, adapter, flt, name):
        self.events.append(('SetDiscoveryFilter', name))
        self.discovery_filter = {str(k): (list(map(str, v)) if isinstance(v, dbus.Array) else str(v)) for k, v in flt.items()}
        adapter.props[ADAPTER]['DiscoveryFilter'] = flt

    def start_discovery(self, adapter, name):
        if not self.powered[name]:
            raise dbus.exceptions.DBusException('Resource Not Ready', name='org.bluez.Error.NotReady')
        self.events.append(('StartDiscovery', name))
        already = bool(adapter.props[ADAPTER]['Discovering'])
        bluez5.StartDiscovery(adapter)
        # Sensors in range show up a little later, as advertisements would, and keep
        # showing up while discovery runs.
        if not already:
            self.heard = {a for a in self.heard if a[1] != name}
            GLib.timeout_add(150, self.advertise, adapter, name)

    def stop_discovery(self, adapter, name):
        # The order of discovery calls is what tests check (a stop must come after the start).
        self.events.append(('StopDiscovery', name))
        bluez5.StopDiscovery(adapter)

    def advertise(self, adapter, name):
        if not self.powered[name] or self.adapter_object(name) is not adapter:
            return False
        for sensor in self.sensors.values():
            # A connected sensor no longer advertises (one central at a time).
            if sensor.in_range and name not in sensor.paths and not sensor.connected:
                self.add_device(sensor, name)
                self.heard.add((sensor.address, name))
            elif sensor.in_range and not sensor.connected and (sensor.address, name) not in self.heard:
                # A device BlueZ already has: its first advertisement of this discovery sets
                # RSSI again (bluetoothd clears it when discovery stops), which is how a
                # scanner that watches signals (bleak) sees it.
                self.heard.add((sensor.address, name))
                mockobject.objects[sensor.paths[name]].EmitSignal(
                    'org.freedesktop.DBus.Properties', 'PropertiesChanged', 'sa{sv}as',
                    [DEVICE, {'RSSI': dbus.Int16(-58, variant_level=1)}, []])
        return bool(adapter.props[ADAPTER]['Discovering'])

    def discovering(self, name):
        adapter = self.adapter_object(name)
        return bool(adapter is not None and adapter.props[ADAPTER]['Discovering'])
