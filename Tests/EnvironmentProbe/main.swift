// strap-env-probe: runs the library calls whose input is the process environment
// (libsystemd's sd_notify, sd_watchdog_enabled, sd_listen_fds, sd_bus_open_system) in a
// process whose environment a test chose when it spawned it. Tests never change their own
// environment: Swift Testing runs suites in parallel in one process, and glibc's setenv of a
// new name reallocates `environ` while another test's posix_spawn may be copying it (EFAULT,
// "cannot start /usr/sbin/mosquitto: Bad address"). docs/testing.md, "The environment".
//
// `strap-env-probe COMMAND ARGS...`; every result is one line on stdout, which the test
// reads. Commands that must wait for the test block on stdin until the test closes it.
import Dispatch
import Glibc
import StrapBlueZ
import StrapDBus
import StrapSystem
import Synchronization

/// One line straight to fd 1, unbuffered: the test reads it while we still run.
func say(_ line: String) {
    let bytes = Array((line + "\n").utf8)
    var offset = 0
    while offset < bytes.count {
        let n = bytes[offset...].withUnsafeBytes { write(1, $0.baseAddress, $0.count) }
        if n < 0 && errno == EINTR { continue }
        guard n > 0 else { return }
        offset += n
    }
}

/// Polls until `condition` holds; 20 s only bounds a failing test.
func eventually(_ condition: () -> Bool) -> Bool {
    for _ in 0..<20_000 {
        if condition() { return true }
        usleep(1000)
    }
    return condition()
}

/// Blocks until the test closes our stdin: its signal that it did its part.
func waitForTest() {
    var byte: UInt8 = 0
    while read(0, &byte, 1) > 0 {}
}

func microseconds(_ d: Duration) -> Int64 {
    d.components.seconds * 1_000_000 + d.components.attoseconds / 1_000_000_000_000
}

func variable(_ name: String) -> String {
    getenv(name).map { String(cString: $0) } ?? "unset"
}

func state(_ word: String) -> NotifyState? {
    switch word {
    case "ready": .ready
    case "reloading": .reloading
    case "stopping": .stopping
    case "watchdog": .watchdog
    default: word.hasPrefix("status=") ? .status(String(word.dropFirst("status=".count))) : nil
    }
}

let arguments = Array(CommandLine.arguments.dropFirst())
guard let command = arguments.first else {
    say("usage: strap-env-probe notify STATE...|watchdog-interval|activated|pinger|stalled|unhealthy|system-bus")
    exit(2)
}

switch command {
case "notify":
    // sd_notify through SystemdNotifier: "sent", or "no socket" without NOTIFY_SOCKET.
    let states = arguments.dropFirst().compactMap(state)
    do {
        say(try SystemdNotifier.notify(states) ? "sent" : "no socket")
    } catch {
        say("error \(error)")
    }

case "watchdog-interval":
    // sd_watchdog_enabled through SystemdNotifier, in microseconds, or "off".
    say(SystemdNotifier.watchdogInterval().map { "\(microseconds($0))" } ?? "off")

case "activated":
    // sd_listen_fds(1) through UnixListener.activated(), then what it left in the environment.
    do {
        say(try UnixListener.activated() == nil ? "not activated" : "activated")
    } catch {
        say("error \(error)")
    }
    say("LISTEN_FDS=\(variable("LISTEN_FDS")) LISTEN_PID=\(variable("LISTEN_PID"))")

case "pinger":
    // The watchdog pinger as the daemon makes it (interval from sd_watchdog_enabled),
    // pinging until the test has seen enough.
    guard let pinger = WatchdogPinger(queue: DispatchQueue(label: "watchdog")) else {
        say("off")
        exit(0)
    }
    say("interval \(microseconds(pinger.interval))")
    pinger.start()
    waitForTest()
    pinger.stop()
    say("stopped")

case "stalled":
    // A notification socket nobody reads fills after net.unix.max_dgram_qlen datagrams and
    // sd_notify then blocks: the pinged queue must keep running and excess sends be dropped.
    let checks = Atomic(0)
    let queue = DispatchQueue(label: "wd-stalled")
    let pinger = WatchdogPinger(interval: .milliseconds(4), queue: queue) {
        checks.add(1, ordering: .relaxed)
        return true
    }
    pinger.start()
    // Far more pings than the socket can hold, and the queue still answers.
    say(eventually { checks.load(ordering: .relaxed) >= 200 } ? "pinged 200 times" : "pings stopped at \(checks.load(ordering: .relaxed))")
    say(queue.sync { true } ? "queue answers" : "queue wedged")
    say(SystemdNotifier.notifyInBackground(.status("still here")) ? "queued" : "dropped")
    pinger.stop()
    // The test closes the socket (which wakes the blocked send with an error), then stdin.
    waitForTest()
    say(eventually { SystemdNotifier.notifyInBackground(.status("drained")) } ? "drained" : "still stalled")

case "unhealthy":
    // A daemon that knows it is stuck withholds pings; after recovery only new ones are sent.
    let healthy = Atomic(false)
    let checks = Atomic(0)
    let pinger = WatchdogPinger(interval: .milliseconds(20), queue: DispatchQueue(label: "wd")) {
        checks.add(1, ordering: .relaxed)
        return healthy.load(ordering: .relaxed)
    }
    pinger.start()
    say(eventually { checks.load(ordering: .relaxed) >= 3 } ? "withheld 3 pings" : "checks stopped at \(checks.load(ordering: .relaxed))")
    healthy.store(true, ordering: .relaxed)
    // The test receives the first datagram, then closes stdin.
    waitForTest()
    pinger.stop()
    say("checks \(checks.load(ordering: .relaxed))")

case "system-bus":
    // Bus.system (sd_bus_open_system), then the owner of org.bluez on that bus.
    let queue = DispatchQueue(label: "system-bus")
    let bus: Bus
    do {
        bus = try queue.sync { () throws(BusError) -> Bus in try Bus.system(queue: queue) }
    } catch {
        say("error \(error)")
        exit(1)
    }
    let answer = Mutex<String?>(nil)
    let done = DispatchSemaphore(value: 0)
    queue.async {
        bus.call(destination: "org.freedesktop.DBus", path: ObjectPath(unchecked: "/org/freedesktop/DBus"),
                 interface: "org.freedesktop.DBus", member: "GetNameOwner", arguments: [.string("org.bluez")]) { result in
            let line: String
            switch result {
            case .success(let values): line = "owner \(values.first?.string ?? "none")"
            case .failure(let error): line = "error \(error)"
            }
            answer.withLock { $0 = line }
            done.signal()
        }
    }
    say(done.wait(timeout: .now() + 20) == .success ? answer.withLock { $0 } ?? "no answer" : "no answer in 20 s")
    queue.sync { bus.close() }

default:
    say("unknown command \(command)")
    exit(2)
}
