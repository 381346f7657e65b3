import CSystemd
import Dispatch
import StrapDBus

/// A received signal or method call, decoded off the sd-bus message.
public struct BusMessage: Sendable {
    public let sender: String?
    public let path: ObjectPath?
    public let interface: String?
    public let member: String?
    public let body: [DBusValue]
}

/// A method call on an object we export, answered now or later (agent prompts may wait).
public final class IncomingCall: @unchecked Sendable {
    public let message: BusMessage
    private let bus: Bus
    private var raw: OpaquePointer?

    init(message: BusMessage, raw: OpaquePointer, bus: Bus) {
        self.message = message
        self.bus = bus
        self.raw = raw
    }

    deinit {
        // A handler that dropped the call without answering must not leave the caller hanging.
        if let raw {
            let ref = MessageRef(raw: raw)
            bus.queue.async { [bus] in bus.replyUnanswered(ref.raw) }
        }
    }

    public func reply(_ values: [DBusValue] = []) {
        guard let raw = take() else { return }
        bus.sendReply(to: raw, values: values)
    }

    public func fail(_ name: String, _ message: String) {
        guard let raw = take() else { return }
        bus.sendError(to: raw, name: name, message: message)
    }

    /// Releases the message without replying, for calls the handler declined.
    func abandon() {
        guard let raw = take() else { return }
        sd_bus_message_unref(raw)
    }

    private func take() -> OpaquePointer? {
        dispatchPrecondition(condition: .onQueue(bus.queue))
        defer { raw = nil }
        return raw
    }
}


/// sd-bus message pointers are only touched on the bus queue; this lets one cross a closure.
struct MessageRef: @unchecked Sendable {
    let raw: OpaquePointer
}
