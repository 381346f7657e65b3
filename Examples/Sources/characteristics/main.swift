// HealthKit's characteristics (`dateOfBirthComponents()`, `biologicalSex()`), which throw
// `errorNoData` when the user never set them: StrapKit throws `noData`, and the program says
// "not set" instead of guessing. Then it sets them through the profile (`profile.set`, an admin
// operation, as the Health app is where a user enters them) and reads them again.
//   characteristics [--socket PATH] [--athlete NAME] [--set YYYY-MM-DD,SEX]
import FoundationEssentials
import StrapKit
import ExampleSupport

lineBufferedOutput()
let options = Options()
let athlete = options.value("athlete") ?? "default"
let store = StrapStore(socket: options.socket)

func show() async throws {
    do {
        let birth = try await store.dateOfBirthComponents(athlete: athlete)
        print("date of birth: \(birth.year ?? 0)-\(birth.month ?? 0)-\(birth.day ?? 0)")
    } catch StrapKitError.noData {
        print("date of birth: not set")
    }
    do {
        print("biological sex: \(try await store.biologicalSex(athlete: athlete).rawValue)")
    } catch StrapKitError.noData {
        print("biological sex: not set")
    }
}

do {
    try await show()
    let set = (options.value("set") ?? "1990-04-01,female").split(separator: ",").map(String.init)
    guard set.count == 2 else { fail("characteristics: --set wants YYYY-MM-DD,SEX") }
    _ = try await store.request("profile.set", ["athlete": .string(athlete),
                                                "profile": .object(["dateOfBirth": .string(set[0]), "biologicalSex": .string(set[1])])])
    print("set date of birth \(set[0]) and biological sex \(set[1])")
    try await show()
} catch {
    fail("characteristics: \(error)")
}
