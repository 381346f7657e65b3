import Foundation
import StrapModel
import Testing
@testable import StrapDaemon

/// profiles.json: survives a restart, a damaged one is kept aside (never overwritten) and the
/// daemon goes on without profiles; a failed write changes nothing.
@Suite struct ProfileBookTests {
    let today = CalendarDate(year: 2026, month: 12, day: 1)!

    func book(_ dir: String, persist: @escaping ProfileBook.Persist = DaemonFiles.replace) throws -> ProfileBook {
        try ProfileBook(directory: dir, today: today, load: DaemonFiles.read, persist: persist, quarantine: DaemonFiles.quarantine)
    }

    func patch(_ json: String) throws -> AthleteProfilePatch {
        try JSONDecoder().decode(AthleteProfilePatch.self, from: Data(json.utf8))
    }

    @Test func profilesSurviveARestart() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try book(dir).update("ana", try patch(#"{"weight":61.5,"dateOfBirth":"1994-03-02"}"#), today: today)
        let again = try book(dir)
        #expect(again.loadProblem == nil)
        #expect(again.profile("ana")?.weight == 61.5)
        #expect(again.profile("ana")?.dateOfBirth == CalendarDate(year: 1994, month: 3, day: 2))
        #expect(again.athletes == ["ana"])
    }

    @Test func aDamagedFileIsKeptAsideAndTheDaemonGoesOn() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let garbage = Data(#"{"version":1,"profiles":{"ana":{"weight":"heavy"}"#.utf8)
        try garbage.write(to: URL(fileURLWithPath: dir + "/profiles.json"))
        let b = try book(dir)
        #expect(b.loadProblem?.contains("profiles.json.corrupt") == true)
        #expect(b.profile("ana") == nil)
        #expect(FileManager.default.contents(atPath: dir + "/profiles.json.corrupt") == garbage)
        #expect(!FileManager.default.fileExists(atPath: dir + "/profiles.json"))
        // A profile out of range on disk (edited by hand) is damage too.
        try Data(#"{"version":1,"profiles":{"bo":{"weight":0}}}"#.utf8).write(to: URL(fileURLWithPath: dir + "/profiles.json"))
        #expect(try book(dir).loadProblem?.contains("weight") == true)
    }

    @Test func aFailedWriteChangesNothing() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let b = try book(dir) { _, _ throws(StrapError) in throw StrapError.unavailable("disk full") }
        #expect(throws: StrapError.unavailable("disk full")) {
            try b.update("ana", try patch(#"{"weight":61.5}"#), today: today)
        }
        #expect(b.profile("ana") == nil)
    }
}
