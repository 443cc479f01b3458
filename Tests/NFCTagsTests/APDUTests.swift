import NFCTags
import Testing

private func h(_ s: String) -> [UInt8] { [UInt8](hex: s) ?? [] }

@Suite("ISO/IEC 7816-4 command APDUs")
struct APDUCommandTests {
    struct Case: Sendable, CustomTestStringConvertible {
        let hex: String
        let shape: CommandAPDU.Case
        let data: String
        let le: Int?
        var testDescription: String { hex }
    }

    @Test(
        "Parses each of the seven encodings and re-encodes the same bytes",
        arguments: [
            Case(hex: "00 A4 04 00", shape: .case1, data: "", le: nil),
            Case(hex: "00 B0 00 00 00", shape: .case2Short, data: "", le: 256),
            Case(hex: "00 B0 00 00 0F", shape: .case2Short, data: "", le: 15),
            Case(hex: "00 A4 00 0C 02 E1 03", shape: .case3Short, data: "E1 03", le: nil),
            Case(
                hex: "00 A4 04 00 07 D2 76 00 00 85 01 01 00", shape: .case4Short, data: "D2 76 00 00 85 01 01", le: 256
            ),
            Case(hex: "00 B0 00 00 00 00 00", shape: .case2Extended, data: "", le: 65536),
            Case(hex: "00 B0 00 00 00 01 00", shape: .case2Extended, data: "", le: 256),
            Case(hex: "00 D6 00 00 00 00 03 AA BB CC", shape: .case3Extended, data: "AA BB CC", le: nil),
            Case(
                hex: "00 B1 00 00 00 00 05 54 03 00 80 00 01 00", shape: .case4Extended, data: "54 03 00 80 00", le: 256
            ),
        ])
    func parsesAndBuilds(c: Case) throws {
        let apdu = try CommandAPDU(bytes: h(c.hex))
        #expect(apdu.apduCase == c.shape)
        #expect(apdu.data == h(c.data))
        #expect(apdu.le == c.le)
        #expect(apdu.bytes == h(c.hex))
        let forced = try CommandAPDU(
            cla: apdu.cla, ins: apdu.ins, p1: apdu.p1, p2: apdu.p2, data: apdu.data, le: apdu.le,
            encoding: apdu.isExtended ? .extended : .short)
        #expect(forced == apdu)
    }

    @Test(
        "Rejects malformed length fields with the matching code",
        arguments: [
            ("00 A4", APDUError.Code.tooShort),
            ("00 A4 04 00 00 AA", .zeroLc),
            ("00 A4 04 00 00 AA BB CC", .inconsistentLength),
            ("00 D6 00 00 00 00 00 AA", .zeroLc),
            ("00 A4 00 0C 02 E1 03 00 00", .inconsistentLength),
            ("00 A4 00 0C 05 E1 03", .inconsistentLength),
            ("00 D6 00 00 00 00 05 AA BB", .inconsistentLength),
            ("00 B1 00 00 00 00 01 AA 00", .inconsistentLength),
            ("00 B1 00 00 00 00 01 AA 00 00 00", .inconsistentLength),
        ])
    func rejects(hex: String, code: APDUError.Code) {
        #expect(throws: APDUError(code, "")) { try CommandAPDU(bytes: h(hex)) }
    }

    @Test("Chooses the extended form only when a length needs it")
    func automaticEncoding() throws {
        let big = try CommandAPDU(ins: 0xD6, p1: 0, p2: 0, data: [UInt8](repeating: 0xEE, count: 256))
        #expect(big.apduCase == .case3Extended)
        #expect(Array(big.bytes.prefix(7)) == h("00 D6 00 00 00 01 00"))
        #expect(try CommandAPDU(ins: 0xB0, p1: 0, p2: 0, le: 257).bytes == h("00 B0 00 00 00 01 01"))
        #expect(try CommandAPDU(ins: 0xB0, p1: 0, p2: 0, le: 256).bytes == h("00 B0 00 00 00"))
        #expect(try CommandAPDU(ins: 0xB0, p1: 0, p2: 0, le: 0).apduCase == .case1)
        let forced = try CommandAPDU(ins: 0xA4, p1: 4, p2: 0, data: [1, 2], le: 3, encoding: .extended)
        #expect(forced.bytes == h("00 A4 04 00 00 00 02 01 02 00 03"))
        #expect(throws: APDUError(.dataTooLong, "")) {
            try CommandAPDU(ins: 0xD6, p1: 0, p2: 0, data: [UInt8](repeating: 0, count: 256), encoding: .short)
        }
        #expect(throws: APDUError(.leOutOfRange, "")) {
            try CommandAPDU(ins: 0xB0, p1: 0, p2: 0, le: 257, encoding: .short)
        }
        #expect(throws: APDUError(.leOutOfRange, "")) { try CommandAPDU(ins: 0xB0, p1: 0, p2: 0, le: 65537) }
        #expect(throws: APDUError(.dataTooLong, "")) {
            try CommandAPDU(ins: 0xD6, p1: 0, p2: 0, data: [UInt8](repeating: 0, count: 65536))
        }
    }

    @Test("Builds the SELECT, READ BINARY and UPDATE BINARY commands of the T4T procedures")
    func builders() throws {
        let ndefApp = h("D2 76 00 00 85 01 01")
        #expect(try CommandAPDU.select(aid: ndefApp).bytes == h("00 A4 04 00 07 D2 76 00 00 85 01 01 00"))
        #expect(
            try CommandAPDU.select(aid: ndefApp, occurrence: .next, le: nil).bytes
                == h("00 A4 04 02 07 D2 76 00 00 85 01 01"))
        #expect(throws: APDUError(.invalidParameter, "")) { try CommandAPDU.select(aid: h("D2 76 00 00")) }
        #expect(CommandAPDU.selectFile(id: 0xE103).bytes == h("00 A4 00 0C 02 E1 03"))
        #expect(try CommandAPDU.readBinary(offset: 0x7FFF, length: 256).bytes == h("00 B0 7F FF 00"))
        #expect(throws: APDUError(.invalidParameter, "")) { try CommandAPDU.readBinary(offset: 0x8000, length: 1) }
        #expect(try CommandAPDU.updateBinary(offset: 2, data: [1, 2]).bytes == h("00 D6 00 02 02 01 02"))
        #expect(
            try CommandAPDU.readBinaryODO(offset: 0x8000, length: 0x3B).bytes
                == h("00 B1 00 00 05 54 03 00 80 00 3B"))
        #expect(
            try CommandAPDU.updateBinaryODO(offset: 0x012345, data: [0xAA]).bytes
                == h("00 D7 00 00 08 54 03 01 23 45 53 01 AA"))
        let odo200 = try CommandAPDU.updateBinaryODO(offset: 0x8000, data: [UInt8](repeating: 7, count: 200))
        #expect(Array(odo200.bytes.prefix(13)) == h("00 D7 00 00 D0 54 03 00 80 00 53 81 C8"))
        #expect(throws: APDUError(.invalidParameter, "")) {
            try CommandAPDU.readBinaryODO(offset: 0x100_0000, length: 1)
        }
    }

    @Test("Errors compare by code, not by reason")
    func errorEquality() {
        #expect(APDUError(.zeroLc, "a") == APDUError(.zeroLc, "b"))
        #expect(APDUError(.zeroLc, "a") != APDUError(.tooShort, "a"))
    }
}

@Suite("ISO/IEC 7816-4 response APDUs and status words")
struct APDUResponseTests {
    @Test("Splits data from SW1 SW2 and refuses fewer than two bytes")
    func response() throws {
        let ok = try ResponseAPDU(bytes: h("90 00"))
        #expect(ok.data.isEmpty && ok.statusWord == .success && ok.statusWord.isSuccess)
        let nf = try ResponseAPDU(bytes: h("01 02 6A 82"))
        #expect(nf.data == [1, 2] && nf.statusWord == .fileNotFound && !nf.statusWord.isSuccess)
        #expect(nf.bytes == h("01 02 6A 82"))
        #expect(throws: APDUError(.tooShort, "")) { try ResponseAPDU(bytes: [0x90]) }
    }

    @Test("Named status words carry the ISO/IEC 7816-4 values")
    func values() {
        let table: [(StatusWord, UInt16)] = [
            (.success, 0x9000), (.fileNotFound, 0x6A82), (.wrongParameters, 0x6A86), (.wrongLength, 0x6700),
            (.securityStatusNotSatisfied, 0x6982), (.conditionsNotSatisfied, 0x6985), (.insNotSupported, 0x6D00),
            (.claNotSupported, 0x6E00), (.commandNotAllowed, 0x6986), (.endOfFileReached, 0x6282),
            (.wrongP1P2, 0x6B00), (.funcNotSupported, 0x6A81), (.noInformation, 0x6F00),
            (.wrongLe(0x10), 0x6C10), (.moreData(0x20), 0x6120), (.verificationFailed(retries: 3), 0x63C3),
        ]
        for (sw, raw) in table { #expect(sw.rawValue == raw, "\(sw)") }
    }

    @Test("Every value has a name, families included")
    func names() {
        #expect(StatusWord.fileNotFound.name == "file or application not found")
        #expect(StatusWord.wrongLe(0x10).name == "wrong Le (exact length 16)")
        #expect(StatusWord.moreData(0).name == "more data available (256 or more bytes)")
        #expect(StatusWord.verificationFailed(retries: 2).name == "verification failed (2 tries left)")
        #expect(StatusWord(rawValue: 0x6A99).name == "wrong parameters P1-P2")
        #expect(StatusWord(rawValue: 0x1234).name == "unknown status")
        #expect(StatusWord.wrongLength.description == "6700 (wrong length)")
        #expect(StatusWord.moreData(1).isNormalProcessing && !StatusWord.moreData(1).isSuccess)
    }
}

@Suite("Timed APDU exchanges (RepeatingAPDUTransport's record)")
struct TimedAPDUExchangesTests {
    @Test("Keeps each round trip's start, duration and response apart; removeAll empties it")
    func storage() {
        var e = TimedAPDUExchanges()
        e.reserve(exchanges: 3, responseBytes: 8)
        let t0 = ContinuousClock.now
        let answers: [[UInt8]] = [[0x90, 0x00], [0x6F, 0x03, 0x84, 0x01, 0x01, 0x90, 0x00], [0x6A, 0x82]]
        for (i, a) in answers.enumerated() {
            a.withUnsafeBufferPointer {
                e.append(start: t0 + .microseconds(10 * i), duration: .microseconds(i + 1), response: $0)
            }
        }
        #expect(e.count == 3)
        #expect((0..<3).map { Array(e.response($0)) } == answers)
        #expect(e.durations == [.microseconds(1), .microseconds(2), .microseconds(3)])
        #expect(e.starts.map { $0 - t0 } == [.zero, .microseconds(10), .microseconds(20)])
        e.removeAll()
        #expect(e.count == 0 && e.starts.isEmpty)
        [UInt8]([0x90, 0x00]).withUnsafeBufferPointer { e.append(start: t0, duration: .zero, response: $0) }
        #expect(Array(e.response(0)) == [0x90, 0x00], "a response after removeAll starts at the beginning")
    }
}

@Suite("TagLossWatch around a transport that repeats APDUs itself")
struct WatchedRepeatingTransportTests {
    /// A card answering 90 00 `answers` times, then gone (what a PC/SC reader reports as
    /// SCARD_W_REMOVED_CARD): the carrier's `.tagLost`.
    final class LeavingCard: RepeatingAPDUTransport, @unchecked Sendable {
        var answers: Int
        init(answers: Int) { self.answers = answers }
        func transmit(_ command: [UInt8]) throws -> [UInt8] {
            guard answers > 0 else { throw TagCommunicationError.tagLost }
            answers -= 1
            return [0x90, 0x00]
        }
        func transmitRepeatedly(
            _ command: [UInt8], count: Int, into exchanges: inout TimedAPDUExchanges, shouldStop: () -> Bool
        ) throws {
            for _ in 0..<count where !shouldStop() {
                let start = ContinuousClock.now
                let answer = try transmit(command)
                answer.withUnsafeBufferPointer { exchanges.append(start: start, duration: .zero, response: $0) }
            }
        }
    }

    @Test(
        "A repeating base stays a RepeatingAPDUTransport under the watch (measure apdu finds it), and its tagLost is seen"
    )
    func staysRepeating() throws {
        let watch = TagLossWatch()
        let card = LeavingCard(answers: 5)
        let watched = try #require(watch.apdu(card) as? any RepeatingAPDUTransport)
        var exchanges = TimedAPDUExchanges()
        try watched.transmitRepeatedly([0x00, 0xA4, 0x04, 0x00], count: 3, into: &exchanges, shouldStop: { false })
        #expect(exchanges.count == 3 && !watch.tagLost)
        #expect(throws: TagCommunicationError.tagLost) {
            try watched.transmitRepeatedly([0x00, 0xA4, 0x04, 0x00], count: 5, into: &exchanges, shouldStop: { false })
        }
        #expect(exchanges.count == 5, "the round trips before the loss stay")
        #expect(watch.tagLost, "the frontend learns the tag left")
    }

    @Test("A plain transport stays plain under the watch")
    func plainStaysPlain() {
        struct Plain: APDUTransport {
            func transmit(_ command: [UInt8]) throws -> [UInt8] { [0x90, 0x00] }
        }
        #expect(!(TagLossWatch().apdu(Plain()) is any RepeatingAPDUTransport))
    }
}
