import CSystemd
import Dispatch
import Glibc
import StrapDBus

/// The C side of `Bus`: what sd-bus calls back into (replies, matched signals, exported
/// methods) and the boxes that carry Swift closures through its `void *userdata`.
// MARK: C trampolines

struct WeakBus {
    weak var bus: Bus?
}

final class CallbackBox {
    enum Kind {
        case reply(Bus.ReplyHandler)
        case message(@Sendable (BusMessage) -> Void)
        /// `fast` reads the sd-bus message itself and returns true when it took it; otherwise
        /// the message is decoded for `handler` as a `.message` would be.
        case filteredMessage(fast: @Sendable (OpaquePointer) -> Bool, handler: @Sendable (BusMessage) -> Void)
        /// The bus is held weakly: sd-bus owns this box, and the bus owns sd-bus.
        case call(@Sendable (IncomingCall) -> Bool, WeakBus)
    }
    let kind: Kind
    private init(_ kind: Kind) { self.kind = kind }
    static func reply(_ h: @escaping Bus.ReplyHandler) -> CallbackBox { CallbackBox(.reply(h)) }
    static func message(_ h: @escaping @Sendable (BusMessage) -> Void) -> CallbackBox { CallbackBox(.message(h)) }
    static func filteredMessage(fast: @escaping @Sendable (OpaquePointer) -> Bool, _ h: @escaping @Sendable (BusMessage) -> Void) -> CallbackBox {
        CallbackBox(.filteredMessage(fast: fast, handler: h))
    }
    static func call(_ h: @escaping @Sendable (IncomingCall) -> Bool, _ bus: Bus) -> CallbackBox { CallbackBox(.call(h, WeakBus(bus: bus))) }
}

func decodeMessage(_ m: OpaquePointer) -> Result<BusMessage, BusError> {
    func text(_ p: UnsafePointer<CChar>?) -> String? { p.map { String(cString: $0) } }
    let path = text(sd_bus_message_get_path(m)).flatMap { try? ObjectPath($0) }
    do throws(BusError) {
        let body = try MessageCodec.readAll(m)
        return .success(BusMessage(sender: text(sd_bus_message_get_sender(m)), path: path,
                                   interface: text(sd_bus_message_get_interface(m)),
                                   member: text(sd_bus_message_get_member(m)), body: body))
    } catch {
        return .failure(error)
    }
}

let busReleaseBox: @convention(c) (UnsafeMutableRawPointer?) -> Void = { userdata in
    guard let userdata else { return }
    Unmanaged<CallbackBox>.fromOpaque(userdata).release()
}

let busReplyTrampoline: @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?, UnsafeMutablePointer<sd_bus_error>?) -> Int32 = { m, userdata, _ in
    guard let m, let userdata else { return 0 }
    let box = Unmanaged<CallbackBox>.fromOpaque(userdata).takeUnretainedValue()
    guard case .reply(let handler) = box.kind else { return 0 }
    if sd_bus_message_is_method_error(m, nil) != 0 {
        let e = sd_bus_message_get_error(m)
        let name = e?.pointee.name.map { String(cString: $0) } ?? "org.freedesktop.DBus.Error.Failed"
        let message = e?.pointee.message.map { String(cString: $0) } ?? ""
        handler(.failure(.reply(DBusErrorReply(name: name, message: message))))
        return 0
    }
    handler(decodeMessage(m).map(\.body))
    return 0
}

let busMessageTrampoline: @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?, UnsafeMutablePointer<sd_bus_error>?) -> Int32 = { m, userdata, _ in
    guard let m, let userdata else { return 0 }
    let box = Unmanaged<CallbackBox>.fromOpaque(userdata).takeUnretainedValue()
    let handler: @Sendable (BusMessage) -> Void
    switch box.kind {
    case .message(let h):
        handler = h
    case .filteredMessage(let fast, let h):
        if fast(m) { return 0 }
        // Read from the start again, whatever `fast` consumed before it declined.
        guard sd_bus_message_rewind(m, 1) >= 0 else {
            BusLog.warning("dropped a signal that could not be read again")
            return 0
        }
        handler = h
    default:
        return 0
    }
    switch decodeMessage(m) {
    case .success(let message): handler(message)
    case .failure(let error): BusLog.warning("dropped undecodable signal: \(error)")
    }
    return 0
}

let busCallTrampoline: @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?, UnsafeMutablePointer<sd_bus_error>?) -> Int32 = { m, userdata, retError in
    guard let m, let userdata else { return 0 }
    let box = Unmanaged<CallbackBox>.fromOpaque(userdata).takeUnretainedValue()
    guard case .call(let handler, let weakBus) = box.kind, let bus = weakBus.bus else { return 0 }
    switch decodeMessage(m) {
    case .success(let message):
        sd_bus_message_ref(m)
        let call = IncomingCall(message: message, raw: m, bus: bus)
        if handler(call) { return 1 }
        call.abandon()
        return 0
    case .failure(let error):
        sd_bus_error_set(retError, "org.freedesktop.DBus.Error.InvalidArgs", error.description)
        return -EINVAL
    }
}

/// An sd-bus handle handed to the queue that closes it; nothing else uses it by then.
struct BusHandle: @unchecked Sendable {
    let raw: OpaquePointer
}
