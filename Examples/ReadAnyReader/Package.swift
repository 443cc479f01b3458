// swift-tools-version:6.0
// Reads a tag on any reader given by name and prints its UID: `ReadAnyReader pcsc:0`,
// `ReadAnyReader sim:tap-uri`, `ReadAnyReader pn532_uart:/dev/ttyUSB0` (NFCBenchKit's BenchDevice).
import Foundation
import PackageDescription

// nfcbench by path, two folders up (Examples/ReadAnyReader in the clone). SwiftPM names a path
// dependency after its folder, whatever the clone is called, so the identity is that folder's name.
let bench = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../..")
    .standardizedFileURL

let package = Package(
    name: "ReadAnyReader",
    platforms: [.macOS(.v15)],
    dependencies: [.package(path: bench.path)],
    targets: [
        .executableTarget(
            name: "ReadAnyReader",
            dependencies: [.product(name: "NFCBenchKit", package: bench.lastPathComponent.lowercased())],
            swiftSettings: [
                .enableUpcomingFeature("ExistentialAny"), .enableUpcomingFeature("InternalImportsByDefault"),
            ])
    ],
    swiftLanguageModes: [.v6]
)
