/* dbus-floor: the least a process can do to see every notification BlueZ sends over D-Bus.
 *
 * It asks the bus for bluetoothd's PropertiesChanged signals of GATT characteristics (the
 * signal of every StartNotify notification, broadcast, so it needs no subscription of its
 * own), sleeps in sd_bus_wait, and counts what sd_bus_process hands it: no decoding, no
 * storage, no clients. Run beside a subscriber (peer-bleak's "floor" argument), its CPU is a
 * floor for any program that wakes once per notification in the same VM: what strapd and the
 * logger spend above it is their own work. SIGTERM or SIGINT prints the count and ends.
 *
 * With --io DIR it is also the floor of a store-and-forward daemon, the job strapd does: each
 * signal also appends a 64-byte record to DIR/floor-store (one write; fdatasync when 100 ms,
 * strapd's default sync interval, have passed since the last) and writes a 240-byte line to a
 * reader (a child process on a socketpair that reads and drops; like strapd's subscriber, the
 * reader's own CPU is not this process's). No decoding, no formatting: the system calls and
 * the wake-up of a reader that strapd's promises need per notification, and nothing else.
 *
 *   dbus-floor [--io DIR]            (system bus)
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <systemd/sd-bus.h>

static volatile sig_atomic_t stop;
static unsigned long seen;
static int store_fd = -1, reader_fd = -1;
static struct timespec last_sync;

static void on_signal(int sig) { (void)sig; stop = 1; }

static void store_and_forward(void) {
    static const char record[64] = "floor record";
    static const char line[240] = "floor line";
    if (write(store_fd, record, sizeof record) != (ssize_t)sizeof record) perror("dbus-floor: store");
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    if ((now.tv_sec - last_sync.tv_sec) * 1000000000L + (now.tv_nsec - last_sync.tv_nsec) >= 100000000L) {
        fdatasync(store_fd);
        last_sync = now;
    }
    if (send(reader_fd, line, sizeof line, MSG_NOSIGNAL) != (ssize_t)sizeof line) perror("dbus-floor: reader");
}

static int on_changed(sd_bus_message *m, void *data, sd_bus_error *error) {
    (void)m; (void)data; (void)error;
    seen++;
    if (store_fd >= 0) store_and_forward();
    return 0;
}

/* The reader: a child on the other end of a socketpair that drops what it reads. */
static pid_t start_reader(void) {
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0) { perror("dbus-floor: socketpair"); return -1; }
    pid_t pid = fork();
    if (pid < 0) { perror("dbus-floor: fork"); return -1; }
    if (pid == 0) {
        close(sv[0]);
        char buf[4096];
        while (read(sv[1], buf, sizeof buf) > 0) {}
        _exit(0);
    }
    close(sv[1]);
    reader_fd = sv[0];
    return pid;
}

int main(int argc, char **argv) {
    pid_t reader = -1;
    if (argc == 3 && strcmp(argv[1], "--io") == 0) {
        char path[4096];
        snprintf(path, sizeof path, "%s/floor-store", argv[2]);
        store_fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
        if (store_fd < 0) { fprintf(stderr, "dbus-floor: %s: %s\n", path, strerror(errno)); return 1; }
        if ((reader = start_reader()) < 0) return 1;
        clock_gettime(CLOCK_MONOTONIC, &last_sync);
    } else if (argc != 1) {
        fprintf(stderr, "usage: dbus-floor [--io DIR]\n");
        return 2;
    }
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
    printf("{\"signals\": %lu, \"io\": %s}\n", seen, store_fd >= 0 ? "true" : "false");
    sd_bus_unref(bus);
    if (reader > 0) {
        close(reader_fd);
        waitpid(reader, NULL, 0);
    }
    return 0;
}
