import Foundation
import Testing

@testable import NFCTags

/// Issue 13 input 8 and its kind: a failed write says what was sent (from the recorded
/// exchanges) and what the tag now reads as. Expected wording written by hand.
@Suite("NDEF write failures say what was sent")
struct NDEFWriteReportTests {
    /// Fails the `n`-th UPDATE BINARY (1-based) with `status`, or with no answer when `nil`.
    final class FailingUpdate: APDUTransport {
        let base: EmulatedAPDUTransport
        let n: Int
        let status: [UInt8]?
        var updates = 0
        init(_ base: EmulatedAPDUTransport, failing n: Int, with status: [UInt8]?) {
            self.base = base
            self.n = n
            self.status = status
        }
        func transmit(_ command: [UInt8]) throws -> [UInt8] {
            if command.count > 1, command[1] == 0xD6 {
                updates += 1
                if updates == n {
                    guard let status else { throw TagCommunicationError.noResponse }
                    return status
                }
            }
            return try base.transmit(command)
        }
    }

    func type4(maximumFileSize: Int = 256, failing n: Int = 0, with status: [UInt8]? = nil) throws -> (
        Type4TagReader<APDURecorder>, APDURecorder, Type4CapabilityContainer
    ) {
        let app = try Type4NDEFApplication(ndefMessage: [0xD0, 0x00, 0x00], maximumFileSize: maximumFileSize)
        let recorder = APDURecorder(base: FailingUpdate(EmulatedAPDUTransport(core: app), failing: n, with: status))
        let reader = Type4TagReader(transport: recorder)
        let cc = try reader.detect()
        return (reader, recorder, cc)
    }

    @Test("8. 430 bytes to a 256-byte Type 4 file: refused before anything is sent, and it says so")
    func oversizeType4() throws {
        let (reader, recorder, cc) = try type4()
        let before = recorder.exchanges.count
        let message = [UInt8](repeating: 0x41, count: 430)
        #expect(throws: Type4TagError.messageTooLarge) { try reader.writeNDEF(message, capabilityContainer: cc) }
        #expect(recorder.exchanges.count == before, "nothing sent")
        do { try reader.writeNDEF(message, capabilityContainer: cc) } catch {
            let sent = Array(recorder.exchanges.dropFirst(before))
            let text = NDEFWriteReport.type4Failure(error, exchanges: sent, lengthFieldSize: 2)
            #expect(
                text == "refused: Type 4 Tag: messageTooLarge: 430 bytes; the file holds 254; "
                    + "no UPDATE BINARY was sent, the tag is unchanged")
            #expect(!text.contains("NLEN was set to 0"))
        }
    }

    @Test("Type 4: the first UPDATE refused (6A 82): the tag reads as before")
    func type4FirstUpdateRefused() throws {
        let (reader, recorder, cc) = try type4(failing: 1, with: [0x6A, 0x82])
        let before = recorder.exchanges.count
        do {
            try reader.writeNDEF([0xD0, 0x00, 0x00], capabilityContainer: cc)
            Issue.record("the write succeeded")
        } catch {
            let text = NDEFWriteReport.type4Failure(
                error, exchanges: Array(recorder.exchanges.dropFirst(before)), lengthFieldSize: 2)
            #expect(
                text.hasSuffix(
                    "Sent 1 UPDATE BINARY: NLEN := 0 → 6A 82. The first one (the length set to 0) did not succeed: "
                        + "the tag reads as before"), "\(text)")
        }
    }

    @Test("Type 4: the data UPDATE gets no answer after NLEN := 0: the tag reads as an empty message")
    func type4DataLost() throws {
        let (reader, recorder, cc) = try type4(failing: 2, with: nil)
        let before = recorder.exchanges.count
        do {
            try reader.writeNDEF([0xD1, 0x01, 0x01, 0x54, 0x00], capabilityContainer: cc)
            Issue.record("the write succeeded")
        } catch {
            let text = NDEFWriteReport.type4Failure(
                error, exchanges: Array(recorder.exchanges.dropFirst(before)), lengthFieldSize: 2)
            // SELECT E104 first (not an update), then NLEN 00 00 at 0 (90 00), then 5 bytes at 2: no answer.
            #expect(
                text.hasSuffix(
                    "Sent 2 UPDATE BINARY: NLEN := 0 → 90 00, at 2, 5 bytes → no answer. The length was set to 0 "
                        + "first and not yet to the new length: the tag reads as an empty message"), "\(text)")
        }
    }

    /// Fails the `n`-th WRITE (1-based) with no answer.
    final class FailingWrite: Type2TagTransport {
        let base: EmulatedType2Transport
        let n: Int
        var count = 0
        init(_ base: EmulatedType2Transport, failing n: Int) {
            self.base = base
            self.n = n
        }
        func read(page: UInt8) throws -> [UInt8] { try base.read(page: page) }
        func getVersion() throws -> [UInt8]? { try base.getVersion() }
        func reactivate() throws { try base.reactivate() }
        func write(page: UInt8, data: [UInt8]) throws {
            count += 1
            if count == n { throw TagCommunicationError.noResponse }
            try base.write(page: page, data: data)
        }
    }

    /// "OK: done" in English (15 bytes): TLV 03 0F at page 4 of a factory NTAG215 (`03 00 FE`:
    /// its length reads 0 already), so pages 5-8 are written first, then page 4 with the length.
    static let message: [UInt8] = [0xD1, 0x01, 0x0B, 0x54, 0x02, 0x65, 0x6E] + Array("OK: done".utf8)

    func type2Write(failing n: Int) throws -> String? {
        let core = try NTAG21xCore(
            variant: .ntag215, pages: NTAG21xCore.factoryPages(variant: .ntag215, uid: [4, 1, 2, 3, 4, 5, 6]))
        let recorder = Type2WriteRecorder(base: FailingWrite(EmulatedType2Transport(core: core), failing: n))
        do {
            try Type2TagReader(transport: recorder).writeNDEF(Self.message)
            return nil
        } catch {
            return NDEFWriteReport.type2Failure(
                error, writes: recorder.writes, ndefTLVAddress: 16, messageLength: Self.message.count)
        }
    }

    @Test("Type 2: what each interrupted WRITE leaves, from the pages acknowledged")
    func type2Interrupted() throws {
        let third = try #require(try type2Write(failing: 3))
        #expect(
            third.contains(
                "Sent 3 WRITE(s): page 5 ACK, page 6 ACK, page 7 (no response from the tag). The NDEF length read 0 "
                    + "before the pages were written and was not yet set to the new length: the tag reads as an empty message"
            ), "\(third)")
        let first = try #require(try type2Write(failing: 1))
        #expect(
            first.hasSuffix(
                "Sent 1 WRITE(s): page 5 (no response from the tag). None was acknowledged: the tag reads as before, "
                    + "or differs where a failed WRITE landed"), "\(first)")
        let last = try #require(try type2Write(failing: 5))
        #expect(
            last.contains("page 8 ACK, page 4 (no response from the tag). The NDEF length read 0 before"), "\(last)")
        #expect(try type2Write(failing: 6) == nil, "5 WRITEs in all")
    }

    @Test("Type 2 over an older message: the zeroed length, then the new length, say what the tag reads as")
    func type2OverAnOlderMessage() throws {
        var pages = try NTAG21xCore.factoryPages(variant: .ntag215, uid: [4, 1, 2, 3, 4, 5, 6])
        let old: [UInt8] = [0x03, 0x0F] + [0xD1, 0x01, 0x0B, 0x54, 0x02, 0x65, 0x6E] + Array("OK: gone".utf8) + [0xFE]
        for (i, b) in old.enumerated() { pages[4 + i / 4][i % 4] = b }
        func write(failing n: Int) throws -> String? {
            let core = try NTAG21xCore(variant: .ntag215, pages: pages)
            let recorder = Type2WriteRecorder(base: FailingWrite(EmulatedType2Transport(core: core), failing: n))
            do {
                try Type2TagReader(transport: recorder).writeNDEF(Self.message)
                return nil
            } catch {
                return NDEFWriteReport.type2Failure(
                    error, writes: recorder.writes, ndefTLVAddress: 16, messageLength: Self.message.count)
            }
        }
        // "gone" → "done": one data page changes (page 7, bytes 28-31), between the zeroed and the new length.
        let second = try #require(try write(failing: 2))
        #expect(
            second.contains("page 4 ACK, page 7 (no response from the tag). The NDEF length was set to 0 first"),
            "\(second)")
        let third = try #require(try write(failing: 3))
        #expect(
            third.contains("page 7 ACK, page 4 (no response from the tag). The NDEF length was set to 0 first"),
            "\(third)")
        #expect(try write(failing: 4) == nil, "3 WRITEs in all: zero, the changed page, the length")
    }
}
