import CSystemd
import Dispatch
import Glibc
import StrapDBus

/// One sd-bus connection driven on one serial queue: its reads by a thread of its own
/// (`BusReader`), its writes and timeouts by Dispatch sources
/// (docs/swift-on-linux.md#driving-sd-bus-from-dispatch). sd-bus is not thread-safe: every method
/// must be called on `queue`, and every callback runs there.
public final class Bus: @unchecked Sendable {
    public let queue: DispatchQueue
    private var raw: OpaquePointer?
    private var readSource: DispatchSourceRead?
    private var reader: BusReader?
    private var writeSource: DispatchSourceWrite?
    private var writeSuspended = true
    private var timer: DispatchSourceTimer?
    /// sd-bus's deadline the timer was last set to (µs; UInt64.max: none; nil: not armed,
    /// after it fired). Setting a Dispatch timer wakes libdispatch's manager thread, so an
    /// unchanged deadline (no call pending, the usual case for each notification) is not set
    /// again. Not 0 for "not armed": 0 is a deadline sd-bus gives (process again at once, as
    /// while it closes a dead connection call by call).
    private var armedDeadline: UInt64?
    private var disconnectHandlers: [@Sendable () -> Void] = []
    public private(set) var isOpen = false
    /// Logs calls that stay unanswered (SlowCallWatch.threshold) and their late answers.
    let slowCalls: SlowCallWatch

    /// Opens the system bus; `DBUS_SYSTEM_BUS_ADDRESS` redirects it (tests use a private bus).
    public static func system(queue: DispatchQueue) throws(BusError) -> Bus {
        dispatchPrecondition(condition: .onQueue(queue))
        var raw: OpaquePointer?
        let r = sd_bus_open_system(&raw)
        guard r >= 0, let raw else { throw .errno("sd_bus_open_system", -r) }
        return Bus(raw: raw, queue: queue)
    }

    /// Connects to an explicit address as a bus client (used by tests and tools).
    public static func connect(address: String, queue: DispatchQueue) throws(BusError) -> Bus {
        dispatchPrecondition(condition: .onQueue(queue))
        var raw: OpaquePointer?
        var r = sd_bus_new(&raw)
        guard r >= 0, let raw else { throw .errno("sd_bus_new", -r) }
        r = address.withCString { sd_bus_set_address(raw, $0) }
        if r >= 0 { r = sd_bus_set_bus_client(raw, 1) }
        if r >= 0 { r = sd_bus_negotiate_fds(raw, 1) }
        if r >= 0 { r = sd_bus_start(raw) }
        if r < 0 { sd_bus_unref(raw); throw .errno("connect \(address)", -r) }
        return Bus(raw: raw, queue: queue)
    }

    private init(raw: OpaquePointer, queue: DispatchQueue) {
        self.raw = raw
        self.queue = queue
        slowCalls = SlowCallWatch(queue: queue)
        isOpen = true
        attach()
    }

    deinit {
        if let raw { release(raw) }
    }

    public var uniqueName: String? {
        guard let raw else { return nil }
        var p: UnsafePointer<CChar>?
        guard sd_bus_get_unique_name(raw, &p) >= 0, let p else { return nil }
        return String(cString: p)
    }

    /// Called once on the queue when the connection is lost or closed.
    public func onDisconnect(_ handler: @escaping @Sendable () -> Void) {
        dispatchPrecondition(condition: .onQueue(queue))
        disconnectHandlers.append(handler)
    }

    public func close() {
        dispatchPrecondition(condition: .onQueue(queue))
        guard let raw else { return }
        release(raw)
        self.raw = nil
    }

    /// Cancels the sources, stops the reader and closes the connection once neither
    /// libdispatch nor the reader uses its fd any more:
    /// closing it earlier lets the next connection reuse the fd number while the old
    /// registration is still torn down, and that connection's read source then never fires
    /// (seen when strapd reconnects to the bus, or a daemon is restarted in one process).
    private func release(_ raw: OpaquePointer) {
        let sources: [any DispatchSourceProtocol] = [readSource, writeSource].compactMap { $0 }
        let group = DispatchGroup()
        for source in sources {
            group.enter()
            source.setCancelHandler { @Sendable in group.leave() }
        }
        if let reader {
            group.enter()
            reader.stop()
            reader.afterExit { group.leave() }
        }
        // After a lost connection teardown() already ran and dropped the sources: nothing to
        // wait for then.
        teardown()
        let handle = BusHandle(raw: raw)
        group.notify(queue: .global()) { sd_bus_flush_close_unref(handle.raw) }
    }

    /// On the queue: runs `ready` on the queue whenever `fd` is readable, on the bus's reader
    /// thread when it has one; the watch owns `fd` and closes it when cancelled.
    func watchReadable(_ fd: Int32, ready: @escaping @Sendable () -> Void) -> ReadWatch {
        ReadWatch(fd: fd, reader: isOpen ? reader : nil, queue: queue, ready: ready)
    }

    // MARK: Event loop

    private func attach() {
        guard let raw else { return }
        let fd = sd_bus_get_fd(raw)
        reader = BusReader(fd: fd, queue: queue) { [weak self] in self?.pump() }
        if reader == nil {
            let read = DispatchSource.makeReadSource(fileDescriptor: fd, queue: queue)
            read.setEventHandler { @Sendable [weak self] in self?.pump() }
            read.resume()
            readSource = read
        }
        let write = DispatchSource.makeWriteSource(fileDescriptor: fd, queue: queue)
        write.setEventHandler { @Sendable [weak self] in self?.pump() }
        writeSource = write
        let t = DispatchSource.makeTimerSource(queue: queue)
        t.setEventHandler { @Sendable [weak self] in
            // A one-shot timer that fired is armed no more, whatever sd-bus says next.
            self?.armedDeadline = nil
            self?.pump()
        }
        t.schedule(deadline: .distantFuture)
        armedDeadline = UInt64.max
        t.resume()
        timer = t
        queue.async { [weak self] in self?.pump() }
    }

    private func teardown() {
        guard isOpen else { return }
        isOpen = false
        readSource?.cancel()
        // Kept: `release` still waits for its end before the fd is closed.
        reader?.stop()
        if let w = writeSource {
            if writeSuspended { w.resume() }
            w.cancel()
        }
        timer?.cancel()
        readSource = nil
        writeSource = nil
        timer = nil
        // Calls still out get no answer from a closed connection (their owners hear of the loss).
        slowCalls.forgetAll()
    }

    func pump() {
        dispatchPrecondition(condition: .onQueue(queue))
        guard let raw, isOpen else { return }
        while true {
            let r = sd_bus_process(raw, nil)
            if r < 0 {
                lost()
                return
            }
            if r == 0 { break }
            // A callback may have closed the bus.
            if self.raw == nil || !isOpen { return }
        }
        rearm()
    }

    /// Arms the write source only while sd-bus has output queued, and the timer from
    /// sd-bus's own deadline (absolute CLOCK_MONOTONIC µs; UINT64_MAX means none).
    func rearm() {
        dispatchPrecondition(condition: .onQueue(queue))
        guard let raw, isOpen else { return }
        let events = sd_bus_get_events(raw)
        if events < 0 { lost(); return }
        let wantWrite = (Int16(events) & Int16(POLLOUT)) != 0
        if wantWrite && writeSuspended { writeSource?.resume(); writeSuspended = false }
        if !wantWrite && !writeSuspended { writeSource?.suspend(); writeSuspended = true }
        var usec: UInt64 = 0
        if sd_bus_get_timeout(raw, &usec) < 0 { usec = UInt64.max }
        guard usec != armedDeadline else { return }
        armedDeadline = usec
        if usec != UInt64.max {
            var now = timespec()
            clock_gettime(CLOCK_MONOTONIC, &now)
            let nowUsec = UInt64(now.tv_sec) * 1_000_000 + UInt64(now.tv_nsec) / 1000
            let delta = usec > nowUsec ? usec - nowUsec : 0
            timer?.schedule(deadline: .now() + .microseconds(Int(min(delta, UInt64(Int32.max)))))
        } else {
            timer?.schedule(deadline: .distantFuture)
        }
    }

    private func lost() {
        teardown()
        let handlers = disconnectHandlers
        disconnectHandlers = []
        for h in handlers { h() }
    }

    // MARK: Calls

    public typealias ReplyHandler = @Sendable (Result<[DBusValue], BusError>) -> Void

    /// Sends a method call and invokes `reply` on the queue with the reply body or the error.
    public func call(destination: String, path: ObjectPath, interface: String, member: String,
                     arguments: [DBusValue] = [], timeoutMicroseconds: UInt64 = 0,
                     reply: @escaping ReplyHandler) {
        dispatchPrecondition(condition: .onQueue(queue))
        guard let raw, isOpen else { queue.async { reply(.failure(.closed)) }; return }
        var m: OpaquePointer?
        var r = sd_bus_message_new_method_call(raw, &m, destination, path.rawValue, interface, member)
        guard r >= 0, let m else { let e = BusError.errno("new call \(member)", -r); queue.async { reply(.failure(e)) }; return }
        defer { sd_bus_message_unref(m) }
        do throws(BusError) {
            try MessageCodec.append(arguments, to: m)
        } catch {
            queue.async { reply(.failure(error)) }
            return
        }
        let watch = slowCalls
        let token = watch.sent("\(interface.split(separator: ".").last ?? "").\(member) on \(path.rawValue)")
        let box = Unmanaged.passRetained(CallbackBox.reply { result in watch.answered(token); reply(result) }).toOpaque()
        var slot: OpaquePointer?
        r = sd_bus_call_async(raw, &slot, m, busReplyTrampoline, box, timeoutMicroseconds)
        guard r >= 0, let slot else {
            watch.answered(token)
            Unmanaged<CallbackBox>.fromOpaque(box).release()
            let e = BusError.errno("call \(interface).\(member)", -r)
            queue.async { reply(.failure(e)) }
            return
        }
        sd_bus_slot_set_destroy_callback(slot, busReleaseBox)
        sd_bus_slot_set_floating(slot, 1)
        rearm()
    }

    // MARK: Signals

    /// Subscribes to messages matching `rule`; the handler runs until the token is cancelled.
    /// AddMatch is sent before anything queued later on this connection, so a match added
    /// before a method call is in force when that call's effects are signalled.
    public func addMatch(_ rule: String, handler: @escaping @Sendable (BusMessage) -> Void) throws(BusError) -> BusSlot {
        try addMatch(rule, box: CallbackBox.message(handler))
    }

    /// As `addMatch(_:handler:)`, with `fast` offered each message first, undecoded (on the
    /// queue, valid only during the call): a signal it takes costs no `BusMessage`, which is
    /// how a notification's PropertiesChanged skips the generic value tree.
    func addMatch(_ rule: String, fast: @escaping @Sendable (OpaquePointer) -> Bool,
                  handler: @escaping @Sendable (BusMessage) -> Void) throws(BusError) -> BusSlot {
        try addMatch(rule, box: CallbackBox.filteredMessage(fast: fast, handler))
    }

    private func addMatch(_ rule: String, box callbacks: CallbackBox) throws(BusError) -> BusSlot {
        dispatchPrecondition(condition: .onQueue(queue))
        guard let raw, isOpen else { throw .closed }
        let box = Unmanaged.passRetained(callbacks).toOpaque()
        var slot: OpaquePointer?
        let r = rule.withCString { sd_bus_add_match_async(raw, &slot, $0, busMessageTrampoline, nil, box) }
        guard r >= 0, let slot else {
            Unmanaged<CallbackBox>.fromOpaque(box).release()
            throw .errno("add match \(rule)", -r)
        }
        sd_bus_slot_set_destroy_callback(slot, busReleaseBox)
        rearm()
        return BusSlot(raw: slot, bus: self)
    }

    // MARK: Exported objects

    /// Serves method calls for `path`. The handler returns false for calls it does not know,
    /// which sd-bus answers with UnknownMethod.
    public func export(path: ObjectPath, handler: @escaping @Sendable (IncomingCall) -> Bool) throws(BusError) -> BusSlot {
        dispatchPrecondition(condition: .onQueue(queue))
        guard let raw, isOpen else { throw .closed }
        let box = Unmanaged.passRetained(CallbackBox.call(handler, self)).toOpaque()
        var slot: OpaquePointer?
        let r = sd_bus_add_object(raw, &slot, path.rawValue, busCallTrampoline, box)
        guard r >= 0, let slot else {
            Unmanaged<CallbackBox>.fromOpaque(box).release()
            throw .errno("export \(path)", -r)
        }
        sd_bus_slot_set_destroy_callback(slot, busReleaseBox)
        return BusSlot(raw: slot, bus: self)
    }

    public func emitSignal(path: ObjectPath, interface: String, member: String, arguments: [DBusValue]) throws(BusError) {
        dispatchPrecondition(condition: .onQueue(queue))
        guard let raw, isOpen else { throw .closed }
        var m: OpaquePointer?
        var r = sd_bus_message_new_signal(raw, &m, path.rawValue, interface, member)
        guard r >= 0, let m else { throw .errno("new signal \(member)", -r) }
        defer { sd_bus_message_unref(m) }
        try MessageCodec.append(arguments, to: m)
        r = sd_bus_send(raw, m, nil)
        if r < 0 { throw .errno("send signal \(member)", -r) }
        rearm()
    }

    func sendReply(to call: OpaquePointer, values: [DBusValue]) {
        dispatchPrecondition(condition: .onQueue(queue))
        defer { sd_bus_message_unref(call) }
        guard let raw, isOpen else { return }
        var m: OpaquePointer?
        guard sd_bus_message_new_method_return(call, &m) >= 0, let m else { return }
        defer { sd_bus_message_unref(m) }
        do throws(BusError) {
            try MessageCodec.append(values, to: m)
            _ = sd_bus_send(raw, m, nil)
        } catch {
            _ = sendErrorRaw(call, name: "org.freedesktop.DBus.Error.Failed", message: error.description)
        }
        rearm()
    }

    func sendError(to call: OpaquePointer, name: String, message: String) {
        dispatchPrecondition(condition: .onQueue(queue))
        defer { sd_bus_message_unref(call) }
        guard raw != nil, isOpen else { return }
        _ = sendErrorRaw(call, name: name, message: message)
        rearm()
    }

    func replyUnanswered(_ call: OpaquePointer) {
        sendError(to: call, name: "org.freedesktop.DBus.Error.Failed", message: "not answered")
    }

    private func sendErrorRaw(_ call: OpaquePointer, name: String, message: String) -> Int32 {
        var e = sd_bus_error()
        sd_bus_error_set(&e, name, message)
        defer { sd_bus_error_free(&e) }
        return sd_bus_reply_method_error(call, &e)
    }

    /// Asks the bus for a well-known name (tests use this to stand in for services).
    public func requestName(_ name: String) throws(BusError) {
        dispatchPrecondition(condition: .onQueue(queue))
        guard let raw, isOpen else { throw .closed }
        let r = sd_bus_request_name(raw, name, 0)
        if r < 0 { throw .errno("request name \(name)", -r) }
        rearm()
    }
}

/// A registration (match or exported object); cancelling it unregisters.
public final class BusSlot: @unchecked Sendable {
    private var raw: OpaquePointer?
    private weak var bus: Bus?

    init(raw: OpaquePointer, bus: Bus) {
        self.raw = raw
        self.bus = bus
    }

    public func cancel() {
        guard let raw else { return }
        self.raw = nil
        if let bus { dispatchPrecondition(condition: .onQueue(bus.queue)) }
        sd_bus_slot_unref(raw)
    }

    deinit {
        if let raw {
            let ref = MessageRef(raw: raw)
            if let bus { bus.queue.async { _ = sd_bus_slot_unref(ref.raw) } }
        }
    }
}
