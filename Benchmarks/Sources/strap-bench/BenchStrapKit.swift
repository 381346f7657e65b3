import Foundation
import StrapKit

/// The synchronous sections talk to strapd through StrapKit, as strapctl and strapd-web do (the
/// project has one client of the socket): a `StrapStore` connected at once, so a missing daemon
/// fails the section where the old code failed, and its async calls bridged with
/// `ClientBench.blocking`.
extension StrapStore {
    /// A store on `socket`, connected now.
    static func connected(_ socket: String) throws -> StrapStore {
        let store = StrapStore(socket: socket)
        try store.connect()
        return store
    }

    /// `request(op, params)` from synchronous code.
    func requestNow(_ op: String, _ params: JSONObject = [:]) throws -> JSONObject {
        try ClientBench.blocking { [self] in try await self.request(op, params) }
    }
}

/// Reading the members of a reply's `result` (StrapKit's own readers of these are internal).
extension JSONObject {
    func int(_ key: String) -> Int? {
        switch self[key] {
        case .int(let i)?: Int(i)
        case .double(let d)? where d == d.rounded(): Int(d)
        default: nil
        }
    }

    func double(_ key: String) -> Double? {
        switch self[key] {
        case .int(let i)?: Double(i)
        case .double(let d)?: d
        default: nil
        }
    }

    func string(_ key: String) -> String? { if case .string(let s)? = self[key] { s } else { nil } }

    func object(_ key: String) -> JSONObject? { if case .object(let o)? = self[key] { o } else { nil } }

    /// The members of an array of objects (others left out).
    func objects(_ key: String) -> [JSONObject]? {
        guard case .array(let items)? = self[key] else { return nil }
        return items.compactMap { if case .object(let o) = $0 { o } else { nil } }
    }
}
