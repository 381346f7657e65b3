import Foundation
import Glibc
import Testing
@testable import StrapBluetooth

/// RSSI through a fake HCI (the seam), so every failure path is covered on a machine
/// without Bluetooth; and the real libbluetooth path, which must never crash.
@Suite struct LinkQualityTests {
    struct FakeHCI: HCIAccess {
        var openError: Int32?
        var connectionError: Int32?
        var leOnly = true
        var readResult: Result<Int8, HCIFailure> = .success(-61)
        let opened = Counter()

        func open(adapter: Int32) -> Result<Int32, HCIFailure> {
            if let openError { return .failure(HCIFailure(errno: openError)) }
            opened.increment()
            return .success(42)
        }
        func connectionHandle(_ fd: Int32, address: [UInt8], linkType: UInt8) -> Result<UInt16, HCIFailure> {
            #expect(address == [0x06, 0x05, 0x04, 0x03, 0x02, 0xC1])
            if let connectionError { return .failure(HCIFailure(errno: connectionError)) }
            return leOnly && linkType != 0x80 ? .failure(HCIFailure(errno: ENOENT)) : .success(0x40)
        }
        func readRSSI(_ fd: Int32, handle: UInt16) -> Result<Int8, HCIFailure> { readResult }
        func close(_ fd: Int32) { opened.decrement() }
    }

    final class Counter: @unchecked Sendable {
        private let lock = NSLock()
        private var n = 0
        func increment() { lock.withLock { n += 1 } }
        func decrement() { lock.withLock { n -= 1 } }
        var value: Int { lock.withLock { n } }
    }

    static let address = "C1:02:03:04:05:06"

    @Test func readsTheRSSIOfTheLEConnection() {
        let fake = FakeHCI()
        #expect(LinkQualityReader(hci: fake).read(address: Self.address, adapter: 0) == .dBm(-61))
        #expect(fake.opened.value == 0, "the HCI socket is closed again")
    }

    @Test func failuresBecomeReasons() {
        func reading(_ fake: FakeHCI) -> RSSIReading { LinkQualityReader(hci: fake).read(address: Self.address, adapter: 1) }
        #expect(reading(FakeHCI(openError: EAFNOSUPPORT)) == .unavailable("no Bluetooth in this kernel (EAFNOSUPPORT)"))
        #expect(reading(FakeHCI(openError: EPERM)) == .unavailable("not permitted (CAP_NET_RAW missing)"))
        #expect(reading(FakeHCI(openError: ENODEV)) == .unavailable("no adapter hci1 (ENODEV)"))
        #expect(reading(FakeHCI(connectionError: ENOENT)) == .unavailable("no HCI connection on hci1"))
        #expect(reading(FakeHCI(readResult: .failure(HCIFailure(errno: EACCES)))) == .unavailable("not permitted (CAP_NET_RAW missing)"))
        #expect(reading(FakeHCI(readResult: .failure(HCIFailure(errno: ETIMEDOUT)))) == .unavailable("HCI Read RSSI timed out"))
        #expect(reading(FakeHCI(readResult: .success(127))) == .unavailable("the controller reports no RSSI for this link"))
        let io = reading(FakeHCI(readResult: .failure(HCIFailure(errno: EIO))))
        #expect(io.reason?.hasPrefix("HCI Read RSSI failed: ") == true && io.reason?.hasSuffix("(errno \(EIO))") == true)
        #expect(LinkQualityReader(hci: FakeHCI()).read(address: "nonsense", adapter: 0).reason == "not a Bluetooth address: nonsense")
    }

    @Test func permanentFailuresAreNotRetriedSoon() {
        #expect(LinkQualityReader.isPermanent(.unavailable("no Bluetooth in this kernel (EAFNOSUPPORT)")))
        #expect(LinkQualityReader.isPermanent(.unavailable("not permitted (CAP_NET_RAW missing)")))
        #expect(!LinkQualityReader.isPermanent(.unavailable("no HCI connection on hci0")))
        #expect(!LinkQualityReader.isPermanent(.dBm(-70)))
    }

    @Test func adapterIndexFromPathOrName() {
        #expect(LinkQualityReader.adapterIndex("/org/bluez/hci3") == 3)
        #expect(LinkQualityReader.adapterIndex("hci0") == 0)
        #expect(LinkQualityReader.adapterIndex("/org/bluez") == nil)
    }

    /// libbluetooth on this machine: a value where Bluetooth exists (no such connection
    /// then, so a reason), a reason where it doesn't; never a crash.
    @Test func realHCIGivesAReason() {
        let reading = LinkQualityReader().read(address: Self.address, adapter: 0)
        #expect(reading.reason?.isEmpty == false, "\(reading)")
    }
}
