import StrapModel

/// Energy expenditure from heart rate, Keytel et al. 2005 ("Prediction of energy expenditure
/// from heart rate monitoring during submaximal exercise", J Sports Sci 23(3):289–297).
/// The published formulas give kJ/min from HR (bpm), weight W (kg), age A (years) and
/// optionally VO2max (ml/kg/min); each is linear in HR, so it is kept as
/// `kJ/min = constant + perBPM × HR`, fixed for the session at its start.
public struct KeytelEnergy: Sendable, Hashable {
    public enum Variant: String, Sendable, Codable { case keytel, keytelVO2max }

    public let variant: Variant
    /// kJ/min at HR 0 (the weight, age and VO2max terms).
    public let constant: Double
    /// kJ/min per bpm.
    public let perBPM: Double

    public static let kilojoulesPerKilocalorie = 4.184

    /// The formula for this profile on `date` (age in completed years), or `noData` naming the
    /// profile fields it lacks. The VO2max variant is used when VO2max is set.
    public init(profile: AthleteProfile?, on date: CalendarDate) throws(StrapError) {
        let p = profile ?? AthleteProfile()
        let missing = [ProfileField.biologicalSex, .weight, .dateOfBirth].filter { !p.isSet($0) }
        guard missing.isEmpty, let sex = p.biologicalSex, let w = p.weight, let dob = p.dateOfBirth else {
            throw .noData("the Keytel estimate needs " + missing.map(\.rawValue).joined(separator: ", ")
                + " in the profile")
        }
        guard sex != .other else {
            throw .noData("the Keytel estimate has coefficients for biologicalSex male and female only")
        }
        let a = Double(dob.age(on: date))
        switch (sex, p.vo2Max) {
        case (.male, nil):
            self.init(.keytel, constant: -55.0969 + 0.1988 * w + 0.2017 * a, perBPM: 0.6309)
        case (.female, nil):
            self.init(.keytel, constant: -20.4022 - 0.1263 * w + 0.074 * a, perBPM: 0.4472)
        case let (.male, v?):
            // gender = 1: −59.3954 + (−36.3781 + 0.271 A + 0.394 W + 0.404 VO2max + 0.634 HR)
            self.init(.keytelVO2max, constant: -59.3954 - 36.3781 + 0.271 * a + 0.394 * w + 0.404 * v, perBPM: 0.634)
        case let (.female, v?):
            // gender = 0: −59.3954 + 0.274 A + 0.103 W + 0.380 VO2max + 0.450 HR
            self.init(.keytelVO2max, constant: -59.3954 + 0.274 * a + 0.103 * w + 0.380 * v, perBPM: 0.450)
        case (.other, _):
            throw .noData("the Keytel estimate has coefficients for biologicalSex male and female only")
        }
    }

    init(_ variant: Variant, constant: Double, perBPM: Double) {
        self.variant = variant; self.constant = constant; self.perBPM = perBPM
    }

    /// kcal/min at `bpm`, clamped at 0: the regression was fitted on exercise and turns
    /// negative at low heart rates, where it means nothing.
    @inline(__always)
    public func kilocaloriesPerMinute(heartRate bpm: Double) -> Double {
        max(0, constant + perBPM * bpm) / Self.kilojoulesPerKilocalorie
    }
}
