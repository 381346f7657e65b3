import Dispatch
import Glibc
import Synchronization
import Testing
@testable import StrapBlueZ

/// Issue 14 item 5: a D-Bus call bluetoothd leaves unanswered is named in the log (which
/// call, on which object), once, and so is its late answer; answered calls say nothing.
@Suite struct SlowCallWatchTests {
    @Test func aCallLeftUnansweredIsNamedOnceAndSoIsItsLateAnswer() throws {
        let queue = DispatchQueue(label: "slow-call-test")
        let lines = Mutex<[String]>([])
        let watch = SlowCallWatch(queue: queue, threshold: .milliseconds(100)) { line in lines.withLock { $0.append(line) } }
        let slow = queue.sync { watch.sent("Device1.Pair on /org/bluez/hci0/dev_C0_9A_12_00_00_01") }
        let quick = queue.sync { watch.sent("Adapter1.StartDiscovery on /org/bluez/hci0") }
        queue.sync { watch.answered(quick) }
        for _ in 0..<100 where lines.withLock({ $0.isEmpty }) { usleep(50_000) }
        usleep(1_200_000)  // one more check period: still one line for the one call
        let warned = lines.withLock { $0 }
        #expect(warned.count == 1, "\(warned)")
        #expect(warned.first?.hasPrefix("D-Bus: Device1.Pair on /org/bluez/hci0/dev_C0_9A_12_00_00_01 unanswered for") == true)
        queue.sync { watch.answered(slow) }
        let all = lines.withLock { $0 }
        #expect(all.count == 2 && all.last?.contains("Device1.Pair on /org/bluez/hci0/dev_C0_9A_12_00_00_01 answered after") == true, "\(all)")
        #expect(queue.sync { watch.pending }.isEmpty)
    }
}
