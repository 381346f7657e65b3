// HealthKit's anchored object query with an update handler
// (`HKAnchoredObjectQueryDescriptor(...).results(for:)` in a `for try await`): every heart rate
// the store holds after the saved anchor, then each new one as it arrives. The anchor is saved
// after every update, so the next run continues exactly where this one stopped, and a daemon
// restart while it runs is bridged by StrapKit's reconnect: no sample is printed twice, none is skipped.
//   heart-rate-tracker [--socket PATH] [--anchor-file PATH] [--count N]
import FoundationEssentials
import StrapKit
import ExampleSupport

lineBufferedOutput()
let options = Options()
let anchorFile = options.value("anchor-file") ?? "heart-rate-tracker.anchor"
let wanted = Int(options.value("count") ?? "5") ?? 5

func loadSavedAnchor() -> UInt64 {
    guard let data = try? Data(contentsOf: URL(fileURLWithPath: anchorFile)) else { return 0 }
    return UInt64(String(decoding: data, as: UTF8.self).filter(\.isNumber)) ?? 0
}

func save(_ anchor: UInt64) throws {
    // Written whole to a temporary file and renamed over the old one: a crash leaves either anchor, never half of one.
    try Data("\(anchor)\n".utf8).write(to: URL(fileURLWithPath: anchorFile), options: .atomic)
}

// A broken connection is retried (0.1 s doubling to 2 s, 40 tries): the anchored follow then
// reopens from the last anchor it delivered, so a daemon restart mid-run loses nothing.
let store = StrapStore(socket: options.socket, reconnect: .backoff(initial: 0.1, maximum: 2, attempts: 40))
// Reconnection is never silent: say when the daemon went away and when it was back.
Task {
    for await event in store.connectionEvents {
        switch event {
        case .lost(let error): print("connection lost: \(error)")
        case .connected(reconnect: true): print("reconnected; the follow resumes from the anchor it last delivered")
        default: break
        }
    }
}
var anchor = loadSavedAnchor()
print(anchor == 0 ? "starting from the beginning (anchor 0)" : "resuming from saved anchor \(anchor)")
var printed = 0
do {
    for try await update in AnchoredQuery(types: [.quantity(.heartRate)], anchor: anchor).results(for: store) {
        for sample in update.addedSamples {
            print("heart rate \(one(sample.value)) bpm at \(clock(sample.start)) anchor \(sample.anchor) uuid \(sample.uuid) from \(sample.device.name)")
            printed += 1
        }
        anchor = update.newAnchor
        try save(anchor)
        if printed >= wanted { break }   // leaving the loop cancels the stream on the daemon's side
    }
    print("saved anchor \(anchor) after \(printed) samples")
} catch {
    fail("heart-rate-tracker: \(error)")
}
