import FoundationEssentials
import StrapModel

extension Store {
    /// The stored workout with this UUID; nil when there is none (or it was deleted).
    public func workout(_ uuid: UUID) throws(StrapError) -> Workout? {
        guard let anchor = uuids.anchor(of: uuid), case .workout(let w)? = try object(at: anchor) else { return nil }
        return w
    }
}
