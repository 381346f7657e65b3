import FoundationEssentials

/// One field of a partial update: left out (keep), `null` (clear) or a value (set).
public enum ProfileUpdate<Value: Sendable & Hashable>: Sendable, Hashable {
    case keep
    case clear
    case set(Value)

    func apply(to field: inout Value?) {
        switch self {
        case .keep: break
        case .clear: field = nil
        case .set(let v): field = v
        }
    }
}

/// `profile.set`'s argument: only the fields named change; `null` clears one. Under
/// `devices`, each address maps to that sensor's whole settings, or `null` to forget them
/// (`"devices": null` forgets all).
/// Unknown field names are refused (a misspelt field must not be silently ignored).
/// `AthleteProfile.applying(_:today:)` validates the merged result.
public struct AthleteProfilePatch: Sendable, Hashable, Decodable {
    public var dateOfBirth: ProfileUpdate<CalendarDate> = .keep
    public var biologicalSex: ProfileUpdate<BiologicalSex> = .keep
    public var weight: ProfileUpdate<Double> = .keep
    public var height: ProfileUpdate<Double> = .keep
    public var restingHeartRate: ProfileUpdate<Double> = .keep
    public var maximumHeartRate: ProfileUpdate<Double> = .keep
    public var lactateThresholdHeartRate: ProfileUpdate<Double> = .keep
    public var vo2Max: ProfileUpdate<Double> = .keep
    public var heartRateZones: ProfileUpdate<HeartRateZoneScheme> = .keep
    public var functionalThresholdPower: ProfileUpdate<Double> = .keep
    public var devices: [String: DeviceSettings?] = [:]
    /// `"devices": null`: forget every sensor's settings (before `devices` entries apply).
    public var clearsAllDevices = false

    public init() {}

    struct AnyKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: AnyKey.self)
        func update<T: Decodable & Sendable & Hashable>(_ field: ProfileField, _: T.Type) throws -> ProfileUpdate<T> {
            let key = AnyKey(stringValue: field.rawValue)
            guard c.contains(key) else { return .keep }
            if try c.decodeNil(forKey: key) { return .clear }
            do {
                return .set(try c.decode(T.self, forKey: key))
            } catch let e as StrapError {
                throw e
            } catch {
                throw StrapError.invalidOption("\(field.rawValue): not a valid value")
            }
        }
        for key in c.allKeys where ProfileField(rawValue: key.stringValue) == nil {
            throw StrapError.invalidOption("unknown profile field '\(key.stringValue)'; fields are "
                + ProfileField.allCases.map(\.rawValue).joined(separator: ", "))
        }
        dateOfBirth = try update(.dateOfBirth, CalendarDate.self)
        biologicalSex = try update(.biologicalSex, BiologicalSex.self)
        weight = try update(.weight, Double.self)
        height = try update(.height, Double.self)
        restingHeartRate = try update(.restingHeartRate, Double.self)
        maximumHeartRate = try update(.maximumHeartRate, Double.self)
        lactateThresholdHeartRate = try update(.lactateThresholdHeartRate, Double.self)
        vo2Max = try update(.vo2Max, Double.self)
        heartRateZones = try update(.heartRateZones, HeartRateZoneScheme.self)
        functionalThresholdPower = try update(.functionalThresholdPower, Double.self)
        let devicesKey = AnyKey(stringValue: ProfileField.devices.rawValue)
        if c.contains(devicesKey), try c.decodeNil(forKey: devicesKey) {
            clearsAllDevices = true
        } else if c.contains(devicesKey) {
            do {
                devices = try c.decode([String: DeviceSettings?].self, forKey: devicesKey)
            } catch let e as StrapError {
                throw e
            } catch {
                throw StrapError.invalidOption("devices: an object of address → {wheelCircumference, cadenceIsStepsPerMinute} or null")
            }
        }
    }
}
