import CSQLite
import Foundation
import StrapModel

/// The benchmark's peer (docs/product.md §8): SQLite in WAL mode, synchronous=NORMAL, 1000-row
/// transactions, the anchor as INTEGER PRIMARY KEY (its index) and an index on (type, start).
/// Devices are normalised into their own table, as strapd's streams are, and the UUID is not
/// stored (strapd derives it from the anchor; so does the peer).
final class SQLitePeer {
    let path: String
    private var db: OpaquePointer?

    struct Failure: Error, CustomStringConvertible {
        let message: String
        var description: String { "sqlite: \(message)" }
    }

    init(path: String) throws {
        self.path = path
        guard sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nil) == SQLITE_OK else {
            throw Failure(message: "open \(path)")
        }
        try exec("PRAGMA journal_mode=WAL")
        try exec("PRAGMA synchronous=NORMAL")
        try exec("""
            CREATE TABLE IF NOT EXISTS devices(id INTEGER PRIMARY KEY, stable_id TEXT, address TEXT, name TEXT);
            CREATE TABLE IF NOT EXISTS samples(anchor INTEGER PRIMARY KEY, type INTEGER NOT NULL,
                value REAL NOT NULL, start INTEGER NOT NULL, end INTEGER NOT NULL, device INTEGER NOT NULL);
            CREATE INDEX IF NOT EXISTS samples_type_start ON samples(type, start);
            INSERT OR IGNORE INTO devices VALUES(1, 'bench-strap', '00:11:22:33:44:55', 'Bench H10');
            """)
    }

    deinit { sqlite3_close(db) }

    func exec(_ sql: String) throws {
        var err: UnsafeMutablePointer<CChar>?
        if sqlite3_exec(db, sql, nil, nil, &err) != SQLITE_OK {
            let m = err.map { String(cString: $0) } ?? "?"
            sqlite3_free(err)
            throw Failure(message: m)
        }
    }

    private func prepare(_ sql: String) throws -> OpaquePointer {
        var st: OpaquePointer?
        guard sqlite3_prepare_v2(db, sql, -1, &st, nil) == SQLITE_OK, let st else {
            throw Failure(message: String(cString: sqlite3_errmsg(db)))
        }
        return st
    }

    /// Inserts in transactions of 1000 rows; anchors continue from `firstAnchor`.
    func insert(_ samples: [Sample], firstAnchor: Int64) throws {
        let st = try prepare("INSERT INTO samples VALUES(?,?,?,?,?,1)")
        defer { sqlite3_finalize(st) }
        var i = 0
        while i < samples.count {
            try exec("BEGIN")
            let end = min(samples.count, i + 1000)
            for k in i..<end {
                let s = samples[k]
                sqlite3_bind_int64(st, 1, firstAnchor + Int64(k))
                sqlite3_bind_int(st, 2, Int32(s.type.code))
                sqlite3_bind_double(st, 3, s.value)
                sqlite3_bind_int64(st, 4, s.start)
                sqlite3_bind_int64(st, 5, s.end)
                guard sqlite3_step(st) == SQLITE_DONE else { throw Failure(message: String(cString: sqlite3_errmsg(db))) }
                sqlite3_reset(st)
            }
            try exec("COMMIT")
            i = end
        }
    }

    /// `WHERE anchor > ? ORDER BY anchor LIMIT ?` in pages, building the same Sample values
    /// strapd returns. Returns how many were read.
    func catchUp(total: Int, page: Int, device: Device) throws -> Int {
        let st = try prepare("SELECT anchor, type, value, start, end FROM samples WHERE anchor > ? ORDER BY anchor LIMIT ?")
        defer { sqlite3_finalize(st) }
        var anchor: Int64 = 0, n = 0
        var sink = 0.0
        while n < total {
            sqlite3_bind_int64(st, 1, anchor)
            sqlite3_bind_int64(st, 2, Int64(min(page, total - n)))
            var out: [Sample] = []
            out.reserveCapacity(page)
            while sqlite3_step(st) == SQLITE_ROW {
                let a = sqlite3_column_int64(st, 0)
                let type = QuantityType(code: UInt8(sqlite3_column_int(st, 1))) ?? .heartRate
                // The same inlinable initializer strapd's decoder uses, so both pay the same per object.
                let uuid = UUID(uuid: (0, 0, 0, 0, 0, 0, 0x80, 0, 0x80, 0, 0, 0, 0, 0,
                                       UInt8(truncatingIfNeeded: a >> 8), UInt8(truncatingIfNeeded: a)))
                out.append(Sample(uuid: uuid, anchor: UInt64(a), type: type, value: sqlite3_column_double(st, 2),
                                  start: sqlite3_column_int64(st, 3), end: sqlite3_column_int64(st, 4), device: device))
                anchor = a
            }
            sqlite3_reset(st)
            if out.isEmpty { break }
            n += out.count
            sink += out[0].value
        }
        if sink.isNaN { print("") }
        return n
    }

    /// Hourly average heart rate with GROUP BY over the (type, start) index.
    func hourlyAverage(from: Int64, to: Int64) throws -> [(Int64, Double)] {
        let st = try prepare("""
            SELECT (start - ?1) / 3600000 AS h, avg(value) FROM samples
            WHERE type = 1 AND start >= ?1 AND start < ?2 GROUP BY h ORDER BY h
            """)
        defer { sqlite3_finalize(st) }
        sqlite3_bind_int64(st, 1, from)
        sqlite3_bind_int64(st, 2, to)
        var out: [(Int64, Double)] = []
        while sqlite3_step(st) == SQLITE_ROW { out.append((sqlite3_column_int64(st, 0), sqlite3_column_double(st, 1))) }
        return out
    }

    func checkpoint() throws { try exec("PRAGMA wal_checkpoint(TRUNCATE)") }

    /// Database plus WAL and shared-memory files.
    func bytesOnDisk() -> Int {
        [path, path + "-wal", path + "-shm"].reduce(0) { sum, p in
            sum + ((try? FileManager.default.attributesOfItem(atPath: p)[.size] as? Int) ?? 0)
        }
    }
}
