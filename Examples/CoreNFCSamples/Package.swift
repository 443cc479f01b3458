// swift-tools-version:6.0
// Core NFC apps written as iOS apps are (view controllers that are their own session
// delegates, UI updates through DispatchQueue.main), run under nfcbench's conformance
// harness on Linux. Their NFC files compile unchanged on iOS but for one conditional import
// (`#if canImport(CoreNFC) import CoreNFC #else import ReaderSession #endif`); `import UIKit`
// finds the small stand-in target below, named UIKit for that reason (on iOS the real one).
import Foundation
import PackageDescription

// nfcbench, by path: $NFCBENCH_PATH when set, else two folders up (Examples/CoreNFCSamples
// in the clone).
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
            CoreNFCSamples: no nfcbench package at \(benchPath). This package depends on nfcbench
            by path: two folders up where it ships (Examples/CoreNFCSamples in the clone); for a
            copy elsewhere set NFCBENCH_PATH=/path/to/your/nfcbench/clone.

            """.utf8))
    exit(1)
}
// SwiftPM names a path dependency after its folder.
let bench = URL(fileURLWithPath: benchPath).lastPathComponent.lowercased()

let package = Package(
    name: "CoreNFCSamples",
    platforms: [.macOS(.v15)],
    products: [.library(name: "CoreNFCSamples", targets: ["CoreNFCSamples"])],
    dependencies: [.package(path: benchPath)],
    targets: [
        // Stands in for UIKit on Linux: the few types the view controllers use.
        .target(name: "UIKit"),
        // The apps' NFC files, as an iOS app target has them.
        .target(
            name: "CoreNFCSamples",
            dependencies: ["UIKit", .product(name: "ReaderSession", package: bench)]),
        .testTarget(
            name: "CoreNFCSamplesTests",
            dependencies: [
                "CoreNFCSamples", "UIKit",
                .product(name: "ReaderSession", package: bench),
                .product(name: "ReaderSessionConformance", package: bench),
            ]),
    ],
    swiftLanguageModes: [.v6]
)
