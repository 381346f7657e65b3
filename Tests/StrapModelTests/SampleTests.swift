import Testing
import StrapModel

/// `Sample.identities(at:)`: what the store's encoder and stream lookup compare instead of
/// loading (and retaining) a sample's device and extras.
@Suite struct SampleIdentityTests {
    let strap = Device(id: "dev-1", address: "A0:00:00:00:00:01", name: "Strap")

    func identities(_ s: Sample) -> (device: UInt, extras: UInt) {
        withUnsafePointer(to: s) { Sample.identities(at: $0) }
    }

    @Test func samplesSharingADeviceAndSharedMetadataHaveOneIdentity() {
        let running = SharedMetadata(["running": "true"])
        let a = Sample(type: .runningSpeed, value: 1, start: 0, device: strap, metadata: running)
        let b = Sample(type: .runningSpeed, value: 2, start: 1, device: strap, metadata: running)
        #expect(identities(a).device == identities(b).device)
        #expect(identities(a).extras == identities(b).extras && identities(a).extras != 0)
        #expect(identities(a).device == UInt(bitPattern: ObjectIdentifier(strap)))
    }

    @Test func noExtrasIsZeroAndEqualValuesInOtherObjectsDiffer() {
        let plain = Sample(type: .heartRate, value: 60, start: 0, device: strap)
        #expect(identities(plain).extras == 0)
        let twin = Device(id: "dev-1", address: "A0:00:00:00:00:01", name: "Strap")
        let other = Sample(type: .heartRate, value: 60, start: 0, device: twin)
        #expect(plain == other, "equal by value")
        #expect(identities(plain).device != identities(other).device, "but not the same object")
        let tagged = Sample(type: .heartRate, value: 60, start: 0, device: strap, metadata: ["k": "v"])
        let retagged = Sample(type: .heartRate, value: 60, start: 0, device: strap, metadata: ["k": "v"])
        #expect(identities(tagged).extras != identities(retagged).extras, "a map per sample is its own storage")
    }
}
