/// A Device Information Service string (0x2A29, 0x2A24–0x2A28): UTF-8 without a terminator.
/// Some firmware pads with NULs anyway; trailing NULs are dropped rather than shown.
public struct DeviceInformationString: Equatable, Sendable {
    public var characteristic: GATTCharacteristic
    public var value: String

    public init(characteristic: GATTCharacteristic, value: String) {
        self.characteristic = characteristic
        self.value = value
    }

    public static let characteristics: [GATTCharacteristic] = [
        .manufacturerName, .modelNumber, .serialNumber, .firmwareRevision, .hardwareRevision, .softwareRevision,
    ]

    public static func decode(_ characteristic: GATTCharacteristic, _ bytes: [UInt8]) throws(GATTDecodingError) -> DeviceInformationString {
        var end = bytes.count
        while end > 0 && bytes[end - 1] == 0 { end -= 1 }
        var result = ""
        var decoder = UTF8()
        var iterator = bytes[0..<end].makeIterator()
        loop: while true {
            switch decoder.decode(&iterator) {
            case let .scalarValue(scalar): result.unicodeScalars.append(scalar)
            case .emptyInput: break loop
            case .error: throw .invalidUTF8(characteristic)
            }
        }
        return DeviceInformationString(characteristic: characteristic, value: result)
    }

    public func encoded() -> [UInt8] { Array(value.utf8) }
}
