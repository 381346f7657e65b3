import Foundation
import Testing
import StrapModel

@Suite struct PredicateTests {
    let dev = Device(id: "d1", address: "AA", name: "H10", manufacturer: "Polar", model: "H10")
    func s(_ start: Millis, _ end: Millis, _ v: Double = 70, type: QuantityType = .heartRate) -> Sample {
        Sample(type: type, value: v, start: start, end: end, device: dev)
    }

    @Test func timeRangeOptions() {
        let overlap = SamplePredicate.time(from: 100, to: 200, options: [])
        let strictStart = SamplePredicate.time(from: 100, to: 200, options: .strictStartDate)
        let strictEnd = SamplePredicate.time(from: 100, to: 200, options: .strictEndDate)
        let both = SamplePredicate.time(from: 100, to: 200, options: [.strictStartDate, .strictEndDate])
        // Starts before, ends inside.
        #expect(overlap.matches(s(50, 150)) && !strictStart.matches(s(50, 150)) && strictEnd.matches(s(50, 150)))
        // Starts inside, ends after.
        #expect(overlap.matches(s(150, 250)) && strictStart.matches(s(150, 250)) && !strictEnd.matches(s(150, 250)))
        #expect(both.matches(s(120, 180)) && !both.matches(s(120, 220)))
        // Half-open: touching the end is outside; touching the start of an instant is inside.
        #expect(!overlap.matches(s(200, 300)) && overlap.matches(s(100, 100)) && !overlap.matches(s(50, 100)))
    }

    @Test func compoundPredicates() {
        let p = SamplePredicate.and([.types([.heartRate]), .or([.device(.name, "H10"), .device(.id, "x")]),
                                     .not(.value(min: 180, max: nil))])
        #expect(p.matches(s(0, 0, 120)))
        #expect(!p.matches(s(0, 0, 190)))
        #expect(!p.matches(s(0, 0, 120, type: .cyclingCadence)))
        #expect(SamplePredicate.device(.manufacturer, "Polar").matches(s(0, 0)))
        #expect(!SamplePredicate.device(.model, "H9").matches(s(0, 0)))
        #expect(p.typeBounds == [.heartRate])
        #expect(SamplePredicate.and([.time(from: 10, to: 50, options: []), .time(from: 20, to: 90, options: [])]).timeBounds == (20, 50))
    }

    /// `{"reading": true}`: the heart rates every workout figure counts (not 0, not noReading,
    /// not without skin contact); other types pass.
    @Test func readingsOnly() throws {
        var offChest = s(0, 0, 88)
        offChest.metadata = ["contact": "notDetected"]
        #expect(SamplePredicate.reading.matches(s(0, 0, 120)))
        #expect(!SamplePredicate.reading.matches(offChest))
        #expect(!SamplePredicate.reading.matches(s(0, 0, 0)))
        #expect(SamplePredicate.reading.matches(s(0, 0, 0, type: .cyclingCadence)))
        let data = try JSONEncoder().encode(SamplePredicate.and([.reading, .types([.heartRate])]))
        #expect(String(decoding: data, as: UTF8.self).contains(#"{"reading":true}"#))
        #expect(try JSONDecoder().decode(SamplePredicate.self, from: data) == .and([.reading, .types([.heartRate])]))
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(SamplePredicate.self, from: Data(#"{"reading":false}"#.utf8)) }
    }

    @Test func predicateJSONRoundTrip() throws {
        let p = SamplePredicate.and([.time(from: 1_767_225_600_000, to: 1_767_225_660_500, options: .strictStartDate),
                                     .types([.heartRate, .cyclingSpeed]), .device(.name, "H10"),
                                     .value(min: 40, max: nil), .not(.workout(UUID()))])
        let data = try JSONEncoder().encode(p)
        #expect(try JSONDecoder().decode(SamplePredicate.self, from: data) == p)
        let json = #"{"and":[{"time":{"from":"2026-01-01T00:00:00.000Z","to":"2026-01-01T00:01:00.500Z","strictEndDate":true}},{"types":["heartRate"]}]}"#
        let decoded = try JSONDecoder().decode(SamplePredicate.self, from: Data(json.utf8))
        #expect(decoded == .and([.time(from: 1_767_225_600_000, to: 1_767_225_660_500, options: .strictEndDate), .types([.heartRate])]))
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(SamplePredicate.self, from: Data(#"{"device":{"colour":"red"}}"#.utf8)) }
    }

    @Test func sampleJSONShape() throws {
        var sample = Sample(type: .heartRate, value: 72, start: 1_767_225_600_123, end: 1_767_225_601_000, device: dev,
                            metadata: ["k": "v"], anchor: 42)
        sample.uuid = UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!
        let obj = try JSONSerialization.jsonObject(with: JSONEncoder().encode(sample)) as! [String: Any]
        #expect(obj["start"] as? String == "2026-01-01T00:00:00.123Z")
        #expect(obj["end"] as? String == "2026-01-01T00:00:01.000Z")
        #expect(obj["unit"] as? String == "count/min")
        #expect(obj["anchor"] as? Int == 42)
        #expect(obj["value"] as? Double == 72)
        #expect((obj["device"] as? [String: Any])?["name"] as? String == "H10")
        let back = try JSONDecoder().decode(Sample.self, from: JSONEncoder().encode(sample))
        #expect(back == sample)
        let series = Sample(type: .heartbeatSeries, value: 2, start: 0, device: dev, beats: [0.8, 1.6])
        let sobj = try JSONSerialization.jsonObject(with: JSONEncoder().encode(series)) as! [String: Any]
        #expect(sobj["beats"] as? [Double] == [0.8, 1.6] && sobj["value"] == nil)
    }

    @Test func statisticsOptionsValidation() {
        #expect(throws: StrapError.self) { try StatisticsOptions.sum.validate(for: .heartRate) }
        #expect(throws: StrapError.self) { try StatisticsOptions.mostRecent.validate(for: .activeEnergy) }
        #expect(throws: StrapError.self) { try StatisticsOptions.separateBySource.validate(for: .heartRate) }
        #expect(throws: Never.self) { try StatisticsOptions([.average, .separateBySource]).validate(for: .heartRate) }
        #expect(throws: Never.self) { try StatisticsOptions.sum.validate(for: .cyclingDistance) }
    }

    @Test func quantityCodesAreStable() {
        #expect(Set(QuantityType.allCases.map(\.code)).count == QuantityType.allCases.count)
        for t in QuantityType.allCases { #expect(QuantityType(code: t.code) == t) }
        #expect(QuantityType.heartRate.code == 1 && QuantityType.sensorContact.code == 13)
    }
}

@Suite struct WorkoutCodingTests {
    @Test func workoutJSONUsesRFC3339AndRoundTrips() throws {
        var w = Workout(activityType: "cycling", locationType: .indoor, start: 1_767_225_600_000, end: 1_767_229_200_250,
                        deviceIDs: ["d1"], events: [.init(kind: "lap", time: 1_767_227_000_000, metadata: ["n": "1"])],
                        laps: [.init(start: 1_767_225_600_000, end: 1_767_227_000_000, summary: ["distance": 1000])],
                        summary: ["kcal": 321.5])
        w.anchor = 9
        let obj = try JSONSerialization.jsonObject(with: JSONEncoder().encode(w)) as! [String: Any]
        #expect(obj["type"] as? String == "workout")
        #expect(obj["end"] as? String == "2026-01-01T01:00:00.250Z")
        #expect(((obj["events"] as? [[String: Any]])?.first?["time"]) as? String == "2026-01-01T00:23:20.000Z")
        #expect(try JSONDecoder().decode(Workout.self, from: JSONEncoder().encode(w)) == w)
        let stored = try JSONDecoder().decode(StoredObject.self, from: JSONEncoder().encode(StoredObject.workout(w)))
        #expect(stored == .workout(w))
    }
}

@Suite struct StatisticsCodingTests {
    @Test func statisticsJSONHasNullsForEmptyAndRoundTrips() throws {
        var a = Aggregate()
        a.add(70, start: 1_767_225_601_000, anchor: 3)
        a.add(90, start: 1_767_225_602_000, anchor: 4)
        var st = Statistics(type: .heartRate, start: 1_767_225_600_000, end: 1_767_229_200_000, aggregate: a,
                            options: [.average, .maximum, .mostRecent])
        st.bySource = ["d1": Statistics(type: .heartRate, start: 1_767_225_600_000, end: 1_767_229_200_000,
                                        aggregate: Aggregate(), options: .average)]
        let data = try JSONEncoder().encode(st)
        let obj = try JSONSerialization.jsonObject(with: data) as! [String: Any]
        #expect(obj["start"] as? String == "2026-01-01T00:00:00.000Z")
        #expect(obj["average"] as? Double == 80 && obj["maximum"] as? Double == 90 && obj["mostRecent"] as? Double == 90)
        #expect(obj["minimum"] is NSNull && obj["sum"] is NSNull)
        #expect(try JSONDecoder().decode(Statistics.self, from: data) == st)
    }
}
