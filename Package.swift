// swift-tools-version:6.0
// strapd — layers as modules, dependencies pointing one way (docs/architecture.md, spec §2):
// C system libraries + one C shim → pure protocol code → domain model → store / workout
// engine → I/O adapters → thin executables.
import PackageDescription

let package = Package(
    name: "strapd",
    platforms: [.macOS(.v14)],
    targets: [
        // Layer 1: C system libraries (Debian -dev packages) and the one C shim.
        .systemLibrary(name: "CSystemd", pkgConfig: "libsystemd", providers: [.apt(["libsystemd-dev"])]),
        .systemLibrary(name: "CBluetooth", pkgConfig: "bluez", providers: [.apt(["libbluetooth-dev"])]),
        .systemLibrary(name: "CZlib", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"])]),
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        .target(name: "CShims"),

        // Layer 2: pure protocol code (no I/O, no Foundation).
        .target(name: "StrapGATT"),
        .target(name: "StrapDBus"),
        // Layer 5: I/O adapters.
        .target(name: "StrapBlueZ", dependencies: ["StrapDBus", "StrapGATT", "CSystemd", "CShims"]),

        .testTarget(name: "StrapDBusTests", dependencies: ["StrapDBus"]),
        .testTarget(name: "StrapBlueZTests", dependencies: ["StrapBlueZ", "StrapDBus", "StrapGATT"]),
    ]
)
