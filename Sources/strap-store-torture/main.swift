// strap-store-torture DIR [always|interval]: appends deterministic samples to the store in
// DIR forever, printing "ack N" once anchor N is durable and "seen N" when a follower in this
// process was given anchor N. The crash test kills it with SIGKILL at random moments and
// checks that the reopened store still has everything acknowledged or seen.
import Foundation
import Glibc
import StrapModel
import StrapStore

func say(_ line: String) {
    let bytes = Array((line + "\n").utf8)
    _ = bytes.withUnsafeBytes { write(1, $0.baseAddress, $0.count) }
}

/// The value and time every writer and checker agree on for an anchor.
func expectedSample(anchor a: UInt64) -> Sample {
    var s = Sample(type: .heartRate, value: Double(40 + a % 150), start: 1_767_225_600_000 + Millis(a) * 1000,
                   device: tortureDevice)
    if a % 10 == 0 { s.metadata = ["anchor": String(a)] }
    return s
}

let tortureDevice = Device(id: "torture", address: "00:00:00:00:00:00", name: "Torture")

let args = CommandLine.arguments
guard args.count >= 2 else {
    FileHandle.standardError.write(Data("usage: strap-store-torture DIR [always|interval]\n".utf8))
    exit(2)
}
let always = args.count < 3 || args[2] == "always"
var cfg = StoreConfig(directory: args[1], sync: always ? .always : .interval(0.01))
cfg.segmentMaxItems = 5000
let store: Store
do { store = try Store.open(cfg) } catch {
    FileHandle.standardError.write(Data("open: \(error)\n".utf8))
    exit(1)
}
say("open \(store.latestAnchor)")

let follower = Task.detached {
    for try await page in store.follow(from: store.latestAnchor, limit: 500) {
        if let last = page.added.last { say("seen \(last.anchor)") }
    }
}

var rounds = 0
while true {
    let next = store.latestAnchor + 1
    let n = Int.random(in: 1...300)
    let batch = (0..<UInt64(n)).map { expectedSample(anchor: next + $0) }
    do {
        let first = try store.appendBatch(batch)
        precondition(first == next, "single writer: anchors are predictable")
        if !always { try store.sync() }
        say("ack \(first + UInt64(n) - 1)")
    } catch {
        FileHandle.standardError.write(Data("append: \(error)\n".utf8))
        exit(1)
    }
    rounds += 1
}
