import Dispatch
import StrapStore
import Synchronization

/// A stream that reads the store from an anchor and parks in the `FollowEngine` once caught
/// up: `samples.anchored` followers and followed statistics collections.
protocol ParkedFollower: AnyObject, Sendable {
    /// On the engine's queue: a commit passed the anchor it parked at. Runs its next step
    /// there and returns what is left for the server queue.
    func resume(from anchor: UInt64) -> ServerHop?
}

/// Wakes the followers of `samples.anchored` (and of `statistics.collection`) that have caught
/// up, when the store commits.
///
/// A caught-up follower parks here at its anchor and costs nothing while it waits: no timer,
/// no thread. The store calls `committed` once per published durable position; when anyone is
/// parked, that signals one Dispatch source, which runs one pass over every parked follower on
/// `queue` and sends those the commit concerns back to reading: their next step runs in that
/// pass, so one whose pages match nothing reads and parks again without a thread hop. Commits that come faster than
/// a pass are merged into the next pass by the source. With nobody parked a commit costs a
/// lock, no thread wake-up; an idle store costs nothing at all, however many follow it.
final class FollowEngine: @unchecked Sendable {
    /// What the engine has done, for tests and diagnosis (relaxed counts).
    struct Counters: Sendable, Equatable {
        /// Passes over the parked followers (one per commit while someone is parked), counted
        /// once a pass's own work is done and before its followers' writes are sent, so a
        /// reader that sees the count also sees every look and page of that pass.
        var passes = 0
        /// Times a follower looked at the store's durable end before reading or parking.
        var looks = 0
        /// Pages read from the store by followers.
        var reads = 0
        /// Followers parked right now.
        var parked = 0
        /// Pages that matched nothing and were passed over inside a step, without a hop
        /// through the server queue (a follower of other types than a commit's).
        var quietPages = 0
    }

    private let store: Store
    private let queue = DispatchQueue(label: "strapd.router.follow")
    private let commits: DispatchSourceUserDataAdd
    private let parkedFollowers = Mutex<[ObjectIdentifier: (follower: any ParkedFollower, anchor: UInt64)]>([:])
    private let observation = Mutex<CommitObservation?>(nil)
    private let passCount = Atomic<Int>(0)
    private let lookCount = Atomic<Int>(0)
    private let readCount = Atomic<Int>(0)
    private let quietCount = Atomic<Int>(0)

    init(store: Store) {
        self.store = store
        commits = DispatchSource.makeUserDataAddSource(queue: queue)
        commits.setEventHandler { @Sendable [weak self] in self?.pass() }
        commits.activate()
        let observation = store.observeCommits { @Sendable [weak self] _ in self?.committed() }
        self.observation.withLock { $0 = observation }
    }

    var counters: Counters {
        Counters(passes: passCount.load(ordering: .acquiring), looks: lookCount.load(ordering: .relaxed),
                 reads: readCount.load(ordering: .relaxed), parked: parkedFollowers.withLock { $0.count },
                 quietPages: quietCount.load(ordering: .relaxed))
    }

    /// On the worker queue: a follower at `anchor` wants to know whether there is more.
    /// True: read now. False: it is parked and `resume(from:)` is called once a commit passes
    /// `anchor`.
    func proceedOrPark(_ follower: any ParkedFollower, at anchor: UInt64) -> Bool {
        lookCount.add(1, ordering: .relaxed)
        if store.latestAnchor > anchor { return true }
        let key = ObjectIdentifier(follower)
        parkedFollowers.withLock { $0[key] = (follower, anchor) }
        // A commit published between the look above and parking found nobody parked and
        // signalled nothing; the store publishes before it calls `committed`, and both go
        // through `parkedFollowers`' lock, so this second look sees any such commit.
        if store.latestAnchor > anchor, parkedFollowers.withLock({ $0.removeValue(forKey: key) }) != nil {
            return true
        }
        return false
    }

    /// The follower ended: it is no longer woken.
    func unpark(_ follower: any ParkedFollower) {
        _ = parkedFollowers.withLock { $0.removeValue(forKey: ObjectIdentifier(follower)) }
    }

    /// A follower read a page (counted only).
    func pageRead() { readCount.add(1, ordering: .relaxed) }

    /// A page matched nothing and the step went on without a hop (counted only).
    func quietPage() { quietCount.add(1, ordering: .relaxed) }

    /// Router shutdown: no more passes; parked followers were ended by their streams.
    func stop() {
        observation.withLock { $0?.cancel(); $0 = nil }
        commits.cancel()
        parkedFollowers.withLock { $0.removeAll() }
    }

    deinit {
        observation.withLock { $0?.cancel() }
        commits.cancel()
    }

    /// On the committing thread (see `Store.observeCommits`): a signal only if someone waits.
    private func committed() {
        if parkedFollowers.withLock({ !$0.isEmpty }) { commits.add(data: 1) }
    }

    /// On `queue`: every follower the durable end has passed goes back to reading.
    private func pass() {
        let latest = store.latestAnchor
        let due = parkedFollowers.withLock { parked -> [(follower: any ParkedFollower, anchor: UInt64)] in
            let due = parked.filter { $0.value.anchor < latest }
            for key in due.keys { parked[key] = nil }
            return Array(due.values)
        }
        // The followers' writes go to the server queue together: one wake-up of it per pass.
        var hops: [ObjectIdentifier: (queue: DispatchQueue, work: [@Sendable () -> Void])] = [:]
        for (follower, anchor) in due {
            guard let hop = follower.resume(from: anchor) else { continue }
            hops[ObjectIdentifier(hop.queue), default: (hop.queue, [])].work.append(hop.work)
        }
        passCount.add(1, ordering: .releasing)
        for (queue, work) in hops.values { queue.async { for w in work { w() } } }
    }
}
