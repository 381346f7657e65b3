import StrapGATT
import StrapModel
import StrapTrainer
import StrapWire

/// `trainer.status` / `trainer.set` / `trainer.release` (docs/protocol.md "Trainers"): a smart
/// trainer's target set by hand; sessions riding a plan set theirs themselves.
extension RequestRouter {
    /// `trainer.status` → `{"trainers": [TrainerStatus]}`.
    func trainerStatus(_ request: Request, _ session: ClientSession) throws(WireError) {
        _ = try Params(request, allowed: [])
        let trainers = context.trainers
        answer(request, session) { () throws(StrapError) in
            "{\"trainers\":[" + trainers.status().map(Self.json).joined(separator: ",") + "]}"
        }
    }

    /// `trainer.set {"device"?, "power" | "resistance" | "grade" (+ "wind", "crr", "cw")}` →
    /// the trainer's status. Exactly one kind of target.
    func trainerSet(_ request: Request, _ session: ClientSession) throws(WireError) {
        let params = try Params(request, allowed: ["device", "power", "resistance", "grade", "wind", "crr", "cw"])
        let device = try params.address("device")
        let power = try params.number("power"), resistance = try params.number("resistance"), grade = try params.number("grade")
        let target: TrainerTarget
        switch (power, resistance, grade) {
        case let (p?, nil, nil): target = .power(watts: p)
        case let (nil, r?, nil): target = .resistance(level: r)
        case let (nil, nil, g?):
            // Defaults: still air, a good tyre on a smooth road, a rider on the hoods.
            let wind = try params.number("wind") ?? 0, crr = try params.number("crr") ?? 0.004, cw = try params.number("cw") ?? 0.51
            do throws(ControlPointValueError) {
                target = .simulation(try IndoorBikeSimulationParameters(windSpeed: wind, grade: g, rollingResistance: crr, windResistance: cw))
            } catch { throw .bad("simulation parameters: \(error)") }
        default: throw .bad("give exactly one of \"power\" (W), \"resistance\" (level) or \"grade\" (%)")
        }
        if grade == nil, ["wind", "crr", "cw"].contains(where: params.has) {
            throw .bad("\"wind\", \"crr\" and \"cw\" go with \"grade\"")
        }
        let trainers = context.trainers
        answer(request, session) { () throws(StrapError) in
            Self.json(try trainers.set(target, device: device, owner: .user))
        }
    }

    /// `trainer.release {"device"?}` → the trainer's status (resetting, or idle).
    func trainerRelease(_ request: Request, _ session: ClientSession) throws(WireError) {
        let device = try Params(request, allowed: ["device"]).address("device")
        let trainers = context.trainers
        answer(request, session) { () throws(StrapError) in Self.json(try trainers.release(device: device)) }
    }

    static func json(_ s: TrainerStatus) -> String {
        var o: JSONObject = ["device": .string(s.device), "alerts": .array(s.alerts.map(JSONValue.string))]
        switch s.state {
        case .disconnected: o["state"] = .string("disconnected")
        case .idle: o["state"] = .string("idle")
        case .busy(let r): o["state"] = .string("busy"); o["opCode"] = .double(Double(r.opCode))
        case .holding(let t): o["state"] = .string("holding"); o["holding"] = json(t)
        case .controlLost: o["state"] = .string("controlLost")
        case .controlHeldByAnotherApp: o["state"] = .string("controlHeldByAnotherApp")
        case .failed(let e): o["state"] = .string("failed"); o["error"] = .string(e.description)
        }
        if let t = s.desired { o["desired"] = json(t) }
        switch s.owner {
        case .user?: o["owner"] = .string("user")
        case .session(let id)?: o["owner"] = .string("session"); o["session"] = .string(id.uuidString.lowercased())
        case nil: break
        }
        if let c = s.capabilities {
            func range(_ r: SupportedRange?, _ scale: Double) -> JSONValue? {
                r.map { .object(["minimum": .double(Double($0.minimum) * scale), "maximum": .double(Double($0.maximum) * scale),
                                 "increment": .double(Double($0.increment) * scale)]) }
            }
            var caps = JSONObject()
            caps["power"] = range(c.powerRange, 1)
            caps["resistance"] = range(c.resistanceRange, 0.1)
            o["capabilities"] = .object(caps)
        }
        return String(decoding: JSONWriter.bytes(.object(o)), as: UTF8.self)
    }

    static func json(_ t: TrainerTarget) -> JSONValue {
        switch t {
        case .power(let w): .object(["power": .double(w)])
        case .resistance(let l): .object(["resistance": .double(l)])
        case .simulation(let p):
            .object(["grade": .double(Double(p.grade) / 100), "wind": .double(Double(p.windSpeed) / 1000),
                     "crr": .double(Double(p.rollingResistance) / 10000), "cw": .double(Double(p.windResistance) / 100)])
        }
    }
}
