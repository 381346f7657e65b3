// swift-tools-version:6.0
// strapd — layers as modules, dependencies pointing one way (docs/architecture.md, spec §2):
// C system libraries + one C shim → pure protocol code → domain model → store / ingest →
// I/O adapters → thin executables.
import PackageDescription

let package = Package(
    name: "strapd",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "strapd", targets: ["strapd"]),
        .executable(name: "strapctl", targets: ["strapctl"]),
        .executable(name: "strap-bench", targets: ["strap-bench"]),
    ],
    targets: [
        // Layer 1: C system libraries (Debian -dev packages) and the one C shim.
        .systemLibrary(name: "CSystemd", pkgConfig: "libsystemd", providers: [.apt(["libsystemd-dev"])]),
        .systemLibrary(name: "CBluetooth", pkgConfig: "bluez", providers: [.apt(["libbluetooth-dev"])]),
        .systemLibrary(name: "CZlib", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"])]),
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        // The live-latency benchmark's peer (a mosquitto broker's clients); strap-bench only.
        .systemLibrary(name: "CMosquitto", pkgConfig: "libmosquitto", providers: [.apt(["libmosquitto-dev"])]),
        .target(name: "CShims"),
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

        // Layer 4: store; ingest (decode → derive → samples).
        .target(name: "StrapStore", dependencies: ["StrapOS", "StrapModel", "CZlib"]),
        .target(name: "StrapIngest", dependencies: ["StrapGATT", "StrapModel"]),

        // Layer 5: I/O adapters and the daemon's wiring.
        .target(name: "StrapSystem", dependencies: ["StrapOS", "CSystemd", "CShims", "StrapWire"]),
        .target(name: "StrapBlueZ", dependencies: ["StrapOS", "StrapDBus", "StrapGATT", "CSystemd", "CShims"]),
        .target(name: "StrapSimulator", dependencies: ["StrapGATT"]),
        .target(name: "StrapDaemon", dependencies: ["StrapIngest", "StrapStore", "StrapModel", "StrapSimulator", "StrapGATT",
                                                    "StrapOS", "StrapSystem", "StrapWire", "StrapConfig", "StrapBlueZ", "CShims", "CBluetooth"]),

        // Layer 6: executables and their testable command logic.
        .executableTarget(name: "strapd", dependencies: ["StrapDaemon"]),
        .target(name: "StrapControl", dependencies: ["StrapOS", "StrapGATT", "StrapWire", "CShims"]),
        .executableTarget(name: "strapctl", dependencies: ["StrapControl", "CShims"]),
        .executableTarget(name: "strap-bench", dependencies: ["StrapGATT", "CShims", "CSQLite", "StrapStore", "StrapModel",
                                                              "StrapDaemon", "StrapIngest", "StrapSimulator",
                                                              "StrapSystem", "StrapWire", "CMosquitto"]),
        .executableTarget(name: "strap-store-torture", dependencies: ["StrapStore", "StrapModel", "CShims"]),

        // Tests: one target per module, fixtures under Tests/Fixtures. The mock BlueZ test
        // bed is a plain target so both the BlueZ and the daemon tests can use it.
        .target(name: "MockBlueZSupport", dependencies: ["StrapBlueZ", "StrapDBus"], path: "Tests/MockBlueZSupport"),
        .testTarget(name: "StrapOSTests", dependencies: ["StrapOS"]),
        .testTarget(name: "StrapGATTTests", dependencies: ["StrapGATT"]),
        .testTarget(name: "StrapWireTests", dependencies: ["StrapWire"]),
        .testTarget(name: "StrapDBusTests", dependencies: ["StrapDBus"]),
        .testTarget(name: "StrapModelTests", dependencies: ["StrapModel"]),
        .testTarget(name: "StrapConfigTests", dependencies: ["StrapConfig"]),
        .testTarget(name: "StrapStoreTests", dependencies: ["StrapStore", "StrapOS", "StrapModel", "strap-store-torture"]),
        .testTarget(name: "StrapIngestTests", dependencies: ["StrapIngest", "StrapSimulator", "StrapGATT", "StrapModel"]),
        .testTarget(name: "StrapSystemTests", dependencies: ["StrapSystem", "StrapOS", "StrapWire", "CShims"]),
        .testTarget(name: "StrapBlueZTests", dependencies: ["StrapBlueZ", "StrapDBus", "StrapGATT", "MockBlueZSupport"]),
        .testTarget(name: "StrapSimulatorTests", dependencies: ["StrapSimulator", "StrapGATT"]),
        .testTarget(name: "StrapDaemonTests", dependencies: ["StrapDaemon", "StrapIngest", "StrapStore", "StrapModel", "StrapSimulator",
                                                             "StrapGATT", "StrapSystem", "StrapWire", "CShims", "StrapControl",
                                                             "StrapBlueZ", "StrapConfig", "MockBlueZSupport"]),
        .testTarget(name: "StrapControlTests", dependencies: ["StrapControl", "StrapWire"]),
    ]
)
