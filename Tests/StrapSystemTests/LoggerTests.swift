import Glibc
@testable import StrapSystem
import Testing

@Suite struct LoggerTests {
    let entry = JournalEntry(level: .warning, message: "link lost\nretrying", identifier: "strapd",
                             metadata: [LogKey.deviceAddress: "AA:BB:CC:DD:EE:FF", "bad name": "x", "_pid": "1", "message": "m",
                                        LogKey.rssi: "-70"])

    @Test func journalAssignmentsCarryStandardAndValidExtraFields() {
        #expect(entry.assignments == [
            "MESSAGE=link lost\nretrying", "PRIORITY=4", "SYSLOG_IDENTIFIER=strapd",
            "DEVICE_ADDRESS=AA:BB:CC:DD:EE:FF", "RSSI=-70",
        ])
    }

    @Test(arguments: [("DEVICE_ADDRESS", true), ("A1", true), ("_PID", false), ("1A", false), ("lower", false),
                      ("", false), (String(repeating: "A", count: 65), false)])
    func fieldNameRules(name: String, valid: Bool) {
        #expect(JournalEntry.isValidFieldName(name) == valid)
    }

    @Test(arguments: [("device.address", "DEVICE_ADDRESS"), ("rssi", "RSSI"), ("link-phase", "LINK_PHASE"),
                      ("DEVICE_ADDRESS", "DEVICE_ADDRESS"), ("_pid", nil), ("2nd", nil), ("bad name", nil), ("é", nil)])
    func metadataKeysBecomeJournalFieldNames(key: String, field: String?) {
        #expect(JournalEntry.fieldName(forMetadataKey: key) == field)
    }

    @Test func stderrLineIsOneLineWithTimeLevelAndFields() {
        let line = entry.stderrLine(timestampMilliseconds: 1_764_450_000_123)
        #expect(line == "2025-11-29T21:00:00.123Z strapd[warning]: link lost\\nretrying DEVICE_ADDRESS=AA:BB:CC:DD:EE:FF RSSI=-70\n")
    }

    @Test func sinkDetectionFollowsJournalStream() {
        var st = stat()
        #expect(fstat(2, &st) == 0)
        #expect(LogSink.detect(environment: [:]) == .stderr)
        #expect(LogSink.detect(environment: ["JOURNAL_STREAM": "0:0"]) == .stderr)
        #expect(LogSink.detect(environment: ["JOURNAL_STREAM": "\(st.st_dev):\(st.st_ino)"]) == .journal)
    }

    @Test func levelsParseCompareAndFilter() {
        #expect(LogLevel(name: "Debug") == .debug)
        #expect(LogLevel(name: "verbose") == nil)
        #expect(LogLevel.error < .info)
        let logger = Logger(level: .notice, sink: .stderr)
        #expect(logger.isEnabled(.warning) && logger.isEnabled(.notice) && !logger.isEnabled(.info))
        logger.minimumLevel = .debug
        #expect(logger.isEnabled(.debug))
    }
}
