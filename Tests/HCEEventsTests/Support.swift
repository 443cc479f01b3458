import Foundation

@testable import HCEEvents

/// Package root, from this file's path (Tests/HCEEventsTests/Support.swift).
let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent()

/// The public corpus kept in the package (`<root>/Tests/Fixtures/corpus`, sources in its README).
let corpusDirectory = packageRoot.appendingPathComponent("Tests/Fixtures/corpus")
let corpusPresent = FileManager.default.fileExists(atPath: corpusDirectory.path)
/// Under CI the corpus must exist: tests run (and fail) instead of being skipped.
let corpusRequired = corpusPresent || ProcessInfo.processInfo.environment["CI"] == "true"

func corpusBytes(_ name: String) throws -> [UInt8] {
    let url = corpusDirectory.appendingPathComponent(name)
    guard let d = FileManager.default.contents(atPath: url.path) else {
        throw CocoaError(.fileNoSuchFile, userInfo: [NSFilePathErrorKey: url.path])
    }
    return [UInt8](d)
}

func shippedProfiles() throws -> [ReaderProfile] {
    let dir = packageRoot.appendingPathComponent("hardware/readers")
    let names = try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasSuffix(".json") }.sorted()
    return try names.map { n in
        try ReaderProfile(json: Data(contentsOf: dir.appendingPathComponent(n)), file: n)
    }
}

func hex(_ s: String) -> [UInt8] { [UInt8](hex: s)! }

extension ContactlessPhone {
    /// The phone's events without times.
    var events: [LogEvent] { log.map(\.event) }
}

let visaAID = hex("A0000000031010")
let selectVisa = hex("00A4040007A000000003101000")
let selectPPSE = hex("00A404000E325041592E5359532E444446303100")
