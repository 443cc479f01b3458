import NFCTags
import Testing

private func h(_ s: String) -> [UInt8] { [UInt8](hex: s) ?? [] }

@Suite("Type 4 Tag NDEF application emulation core")
struct Type4NDEFApplicationTests {
    static let selectApp = "00 A4 04 00 07 D2 76 00 00 85 01 01 00"
    static let selectCC = "00 A4 00 0C 02 E1 03"
    static let selectNDEF = "00 A4 00 0C 02 E1 04"

    /// A 64-byte NDEF file holding `D1 01 01 54 41` (NLEN 5), MLe 32, MLc 16.
    func tag(mapping: UInt8 = 0x20, readOnly: Bool = false, size: Int = 64) throws -> Type4NDEFApplication {
        try Type4NDEFApplication(
            ndefMessage: h("D1 01 01 54 41"), maximumFileSize: size, mappingVersion: mapping,
            maximumReadLength: 0x20, maximumWriteLength: 0x10, readOnly: readOnly)
    }

    func run(_ app: inout Type4NDEFApplication, _ apdus: String...) -> [String] {
        apdus.map { app.respond(to: h($0)).hexString(separator: " ") }
    }

    @Test("Malformed, foreign-class and unknown commands get 6700, 6E00, 6D00")
    func envelopeRules() throws {
        var app = try tag()
        #expect(
            run(
                &app, "00 A4 04", "80 A4 04 00 07 D2 76 00 00 85 01 01 00", "00 CA 00 00 00",
                "00 A4 04 00 00 AA", "00 A4 00 0C 05 E1 03") == ["67 00", "6E 00", "6D 00", "67 00", "67 00"])
        #expect(app.respond(to: []) == h("67 00"))
    }

    @Test("SELECT by name answers only the NDEF Tag Application")
    func selectApplication() throws {
        var app = try tag()
        #expect(
            run(
                &app, "00 A4 04 00 07 A0 00 00 00 03 10 10 00", "00 A4 04 02 07 D2 76 00 00 85 01 01 00",
                "00 A4 04 00 07 D2 76 00 00 85 01 00 00") == ["6A 82", "6A 82", "6A 82"])
        #expect(!app.isApplicationSelected)
        #expect(run(&app, Self.selectApp) == ["90 00"])
        #expect(app.isApplicationSelected)
        #expect(
            run(&app, "00 A4 04 0C 07 D2 76 00 00 85 01 01", "00 A4 04 08 07 D2 76 00 00 85 01 01") == [
                "90 00", "6A 86",
            ])
    }

    @Test("SELECT by file id: 6986 before the application, 6A82 unknown, 6A86 other P1/P2")
    func selectFile() throws {
        var app = try tag()
        #expect(run(&app, Self.selectCC) == ["69 86"])
        #expect(
            run(
                &app, Self.selectApp, "00 A4 00 0C 02 E1 05", "00 A4 00 00 02 E1 03",
                "00 A4 01 0C 02 E1 03", "00 A4 00 0C 01 E1", Self.selectCC, Self.selectNDEF)
                == ["90 00", "6A 82", "6A 86", "6A 86", "67 00", "90 00", "90 00"])
    }

    @Test("READ BINARY: no file 6986, CC bytes, Le clamped to MLe, short read at the end, 6B00 beyond")
    func readBinary() throws {
        var app = try tag()
        #expect(run(&app, Self.selectApp, "00 B0 00 00 0F") == ["90 00", "69 86"])
        #expect(
            run(&app, Self.selectCC, "00 B0 00 00 0F", "00 B0 00 0D 10", "00 B0 00 0F 01", "00 B0 00 00")
                == ["90 00", "00 0F 20 00 20 00 10 04 06 E1 04 00 40 00 00 90 00", "00 00 90 00", "6B 00", "67 00"])
        _ = run(&app, Self.selectNDEF)
        let full = app.respond(to: h("00 B0 00 00 00"))  // Le 256, MLe 32
        #expect(full.count == 32 + 2 && Array(full.prefix(7)) == h("00 05 D1 01 01 54 41"))
        #expect(
            run(&app, "00 B0 00 3E 10", "00 B0 00 40 01", "00 B0 80 00 01", "00 B0 00 00 01 AA 01")
                == ["00 00 90 00", "6B 00", "6A 86", "67 00"])
        app.reportsEndOfFile = true
        #expect(run(&app, "00 B0 00 3E 10") == ["00 00 62 82"])
    }

    @Test("UPDATE BINARY writes the NDEF file and refuses the CC, read-only files, overflows and Nc > MLc")
    func updateBinary() throws {
        var app = try tag()
        #expect(run(&app, Self.selectApp, "00 D6 00 00 01 00") == ["90 00", "69 86"])
        #expect(run(&app, Self.selectCC, "00 D6 00 00 01 00") == ["90 00", "69 82"])
        #expect(
            run(&app, Self.selectNDEF, "00 D6 00 00 02 00 03", "00 D6 00 02 03 D0 00 00")
                == ["90 00", "90 00", "90 00"])
        #expect(app.ndefMessage == h("D0 00 00"))
        #expect(Array(app.ndefFile.prefix(5)) == h("00 03 D0 00 00"))
        #expect(
            run(
                &app, "00 D6 00 40 01 00", "00 D6 00 3F 02 00 00",
                "00 D6 00 00 11 00 01 02 03 04 05 06 07 08 09 0A 0B 0C 0D 0E 0F 10", "00 D6 00 00 01 00 01")
                == ["6B 00", "6A 84", "67 00", "67 00"])
        var ro = try tag(readOnly: true)
        #expect(run(&ro, Self.selectApp, Self.selectNDEF, "00 D6 00 00 02 00 00") == ["90 00", "90 00", "69 82"])
        #expect(ro.ndefMessage == h("D1 01 01 54 41"))
    }

    @Test("READ/UPDATE BINARY with ODO: 6D00 on mapping 2.0, 53-wrapped data on 3.0")
    func odo() throws {
        var v2 = try tag()
        #expect(
            run(&v2, Self.selectApp, Self.selectNDEF, "00 B1 00 00 05 54 03 00 00 00 10") == [
                "90 00", "90 00", "6D 00",
            ])
        var v3 = try tag(mapping: 0x30, size: 0x9000)
        _ = run(&v3, Self.selectApp, Self.selectNDEF)
        #expect(
            run(&v3, "00 D7 00 00 0A 54 03 00 80 00 53 03 AA BB CC", "00 B1 00 00 05 54 03 00 80 00 07")
                == ["90 00", "53 05 AA BB CC 00 00 90 00"])  // Le 7 = `53 05` + 5 bytes
        #expect(Array(v3.ndefFile[0x8000..<0x8003]) == h("AA BB CC"))
        // Le 00 (256) clamped to MLe 32: `53 1E` + 30 bytes.
        let clamped = v3.respond(to: h("00 B1 00 00 05 54 03 00 80 00 00"))
        #expect(clamped.count == 32 + 2 && Array(clamped.prefix(5)) == h("53 1E AA BB CC"))
        #expect(
            run(
                &v3, "00 B1 00 00 05 55 03 00 80 00 07", "00 B1 00 01 05 54 03 00 80 00 07",
                "00 B1 00 00 05 54 03 00 90 00 07", "00 D7 00 00 0A 54 03 00 80 00 53 04 AA BB CC",
                "00 B1 00 00 05 54 03 00 80 00")
                == ["6A 80", "6A 86", "6B 00", "6A 80", "67 00"])
    }

    @Test("deselect() forgets the application and file, keeps the content")
    func deselect() throws {
        var app = try tag()
        _ = run(&app, Self.selectApp, Self.selectNDEF, "00 D6 00 00 02 00 00")
        app.deselect()
        #expect(!app.isApplicationSelected)
        #expect(run(&app, "00 B0 00 00 02", Self.selectNDEF) == ["69 86", "69 86"])
        #expect(app.ndefMessage == [])
    }

    @Test("Refuses to build a tag whose message does not fit its file")
    func tooLarge() {
        let e = #expect(throws: Type4TagError.self) {
            try Type4NDEFApplication(ndefMessage: [UInt8](repeating: 0, count: 63), maximumFileSize: 64)
        }
        #expect(e?.code == .messageTooLarge)
        let e2 = #expect(throws: Type4TagError.self) {
            try Type4NDEFApplication(ndefMessage: [], maximumFileSize: 0x1_0000, mappingVersion: 0x20)
        }
        #expect(e2?.code == .ccInvalid)
    }

    @Test("Never traps on arbitrary bytes: every answer ends in a status word")
    func arbitraryBytes() throws {
        var app = try tag(mapping: 0x30, size: 0x9000)
        var seed: UInt64 = 0x9E37_79B9_7F4A_7C15
        func next() -> UInt8 {
            seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return UInt8(truncatingIfNeeded: seed >> 33)
        }
        let heads: [[UInt8]] = [[0x00, 0xA4], [0x00, 0xB0], [0x00, 0xD6], [0x00, 0xB1], [0x00, 0xD7]]
        for i in 0..<5000 {
            let n = Int(next() % 24)
            var apdu = heads[i % heads.count] + (0..<n).map { _ in next() }
            if i % 7 == 0 { apdu = Array(apdu.prefix(Int(next() % 6))) }
            let answer = app.respond(to: apdu)
            #expect(answer.count >= 2)
            _ = try? CommandAPDU(bytes: apdu)
            _ = try? Type4CapabilityContainer(bytes: Array(apdu.dropFirst(2)))
            _ = try? ATR(bytes: [0x3B] + apdu)
            if i % 50 == 0 { _ = run(&app, Self.selectApp, Self.selectNDEF) }
        }
    }
}
