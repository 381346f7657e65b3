import CShims
import Glibc

/// A plain detached thread for a loop that sleeps on its own (a semaphore with a timeout):
/// its wake-up is one context switch, where a Dispatch timer wakes libdispatch's manager
/// thread and then a worker to run the handler. Used where a daemon that is otherwise idle
/// wakes on a schedule (the interval syncer, the simulator, the MQTT publisher's tick).
public enum DetachedThread {
    /// Runs `body` on a new detached thread named `name` (what `top -H` and `/proc/PID/task/*/comm`
    /// show; at most 15 bytes are kept); false (and `body` never runs) when the system would
    /// not create one.
    public static func spawn(name: String, _ body: @escaping () -> Void) -> Bool {
        final class Box {
            let body: () -> Void
            init(_ body: @escaping () -> Void) { self.body = body }
        }
        var thread = pthread_t()
        let context = Unmanaged.passRetained(Box({
            _ = cshims_name_this_thread(name)
            body()
        })).toOpaque()
        let created = pthread_create(&thread, nil, { context in
            Unmanaged<Box>.fromOpaque(context!).takeRetainedValue().body()
            return nil
        }, context)
        guard created == 0 else {
            Unmanaged<Box>.fromOpaque(context).release()
            return false
        }
        pthread_detach(thread)
        return true
    }
}
