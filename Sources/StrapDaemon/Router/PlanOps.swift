import FoundationEssentials
import StrapModel
import StrapWire

/// `plan.save` / `plan.list` / `plan.get` / `plan.delete` (docs/protocol.md "Plans"): the saved
/// structured workouts a session can be started with.
extension RequestRouter {
    /// `plan.save {"plan": {…}, "uuid"?}` → `{"uuid", "plan"}`: a new plan, or the one `uuid` names replaced.
    func planSave(_ request: Request, _ session: ClientSession) throws(WireError) {
        let params = try Params(request, allowed: ["plan", "uuid"])
        let id = try params.uuid("uuid")
        guard let value = params.object["plan"], case .object = value else { throw .bad("\"plan\" must be an object") }
        let plan: WorkoutPlan
        do {
            plan = try JSONDecoder().decode(WorkoutPlan.self, from: Data(JSONWriter.bytes(value)))
        } catch let e as StrapError {
            throw WireError(e)
        } catch {
            throw .bad("\"plan\": \(Self.describe(error))")
        }
        let book = try workouts.plans
        answer(request, session) { () throws(StrapError) in
            let saved = try book.save(plan, id: id)
            return "{\"uuid\":\"\(saved.uuidString.lowercased())\",\"plan\":" + (try Self.json(plan)) + "}"
        }
    }

    /// `plan.list` → `{"plans": [{"uuid", "name", "activity", "steps", "duration"?}]}`, by name.
    func planList(_ request: Request, _ session: ClientSession) throws(WireError) {
        _ = try Params(request, allowed: [])
        let book = try workouts.plans
        answer(request, session) { () throws(StrapError) in
            struct Entry: Encodable {
                var uuid: String, name: String, activity: ActivityType, steps: Int, duration: Double?
            }
            let entries = book.all.map {
                Entry(uuid: $0.id.uuidString.lowercased(), name: $0.plan.name, activity: $0.plan.activity,
                      steps: $0.plan.expandedSteps.count, duration: $0.plan.plannedDuration)
            }
            return "{\"plans\":" + (try Self.json(entries)) + "}"
        }
    }

    /// `plan.get {"uuid"}` → `{"uuid", "plan"}`.
    func planGet(_ request: Request, _ session: ClientSession) throws(WireError) {
        let id = try Params(request, allowed: ["uuid"]).requiredUUID("uuid")
        let book = try workouts.plans
        answer(request, session) { () throws(StrapError) in
            guard let plan = book.plan(id) else { throw .notFound("no plan \(id.uuidString.lowercased())") }
            return "{\"uuid\":\"\(id.uuidString.lowercased())\",\"plan\":" + (try Self.json(plan)) + "}"
        }
    }

    /// `plan.delete {"uuid"}` → `{"deleted": uuid}`.
    func planDelete(_ request: Request, _ session: ClientSession) throws(WireError) {
        let id = try Params(request, allowed: ["uuid"]).requiredUUID("uuid")
        let book = try workouts.plans
        answer(request, session) { () throws(StrapError) in
            try book.delete(id)
            return "{\"deleted\":\"\(id.uuidString.lowercased())\"}"
        }
    }

    /// A decoding error as a person reads it: where in the plan, and what.
    static func describe(_ error: Error) -> String {
        func path(_ c: DecodingError.Context) -> String {
            let p = c.codingPath.map { $0.intValue.map { "[\($0)]" } ?? "." + $0.stringValue }.joined()
            return p.isEmpty ? "" : String(p.drop { $0 == "." }) + ": "
        }
        switch error as? DecodingError {
        case .keyNotFound(let key, let c)?: return path(c) + "missing \"\(key.stringValue)\""
        case .typeMismatch(_, let c)?, .valueNotFound(_, let c)?, .dataCorrupted(let c)?: return path(c) + c.debugDescription
        default: return "\(error)"
        }
    }
}
