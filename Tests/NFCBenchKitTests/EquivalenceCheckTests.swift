import Foundation
import NFCBenchKit
import NFCBenchTestSupport
import NFCTags
import NFCTrace
import ReaderSession
import Testing

/// `check equivalence` as a library: what a row compares, and that a difference shows.
@Suite("EquivalenceCheck, the cross-device contract as a library")
struct EquivalenceCheckTests {
    static let tags = TestPaths.tags

    static func load(_ name: String) throws -> TagFile {
        try TagFile.load(path: tags.appendingPathComponent(name + ".json").path)
    }

    /// Every session here ends long before it (each tag is delivered): a limit for a loaded
    /// 2-core machine, not the command's 3 s, so a slow start never reads as a timeout.
    static let limit: Duration = .seconds(30)

    static var libnfc: Bool {
        ProcessInfo.processInfo.environment["CI"] == "true"
            || FileManager.default.fileExists(atPath: "/usr/bin/nfc-list")
    }

    @Test("A faulty file's rows compare the pages read; the same on sim: and the virtual PN532", .enabled(if: libnfc))
    func faultyRows() async throws {
        let check = EquivalenceCheck(devices: [.sim, .pn532], modes: [.ndefRW], timeLimit: Self.limit)
        let rows = try await check.run([("ntag215-flaky", try Self.load("ntag215-flaky"))])
        let row = try #require(rows.first)
        #expect(row.same, "\(row.text)")
        let lines = row.reference
        #expect(lines.contains { $0.hasPrefix("app readNDEF failed 100") }, "\(lines)")
        // READ 0 (the CC), READ 4, READ 10 answered; the READ of page 8 lost the tag.
        #expect(lines.contains("pages read: 0-7,10-13"), "\(lines)")
        #expect(row.runs.allSatisfy { $0.run.ending.rawValue == 200 })
    }

    @Test(
        "A write row compares the pages the write left and each device's tag read back by the next",
        .enabled(if: libnfc))
    func writeRows() async throws {
        let file = try Self.load("ntag215-uri")
        let rows = try await EquivalenceCheck(
            devices: [.sim, .pn532], modes: [.write, .format], timeLimit: Self.limit
        ).run([
            ("ntag215-uri", file)
        ])
        try #require(rows.count == 2)
        for row in rows { #expect(row.same, "\(row.text)") }
        let write = rows[0].reference
        #expect(write.contains { $0.hasPrefix("app writeNDEF") }, "\(write)")
        #expect(write.contains { $0.hasPrefix("page 4 := 0318D101") }, "TLV 03 18, the Text record: \(write)")
        #expect(
            write.contains { $0.hasPrefix("read back: app readNDEF") && $0.contains("check equivalence") }, "\(write)")
        #expect(rows[0].runs.map { $0.run.readBack?.device } == [.pn532, .sim])
        let format = rows[1].reference
        // The empty message's TLV 03 00 FE; the page's 4th byte keeps what was there (only the
        // bytes that change are sent, and a WRITE carries the page whole).
        #expect(format.contains { $0.hasPrefix("page 4 := 0300FE") }, "the empty message: \(format)")
        // Core NFC's readNDEF of an empty message: 403 (ndefReaderSessionErrorZeroLengthMessage).
        #expect(format.contains("read back: app readNDEF failed 403"), "\(format)")
    }

    @Test("Rows with a differing run say so, naming the first difference (pure)")
    func difference() {
        let a: [JSONObject] = [["event": "didBecomeActive"], ["event": "didInvalidateWithError", "code": .int(204)]]
        let b: [JSONObject] = [["event": "didBecomeActive"], ["event": "didInvalidateWithError", "code": .int(201)]]
        let same = EquivalenceRun(deviceName: "x", ending: .readerSessionInvalidationErrorFirstNDEFTagRead, records: a)
        let other = EquivalenceRun(deviceName: "y", ending: .readerSessionInvalidationErrorSessionTimeout, records: b)
        let row = EquivalenceRow(tag: "t", mode: .ndef, runs: [(.sim, same), (.pcsc, other), (.pn532, same)])
        #expect(!row.same)
        // The device's line first, then the reference's (sim:'s).
        #expect(row.text.contains("pcsc: differs (event 2: didInvalidateWithError 201 ≠ didInvalidateWithError 204)"))
        #expect(row.text.contains("pn532: same"))
        #expect(row.json["same"] == .bool(false))
    }

    @Test("vpcd entries: with-pcscd's names and ports, from entry 0 up to the first gap (pure)")
    func entries() {
        let names = ["Virtual PCD 1 00 00", "Virtual PCD 1 00 01", "Virtual PCD 00 00", "Virtual PCD 00 01"]
        let e = VPCDEntry.available(names + ["Virtual PCD 3 00 00", "Virtual PCD 3 00 01"])
        #expect(e.map(\.index) == [0, 1])
        #expect(e[1].ports == [35965, 35966] && e[1].readers == ["Virtual PCD 1 00 00", "Virtual PCD 1 00 01"])
        #expect(VPCDEntry.available(["Virtual PCD 00 00"]).isEmpty)
    }
}
