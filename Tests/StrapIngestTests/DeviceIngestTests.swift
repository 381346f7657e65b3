import Testing
import StrapGATT
import StrapModel
import StrapSimulator
@testable import StrapIngest

@Suite struct DeviceIngestTests {
    static let device = Device(id: "5E:1A:00:00:48:00", address: "5E:1A:00:00:48:00", name: "Sim HR 0")
    let t0: Millis = 1_700_000_000_000

    @Test func heartRatePacketYieldsRateBeatsAndContact() {
        var ingest = DeviceIngest(device: Self.device)
        let out = ingest.ingest(.heartRateMeasurement, [0x16, 74, 0x00, 0x04, 0x00, 0x02], wall: t0, monotonic: 100)
        #expect(out.rejected == nil)
        #expect(out.samples.map(\.type) == [.sensorContact, .heartRate, .heartbeatSeries])
        let series = out.samples[2]
        // Offsets from the beat before the first interval: running sums of RR / 1024.
        #expect(series.beats == [1, 1.5] && series.value == 2)
        // A run's first series: its last beat half its RR before arrival (docs/decoding.md).
        #expect(series.end == t0 - 250 && series.start == t0 - 1750)
        #expect(series.metadata.isEmpty)
        let rr = zip([0] + series.beats, series.beats).map { UInt16((($1 - $0) * 1024)) }
        #expect(rr == [1024, 512])
        #expect(out.changes == [.contact(.detected)])
        // Same contact again: no new contact sample.
        let next = ingest.ingest(.heartRateMeasurement, [0x06, 75], wall: t0 + 1000, monotonic: 101)
        #expect(next.samples.map(\.type) == [.heartRate])
    }

    @Test func zeroHeartRateIsKeptAndFlagged() {
        var ingest = DeviceIngest(device: Self.device)
        let out = ingest.ingest(.heartRateMeasurement, [0x04, 0], wall: t0, monotonic: 0)
        let hr = out.samples.first { $0.type == .heartRate }
        #expect(hr?.value == 0 && hr?.metadata["quality"] == "noReading" && hr?.metadata["contact"] == "notDetected")
    }

    @Test func energyCounterBecomesIncrementsWithResetAndSaturation() {
        var ingest = DeviceIngest(device: Self.device)
        func ee(_ kj: UInt16, _ s: Double) -> DeviceIngest.Output {
            ingest.ingest(.heartRateMeasurement, HeartRateMeasurement(heartRate: 120, energyExpended: kj).encoded(),
                          wall: t0 + Millis(s * 1000), monotonic: s)
        }
        #expect(ee(100, 0).samples.filter { $0.type == .energyExpended }.isEmpty)       // baseline
        let step = ee(110, 10).samples.filter { $0.type == .energyExpended || $0.type == .activeEnergy }
        #expect(step.map(\.value) == [10, 10 / 4.184])
        #expect(step[0].start == t0 && step[0].end == t0 + 10_000)
        #expect(ee(3, 20).samples.first { $0.type == .energyExpended }?.value == 3)     // reset (0x2A39)
        _ = ee(0xFFFF, 20.5)
        #expect(ee(0xFFFF, 30).changes.contains(.energySaturated))
    }

    @Test func malformedPacketIsRejectedNothingElse() {
        var ingest = DeviceIngest(device: Self.device)
        let out = ingest.ingest(.heartRateMeasurement, [0x01, 0x48], wall: t0, monotonic: 0)
        #expect(out.samples.isEmpty && out.changes.isEmpty)
        #expect(out.rejected == .truncated(.heartRateMeasurement, field: "heart rate", needed: 3, got: 2))
        #expect(ingest.ingest(.batteryLevel, [200], wall: t0, monotonic: 0).rejected != nil)
    }

    @Test func deviceInformationUpdatesIdentityOnce() {
        var ingest = DeviceIngest(device: Self.device)
        let out = ingest.ingest(.manufacturerName, Array("Polar Electro Oy".utf8), wall: t0, monotonic: 0)
        #expect(ingest.device.manufacturer == "Polar Electro Oy")
        #expect(out.changes == [.identity(ingest.device)])
        #expect(ingest.ingest(.manufacturerName, Array("Polar Electro Oy".utf8), wall: t0, monotonic: 0).changes.isEmpty)
        // Later samples carry the updated identity.
        #expect(ingest.ingest(.heartRateMeasurement, [0x00, 60], wall: t0, monotonic: 1).samples[0].device.manufacturer == "Polar Electro Oy")
    }

    @Test func batterySampleOnlyOnChange() {
        var ingest = DeviceIngest(device: Self.device)
        #expect(ingest.ingest(.batteryLevel, [90], wall: t0, monotonic: 0).samples.count == 1)
        #expect(ingest.ingest(.batteryLevel, [90], wall: t0, monotonic: 1).samples.isEmpty)
        #expect(ingest.ingest(.batteryLevel, [89], wall: t0, monotonic: 2).changes == [.battery(89)])
    }

    @Test func reconnectMakesTheNextCSCPacketABaseline() {
        var ingest = DeviceIngest(device: Self.device, settings: .init(wheelCircumference: 2))
        let a = CSCMeasurement(wheel: .init(revolutions: 10, eventTime: 0)).encoded()
        let b = CSCMeasurement(wheel: .init(revolutions: 11, eventTime: 1024)).encoded()
        _ = ingest.ingest(.cscMeasurement, a, wall: t0, monotonic: 0)
        #expect(ingest.ingest(.cscMeasurement, b, wall: t0 + 1000, monotonic: 1).samples.map(\.type) == [.cyclingSpeed, .cyclingDistance])
        ingest.linkRestarted()
        let c = CSCMeasurement(wheel: .init(revolutions: 40, eventTime: 9000)).encoded()
        #expect(ingest.ingest(.cscMeasurement, c, wall: t0 + 30_000, monotonic: 30).samples.isEmpty)
    }

    /// An hour of the simulator through ingest: nothing rejected, distances add up, every
    /// dropout answered by a baseline.
    @Test func simulatedHourThroughIngest() {
        var simulation = Simulation(count: 3, seed: 4, dropouts: DropoutSchedule(meanInterval: 600))
        var ingests: [String: DeviceIngest] = [:]
        var counts: [QuantityType: Int] = [:]
        var cycled = 0.0, ran = 0.0
        for (time, identity, event) in simulation.advance(to: 3600) {
            let wall = t0 + Millis(time * 1000)
            var ingest = ingests[identity.address] ?? DeviceIngest(device: Device(id: identity.address, address: identity.address, name: identity.name))
            switch event {
            case let .notification(characteristic, value), let .read(characteristic, value):
                let out = ingest.ingest(characteristic, value, wall: wall, monotonic: time)
                #expect(out.rejected == nil)
                for s in out.samples {
                    counts[s.type, default: 0] += 1
                    if s.type == .cyclingDistance { cycled += s.value }
                    if s.type == .runningDistance { ran += s.value }
                    #expect(s.end >= s.start)
                }
            case .connected: ingest.linkRestarted()
            case .disconnected: break
            }
            ingests[identity.address] = ingest
        }
        #expect((counts[.heartRate] ?? 0) > 3000 && (counts[.heartbeatSeries] ?? 0) > 3000)
        #expect((counts[.cyclingSpeed] ?? 0) > 2500 && (counts[.runningSpeed] ?? 0) > 3000)
        #expect(cycled > 10_000 && ran > 5_000)
        #expect(ingests.values.allSatisfy { $0.device.manufacturer == "strapd simulator" })
    }
}
