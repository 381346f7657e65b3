/// Coggan's seven power levels for one athlete, from a functional threshold power (FTP): the
/// upper bounds of zones 1…6 are 55, 75, 90, 105, 120 and 150 % of FTP, zone 7 is open. A power
/// on a bound belongs to the zone below it, as GoldenCheetah's and sweatpy's zone tables count
/// (their bins are closed on the right), so the time in zones agrees with theirs to the second.
/// The one power-zone type, as `HeartRateZones` is for heart rate.
public struct PowerZones: Sendable, Hashable, Codable {
    public static let upperBoundFractions: [Double] = [0.55, 0.75, 0.90, 1.05, 1.20, 1.50]
    /// Zones 1…7: the length of every time-in-zones array.
    public static let count = 7
    /// A threshold above any rider's (the world hour record is near 450 W): a larger figure is
    /// a typing error, not a rider.
    public static let maximumFunctionalThresholdPower = 2_500.0

    public let functionalThresholdPower: Double
    /// Zones 1…6's upper bounds in watts.
    public let upperBounds: [Double]

    public init(functionalThresholdPower ftp: Double) throws(StrapError) {
        guard ftp.isFinite, ftp > 0, ftp <= Self.maximumFunctionalThresholdPower else {
            throw .invalidOption("functionalThresholdPower must be above 0 and at most \(Int(Self.maximumFunctionalThresholdPower)) W, got \(ftp)")
        }
        functionalThresholdPower = ftp
        upperBounds = Self.upperBoundFractions.map { $0 * ftp }
    }

    /// The zone (1…7) of a power in watts; 0 W and below are zone 1.
    public func zone(of watts: Double) -> Int {
        var z = 1
        for bound in upperBounds where watts > bound { z += 1 }
        return z
    }
}
