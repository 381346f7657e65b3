import Dispatch
import Foundation
import MockBlueZSupport
import StrapBlueZ
import StrapDBus
import Testing

/// Closing a bus and opening the next one at once (a daemon restarted in one process, a
/// reconnect after the bus was lost) reuses the fd number; every new connection must still
/// get its replies.
@Suite(.enabled(if: TestTools.available, TestTools.skipReason))
struct BusReconnectTests {
    @Test func closeThenConnectRepeatedly() throws {
        let bus = try PrivateBus()
        let queue = DispatchQueue(label: "bus-reconnect-test")
        for round in 0..<40 {
            let address = bus.address
            let reply: Result<[DBusValue], BusError> = try onQueue(queue, timeout: 10) { done in
                do throws(BusError) {
                    let b = try Bus.connect(address: address, queue: queue)
                    b.call(destination: "org.freedesktop.DBus", path: ObjectPath(unchecked: "/org/freedesktop/DBus"),
                           interface: "org.freedesktop.DBus", member: "GetId") { result in
                        b.close()
                        done(result)
                    }
                } catch {
                    done(.failure(error))
                }
            }
            #expect(throws: Never.self, "round \(round)") { try reply.get() }
        }
    }
}
