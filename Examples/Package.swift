// swift-tools-version:6.0
// The seed's HealthKit patterns as small programs on StrapKit (docs/client.md *Examples*), in a
// package of their own that depends on the product package by path (as Benchmarks/ does), so
// the product package builds none of them. scripts/examples.sh runs each against
// `strapd --simulate` and checks its output.
import PackageDescription

let package = Package(
    name: "strapd-examples",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "heart-rate-tracker", targets: ["heart-rate-tracker"]),
        .executable(name: "workout-manager", targets: ["workout-manager"]),
        .executable(name: "daily-statistics", targets: ["daily-statistics"]),
        .executable(name: "characteristics", targets: ["characteristics"]),
    ],
    dependencies: [
        .package(name: "strapd", path: ".."),
    ],
    targets: [
        // Command-line options and time formatting the four programs share.
        .target(name: "ExampleSupport", dependencies: [.product(name: "StrapKit", package: "strapd"), .product(name: "CShims", package: "strapd")]),
        .executableTarget(name: "heart-rate-tracker", dependencies: ["ExampleSupport", .product(name: "StrapKit", package: "strapd")]),
        .executableTarget(name: "workout-manager", dependencies: ["ExampleSupport", .product(name: "StrapKit", package: "strapd")]),
        .executableTarget(name: "daily-statistics", dependencies: ["ExampleSupport", .product(name: "StrapKit", package: "strapd")]),
        .executableTarget(name: "characteristics", dependencies: ["ExampleSupport", .product(name: "StrapKit", package: "strapd")]),
    ]
)
