import NFCBenchTestSupport
import NFCTags
import Testing

@testable import NFCHardware

@Suite("PC/SC errors, flags and transparent-exchange frames (pure)")
struct PCSCPureTests {
    @Test("Every pcsclite.h code has its SCARD_ name; unknown codes still print")
    func errorNames() {
        #expect(PCSCError.removedCard.name == "SCARD_W_REMOVED_CARD")
        #expect(
            PCSCError(code: 0x8010_001D, function: "SCardEstablishContext").description
                == "SCardEstablishContext: SCARD_E_NO_SERVICE (0x8010001D): The Smart card resource manager is not running."
        )
        #expect(PCSCError(code: 0x8010_001F).name == "SCARD_E_UNEXPECTED", "the first name of a shared code")
        #expect(PCSCError(code: 0x1234).name == "SCARD_0x1234")
        #expect(PCSCError.knownCodes.count == 61)
        #expect(PCSCError(code: 0x8010_0069, function: "SCardTransmit") == .removedCard, "equal by code")
    }

    @Test("PC/SC failures map to the tag vocabulary")
    func tagErrors() {
        #expect(PCSCError.removedCard.tagCommunicationError == .tagLost)
        #expect(PCSCError.notTransacted.tagCommunicationError == .tagLost)
        #expect(PCSCError.noService.tagCommunicationError == .readerFailure("pcscd stopped"))
        #expect(PCSCError.serviceStopped.tagCommunicationError == .readerFailure("pcscd stopped"))
        #expect(
            PCSCError.readerUnavailable.tagCommunicationError
                == .readerFailure("reader gone: SCARD_E_READER_UNAVAILABLE"))
        #expect(PCSCError.unpoweredCard.tagCommunicationError == .noResponse)
        #expect(PCSCError(code: 0x8010_0027).tagCommunicationError == .readerFailure("SCARD_E_NO_ACCESS"))
    }

    @Test("dwEventState splits into named flags and the event counter")
    func readerState() {
        let present = PCSCReaderState(
            raw: PCSCRawReaderState(name: "r", currentState: 0, eventState: 0x0001_0022, atr: [0x3B, 0x00]))
        #expect(present.flags == [.present, .changed])
        #expect(present.eventCount == 1)
        #expect(present.hasCard)
        #expect(present.dword == 0x0001_0020, "CHANGED is not passed back in")
        #expect(PCSCReaderFlags(rawValue: 0x0000_0312).description == "[changed, empty, inUse, mute]")
        #expect(PCSCReaderFlags(rawValue: 0x8000).description == "[0x8000]")
    }

    @Test("The Transparent Exchange wraps a frame in DO 95 and finds the answer in DO 97")
    func partThreeFrames() throws {
        #expect(try PCSCTransparentFrames.exchangeAPDU([0x60]) == [UInt8](hex: "FF C2 00 01 03 95 01 60 00"))
        let answer = [UInt8](hex: "C0 03 00 90 00 92 01 00 96 02 00 00 97 08 00 04 04 02 01 00 0F 03 90 00")!
        #expect(try PCSCTransparentFrames.parseExchangeAnswer(answer) == [UInt8](hex: "00 04 04 02 01 00 0F 03"))
        #expect(throws: TagCommunicationError.noResponse) {
            try PCSCTransparentFrames.parseExchangeAnswer([UInt8](hex: "C0 03 01 64 01 90 00")!)
        }
        #expect(throws: TagCommunicationError.self) {
            try PCSCTransparentFrames.parseExchangeAnswer([UInt8](hex: "C0 03 00 90 00 97 09 00 90 00")!)
        }
    }

    @Test("The ACR122U direct transmit is D4 42 in, D5 43 <status> out")
    func acr122uFrames() throws {
        #expect(try PCSCTransparentFrames.acr122uAPDU([0x60]) == [UInt8](hex: "FF 00 00 00 03 D4 42 60"))
        #expect(
            try PCSCTransparentFrames.parseACR122U([UInt8](hex: "D5 43 00 00 04 04 02 01 00 0F 03 90 00")!)?.get()
                == [UInt8](hex: "00 04 04 02 01 00 0F 03"))
        try #require(
            matches {
                if case .failure(.noResponse)? = PCSCTransparentFrames.parseACR122U([UInt8](hex: "D5 43 01 90 00")!) {
                    true
                } else {
                    false
                }
            }, "status 01 is a timeout")
        #expect(PCSCTransparentFrames.parseACR122U([0x6A, 0x81]) == nil, "a refusal is not this channel")
    }

    @Test("Timeouts round up to whole milliseconds")
    func milliseconds() {
        #expect(PCSCContext.milliseconds(.microseconds(1500)) == 2)
        #expect(PCSCContext.milliseconds(.seconds(2)) == 2000)
        #expect(PCSCContext.milliseconds(.seconds(-1)) == 0)
    }
}
