import Foundation
import NFCBase
import NFCTags
import Testing

/// Runs `scripts/ndeflib-decode.py` (ndeflib from PyPI) on the fixture corpus.
enum NDEFLibRunner {
    struct Record: Decodable, Equatable {
        var tnf: Int
        var type: String
        var id: String
        var payload: String
    }
    struct Decoded: Decodable {
        var text: String?
        var language: String?
        var encoding: String?
        var uri: String?
    }
    struct Result: Decodable {
        var ok: Bool
        var error: String?
        var records: [Record]?
        var decoded: [Decoded]?
        var contentError: String?
    }

    /// The project's virtual environment (`scripts/install-deps` makes it), never the system's python.
    static let python3: URL? = {
        let venv = NDEFTestEnvironment.packageRoot.appendingPathComponent(".venv/bin/python")
        return FileManager.default.isExecutableFile(atPath: venv.path) ? venv : nil
    }()

    static let script = NDEFTestEnvironment.packageRoot.appendingPathComponent("scripts/ndeflib-decode.py")

    static func run(_ arguments: [String], input: String) throws -> (status: Int32, output: Data) {
        guard let python3 else { throw CocoaError(.fileNoSuchFile) }
        let p = Process()
        p.executableURL = python3
        p.arguments = arguments
        let stdin = Pipe()
        let stdout = Pipe()
        p.standardInput = stdin
        p.standardOutput = stdout
        p.standardError = FileHandle.nullDevice
        try p.run()
        stdin.fileHandleForWriting.write(Data(input.utf8))
        try stdin.fileHandleForWriting.close()
        let out = stdout.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return (p.terminationStatus, out)
    }

    static let isAvailable: Bool = {
        (try? run(["-c", "import ndef"], input: ""))?.status == 0
    }()

    struct DecodeFailed: Error { var status: Int32 }

    static func decode(_ messages: [[UInt8]]) throws -> [Result] {
        let input = messages.map { $0.hexString() }.joined(separator: "\n") + "\n"
        let (status, out) = try run([script.path], input: input)
        // Thrown, not an #expect: this runs off the pool, on a thread with no test of its own.
        guard status == 0 else { throw DecodeFailed(status: status) }
        return try String(decoding: out, as: UTF8.self).split(separator: "\n")
            .map { try JSONDecoder().decode(Result.self, from: Data($0.utf8)) }
    }
}

@Suite("NDEF cross-check with ndeflib (PyPI)")
struct NDEFCrossCheckTests {
    @Test("The cross-check corpus holds at least 30 messages, valid and invalid")
    func corpusSize() {
        #expect(NDEFFixtures.all.count >= 30)
        #expect(NDEFFixtures.valid.count >= 10 && NDEFFixtures.invalid.count >= 10)
    }

    @Test(
        "Our decode matches ndeflib's on every fixture, except the listed, asserted differences",
        .enabled(
            if: NDEFLibRunner.isAvailable || NDEFTestEnvironment.isCI,
            ".venv with ndeflib not found (scripts/install-deps makes it); CI=true makes this a failure"))
    func crossCheck() async throws {
        try #require(NDEFLibRunner.isAvailable, ".venv/bin/python with ndeflib is required when CI=true")
        let fixtures = NDEFFixtures.all
        let messages = fixtures.map(\.bytes)
        let results = try await OffPool.run { try NDEFLibRunner.decode(messages) }
        try #require(results.count == fixtures.count)
        var differences: [String] = []
        for (f, lib) in zip(fixtures, results) {
            let ours = try? NFCNDEFMessage(bytes: f.bytes)
            if f.ndeflib != .same { differences.append("\(f.name): \(f.ndeflib) \(f.note)") }
            switch f.ndeflib {
            case .same:
                guard let ours else {
                    #expect(!lib.ok, "\(f.name): we reject, ndeflib accepts")
                    continue
                }
                #expect(lib.ok, "\(f.name): we accept, ndeflib says \(lib.error ?? "")")
                #expect(lib.records == Self.rawRecords(ours), "\(f.name)")
                #expect(Self.sameBodies(ours, lib), "\(f.name): bodies decode differently")
            case .weRejectTheyAccept:
                #expect(ours == nil && lib.ok, "\(f.name)")
            case .theyRejectWeAccept:
                #expect(ours != nil && !lib.ok, "\(f.name)")
            case .theyDoNotReassembleChunks:
                let r = try #require(ours?.records.first, "\(f.name)")
                let theirs = try #require(lib.records, "\(f.name)")
                #expect(ours?.records.count == 1 && theirs.count > 1)
                #expect(theirs.dropFirst().allSatisfy { $0.tnf == 6 })
                #expect(theirs.map(\.payload).joined() == r.payload.hexString())
            case .bodyDecodedDifferently:
                let ours = try #require(ours, "\(f.name)")
                #expect(lib.ok && lib.records == Self.rawRecords(ours), "\(f.name)")
                #expect(!Self.sameBodies(ours, lib), "\(f.name): expected a different body decoding")
            }
        }
        // The differences, stated: each one is asserted above.
        #expect(differences.count == fixtures.filter { $0.ndeflib != .same }.count)
        print("NDEF/ndeflib differences:\n  " + differences.joined(separator: "\n  "))
    }

    static func rawRecords(_ m: NFCNDEFMessage) -> [NDEFLibRunner.Record] {
        m.descriptions.map { .init(tnf: Int($0.tnf), type: $0.typeHex, id: $0.identifierHex, payload: $0.payloadHex) }
    }

    /// Both find a bad body (ndeflib fails its typed pass when any body is bad) or both
    /// decode the same Text and URI values.
    static func sameBodies(_ m: NFCNDEFMessage, _ lib: NDEFLibRunner.Result) -> Bool {
        let ourInvalid = m.records.contains { if case .invalid = $0.content { true } else { false } }
        guard lib.contentError == nil else { return ourInvalid }
        guard !ourInvalid, let decoded = lib.decoded, decoded.count == m.records.count else { return false }
        for (d, theirs) in zip(m.descriptions, decoded) {
            if let t = theirs.text, t != d.text || theirs.language != d.language { return false }
            if let u = theirs.uri, u != d.uri || !d.warnings.isEmpty { return false }
        }
        return true
    }
}
