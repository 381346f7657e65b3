import Testing
import Foundation
import StrapModel
@testable import StrapWorkout

/// The athlete profile: unset is noData, validation names the field, patches change all or nothing.
@Suite struct ProfileTests {
    static let today = CalendarDate(year: 2026, month: 1, day: 1)!

    func patch(_ json: String) throws -> AthleteProfilePatch {
        try JSONDecoder().decode(AthleteProfilePatch.self, from: Data(json.utf8))
    }

    @Test func unsetIsNoDataNeverADefault() {
        let p = AthleteProfile()
        #expect(throws: StrapError.noData("weight is not set in the profile")) { try p.require(.weight) }
        #expect(throws: StrapError.noData("dateOfBirth is not set in the profile")) { try p.age(on: Self.today) }
        #expect(throws: StrapError.noData("maximumHeartRate is not set and dateOfBirth, needed to estimate it, is not set either")) {
            try p.maximumHeartRate(on: Self.today)
        }
        #expect((try? JSONEncoder().encode(p)).map { String(decoding: $0, as: UTF8.self) } == "{}")
    }

    @Test func maximumHeartRateSetOrEstimated() throws {
        var p = AthleteProfile(dateOfBirth: CalendarDate(year: 1986, month: 1, day: 2))
        // 39 on 2026-01-01 (birthday tomorrow): 208 − 0.7 × 39 = 180.7
        let est = try p.maximumHeartRate(on: Self.today)
        #expect(est.estimated && est.formula == "tanaka2001" && est.value.isClose(to: 180.7))
        p.maximumHeartRate = 188
        #expect(try p.maximumHeartRate(on: Self.today) == MaximumHeartRate(value: 188, estimated: false))
    }

    @Test func ageAndCalendarDates() {
        let leap = CalendarDate(year: 2004, month: 2, day: 29)!
        #expect(leap.age(on: CalendarDate(year: 2025, month: 2, day: 28)!) == 20)
        #expect(leap.age(on: CalendarDate(year: 2025, month: 3, day: 1)!) == 21)
        #expect(CalendarDate(parsing: "2023-02-29") == nil)
        #expect(CalendarDate(parsing: "1990-13-01") == nil)
        #expect(CalendarDate(parsing: "1990-1-01") == nil)
        #expect(CalendarDate(parsing: "2000-02-29")?.description == "2000-02-29")
        #expect(CalendarDate(utcMillis: W.t0) == Self.today)
        #expect(CalendarDate(utcMillis: W.t0 - 1) == CalendarDate(year: 2025, month: 12, day: 31))
        #expect(CalendarDate(utcMillis: 0) == CalendarDate(year: 1970, month: 1, day: 1))
        #expect(CalendarDate(utcMillis: -86_400_000) == CalendarDate(year: 1969, month: 12, day: 31))
        #expect(CalendarDate(utcMillis: 951_782_400_000) == CalendarDate(year: 2000, month: 2, day: 29))
    }

    /// Each invalid value, the error that names it, and the profile unchanged.
    @Test(arguments: [
        (#"{"weight": 0}"#, "weight must be from 10 to 400 kg, got 0"),
        (#"{"weight": 512.5}"#, "weight must be from 10 to 400 kg, got 512.5"),
        (#"{"height": 20}"#, "height must be from 50 to 280 cm, got 20"),
        (#"{"dateOfBirth": "2030-05-01"}"#, "dateOfBirth 2030-05-01 is in the future (today is 2026-01-01)"),
        (#"{"dateOfBirth": "1850-05-01"}"#, "dateOfBirth 1850-05-01 gives an age over 120 years"),
        (#"{"restingHeartRate": 100, "maximumHeartRate": 95}"#, "maximumHeartRate 95 must be above restingHeartRate 100"),
        (#"{"maximumHeartRate": 45}"#, "maximumHeartRate must be from 60 to 250 bpm, got 45"),
        (#"{"lactateThresholdHeartRate": 195}"#, "lactateThresholdHeartRate 195 must be below maximumHeartRate 190"),
        (#"{"lactateThresholdHeartRate": 50}"#, "lactateThresholdHeartRate 50 must be above restingHeartRate 50"),
        (#"{"vo2Max": 150}"#, "vo2Max must be from 10 to 100 ml/kg/min, got 150"),
        (#"{"heartRateZones": {"method": "percentMaxHR", "bounds": [50, 60, 70, 80, 90]}}"#,
         "heartRateZones.bounds: 5 zones need 6 bounds, got 5"),
        (#"{"heartRateZones": {"method": "percentMaxHR", "bounds": [50, 60, 60, 80, 90, 100]}}"#,
         "heartRateZones.bounds must ascend: 60 then 60"),
        (#"{"devices": {"D1:00:00:00:00:03": {"wheelCircumference": 21.05}}}"#,
         "devices[D1:00:00:00:00:03].wheelCircumference must be from 0.1 to 5 m, got 21.05"),
        (#"{"functionalThresholdPower": 25}"#, "functionalThresholdPower must be from 30 to 2000 W, got 25"),
        (#"{"functionalThresholdPower": 2500}"#, "functionalThresholdPower must be from 30 to 2000 W, got 2500"),
    ])
    func invalidValuesAreRefusedNamingTheField(json: String, message: String) throws {
        let original = W.male35
        do {
            _ = try original.applying(try patch(json), today: Self.today)
            Issue.record("\(json) must be refused")
        } catch let e as StrapError {
            #expect(e == .invalidOption(message))
        }
        #expect(original == W.male35)
    }

    @Test func malformedPatchesAreRefused() {
        #expect(throws: StrapError.invalidOption("unknown profile field 'wieght'; fields are dateOfBirth, biologicalSex, weight, "
            + "height, restingHeartRate, maximumHeartRate, lactateThresholdHeartRate, vo2Max, heartRateZones, devices, "
            + "functionalThresholdPower")) {
            try patch(#"{"wieght": 70}"#)
        }
        #expect(throws: StrapError.invalidOption("biologicalSex: 'unknown' is not one of female, male, other")) {
            try patch(#"{"biologicalSex": "unknown"}"#)
        }
        #expect(throws: StrapError.invalidOption("dateOfBirth: '1990-02-30' is not a calendar date (YYYY-MM-DD)")) {
            try patch(#"{"dateOfBirth": "1990-02-30"}"#)
        }
        #expect(throws: StrapError.invalidOption("weight: not a valid value")) { try patch(#"{"weight": "heavy"}"#) }
        #expect(throws: StrapError.invalidOption("heartRateZones.method: 'zones7' is not one of percentMaxHR, heartRateReserve, percentLTHR")) {
            try patch(#"{"heartRateZones": {"method": "zones7"}}"#)
        }
    }

    @Test func patchSetsClearsAndKeeps() throws {
        let p = try W.male35.applying(try patch(#"""
            {"weight": 78.5, "height": null, "vo2Max": 52,
             "heartRateZones": {"method": "heartRateReserve"},
             "devices": {"D1:00:00:00:00:03": {"wheelCircumference": 2.096, "cadenceIsStepsPerMinute": false}}}
            """#), today: Self.today)
        #expect(p.weight == 78.5)
        #expect(p.height == nil)
        #expect(p.vo2Max == 52)
        #expect(p.restingHeartRate == 50, "not named: kept")
        #expect(p.heartRateZones == HeartRateZoneScheme(method: .heartRateReserve, bounds: [50, 60, 70, 80, 90, 100]))
        #expect(p.devices["D1:00:00:00:00:03"]?.wheelCircumference == 2.096)
        let q = try p.applying(try patch(#"{"devices": {"D1:00:00:00:00:03": null}, "heartRateZones": null}"#), today: Self.today)
        #expect(q.devices.isEmpty && q.heartRateZones == nil)
        let r = try p.applying(try patch(#"{"devices": null}"#), today: Self.today)
        #expect(r.devices.isEmpty)
        // Round trip through JSON.
        let back = try JSONDecoder().decode(AthleteProfile.self, from: JSONEncoder().encode(p))
        #expect(back == p)
    }

    @Test func mergedResultIsWhatIsValidated() throws {
        // Each change alone is fine; together they put the maximum below the resting rate.
        let lower = try W.male35.applying(try patch(#"{"maximumHeartRate": 90}"#), today: Self.today)
        let higher = try W.male35.applying(try patch(#"{"restingHeartRate": 100}"#), today: Self.today)
        #expect(lower.maximumHeartRate == 90 && higher.restingHeartRate == 100)
        #expect(throws: StrapError.invalidOption("maximumHeartRate 90 must be above restingHeartRate 100")) {
            try W.male35.applying(try patch(#"{"restingHeartRate": 100, "maximumHeartRate": 90}"#), today: Self.today)
        }
        // And against what is already there: a new resting rate above the stored maximum.
        #expect(throws: StrapError.invalidOption("maximumHeartRate 90 must be above restingHeartRate 100")) {
            try lower.applying(try patch(#"{"restingHeartRate": 100}"#), today: Self.today)
        }
    }

    @Test func functionalThresholdPowerGivesCogganZonesAndIsNoDataUnset() throws {
        #expect(throws: StrapError.noData("functionalThresholdPower is not set in the profile")) { try W.male35.powerZones() }
        let p = try W.male35.applying(try patch(#"{"functionalThresholdPower": 250}"#), today: Self.today)
        let zones = try p.powerZones()
        #expect(zones.upperBounds == [137.5, 187.5, 225, 262.5, 300, 375])
        #expect(zones.zone(of: 225) == 3 && zones.zone(of: 225.5) == 4 && zones.zone(of: 400) == 7)
        #expect(String(decoding: try JSONEncoder().encode(AthleteProfile(functionalThresholdPower: 250)), as: UTF8.self)
                == #"{"functionalThresholdPower":250}"#)
        let cleared = try p.applying(try patch(#"{"functionalThresholdPower": null}"#), today: Self.today)
        #expect(cleared.functionalThresholdPower == nil && cleared.weight == p.weight)
    }

    /// The saved workout carries the FTP in force at its start: its power figures and every
    /// later export use that one, not one set since.
    @Test func theWorkoutKeepsTheFTPOfItsStart() throws {
        let f = EngineFixture()
        var withFTP = W.male35
        withFTP.functionalThresholdPower = 260
        f.profiles = ["default": withFTP]
        let id = try f.engine.start(WorkoutConfiguration(activityType: .cycling, deviceIDs: [W.strap.id]), connectedDevices: []).id
        withFTP.functionalThresholdPower = 300
        f.profiles = ["default": withFTP]
        f.clock.now = W.t0 + 60_000
        #expect(try f.engine.end(id).summary["functionalThresholdPower"] == 260)
        f.profiles = ["default": W.male35]
        let other = try f.engine.start(WorkoutConfiguration(activityType: .cycling, deviceIDs: [W.strap.id]), connectedDevices: []).id
        f.clock.now += 60_000
        #expect(try f.engine.end(other).summary["functionalThresholdPower"] == nil)
    }
}
