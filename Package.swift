// swift-tools-version:6.0
// strapd — layers as modules, dependencies pointing one way (docs/architecture.md):
// C system libraries + one C shim → pure protocol code → domain model → store / ingest →
// I/O adapters → thin executables. The benchmark is a package of its own (Benchmarks/), which
// depends on this one by path through the library products below.
import PackageDescription

/// FoundationEssentials finds the ICU time zone class by name at run time, so nothing
/// references it and a `--static-swift-stdlib` link leaves it out: every zone but GMT then
/// resolves to nil ("unknown time zone \"UTC\""). Naming its type descriptor as undefined
/// makes the linker keep it (a no-op when linked against the shared library).
let namedTimeZones: [LinkerSetting] = [
    .unsafeFlags(["-Xlinker", "--undefined=$s30FoundationInternationalization12_TimeZoneICUCMn"]),
]

/// Release builds of strapd lay out the functions it runs while it streams next to each other
/// (`Sources/strapd/hot-path.order`, made by `scripts/hot-path-order.sh`), and strapd-web those
/// it runs relaying a live stream to a page (`Sources/strapd-web/hot-path.order`, `--web`): the kernel maps a
/// program's file pages 64 KiB around each fault, so code spread over the binary's 14 MB stayed
/// resident in whole 64 KiB neighbourhoods (docs/benchmarks.md, "What strapd's resident set is
/// made of"). Swift already gives each global function a section of its own; lld places the
/// sections holding listed symbols first. A stale list only costs locality. Debug builds (the
/// tests) and strapctl are linked as before.
func hotPathLayout(_ program: String) -> [LinkerSetting] {
    [.unsafeFlags(["-use-ld=lld", "-Xlinker", "--symbol-ordering-file=\(Context.packageDirectory)/Sources/\(program)/hot-path.order",
                   "-Xlinker", "--no-warn-symbol-ordering"], .when(configuration: .release))]
}

let package = Package(
    name: "strapd",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "strapd", targets: ["strapd"]),
        .executable(name: "strapctl", targets: ["strapctl"]),
        .executable(name: "strapd-web", targets: ["strapd-web"]),
        // The modules the benchmark package (Benchmarks/, by path) builds on.
        .library(name: "StrapGATT", targets: ["StrapGATT"]),
        .library(name: "StrapWire", targets: ["StrapWire"]),
        .library(name: "StrapModel", targets: ["StrapModel"]),
        .library(name: "StrapStore", targets: ["StrapStore"]),
        .library(name: "StrapIngest", targets: ["StrapIngest"]),
        .library(name: "StrapWorkout", targets: ["StrapWorkout"]),
        .library(name: "StrapExport", targets: ["StrapExport"]),
        .library(name: "StrapSimulator", targets: ["StrapSimulator"]),
        .library(name: "StrapSystem", targets: ["StrapSystem"]),
        .library(name: "StrapDaemon", targets: ["StrapDaemon"]),
        .library(name: "StrapMQTTProtocol", targets: ["StrapMQTTProtocol"]),
        .library(name: "CShims", targets: ["CShims"]),
        // The benchmark's live-latency peer uses the same libmosquitto module.
        .library(name: "CMosquitto", targets: ["CMosquitto"]),
        // The client library: HealthKit's shapes over the socket (docs/client.md).
        .library(name: "StrapKit", targets: ["StrapKit"]),
    ],
    targets: [
        // Layer 1: C system libraries (Debian -dev packages) and the one C shim.
        .systemLibrary(name: "CSystemd", pkgConfig: "libsystemd", providers: [.apt(["libsystemd-dev"])]),
        .systemLibrary(name: "CBluetooth", pkgConfig: "bluez", providers: [.apt(["libbluetooth-dev"])]),
        .systemLibrary(name: "CZlib", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"])]),
        // The MQTT client behind the publisher (docs/mqtt.md): no hand-written MQTT.
        .systemLibrary(name: "CMosquitto", pkgConfig: "libmosquitto", providers: [.apt(["libmosquitto-dev"])]),
        // HTTP for strapd-web (docs/web.md): no hand-written HTTP parser.
        .systemLibrary(name: "CMicroHTTPD", pkgConfig: "libmicrohttpd", providers: [.apt(["libmicrohttpd-dev"])]),
        .target(name: "CShims"),
        // libmosquitto loaded with dlopen once [mqtt] is configured, not linked: linked, its
        // OpenSSL cost every strapd ~1.7 MB of resident memory (docs/dependencies.md).
        .target(name: "CMosquittoLoader", linkerSettings: [.linkedLibrary("dl")]),
        // The HCI connection lookup behind link quality; StrapBluetooth's C companion.
        .target(name: "CHCI"),
        // The OS edge over them: typed Errno, the injectable syscall table (EINTR retried in
        // one place), descriptors, atomic file writes. Below both the store and the server.
        .target(name: "StrapOS", dependencies: ["CShims"]),

        // Layer 2: pure protocol code (no I/O).
        .target(name: "StrapGATT"),
        .target(name: "StrapWire"),
        .target(name: "StrapDBus"),

        // Layer 3: domain model and configuration.
        .target(name: "StrapModel", dependencies: ["StrapWire"]),
        .target(name: "StrapConfig"),
        // MQTT topics, Home Assistant discovery, the delivery window, the reconnect backoff
        // (docs/mqtt.md): pure, over the model's samples.
        .target(name: "StrapMQTTProtocol", dependencies: ["StrapModel", "StrapWire"]),

        // Layer 4: store; ingest (decode → derive → samples); workout sessions (no I/O).
        .target(name: "StrapStore", dependencies: ["StrapOS", "StrapModel", "CZlib"]),
        .target(name: "StrapIngest", dependencies: ["StrapGATT", "StrapModel"]),
        .target(name: "StrapWorkout", dependencies: ["StrapModel"]),
        // The trainer's control state machine (FTMS control point; docs/trainer.md): pure, time
        // and writes injected; nothing drives it yet.
        .target(name: "StrapTrainer", dependencies: ["StrapGATT", "StrapModel"]),
        // Workout exports (FIT, TCX, CSV), HRV analysis and terminal charts: pure, bytes out.
        .target(name: "StrapExport", dependencies: ["StrapModel", "StrapWire"]),

        // Layer 5: I/O adapters and the daemon's wiring.
        .target(name: "StrapSystem", dependencies: ["StrapOS", "CSystemd", "CShims", "StrapWire"]),
        .target(name: "StrapBlueZ", dependencies: ["StrapOS", "StrapDBus", "StrapGATT", "CSystemd", "CShims"]),
        .target(name: "StrapSimulator", dependencies: ["StrapGATT"]),
        // The publisher: the store as an anchored follower, delivered through libmosquitto.
        .target(name: "StrapMQTT", dependencies: ["StrapMQTTProtocol", "StrapStore", "StrapModel", "StrapWire", "StrapConfig",
                                                  "StrapOS", "CMosquittoLoader"]),
        .target(name: "StrapBluetooth", dependencies: ["StrapBlueZ", "StrapDBus", "StrapGATT", "StrapIngest", "StrapModel",
                                                       "StrapConfig", "StrapSystem", "StrapOS", "CBluetooth", "CHCI", "CShims"]),
        .target(name: "StrapDaemon", dependencies: ["StrapIngest", "StrapStore", "StrapWorkout", "StrapExport", "StrapModel",
                                                    "StrapSimulator", "StrapGATT", "StrapOS", "StrapSystem", "StrapWire",
                                                    "StrapConfig", "StrapBluetooth", "StrapMQTT", "StrapMQTTProtocol", "StrapTrainer"]),
        // strapd-web's HTTP side (docs/web.md): a StrapKit client, never a second socket client.
        .target(name: "StrapWeb", dependencies: ["StrapKit", "StrapWire", "StrapModel", "StrapExport", "StrapOS", "CMicroHTTPD", "CSystemd", "CShims"]),

        // Layer 6: executables and their testable command logic.
        .executableTarget(name: "strapd", dependencies: ["StrapDaemon"], exclude: ["hot-path.order"], linkerSettings: namedTimeZones + hotPathLayout("strapd")),
        // strapctl's commands; it talks to strapd through StrapKit, the one client library.
        .target(name: "StrapControl", dependencies: ["StrapKit", "StrapOS", "StrapGATT", "StrapWire", "StrapModel", "StrapExport", "CShims"]),
        .executableTarget(name: "strapctl", dependencies: ["StrapControl", "CShims"], linkerSettings: namedTimeZones),
        .executableTarget(name: "strapd-web", dependencies: ["StrapWeb"], exclude: ["hot-path.order"], linkerSettings: namedTimeZones + hotPathLayout("strapd-web")),
        .executableTarget(name: "strap-store-torture", dependencies: ["StrapStore", "StrapModel", "CShims"]),
        // The client library (docs/client.md): only the pure layers and the OS edge, so an
        // application links no daemon code.
        .target(name: "StrapKit", dependencies: ["StrapWire", "StrapModel", "StrapOS", "CShims"]),

        // Tests: one target per module, fixtures under Tests/Fixtures. The mock BlueZ test
        // bed is a plain target so both the BlueZ and the daemon tests can use it.
        .target(name: "MockBlueZSupport", dependencies: ["StrapBlueZ", "StrapDBus"], path: "Tests/MockBlueZSupport"),
        // A raw, byte-level driver of the socket protocol for the daemon's conformance tests
        // (garbage, oversized lines, half-closed sockets): what no client library offers.
        .target(name: "ProtocolDriver", dependencies: ["StrapOS", "StrapWire", "CShims"], path: "Tests/ProtocolDriver"),
        .testTarget(name: "StrapOSTests", dependencies: ["StrapOS"]),
        .testTarget(name: "StrapGATTTests", dependencies: ["StrapGATT"]),
        .testTarget(name: "StrapWireTests", dependencies: ["StrapWire"]),
        .testTarget(name: "StrapDBusTests", dependencies: ["StrapDBus"]),
        .testTarget(name: "StrapMQTTTests", dependencies: ["StrapMQTTProtocol", "StrapMQTT", "CMosquittoLoader", "StrapModel", "StrapConfig", "StrapWire",
                                                         "ThirdPartyReaders"]),
        .testTarget(name: "StrapModelTests", dependencies: ["StrapModel"]),
        .testTarget(name: "StrapConfigTests", dependencies: ["StrapConfig"]),
        .testTarget(name: "StrapStoreTests", dependencies: ["StrapStore", "StrapOS", "StrapModel", "StrapSimulator", "strap-store-torture"]),
        .testTarget(name: "StrapIngestTests", dependencies: ["StrapIngest", "StrapSimulator", "StrapGATT", "StrapModel"]),
        // The child in which tests run what reads the process environment (libsystemd's
        // sd_notify, sd_watchdog_enabled, sd_listen_fds, sd_bus_open_system), since no test may
        // change its own (docs/testing.md, "The environment"). Shipped in no product.
        .executableTarget(name: "strap-env-probe", dependencies: ["StrapSystem", "StrapBlueZ", "StrapDBus"], path: "Tests/EnvironmentProbe"),
        .testTarget(name: "StrapSystemTests", dependencies: ["StrapSystem", "StrapOS", "StrapWire", "CShims", "strap-env-probe"]),
        .testTarget(name: "StrapBlueZTests", dependencies: ["StrapBlueZ", "StrapDBus", "StrapGATT", "MockBlueZSupport", "strap-env-probe"]),
        .testTarget(name: "StrapSimulatorTests", dependencies: ["StrapSimulator", "StrapGATT"]),
        .testTarget(name: "StrapBluetoothTests", dependencies: ["StrapBluetooth", "StrapIngest", "StrapSystem", "MockBlueZSupport"]),
        .testTarget(name: "StrapDaemonTests", dependencies: ["StrapDaemon", "StrapIngest", "StrapStore", "StrapWorkout", "StrapExport",
                                                             "StrapModel", "StrapSimulator", "StrapGATT", "StrapSystem", "StrapWire",
                                                             "StrapControl", "StrapDBus", "MockBlueZSupport", "ThirdPartyReaders", "ProtocolDriver", "StrapTrainer"]),
        // strapctl itself too: WebCommandTests run the binary as another user (a permission refused).
        .testTarget(name: "StrapControlTests", dependencies: ["StrapControl", "StrapWire", "strapctl"]),
        .testTarget(name: "StrapKitTests", dependencies: ["StrapKit", "StrapDaemon", "StrapStore", "StrapModel", "StrapWire",
                                                     "StrapIngest", "StrapSimulator", "StrapSystem"]),
        .testTarget(name: "StrapTrainerTests", dependencies: ["StrapTrainer", "StrapGATT", "StrapModel"]),
        // strapd-web over HTTP in front of a real strapd --simulate (both binaries as children).
        .testTarget(name: "StrapWebTests", dependencies: ["StrapWeb", "StrapKit", "StrapWire", "StrapModel", "strapd-web", "strapd", "strapctl"]),
        .testTarget(name: "StrapWorkoutTests", dependencies: ["StrapWorkout", "StrapModel", "StrapStore", "StrapIngest", "StrapGATT",
                                                         "StrapSimulator"]),
        .target(name: "ThirdPartyReaders", path: "Tests/ThirdPartyReaders"),
        .testTarget(name: "StrapExportTests", dependencies: ["ThirdPartyReaders", "StrapExport", "StrapModel", "StrapIngest", "StrapSimulator",
                                                             "StrapGATT"]),
    ]
)
