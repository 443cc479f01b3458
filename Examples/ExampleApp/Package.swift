// swift-tools-version:6.0
// An app team's package: its NFC logic (ScanFeature) tested against nfcbench's
// conformance harness, on Linux, in virtual time.
import Foundation
import PackageDescription

// nfcbench, by path: $NFCBENCH_PATH when set (a copy of this package anywhere), else two
// folders up (this package where it ships, Examples/ExampleApp in the clone).
// `nfcbench new-app DIR` writes a copy whose manifest names the clone itself, made from
// Package.swift.new-app beside this file: keep the targets of the two the same.
let here = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
let benchFolder =
    ProcessInfo.processInfo.environment["NFCBENCH_PATH"].map { URL(fileURLWithPath: $0, relativeTo: here) }
    ?? here.appendingPathComponent("../..")
let benchPath = benchFolder.standardizedFileURL.path
let benchManifest = (try? String(contentsOfFile: benchPath + "/Package.swift", encoding: .utf8)) ?? ""
guard benchManifest.contains(#"name: "nfcbench""#) else {
    FileHandle.standardError.write(
        Data(
            """
            ExampleApp: no nfcbench package at \(benchPath). This package depends on nfcbench by
            path: two folders up where it ships (Examples/ExampleApp in the clone). For a copy
            elsewhere, set NFCBENCH_PATH=/path/to/your/nfcbench/clone, or make the copy with
            'nfcbench new-app DIR', which names the clone in the new manifest.

            """.utf8))
    exit(1)
}
// SwiftPM names a path dependency after its folder, whatever the clone is called
// (nfcbench, nfcbench-main, x-y-z...), so the identity is that folder's name.
let bench = URL(fileURLWithPath: benchPath).lastPathComponent.lowercased()

let strict: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

let package = Package(
    name: "ExampleApp",
    platforms: [.macOS(.v15), .iOS(.v15)],
    products: [.library(name: "ScanFeature", targets: ["ScanFeature"])],
    dependencies: [.package(path: benchPath)],
    targets: [
        .target(
            name: "ScanFeature",
            // Linux only: on iOS the same files import Core NFC (see README.md).
            dependencies: [.product(name: "ReaderSession", package: bench, condition: .when(platforms: [.linux]))],
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
