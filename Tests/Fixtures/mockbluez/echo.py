#!/usr/bin/python3
"""Echo service for the DBusValue codec tests: stores whatever it is sent, so a foreign
encoder (busctl) and decoder (busctl --json) can be compared with ours."""
import sys
import dbus
import dbus.service
import dbus.mainloop.glib
from gi.repository import GLib


class Echo(dbus.service.Object):
    def __init__(self, bus):
        super().__init__(bus, '/echo')
        self.last = dbus.String('', variant_level=1)

    @dbus.service.method('org.strapd.Echo', in_signature='v', out_signature='')
    def Store(self, value):
        self.last = value

    @dbus.service.method('org.strapd.Echo', in_signature='', out_signature='v')
    def Last(self):
        return self.last

    @dbus.service.method('org.strapd.Echo', in_signature='v', out_signature='v')
    def Echo(self, value):
        return value

    @dbus.service.method('org.strapd.Echo', in_signature='', out_signature='',
                         async_callbacks=('ok', 'err'))
    def Hang(self, ok, err):
        # Never answered: the caller's own timeout has to end the call.
        self.hung = getattr(self, 'hung', []) + [(ok, err)]


dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
bus = dbus.bus.BusConnection(sys.argv[1])
name = dbus.service.BusName('org.strapd.Echo', bus)
obj = Echo(bus)
print('ready', flush=True)
GLib.MainLoop().run()
