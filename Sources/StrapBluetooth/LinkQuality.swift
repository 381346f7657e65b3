import CBluetooth
import CHCI
import CShims
import Glibc
import StrapOS

/// The RSSI of a connected sensor, or why there is none (docs/operations.md#link-quality-rssi).
public enum RSSIReading: Sendable, Equatable {
    case dBm(Int)
    case unavailable(String)

    public var value: Int? { if case .dBm(let v) = self { v } else { nil } }
    public var reason: String? { if case .unavailable(let r) = self { r } else { nil } }
}

/// The raw HCI steps, as an injectable seam: libbluetooth in production, a fake in tests
/// (this machine's kernel has no AF_BLUETOOTH, so the failure paths are what runs here).
/// Each step returns the errno of a failure.
public protocol HCIAccess: Sendable {
    func open(adapter: Int32) -> Result<Int32, HCIFailure>
    func connectionHandle(_ fd: Int32, address: [UInt8], linkType: UInt8) -> Result<UInt16, HCIFailure>
    func readRSSI(_ fd: Int32, handle: UInt16) -> Result<Int8, HCIFailure>
    func close(_ fd: Int32)
}

public struct HCIFailure: Error, Sendable, Equatable {
    public var errno: Int32
    public init(errno: Int32) { self.errno = errno }
}

/// libbluetooth's HCI API: `hci_open_dev`, the `HCIGETCONNINFO` ioctl (C shim) and
/// `hci_read_rssi` (HCI Read RSSI, which also serves LE connections).
public struct LibBluetoothHCI: HCIAccess {
    /// How long `hci_read_rssi` may wait for the controller, in milliseconds.
    public var timeoutMilliseconds: Int32 = 1000

    public init() {}

    public func open(adapter: Int32) -> Result<Int32, HCIFailure> {
        let fd = hci_open_dev(adapter)
        return fd >= 0 ? .success(fd) : .failure(HCIFailure(errno: errno))
    }

    public func connectionHandle(_ fd: Int32, address: [UInt8], linkType: UInt8) -> Result<UInt16, HCIFailure> {
        var handle: UInt16 = 0
        let r = address.withUnsafeBufferPointer { chci_conn_handle(fd, $0.baseAddress, linkType, &handle) }
        return r == 0 ? .success(handle) : .failure(HCIFailure(errno: errno))
    }

    public func readRSSI(_ fd: Int32, handle: UInt16) -> Result<Int8, HCIFailure> {
        var rssi: Int8 = 0
        return hci_read_rssi(fd, handle, &rssi, timeoutMilliseconds) == 0 ? .success(rssi) : .failure(HCIFailure(errno: errno))
    }

    public func close(_ fd: Int32) { _ = hci_close_dev(fd) }
}

/// Reads the RSSI of one connection and turns every failure into a reason a user can act on.
/// Blocking (the controller answers within `timeoutMilliseconds`): run it off the bus queue.
public struct LinkQualityReader: Sendable {
    public let hci: any HCIAccess

    public init(hci: any HCIAccess = LibBluetoothHCI()) { self.hci = hci }

    public enum Step: String, Sendable {
        case open = "opening the HCI socket"
        case connection = "looking up the connection"
        case read = "HCI Read RSSI"
    }

    /// `adapter` is the HCI index (hci0 → 0); `address` as BlueZ writes it.
    public func read(address: String, adapter: Int32) -> RSSIReading {
        guard let bdaddr = Self.bdaddr(address) else { return .unavailable("not a Bluetooth address: \(address)") }
        let fd: Int32
        switch hci.open(adapter: adapter) {
        case .success(let f): fd = f
        case .failure(let e): return .unavailable(Self.reason(.open, errno: e.errno, adapter: adapter))
        }
        defer { hci.close(fd) }
        var handle: UInt16?
        var lookupError = HCIFailure(errno: ENOENT)
        // Sensors are LE; a dual-mode device may be on BR/EDR instead.
        for type in [UInt8(CHCI_LE_LINK), UInt8(CHCI_ACL_LINK)] {
            switch hci.connectionHandle(fd, address: bdaddr, linkType: type) {
            case .success(let h): handle = h
            case .failure(let e): lookupError = e
            }
            if handle != nil { break }
        }
        guard let handle else { return .unavailable(Self.reason(.connection, errno: lookupError.errno, adapter: adapter)) }
        switch hci.readRSSI(fd, handle: handle) {
        case .success(let rssi):
            // 127 is the controller's "not available" value.
            return rssi == 127 ? .unavailable("the controller reports no RSSI for this link") : .dBm(Int(rssi))
        case .failure(let e):
            return .unavailable(Self.reason(.read, errno: e.errno, adapter: adapter))
        }
    }

    /// Why there is no RSSI, in words (docs/operations.md lists what to do about each).
    public static func reason(_ step: Step, errno code: Int32, adapter: Int32) -> String {
        if step == .connection && (code == ENOENT || code == ENOTCONN) { return "no HCI connection on hci\(adapter)" }
        switch code {
        case EAFNOSUPPORT: return "no Bluetooth in this kernel (EAFNOSUPPORT)"
        case EPERM, EACCES: return "not permitted (CAP_NET_RAW missing)"
        case ENODEV: return "no adapter hci\(adapter) (ENODEV)"
        case ENETDOWN: return "adapter hci\(adapter) is down (ENETDOWN)"
        case ETIMEDOUT: return "\(step.rawValue) timed out"
        default: return "\(step.rawValue) failed: \(Errno(rawValue: code))"
        }
    }

    /// Whether retrying soon can help: the kernel and our capabilities don't change while
    /// we run, so those failures are polled only rarely.
    public static func isPermanent(_ reading: RSSIReading) -> Bool {
        guard let r = reading.reason else { return false }
        return r.contains("EAFNOSUPPORT") || r.contains("CAP_NET_RAW")
    }

    /// "AA:BB:CC:DD:EE:FF" → bdaddr_t bytes (least significant first).
    static func bdaddr(_ address: String) -> [UInt8]? {
        let parts = address.split(separator: ":")
        guard parts.count == 6 else { return nil }
        let bytes = parts.compactMap { $0.count == 2 ? UInt8($0, radix: 16) : nil }
        return bytes.count == 6 ? Array(bytes.reversed()) : nil
    }

    /// "hci3" or an object path ending in it → 3.
    public static func adapterIndex(_ pathOrName: String) -> Int32? {
        guard let last = pathOrName.split(separator: "/").last, last.hasPrefix("hci") else { return nil }
        return Int32(last.dropFirst(3))
    }
}
