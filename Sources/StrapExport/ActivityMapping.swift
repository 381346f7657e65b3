import StrapModel

/// How a workout's `activityType` maps to FIT's sport/sub_sport and TCX's Sport, and which
/// sensor family feeds the single speed/cadence/distance of FIT records and TCX trackpoints.
/// The table is docs/export.md's "Activity mapping"; keep them together.
public struct ActivityMapping: Sendable, Equatable {
    /// Which measured types supply speed, cadence and distance.
    public enum Family: String, Sendable, Equatable {
        /// cyclingSpeed, cyclingCadence (rpm), cyclingDistance.
        case cycling
        /// runningSpeed, runningCadence (strides/min), runningDistance.
        case foot
        /// Whichever is present: cycling values first, else running; distances add up.
        case any
    }

    public enum TCXSport: String, Sendable, Equatable { case running = "Running", biking = "Biking", other = "Other" }

    public var sport: UInt8
    public var subSport: UInt8
    public var tcxSport: TCXSport
    public var family: Family

    /// FIT `sport` values used here (Profile type `sport`).
    enum Sport {
        static let generic: UInt8 = 0, running: UInt8 = 1, cycling: UInt8 = 2, fitnessEquipment: UInt8 = 4
        static let swimming: UInt8 = 5, training: UInt8 = 10, walking: UInt8 = 11, rowing: UInt8 = 15
        static let hiking: UInt8 = 17, eBiking: UInt8 = 21, hiit: UInt8 = 62
    }

    /// FIT `sub_sport` values used here (Profile type `sub_sport`).
    enum SubSport {
        static let generic: UInt8 = 0, treadmill: UInt8 = 1, trail: UInt8 = 3, indoorCycling: UInt8 = 6
        static let indoorRowing: UInt8 = 14, elliptical: UInt8 = 15, lapSwimming: UInt8 = 17
        static let openWater: UInt8 = 18, strengthTraining: UInt8 = 20, cardioTraining: UInt8 = 26
        static let indoorWalking: UInt8 = 27, yoga: UInt8 = 43, hiit: UInt8 = 70
    }

    /// The mapping for an activity type (HealthKit-style names, case-insensitive); anything
    /// unknown is FIT generic / TCX Other. Indoor workouts get the indoor sub-sport where FIT has one.
    public init(activityType: String, location: Workout.LocationType = .unknown) {
        let indoor = location == .indoor
        switch activityType.lowercased() {
        case "running", "run":
            self.init(Sport.running, indoor ? SubSport.treadmill : SubSport.generic, .running, .foot)
        case "trailrunning":
            self.init(Sport.running, SubSport.trail, .running, .foot)
        case "cycling", "biking", "bike":
            self.init(Sport.cycling, indoor ? SubSport.indoorCycling : SubSport.generic, .biking, .cycling)
        case "ebiking", "e_biking":
            self.init(Sport.eBiking, SubSport.generic, .biking, .cycling)
        case "walking", "walk":
            self.init(Sport.walking, indoor ? SubSport.indoorWalking : SubSport.generic, .other, .foot)
        case "hiking":
            self.init(Sport.hiking, SubSport.generic, .other, .foot)
        case "rowing":
            self.init(Sport.rowing, indoor ? SubSport.indoorRowing : SubSport.generic, .other, .any)
        case "swimming":
            self.init(Sport.swimming, indoor ? SubSport.lapSwimming : SubSport.openWater, .other, .any)
        case "elliptical":
            self.init(Sport.fitnessEquipment, SubSport.elliptical, .other, .any)
        case "traditionalstrengthtraining", "functionalstrengthtraining", "strengthtraining":
            self.init(Sport.training, SubSport.strengthTraining, .other, .any)
        case "yoga":
            self.init(Sport.training, SubSport.yoga, .other, .any)
        case "highintensityintervaltraining", "hiit":
            self.init(Sport.hiit, SubSport.hiit, .other, .any)
        case "crosstraining", "mixedcardio":
            self.init(Sport.training, SubSport.cardioTraining, .other, .any)
        default:
            self.init(Sport.generic, SubSport.generic, .other, .any)
        }
    }

    init(_ sport: UInt8, _ subSport: UInt8, _ tcx: TCXSport, _ family: Family) {
        self.sport = sport
        self.subSport = subSport
        tcxSport = tcx
        self.family = family
    }
}
