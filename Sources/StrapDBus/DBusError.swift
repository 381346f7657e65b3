/// An error reply as it travels on the bus: a dotted name plus a human message.
/// BlueZ puts the interesting detail in the message (`le-connection-abort-by-local`).
public struct DBusErrorReply: Error, Sendable, Hashable, CustomStringConvertible {
    public let name: String
    public let message: String

    public init(name: String, message: String) {
        self.name = name
        self.message = message
    }

    public var description: String { message.isEmpty ? name : "\(name): \(message)" }

    public var bluez: BlueZErrorName? { BlueZErrorName(rawValue: name) }
    public var freedesktop: FreedesktopErrorName? { FreedesktopErrorName(rawValue: name) }
}

/// The error names bluetoothd replies with (doc/org.bluez.*.rst "Possible errors").
public enum BlueZErrorName: String, Sendable, CaseIterable {
    case failed = "org.bluez.Error.Failed"
    case inProgress = "org.bluez.Error.InProgress"
    case notReady = "org.bluez.Error.NotReady"
    case notConnected = "org.bluez.Error.NotConnected"
    case alreadyConnected = "org.bluez.Error.AlreadyConnected"
    case alreadyExists = "org.bluez.Error.AlreadyExists"
    case doesNotExist = "org.bluez.Error.DoesNotExist"
    case invalidArguments = "org.bluez.Error.InvalidArguments"
    case invalidValueLength = "org.bluez.Error.InvalidValueLength"
    case invalidOffset = "org.bluez.Error.InvalidOffset"
    case notPermitted = "org.bluez.Error.NotPermitted"
    case notAuthorized = "org.bluez.Error.NotAuthorized"
    case notSupported = "org.bluez.Error.NotSupported"
    case notAvailable = "org.bluez.Error.NotAvailable"
    case connectionAttemptFailed = "org.bluez.Error.ConnectionAttemptFailed"
    case authenticationFailed = "org.bluez.Error.AuthenticationFailed"
    case authenticationCanceled = "org.bluez.Error.AuthenticationCanceled"
    case authenticationRejected = "org.bluez.Error.AuthenticationRejected"
    case authenticationTimeout = "org.bluez.Error.AuthenticationTimeout"
    case rejected = "org.bluez.Error.Rejected"
    case canceled = "org.bluez.Error.Canceled"
}

/// The bus-level error names a BlueZ client meets.
public enum FreedesktopErrorName: String, Sendable, CaseIterable {
    case unknownObject = "org.freedesktop.DBus.Error.UnknownObject"
    case unknownMethod = "org.freedesktop.DBus.Error.UnknownMethod"
    case unknownInterface = "org.freedesktop.DBus.Error.UnknownInterface"
    case unknownProperty = "org.freedesktop.DBus.Error.UnknownProperty"
    case serviceUnknown = "org.freedesktop.DBus.Error.ServiceUnknown"
    case nameHasNoOwner = "org.freedesktop.DBus.Error.NameHasNoOwner"
    case noReply = "org.freedesktop.DBus.Error.NoReply"
    case timeout = "org.freedesktop.DBus.Error.Timeout"
    case timedOut = "org.freedesktop.DBus.Error.TimedOut"
    case disconnected = "org.freedesktop.DBus.Error.Disconnected"
    case accessDenied = "org.freedesktop.DBus.Error.AccessDenied"
    case invalidArgs = "org.freedesktop.DBus.Error.InvalidArgs"
    case failed = "org.freedesktop.DBus.Error.Failed"
    case noMemory = "org.freedesktop.DBus.Error.NoMemory"
}
