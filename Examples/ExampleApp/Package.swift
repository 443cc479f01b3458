// swift-tools-version:6.0
// An app team's package: its NFC logic (ScanFeature) tested against nfcbench's
// conformance harness, on Linux, in virtual time.
import Foundation
import PackageDescription

// nfcbench is a path dependency two folders up. SwiftPM names a path dependency after its
// folder, whatever the clone is called (nfcbench, nfcbench-main, x-y-z...), so the
// identity is computed from this manifest's own path.
let benchFolder = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
let bench = benchFolder.lastPathComponent.lowercased()

let strict: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

let package = Package(
    name: "ExampleApp",
    platforms: [.macOS(.v15)],
    products: [.library(name: "ScanFeature", targets: ["ScanFeature"])],
    dependencies: [.package(path: "../..")],
    targets: [
        .target(
            name: "ScanFeature",
            dependencies: [.product(name: "ReaderSession", package: bench), .product(name: "NFCTags", package: bench)],
            swiftSettings: strict),
        .testTarget(
            name: "ScanFeatureTests",
            dependencies: [
                "ScanFeature",
                .product(name: "ReaderSession", package: bench),
                .product(name: "ReaderSessionConformance", package: bench),
            ],
            swiftSettings: strict),
    ],
    swiftLanguageModes: [.v6]
)
