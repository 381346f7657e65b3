import Foundation
import StrapKit
import Testing

/// Characteristics read from the athlete profile: `noData` when unset, the values once set.
@Suite(.timeLimit(.minutes(3))) struct CharacteristicsTests {
    @Test func unsetCharacteristicsAreNoDataAndSetOnesAreRead() async throws {
        let h = try DaemonHarness()
        defer { h.close() }
        let store = StrapStore(socket: h.socketPath)
        defer { store.close() }
        func isNoData(_ body: () async throws -> Void) async -> Bool {
            do { try await body(); return false } catch { return (error as? StrapKitError)?.code == .noData }
        }
        // No profile at all.
        #expect(await isNoData { _ = try await store.dateOfBirthComponents() })
        #expect(await isNoData { _ = try await store.biologicalSex() })
        #expect(await isNoData { _ = try await store.maximumHeartRate() })

        _ = try await store.request("profile.set", ["athlete": .string("default"),
                                                    "profile": .object(["weight": .double(61.5)])])
        // A profile without those fields: still noData, never a default.
        #expect(await isNoData { _ = try await store.dateOfBirthComponents() })
        #expect(await isNoData { _ = try await store.biologicalSex() })
        #expect(try await store.bodyMass() == 61.5)
        #expect(await isNoData { _ = try await store.height() })
        #expect(await isNoData { _ = try await store.cyclingFunctionalThresholdPower() })
        _ = try await store.request("profile.set", ["athlete": .string("default"),
                                                    "profile": .object(["functionalThresholdPower": .int(265)])])
        #expect(try await store.cyclingFunctionalThresholdPower() == 265)

        _ = try await store.request("profile.set", ["athlete": .string("default"),
                                                    "profile": .object(["dateOfBirth": .string("1994-03-02"),
                                                                        "biologicalSex": .string("female")])])
        let birth = try await store.dateOfBirthComponents()
        #expect(birth.year == 1994 && birth.month == 3 && birth.day == 2)
        #expect(try await store.biologicalSex() == .female)
        // The maximum heart rate is estimated from the date of birth, and says so.
        let maximum = try await store.maximumHeartRate()
        #expect(maximum.estimated)
        #expect(maximum.value > 100)
        // Another athlete has nothing.
        #expect(await isNoData { _ = try await store.biologicalSex(athlete: "ana") })
    }
}
