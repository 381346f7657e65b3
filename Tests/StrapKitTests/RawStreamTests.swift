import Foundation
import StrapKit
import StrapWire
import Testing

/// What a command-line client needs beside the typed API: a synchronous connect that tells a
/// missing daemon apart, and a protocol stream's events as strapd sent them.
@Suite(.timeLimit(.minutes(2))) struct RawStreamTests {
    @Test func connectFailsAtOnceWhenNoDaemonListens() throws {
        let store = StrapStore(socket: "/tmp/strapkit-no-such-dir-\(UUID().uuidString.prefix(8))/s.sock")
        defer { store.close() }
        #expect {
            try store.connect()
        } throws: { error in
            guard let error = error as? StrapKitError else { return false }
            return error.isDaemonNotRunning && !error.isPermissionDenied && error.isConnectionLoss
        }
    }

    @Test func aRawStreamDeliversTheEventsAndCancelStillEndsWithCancelled() async throws {
        let h = try DaemonHarness()
        defer { h.close() }
        try h.advance(to: 10)
        let store = StrapStore(socket: h.socketPath)
        defer { store.close() }
        try store.connect()
        try store.connect()  // connected already: nothing happens
        // A follow: the first reply carries the catch-up; new samples come as `added` events.
        let (first, events) = try await store.rawStream("samples.anchored", ["follow": .bool(true), "limit": .int(100_000)])
        guard case .int(let anchor)? = first["anchor"] else { Issue.record("no anchor in \(first)"); return }
        #expect(anchor > 0)
        try h.advance(to: 20)
        var added = 0
        var kinds: [String] = []
        for try await event in events {
            kinds.append(event.kind)
            if event.kind == "added" {
                added += 1
                // cancel() sends `cancel` and the sequence still ends with the daemon's `cancelled`.
                if added == 1 { events.cancel() }
            }
        }
        #expect(added >= 1)
        #expect(kinds.last == "cancelled")
        #expect(await eventually { store.outstandingRequests == 0 })
    }

    /// `keepingJSON`: each event also carries its data's text as strapd wrote it, which parses
    /// to the same object; without it there is no text.
    @Test func aStreamKeepingJSONCarriesTheDataAsTheDaemonWroteIt() async throws {
        let h = try DaemonHarness()
        defer { h.close() }
        try h.advance(to: 10)
        let store = StrapStore(socket: h.socketPath)
        defer { store.close() }
        for keeping in [true, false] {
            let (_, events) = try await store.rawStream("samples.anchored", ["follow": .bool(true), "limit": .int(100_000)], keepingJSON: keeping)
            try h.advance(to: keeping ? 20 : 30)
            var seen = 0
            for try await event in events where event.kind == "added" {
                if keeping {
                    let text = try #require(event.dataJSON)
                    #expect(text.first == UInt8(ascii: "{") && text.last == UInt8(ascii: "}"))
                    #expect(try JSONParser.parse(text) == .object(event.data))
                    #expect(!event.data.isEmpty)
                } else {
                    #expect(event.dataJSON == nil)
                }
                seen += 1
                if seen == 1 { events.cancel() }
            }
            #expect(seen >= 1)
        }
    }

    @Test func aRawStreamsFailureIsTheTypedError() async throws {
        let h = try DaemonHarness()
        defer { h.close() }
        let store = StrapStore(socket: h.socketPath)
        defer { store.close() }
        await #expect(throws: StrapKitError.self) {
            _ = try await store.rawStream("samples.anchored", ["follow": .bool(true), "limit": .string("ten")])
        }
        #expect(store.outstandingRequests == 0)
    }
}
