import FoundationEssentials
import StrapGATT
import StrapModel

/// Per-device decode → derive → samples (the middle stages of docs/architecture.md#the-pipeline;
/// sample types: docs/product.md §3.4).
///
/// Pure apart from value state: the caller passes each notification's receive times, and
/// gets samples plus what changed about the device. One instance per device, owned by one
/// pipeline queue. After a reconnect call `linkRestarted()`: every counter's next value is a
/// baseline again and the beat timeline starts over.
public struct DeviceIngest: Sendable {
    public struct Settings: Sendable, Equatable {
        public var wheelCircumference: Double
        /// RSC cadence is steps/min on this device where the spec says strides (TICKR X quirk):
        /// kept raw, only tagged, never halved.
        public var cadenceIsStepsPerMinute: Bool
        public init(wheelCircumference: Double = 2.105, cadenceIsStepsPerMinute: Bool = false) {
            self.wheelCircumference = wheelCircumference
            self.cadenceIsStepsPerMinute = cadenceIsStepsPerMinute
        }
    }

    /// Something about the device that is not a sample but matters to the daemon.
    public enum Change: Sendable, Equatable {
        case identity(Device)
        case contact(SensorContact)
        case battery(UInt8)
        /// Energy Expended sits at 0xFFFF: write 0x01 to 0x2A39 to reset it.
        case energySaturated
        case bodySensorLocation(String)
        case sensorLocation(String)
    }

    public struct Output: Sendable {
        public var samples: [Sample] = []
        public var changes: [Change] = []
        /// A packet that could not be decoded; nothing else came of it.
        public var rejected: GATTDecodingError?
        public init() {}
    }

    public private(set) var device: Device
    public var settings: Settings
    var csc: CSCDerivation
    var energy = CumulativeCounter.energyExpended()
    var runningDistance = CumulativeCounter.rscTotalDistance()
    var timeline = BeatTimeline()
    /// Wall minus monotonic time for the current run of beats, and the run's last series end.
    var beatsToWall: Double?
    var lastSeriesEnd: Millis?
    /// A wall-clock step larger than this (seconds) restarts the run of beats.
    static let wallStepTolerance = 0.05
    var contact: SensorContact?
    var battery: UInt8?
    var lastCSCTime: Millis?
    var lastEnergyTime: Millis?
    var lastRSCTime: Millis?
    /// Cycling Power's revolution data: its own baselines, apart from a CSC service's, since
    /// its wheel clock ticks twice as fast.
    var powerRevolutions: CSCDerivation
    var lastPowerTime: Millis?
    var indoorBike = IndoorBikeDataAssembler()
    var indoorBikeDistance = CumulativeCounter.indoorBikeTotalDistance()
    var lastIndoorBikeTime: Millis?

    public init(device: Device, settings: Settings = Settings()) {
        self.device = device
        self.settings = settings
        csc = CSCDerivation(configuration: .init(wheelCircumference: settings.wheelCircumference))
        powerRevolutions = CSCDerivation(configuration: .init(wheelCircumference: settings.wheelCircumference))
    }

    public mutating func linkRestarted() {
        csc.reset()
        energy.rebaseline()
        runningDistance.rebaseline()
        timeline.reset()
        lastCSCTime = nil
        lastEnergyTime = nil
        lastRSCTime = nil
        powerRevolutions.reset()
        lastPowerTime = nil
        // Half a record from the old link never joins the new link's.
        indoorBike.reset()
        indoorBikeDistance.rebaseline()
        lastIndoorBikeTime = nil
    }

    /// - Parameters:
    ///   - wall: receive time, milliseconds since the epoch (sample times).
    ///   - monotonic: receive time in seconds on a monotonic clock (rates, decay, gaps).
    public mutating func ingest(_ characteristic: GATTCharacteristic, _ value: [UInt8],
                                wall: Millis, monotonic: Double) -> Output {
        var out = Output()
        ingest(characteristic, value, wall: wall, monotonic: monotonic, into: &out)
        return out
    }

    /// Appends to `out`, which may hold earlier notifications' samples and changes: the
    /// pipeline collects a whole turn's samples in one buffer this way, where an `Output` per
    /// notification cost an array, and a retain and release of every sample, to move them.
    /// `out.rejected` is set when this packet is rejected, and left alone otherwise.
    public mutating func ingest(_ characteristic: GATTCharacteristic, _ value: [UInt8],
                                wall: Millis, monotonic: Double, into out: inout Output) {
        do throws(GATTDecodingError) {
            switch characteristic {
            case .heartRateMeasurement:
                heartRate(try HeartRateMeasurement.decode(value), wall: wall, monotonic: monotonic, into: &out)
            case .cscMeasurement:
                cycling(try CSCMeasurement.decode(value), wall: wall, monotonic: monotonic, into: &out)
            case .rscMeasurement:
                running(try RSCMeasurement.decode(value), wall: wall, monotonic: monotonic, into: &out)
            case .batteryLevel:
                let level = try BatteryLevel.decode(value).percent
                if level != battery {
                    battery = level
                    out.changes.append(.battery(level))
                    out.samples.append(sample(.batteryLevel, Double(level), wall))
                }
            case .bodySensorLocation:
                out.changes.append(.bodySensorLocation(try BodySensorLocation.decode(value).name))
            case .sensorLocation:
                out.changes.append(.sensorLocation(try SensorLocation.decode(value).name))
            case .manufacturerName, .modelNumber, .serialNumber, .firmwareRevision, .hardwareRevision, .softwareRevision:
                let text = try DeviceInformationString.decode(characteristic, value).value
                if let updated = device.with(characteristic, text) {
                    device = updated
                    out.changes.append(.identity(updated))
                }
            case .cyclingPowerMeasurement:
                power(try CyclingPowerMeasurement.decode(value), wall: wall, monotonic: monotonic, into: &out)
            case .indoorBikeData:
                if let record = indoorBike.add(try IndoorBikeData.decode(value)) {
                    indoorBikeRecord(record, wall: wall, monotonic: monotonic, into: &out)
                }
            case .heartRateControlPoint, .scControlPoint, .cscFeature, .rscFeature:
                break       // configuration, not measurements
            case .cyclingPowerFeature, .fitnessMachineFeature:
                break       // what the sensor can report, read on connect: no sample
            case .cyclingPowerControlPoint, .trainingStatus, .supportedResistanceLevelRange, .supportedPowerRange,
                 .fitnessMachineControlPoint, .fitnessMachineStatus:
                break       // the trainer's control path (StrapTrainer), not samples
            }
        } catch {
            out.rejected = error
        }
    }

    func sample(_ type: QuantityType, _ value: Double, _ start: Millis, end: Millis? = nil,
                metadata: [String: String] = [:], beats: [Double] = []) -> Sample {
        // Most samples carry neither: the initializer that makes no extras box.
        if metadata.isEmpty && beats.isEmpty {
            return Sample(uuid: .unassigned, anchor: 0, type: type, value: value,
                          start: start, end: end ?? start, device: device)
        }
        return Sample(type: type, value: value, start: start, end: end, device: device, metadata: metadata, beats: beats)
    }
}
