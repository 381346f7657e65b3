import FoundationEssentials
import StrapModel
import StrapWire

extension RequestRouter {
    /// `samples.query {"predicate", "types", "sort": "start"|"end", "descending", "limit"}`
    /// → `{"samples": [...], "count": n, "truncated": bool}`.
    func samplesQuery(_ request: Request, _ session: ClientSession) throws(WireError) {
        let params = try Params(request, allowed: ["predicate", "types", "sort", "descending", "limit"])
        var predicate = try params.predicate("predicate")
        try session.grants.checkPredicate(predicate)
        let types = try session.grants.readable(asked: try params.quantityTypes("types"))
        if let types { predicate = predicate.map { .and([.types(types), $0]) } ?? .types(types) }
        let key: SampleSort.Key
        switch try params.string("sort") ?? "start" {
        case "start": key = .start
        case "end": key = .end
        case let other: throw Params.notOneOf("sort", other, ["start", "end"])
        }
        let sort = SampleSort(key, ascending: !(try params.bool("descending") ?? false))
        let limit = try params.int("limit", in: 1...1_000_000).map(Int.init)
        let id = request.id
        let budget = resultBudget(id, session)
        let final = predicate ?? .all
        respond(request, session) { [context] () throws(WireError) -> [UInt8] in
            let samples: [Sample]
            do throws(StrapError) { samples = try context.store.samples(matching: final, sort: sort, limit: limit) } catch { throw WireError(error) }
            var body: [UInt8] = Array(#"{"samples":["#.utf8)
            body.reserveCapacity(min(budget, samples.count * 300 + 64))
            var written = 0
            for s in samples {
                let mark = body.count
                if written > 0 { body.append(UInt8(ascii: ",")) }
                SampleJSON.append(s, into: &body)
                if body.count > budget { body.removeSubrange(mark...); break }
                written += 1
            }
            body.append(contentsOf: "],\"count\":\(written),\"truncated\":\(written < samples.count)}".utf8)
            return Reply.success(id: id, resultJSON: body)
        }
    }

    /// `samples.delete {"uuids": [...]}` or `{"predicate": {...}}` → `{"deleted": n}`.
    func samplesDelete(_ request: Request, _ session: ClientSession) throws(WireError) {
        let params = try Params(request, allowed: ["uuids", "predicate"])
        let uuidStrings = try params.strings("uuids")
        let predicate = try params.predicate("predicate")
        guard (uuidStrings == nil) != (predicate == nil) else {
            throw .bad("give exactly one of \"uuids\" and \"predicate\"")
        }
        var uuids: [UUID] = []
        for s in uuidStrings ?? [] {
            guard let u = UUID(uuidString: s) else { throw .bad("\"uuids\": \"\(WireError.echo(s))\" is not a UUID") }
            uuids.append(u)
        }
        if uuidStrings != nil, uuids.isEmpty { throw .bad("\"uuids\" is empty") }
        let id = request.id
        respond(request, session) { [context, uuids] () throws(WireError) -> [UInt8] in
            do throws(StrapError) {
                let n = if let predicate { try context.store.delete(matching: predicate) } else { try context.store.delete(uuids: uuids) }
                return Reply.success(id: id, result: ["deleted": .int(Int64(n))])
            } catch {
                throw WireError(error)
            }
        }
    }
}
