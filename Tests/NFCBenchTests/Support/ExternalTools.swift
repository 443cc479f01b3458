import Foundation
import NFCBase
import Synchronization
import Testing

/// Other people's tools the trace tests use as witnesses: tshark reads our pcapng files,
/// rsvg-convert renders our SVG. Missing under CI=true is a failure, elsewhere a skip.
/// A part of the bench a test needs (tshark, the private pcscd, a tool) is missing.
struct BenchPartMissing: Error, CustomStringConvertible {
    let description: String
}

/// What a test does when a part of the bench is missing: under `CI=true` it fails (the error is
/// thrown); otherwise it is skipped with the reason (`Test.cancel`, reported as skipped). Never
/// a quiet return that passes.
enum BenchPart {
    static func missing(_ reason: String) throws -> Never {
        if ExternalTool.isCI { throw BenchPartMissing(description: reason) }
        try Test.cancel(Comment(rawValue: reason))
    }
}

enum ExternalTool {
    static let isCI = ProcessInfo.processInfo.environment["CI"] == "true"

    static func path(_ name: String) -> String? {
        for dir in ["/usr/bin", "/usr/local/bin", "/bin"]
        where FileManager.default.isExecutableFile(atPath: "\(dir)/\(name)") {
            return "\(dir)/\(name)"
        }
        return nil
    }

    /// The tool's path, or nil after recording an issue (CI) or printing a skip.
    static func require(_ name: String, package: String) -> String? {
        if let p = path(name) { return p }
        if isCI {
            Issue.record("\(name) is missing (Debian package \(package); scripts/install-deps installs it)")
        } else {
            print("skipped: \(name) is missing (Debian package \(package))")
        }
        return nil
    }

    /// The tool's path; when it is missing, ends the test (``BenchPart/missing(_:)``).
    static func required(_ name: String, package: String) throws -> String {
        if let p = path(name) { return p }
        try BenchPart.missing("\(name) is missing (Debian package \(package); scripts/install-deps installs it)")
    }

    /// Runs `tool args…` to completion off the cooperative pool.
    static func run(_ tool: String, _ args: [String]) async throws -> NFCBench.Result {
        try await NFCBench.offPool {
            let p = Process()
            p.executableURL = URL(fileURLWithPath: tool)
            p.arguments = args
            let out = Pipe()
            let err = Pipe()
            p.standardOutput = out
            p.standardError = err
            p.standardInput = FileHandle.nullDevice
            try p.run()
            let group = DispatchGroup()
            nonisolated(unsafe) var o = Data()
            nonisolated(unsafe) var e = Data()
            group.enter()
            OffPool.detach(name: "nfcbench.test.pipe") {
                o = out.fileHandleForReading.readDataToEndOfFile()
                group.leave()
            }
            group.enter()
            OffPool.detach(name: "nfcbench.test.pipe") {
                e = err.fileHandleForReading.readDataToEndOfFile()
                group.leave()
            }
            group.wait()
            p.waitUntilExit()
            try? out.fileHandleForReading.close()
            try? err.fileHandleForReading.close()
            return NFCBench.Result(
                status: p.terminationStatus, stdout: String(decoding: o, as: UTF8.self),
                stderr: String(decoding: e, as: UTF8.self))
        }
    }
}

/// tshark's view of a pcapng file: one row per packet with the fields asked for, from one
/// `tshark -r FILE -d iso14443.subdissector,iso7816 -T fields` run. Malformed packets are in
/// those rows (the `_ws.malformed` item, the "[Malformed Packet]" the Info column gets, the
/// Malformed expert group), so no second `-V` reading of the file is needed; and a file whose
/// bytes tshark has already read (the `--pcapng` written during a run and the export of its
/// trace are often the same bytes) is not read again: tshark's view depends on nothing else.
struct TsharkView {
    /// The fields every check uses (ISO 14443, ISO 7816 with the "decode as" that hands
    /// ISO 14443-4 payloads to it, malformed markers, comments; the interface, the protocol
    /// stack and FeliCa's fields).
    static let fields = [
        "frame.number", "_ws.col.Info", "iso14443.event", "iso14443.short_frame", "iso14443.sel",
        "iso14443.uid_cln", "iso14443.bcc", "iso14443.fsdi", "iso14443.tl", "iso14443.pcb",
        "iso14443.block_type", "iso7816.apdu.ins", "iso7816.apdu.body", "iso7816.apdu.sw1", "_ws.malformed",
        "_ws.expert.group", "frame.comment", "frame.interface_id", "frame.protocols", "felica.opcode",
        "felica.sys_code", "felica.idm", "felica.pnm", "felica.svc_code", "felica.blocks", "felica.status.flag1",
    ]
    /// `_ws.expert.group`'s value for the Malformed group (PI_MALFORMED, epan/proto.h).
    static let malformedExpertGroup = "\(0x0700_0000)"

    var rows: [[String: String]]

    static func read(_ file: String) async throws -> TsharkView? {
        guard ExternalTool.require("tshark", package: "tshark") != nil else { return nil }
        return try await view(file)
    }

    /// Views already read, by the file's bytes.
    private static let seen = Mutex<[Data: TsharkView]>([:])

    /// tshark's view of `file`; when tshark is missing, ends the test (``BenchPart/missing(_:)``).
    static func view(_ file: String) async throws -> TsharkView {
        let tshark = try ExternalTool.required("tshark", package: "tshark")
        let bytes = try Data(contentsOf: URL(fileURLWithPath: file))
        if let known = seen.withLock({ $0[bytes] }) { return known }
        var args = ["-r", file, "-d", "iso14443.subdissector,iso7816"]
        args += ["-T", "fields", "-E", "separator=\t", "-E", "occurrence=a"]
        for f in fields { args += ["-e", f] }
        let r = try await ExternalTool.run(tshark, args)
        #expect(r.status == 0, "tshark: \(r.stderr)")
        let rows = r.stdout.split(separator: "\n", omittingEmptySubsequences: true).map { line in
            let values = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            var row: [String: String] = [:]
            for (i, f) in fields.enumerated() where i < values.count { row[f] = values[i] }
            return row
        }
        let view = TsharkView(rows: rows)
        // Only a clean reading is kept: a failed one fails every test that asks again.
        if r.status == 0 { seen.withLock { $0[bytes] = view } }
        return view
    }

    func any(_ field: String, _ match: (String) -> Bool) -> Bool {
        rows.contains { ($0[field]).map { !$0.isEmpty && match($0) } ?? false }
    }

    /// The numbers of the malformed packets: a `_ws.malformed` item, "[Malformed Packet" in
    /// the Info column, or an expert info of the Malformed group.
    var malformedFrames: [String] {
        rows.filter { row in
            !(row["_ws.malformed"] ?? "").isEmpty || (row["_ws.col.Info"] ?? "").contains("[Malformed Packet")
                || (row["_ws.expert.group"] ?? "").split(separator: ",").contains { $0 == Self.malformedExpertGroup }
        }.map { $0["frame.number"] ?? "?" }
    }

    /// No packet is malformed (``malformedFrames``).
    var malformedFree: Bool { malformedFrames.isEmpty }

    var info: [String] { rows.map { $0["_ws.col.Info"] ?? "" } }
    var comments: [String] { rows.compactMap { $0["frame.comment"] }.filter { !$0.isEmpty } }
}
