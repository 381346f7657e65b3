import CShims
import Glibc

/// Ctrl-C for commands that end cleanly on it (`workout follow` cancels its stream so the
/// daemon drops the follower at once). Other commands keep the default: SIGINT ends them.
/// A command arms it and gets a descriptor that becomes readable when the interrupt comes,
/// to `poll` next to its socket; tests hand in a pipe of their own.
public struct Interrupts: Sendable {
    let arm: @Sendable () -> Int32?

    public init(arm: @escaping @Sendable () -> Int32?) { self.arm = arm }

    /// No interrupts (commands run until their stream ends).
    public static let none = Interrupts { nil }

    /// SIGINT through a self-pipe (strapctl's main): the handler writes one byte to the pipe.
    public static let sigint = Interrupts {
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else { return nil }
        for fd in fds {
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        }
        guard cshims_signal_to_fd(SIGINT, fds[1]) == 0 else {
            close(fds[0]); close(fds[1])
            return nil
        }
        return fds[0]
    }

    /// Readable when the test writes to it.
    public static func descriptor(_ fd: Int32) -> Interrupts { Interrupts { fd } }
}
