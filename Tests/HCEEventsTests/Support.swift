import Foundation
import NFCBenchTestSupport

@testable import HCEEvents

/// Package root and the public corpus kept in the package (`<root>/Tests/Fixtures/corpus`,
/// sources in its README): the support module's paths.
let packageRoot = TestPaths.packageRoot
let corpusDirectory = TestPaths.corpus
let corpusPresent = TestPaths.corpusPresent
/// Under CI the corpus must exist: tests run (and fail) instead of being skipped.
let corpusRequired = TestPaths.corpusRequired

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
