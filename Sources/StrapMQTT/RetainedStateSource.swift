/// Where the retained state the publisher keeps on the broker comes from (the daemon's device,
/// workout and discovery topics). Asked once a second on the publisher's queue, right before
/// that second's burst, so that state and samples share one wake-up; it hands over only the
/// topics that changed (an empty payload clears a topic).
public protocol RetainedStateSource: AnyObject, Sendable {
    func collect(_ retain: (_ topic: String, _ bytes: [UInt8]) -> Void)
}
