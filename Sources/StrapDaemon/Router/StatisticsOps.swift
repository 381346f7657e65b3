import FoundationEssentials
// Named time zones (TimeZone(identifier:)) come from ICU: with FoundationEssentials alone
// every zone but GMT resolves to nil.
import FoundationInternationalization
import StrapModel
import StrapWire

extension RequestRouter {
    /// `statistics.query {"type", "options", "from", "to", "predicate"}` → one statistics
    /// object; `noData` when no sample matches (HealthKit's errorNoData), never zeros.
    /// With `"workout"` (a saved workout's UUID, or the UUID of the session it came from) the
    /// range defaults to the workout's and only its devices' samples count.
    func statisticsQuery(_ request: Request, _ session: ClientSession) throws(WireError) {
        let params = try Params(request, allowed: ["type", "options", "from", "to", "predicate", "workout"])
        let (type, options, given) = try statisticsCommon(params, session)
        let workoutID = try params.uuid("workout")
        let fromParam = workoutID == nil ? try params.requiredTime("from") : try params.time("from")
        let toParam = workoutID == nil ? try params.requiredTime("to") : try params.time("to")
        let catalog = context.workouts?.catalog
        let id = request.id
        respond(request, session) { [context] () throws(WireError) -> [UInt8] in
            let stats: Statistics
            do throws(StrapError) {
                var (from, to, predicate) = (fromParam ?? 0, toParam ?? 0, given)
                if let workoutID {
                    var found = try catalog?.workout(workoutID)
                    if found == nil { found = try context.store.workout(workoutID) }
                    guard let w = found else { throw .notFound("no workout \(workoutID)") }
                    from = fromParam ?? w.start
                    to = toParam ?? w.end + 1
                    predicate = .and([given, .workout(w.uuid)])
                }
                stats = try context.store.statistics(type: type, predicate: predicate, options: options, from: from, to: to)
            } catch { throw WireError(error) }
            if stats.count == 0 { throw WireError(.noData, "no \(type.rawValue) samples in the range") }
            var result = Self.statisticsJSON(stats, options: options)
            result["type"] = .string(type.rawValue)
            result["unit"] = .string(type.unit)
            return Reply.success(id: id, result: result)
        }
    }

    /// `statistics.collection {"type", "options", "anchorDate", "interval": {"hours": 1},
    /// "timeZone", "from", "to", "separateBySource", "predicate", "follow"}` → every interval of
    /// the range, empty ones with null values; with `follow`, then `statistics` events with the
    /// intervals that samples stored later changed (`StatisticsFollowStream`).
    func statisticsCollection(_ request: Request, _ session: ClientSession) throws(WireError) {
        let params = try Params(request, allowed: ["type", "options", "anchorDate", "interval", "timeZone", "from", "to",
                                                   "separateBySource", "predicate", "follow"])
        let (type, common, predicate) = try statisticsCommon(params, session)
        let options = try params.bool("separateBySource") ?? false ? common.union(.separateBySource) : common
        let from = try params.requiredTime("from"), to = try params.requiredTime("to")
        guard from < to else { throw .bad("\"from\" must be before \"to\"") }
        let anchorDate = try params.time("anchorDate") ?? from
        let interval = try Self.interval(params.object["interval"])
        let zoneName = try params.string("timeZone")
        let zone = try zoneName.map(Self.timeZone) ?? TimeZone.current
        let approx: Double = switch interval.unit {
        case .minutes: 60e3
        case .hours: 3600e3
        case .days: 86400e3
        case .weeks: 7 * 86400e3
        case .months: 28 * 86400e3
        }
        guard Double(to - from) / (approx * Double(interval.count)) <= 100_000 else {
            throw .bad("more than 100000 intervals; use a longer interval or a shorter range")
        }
        let follow = try params.bool("follow") ?? false
        // A followed collection keeps a fingerprint per interval for as long as it is open.
        if follow, Double(to - from) / (approx * Double(interval.count)) > Double(Self.maximumFollowedIntervals) {
            throw .bad("a followed collection holds at most \(Self.maximumFollowedIntervals) intervals; use a longer interval or a shorter range")
        }
        let id = request.id
        let budget = resultBudget(id, session)
        // No interval takes fewer than 64 bytes: computing more than budget/64 of them would
        // only be thrown away by the cut. The shortest an interval can be (a day across a
        // DST change is 23 h) bounds how far that many reach.
        let shortest: Millis = switch interval.unit {
        case .minutes: 60_000
        case .hours: 3_600_000
        case .days: 82_800_000
        case .weeks: 7 * 86_400_000 - 3_600_000
        case .months: 28 * 86_400_000 - 3_600_000
        }
        let reach = Millis(budget / 64) * shortest * Millis(interval.count)
        // Followed, every interval is computed: the stream compares updates with them.
        let computedTo = follow || to - from <= reach ? to : from + reach
        let store = context.store
        let page = { @Sendable () throws(WireError) -> (reply: [UInt8], list: [Statistics]) in
            let list: [Statistics]
            do throws(StrapError) {
                list = try store.statisticsCollection(type: type, predicate: predicate, options: options, anchorDate: anchorDate,
                                                      interval: interval, from: from, to: computedTo, timeZone: zone)
            } catch { throw WireError(error) }
            // Computed short of `to`: the page continues after its last interval.
            let more = computedTo < to ? list.last.map(\.end).flatMap { $0 < to ? $0 : nil } : nil
            let head: JSONObject = ["type": .string(type.rawValue), "unit": .string(type.unit),
                                    "timeZone": .string(zoneName ?? zone.identifier)]
            return (Reply.success(id: id, resultJSON: Self.collectionPage(head, list, options: options, budget: budget, more: more)), list)
        }
        guard follow else {
            respond(request, session) { () throws(WireError) -> [UInt8] in try page().reply }
            return
        }
        let boundaries: [Millis]
        do throws(StrapError) {
            boundaries = try interval.boundaries(anchor: anchorDate, from: from, to: to, timeZone: zone)
        } catch { throw WireError(error) }
        let query = CollectionQuery(store: store, type: type, predicate: predicate, options: options, anchorDate: anchorDate,
                                    interval: interval, timeZone: zone, boundaries: boundaries)
        followCollection(request, session, query, page: page)
    }

    /// The most intervals `statistics.collection` follows.
    static let maximumFollowedIntervals = 10_000

    /// `statistics.collection` with `follow`: the reply as without it, then the stream from the
    /// store's durable end as it was before the reply's figures were computed, so a sample
    /// stored meanwhile is looked at again (and sent only if it changed an interval).
    private func followCollection(_ request: Request, _ session: ClientSession, _ query: CollectionQuery,
                                  page: @escaping @Sendable () throws(WireError) -> (reply: [UInt8], list: [Statistics])) {
        let id = request.id
        let stream = StatisticsFollowStream(router: self, session: session, id: id, pacing: configuration.statisticsPacing)
        streamStarted(stream, id: id, in: session)
        session.pendingReplies += 1
        run(request.op, in: session) { [self] in
            let anchor = query.store.latestAnchor
            let outcome = Result { () throws(WireError) in try page() }
            return { [self] in
                session.pendingReplies -= 1
                switch outcome {
                case .success(let (reply, list)):
                    write(reply, id: id, to: session)
                    stream.start(query, from: anchor, initial: list, budget: lineBudget(session))
                case .failure(let error):
                    write(Reply.failure(id: id, error: error), id: id, to: session)
                    stream.failedToStart()
                }
                finishIfIdle(session)
            }
        }
    }

    /// The collection's result, cut below `budget` bytes: a long range in short intervals
    /// (100 000 of them is ~20 MB) comes in pages. A cut page says `truncated` and gives
    /// `next`, the start of the first interval left out; asking again with `from` = `next`
    /// (same anchorDate) continues with exactly that interval.
    static func collectionPage(_ head: JSONObject, _ list: [Statistics], options: StatisticsOptions, budget: Int,
                               more: Millis? = nil) -> [UInt8] {
        var out = JSONWriter.bytes(.object(head))
        out.removeLast()  // the closing brace; the statistics array follows
        out += Array(#","statistics":["#.utf8)
        var next: Millis? = more
        for (n, s) in list.enumerated() {
            let mark = out.count
            if n > 0 { out.append(UInt8(ascii: ",")) }
            JSONWriter.write(.object(statisticsJSON(s, options: options)), into: &out)
            if out.count > budget, n > 0 {
                out.removeSubrange(mark...)
                next = s.start
                break
            }
        }
        out += Array("],\"truncated\":\(next != nil)".utf8)
        if let next { out += Array(",\"next\":\"\(RFC3339Timestamp.format(millisecondsSinceEpoch: next))\"".utf8) }
        out.append(UInt8(ascii: "}"))
        return out
    }

    /// An IANA zone name. Checked before ICU sees it: ICU reads a C string, so
    /// `"UTC\u0000junk"` would resolve to UTC and be echoed back as if it were a zone.
    static func timeZone(_ name: String) throws(WireError) -> TimeZone {
        let allowed = name.utf8.allSatisfy { b in
            (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) || (b >= 0x30 && b <= 0x39) ||
                b == UInt8(ascii: "/") || b == UInt8(ascii: "_") || b == UInt8(ascii: "-") || b == UInt8(ascii: "+")
        }
        guard allowed, (1...64).contains(name.utf8.count), let zone = TimeZone(identifier: name) else {
            throw .bad("\"timeZone\": unknown time zone \"\(WireError.echo(name))\" (an IANA name such as Europe/Berlin or UTC)")
        }
        return zone
    }

    private func statisticsCommon(_ params: Params, _ session: ClientSession) throws(WireError)
        -> (QuantityType, StatisticsOptions, SamplePredicate) {
        let type = try params.quantityType("type")
        _ = try session.grants.readable(asked: [type])
        let options = try params.statisticsOptions("options")
        let predicate = try params.predicate("predicate")
        try session.grants.checkPredicate(predicate)
        do throws(StrapError) { try options.validate(for: type) } catch { throw WireError(error) }
        return (type, options, predicate ?? .all)
    }

    static func interval(_ value: JSONValue?) throws(WireError) -> StatisticsInterval {
        guard case .object(let o)? = value, o.count == 1, let (key, v) = o.entries.first,
              let unit = StatisticsInterval.Unit(rawValue: key) else {
            throw .bad("\"interval\" must be one of {\"minutes\"|\"hours\"|\"days\"|\"weeks\"|\"months\": n}")
        }
        guard case .int(let n) = v, n > 0, n <= 100_000 else {
            if case .int(let n) = v, n > 0 { throw .bad("\"interval\": \(key) \(n) is too large; at most 100000") }
            throw .bad("\"interval\": \(key) must be a whole number in 1...100000")
        }
        return StatisticsInterval(unit, Int(n))
    }

    static func statisticsJSON(_ s: Statistics, options: StatisticsOptions) -> JSONObject {
        func number(_ d: Double?) -> JSONValue { d.map(JSONValue.double) ?? .null }
        var o: JSONObject = [
            "start": .string(RFC3339Timestamp.format(millisecondsSinceEpoch: s.start)),
            "end": .string(RFC3339Timestamp.format(millisecondsSinceEpoch: s.end)),
            "count": .int(Int64(s.count)),
        ]
        if options.contains(.average) { o["average"] = number(s.average) }
        if options.contains(.minimum) { o["minimum"] = number(s.minimum) }
        if options.contains(.maximum) { o["maximum"] = number(s.maximum) }
        if options.contains(.mostRecent) {
            o["mostRecent"] = number(s.mostRecent)
            o["mostRecentTime"] = s.mostRecentTime.map { .string(RFC3339Timestamp.format(millisecondsSinceEpoch: $0)) } ?? .null
        }
        if options.contains(.sum) { o["sum"] = number(s.sum) }
        if options.contains(.separateBySource) {
            var sources = JSONObject()
            for (device, stats) in (s.bySource ?? [:]).sorted(by: { $0.key < $1.key }) {
                var inner = statisticsJSON(stats, options: options.subtracting(.separateBySource))
                inner["start"] = nil
                inner["end"] = nil
                sources[device] = .object(inner)
            }
            o["bySource"] = .object(sources)
        }
        return o
    }
}
