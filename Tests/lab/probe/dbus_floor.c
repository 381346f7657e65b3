/* dbus-floor: the least a process can do to see every notification BlueZ sends over D-Bus.
 *
 * It asks the bus for bluetoothd's PropertiesChanged signals of GATT characteristics (the
 * signal of every StartNotify notification, broadcast, so it needs no subscription of its
 * own), sleeps in sd_bus_wait, and counts what sd_bus_process hands it: no decoding, no
 * storage, no clients. Run beside a subscriber (peer-bleak's "floor" argument), its CPU is a
 * floor for any program that wakes once per notification in the same VM: what strapd and the
 * logger spend above it is their own work. SIGTERM or SIGINT prints the count and ends.
 *
 *   dbus-floor            (system bus)
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <systemd/sd-bus.h>

static volatile sig_atomic_t stop;
static unsigned long seen;

static void on_signal(int sig) { (void)sig; stop = 1; }

static int on_changed(sd_bus_message *m, void *data, sd_bus_error *error) {
    (void)m; (void)data; (void)error;
    seen++;
    return 0;
}

int main(void) {
    sd_bus *bus = NULL;
    int r = sd_bus_open_system(&bus);
    if (r < 0) { fprintf(stderr, "dbus-floor: system bus: %s\n", strerror(-r)); return 1; }
    r = sd_bus_add_match(bus, NULL,
        "type='signal',sender='org.bluez',interface='org.freedesktop.DBus.Properties',"
        "member='PropertiesChanged',arg0='org.bluez.GattCharacteristic1'", on_changed, NULL);
    if (r < 0) { fprintf(stderr, "dbus-floor: match: %s\n", strerror(-r)); return 1; }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;      /* no SA_RESTART: the wait returns EINTR */
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    printf("ready\n");
    fflush(stdout);
    while (!stop) {
        r = sd_bus_process(bus, NULL);
        if (r < 0) { fprintf(stderr, "dbus-floor: process: %s\n", strerror(-r)); break; }
        if (r > 0) continue;
        r = sd_bus_wait(bus, (uint64_t)-1);
        if (r < 0 && r != -EINTR) { fprintf(stderr, "dbus-floor: wait: %s\n", strerror(-r)); break; }
    }
    printf("{\"signals\": %lu}\n", seen);
    sd_bus_unref(bus);
    return 0;
}
