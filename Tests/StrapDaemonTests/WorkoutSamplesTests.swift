import Foundation
import StrapExport
import StrapModel
import StrapStore
import Testing
@testable import StrapDaemon

/// Reading a workout's samples for exports and HRV: one pass over the store in commit order,
/// put in time order within the reorder horizon, the same samples `samples(matching:)` returns.
@Suite struct WorkoutSamplesTests {
    static let t0: Millis = 1_700_000_000_000
    static let strap = Device(id: "AA:00:00:00:00:01", address: "AA:00:00:00:00:01", name: "strap")
    static let pod = Device(id: "AA:00:00:00:00:02", address: "AA:00:00:00:00:02", name: "pod")

    @Test func outOfOrderCommitsComeOutInTimeOrder() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let store = try Store.open(StoreConfig(directory: dir, sync: .none))
        defer { store.close() }
        // Commit order ≠ time order: each second's heart rate, then a beat series that starts
        // 3 s earlier, from two devices interleaved, in batches that arrive reversed in groups of five.
        var batches: [[Sample]] = []
        for i in 0..<600 {
            let t = Self.t0 + Millis(i) * 1000
            batches.append([Sample(type: .heartRate, value: Double(100 + i % 20), start: t, device: Self.strap),
                            Sample(type: .heartbeatSeries, value: 2, start: t - 3000, end: t, device: Self.strap, beats: [0.5, 1.0]),
                            Sample(type: .runningSpeed, value: 3, start: t + 400, device: Self.pod)])
        }
        for k in stride(from: 0, to: batches.count - 5, by: 5) { batches[k..<k + 5].reverse() }
        for b in batches { try store.append(b) }
        try store.sync()

        let range = (Self.t0 + 10_000)..<(Self.t0 + 500_000)
        let ordered = Array(try WorkoutSamples.inTimeOrder(store, devices: [Self.strap.id, Self.pod.id], range: range))
        let expected = try store.samples(matching: .and([.time(from: range.lowerBound - 60_000, to: range.upperBound, options: .strictStartDate),
                                                         .or([.device(.id, Self.strap.id), .device(.id, Self.pod.id)])]))
        #expect(ordered.map(\.anchor) == expected.map(\.anchor))
        #expect(zip(ordered, ordered.dropFirst()).allSatisfy { ($0.start, $0.anchor) < ($1.start, $1.anchor) })
        // Repeatable (an export reads it twice), and filtered by device and type.
        #expect(Array(try WorkoutSamples.inTimeOrder(store, devices: [Self.strap.id], types: [.heartRate], range: range)).map(\.anchor)
                == expected.filter { $0.type == .heartRate }.map(\.anchor))
    }

    @Test func aSampleLaterThanTheHorizonIsNotHeldBack() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let store = try Store.open(StoreConfig(directory: dir, sync: .none))
        defer { store.close() }
        let late = WorkoutSamples.reorderHorizon + 60_000
        try store.append((0..<1000).map { Sample(type: .heartRate, value: 90, start: Self.t0 + late + Millis($0) * 1000, device: Self.strap) })
        // Committed after everything else but stamped before all of it (an import, a replay):
        // the reader does not buffer the whole workout to place it; an exporter reports it.
        try store.append([Sample(type: .heartRate, value: 91, start: Self.t0, device: Self.strap)])
        try store.sync()
        let out = Array(try WorkoutSamples.inTimeOrder(store, devices: [], range: Self.t0..<(Self.t0 + late + 1_000_000)))
        #expect(out.count == 1001)
        // It comes out as soon as it is read, after samples that start later than it does.
        let i = try #require(out.firstIndex { $0.value == 91 })
        #expect(i > 0 && out[i - 1].start > out[i].start)
    }

    /// The saved workout's power figures come from the store's power samples of its devices,
    /// per workout and per lap, and are `PowerAnalysis`'s over the active seconds.
    @Test func theSavedWorkoutCarriesPowerFiguresFromTheStore() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let store = try Store.open(StoreConfig(directory: dir, sync: .none))
        defer { store.close() }
        let meter = Device(id: "AA:00:00:00:00:07", address: "AA:00:00:00:00:07", name: "meter")
        let watts = (0..<900).map { Double(150 + ($0 * 13) % 200) }
        try store.append(watts.enumerated().map { Sample(type: .cyclingPower, value: $1, start: Self.t0 + Millis($0) * 1000 + 200, device: meter) })
        // Another meter's power is not the workout's.
        try store.append([Sample(type: .cyclingPower, value: 2_000, start: Self.t0 + 5_200, device: Self.pod)])
        try store.sync()
        var w = Workout(activityType: "cycling", locationType: .indoor, start: Self.t0, end: Self.t0 + 900_000, deviceIDs: [meter.id],
                        events: [.init(kind: "pause", time: Self.t0 + 100_000), .init(kind: "resume", time: Self.t0 + 160_000)],
                        laps: [.init(start: Self.t0, end: Self.t0 + 300_000), .init(start: Self.t0 + 300_000, end: Self.t0 + 900_000)],
                        summary: ["functionalThresholdPower": 240])
        w.sessionID = UUID()
        WorkoutSamples.addPower(to: &w, store: store)
        let zones = try PowerZones(functionalThresholdPower: 240)
        let session = PowerAnalysis(watts: Array(watts[0..<100] + watts[160..<900]))
        #expect(w.summary["powerAverage"] == session.averagePower && w.summary["powerNormalized"] == session.normalizedPower)
        #expect(w.summary["powerMaximum"] == 349 && w.summary["powerWork"] == session.work)
        #expect(w.summary["powerTrainingStressScore"] == session.trainingStressScore(zones))
        #expect(w.summary["powerBest600s"] == session.meanMaximalPower()[600] && w.summary["powerBest1200s"] == nil)
        let lap2 = PowerAnalysis(watts: Array(watts[300..<900]))
        #expect(w.laps[1].summary["powerIntensityFactor"] == lap2.intensityFactor(zones))
        #expect(w.laps[1].summary["timeInPowerZone3"] == lap2.timeInZones(zones)[2])
        #expect(w.info["powerReason"] == nil)
    }
}
