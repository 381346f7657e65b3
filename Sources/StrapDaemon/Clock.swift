import Glibc
import StrapIngest
import StrapModel

/// The daemon's clocks, read in one place so everything below takes times as values.
public enum Clock {
    public static func monotonic() -> Double {
        var t = timespec()
        clock_gettime(CLOCK_MONOTONIC, &t)
        return Double(t.tv_sec) + Double(t.tv_nsec) / 1e9
    }

    public static func wallMillis() -> Millis {
        var t = timespec()
        clock_gettime(CLOCK_REALTIME, &t)
        return Millis(t.tv_sec) * 1000 + Millis(t.tv_nsec / 1_000_000)
    }

    public static func now() -> ReceiveTime { ReceiveTime(wall: wallMillis(), monotonic: monotonic()) }
}
