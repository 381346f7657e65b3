import FoundationEssentials
import StrapIngest
import StrapModel
import StrapWire

/// `profile.get` / `profile.set` (docs/protocol.md "Profile"). Reading an unset characteristic
/// is `noData`; the maximum heart rate alone may be estimated, and then says so.
extension RequestRouter {
    /// `profile.get {"athlete", "field"}` → `{"athlete", "profile": {set fields}, "maximumHeartRate"}`,
    /// or with `field` just `{"athlete", "<field>": value}`.
    func profileGet(_ request: Request, _ session: ClientSession) throws(WireError) {
        let params = try Params(request, allowed: ["athlete", "field"])
        let athlete = try params.string("athlete") ?? WorkoutConfiguration.defaultAthlete
        let fieldName = try params.string("field")
        let field: ProfileField?
        if let fieldName {
            guard let f = ProfileField(rawValue: fieldName) else {
                throw .bad("unknown profile field \"\(fieldName)\"; fields are \(ProfileField.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            field = f
        } else { field = nil }
        let book = try workouts.profiles
        let today = CalendarDate(utcMillis: ReceiveTime.now().wall)
        answer(request, session) { () throws(StrapError) in
            guard let profile = book.profile(athlete) else { throw .noData("no profile for athlete \"\(athlete)\"") }
            let maximum = try? profile.maximumHeartRate(on: today)
            let prefix = "{\"athlete\":" + (try Self.json(athlete))
            guard let field else {
                var out = prefix + ",\"profile\":" + (try Self.json(profile))
                if let maximum { out += ",\"maximumHeartRate\":" + (try Self.json(maximum)) }
                if let age = try? profile.age(on: today) { out += ",\"age\":\(age)" }
                return out + "}"
            }
            if field == .maximumHeartRate {
                return prefix + ",\"maximumHeartRate\":" + (try Self.json(try profile.maximumHeartRate(on: today))) + "}"
            }
            try profile.require(field)
            // The one field, as the whole profile encodes it.
            let whole = try Self.json(profile)
            guard let value = try? JSONParser.parse(Array(whole.utf8)), case .object(let o) = value, let v = o[field.rawValue] else {
                throw .noData("\(field.rawValue) is not set in the profile")
            }
            return prefix + ",\"\(field.rawValue)\":" + String(decoding: JSONWriter.bytes(v), as: UTF8.self) + "}"
        }
    }

    /// `profile.set {"athlete", "profile": {fields to change; null clears}}` → the whole profile.
    func profileSet(_ request: Request, _ session: ClientSession) throws(WireError) {
        let params = try Params(request, allowed: ["athlete", "profile"])
        let athlete = try params.string("athlete") ?? WorkoutConfiguration.defaultAthlete
        do throws(StrapError) { try WorkoutConfiguration(activityType: .other, athlete: athlete).validate() } catch { throw WireError(error) }
        guard let value = params.object["profile"], case .object = value else { throw .bad("\"profile\" must be an object of fields") }
        let patch: AthleteProfilePatch
        do {
            patch = try JSONDecoder().decode(AthleteProfilePatch.self, from: Data(JSONWriter.bytes(value)))
        } catch let e as StrapError {
            throw WireError(e)
        } catch {
            throw .bad("\"profile\": \(error)")
        }
        let book = try workouts.profiles
        let today = CalendarDate(utcMillis: ReceiveTime.now().wall)
        answer(request, session) { () throws(StrapError) in
            let updated = try book.update(athlete, patch, today: today)
            return "{\"athlete\":" + (try Self.json(athlete)) + ",\"profile\":" + (try Self.json(updated)) + "}"
        }
    }
}
