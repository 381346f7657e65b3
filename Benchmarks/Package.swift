// swift-tools-version:6.0
// strap-bench (docs/benchmarks.md) in its own package, depending on the product package by
// path (as swift-nio's benchmarks do), so the product package mentions none of it: the peers
// it compares against (SQLite, a mosquitto broker's clients) and the allocation counter, a
// global `malloc` that must never reach strapd or strapctl.
import PackageDescription

let package = Package(
    name: "strapd-benchmarks",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "strap-bench", targets: ["strap-bench"]),
    ],
    dependencies: [
        .package(name: "strapd", path: ".."),
    ],
    targets: [
        // The store benchmark's peer.
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        // Counts malloc calls (heap allocations per decoded packet); linked by strap-bench alone.
        .target(name: "AllocationCounter"),
        .executableTarget(name: "strap-bench", dependencies: [
            "CSQLite", "AllocationCounter",
            .product(name: "CMosquitto", package: "strapd"),
            .product(name: "StrapMQTTProtocol", package: "strapd"),
            .product(name: "StrapGATT", package: "strapd"),
            .product(name: "StrapWire", package: "strapd"),
            .product(name: "StrapModel", package: "strapd"),
            .product(name: "StrapStore", package: "strapd"),
            .product(name: "StrapIngest", package: "strapd"),
            .product(name: "StrapWorkout", package: "strapd"),
            .product(name: "StrapExport", package: "strapd"),
            .product(name: "StrapSimulator", package: "strapd"),
            .product(name: "StrapSystem", package: "strapd"),
            .product(name: "StrapDaemon", package: "strapd"),
            .product(name: "StrapKit", package: "strapd"),
            .product(name: "CShims", package: "strapd"),
        ]),
    ]
)
