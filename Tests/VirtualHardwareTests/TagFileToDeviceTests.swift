import Foundation
import NFCBenchTestSupport
import NFCFiles
import NFCTags
import ReaderSession
import Testing
import VirtualHardware

private func h(_ s: String) -> [UInt8] { [UInt8](hex: s) ?? [] }

/// No error is dropped between a tag file and a device, and `tag show` runs the check the
/// devices run (issue 19, item 4): a Type 4 file of mapping 3.0 with a 64-byte NDEF file
/// loads, but its 4-byte ENLEN needs an ENDEF File Control TLV, which T4T 3.0 allows only
/// from FFFF bytes. Every device and the report say so, with the same error.
@Suite("From a tag file to a device")
struct TagFileToDeviceTests {
    static let mapping30Small = """
        {"format": "nfcbench-tag", "version": 1, "type": "type4", "uid": "04518A2B6C1F90",
         "atqa": "4403", "sak": "20", "ndef_file": "00000003D00000", "max_ndef_file_size": 64,
         "mapping_version": "3.0"}
        """

    static func expectedError(_ e: TagFileError?) {
        #expect(e?.code == .invalidValue)
        #expect(e?.field == "max_ndef_file_size")
        #expect(e?.reason.contains("max ENDEF file size 64 outside 0000FFFF…FFFFFFFE") == true)
        #expect(e?.reason.contains("at least 65535 bytes") == true)
    }

    @Test("The file loads; makeEmulationCore, tag show's report and every device give the same error")
    func mapping30WithSmallFile() throws {
        let file = try TagFile.parse(Self.mapping30Small)
        var built: TagFileError? = nil
        do { _ = try file.makeEmulationCore() } catch { built = error }
        Self.expectedError(built)

        let report = TagReport(file: file)
        #expect(report.emulationError == built && report.emulationError?.reason == built?.reason)
        #expect(report.ndefMessageBytes == nil && !report.isReadable)
        #expect(report.text.contains("No device can present it: field max_ndef_file_size:"))

        // The in-process simulator refuses the scenario before anything is presented.
        let steps = [Scenario.Step(at: .milliseconds(100), action: .present(tag: "t4", as: "A", faults: []))]
        do {
            _ = try SimulatedReader(
                scenario: Scenario(reader: "bench", steps: steps), tags: ["t4": file], clock: ManualClock())
            Issue.record("the simulated reader took a tag it cannot present")
        } catch {
            #expect(error.reason == "tag 't4' can't be emulated: \(built?.description ?? "")")
        }
        // The virtual PN532 and the vpcd card.
        do {
            _ = try PN532Card(tagFile: file)
            Issue.record("PN532Card took it")
        } catch { #expect(error == built && error.reason == built?.reason) }
        do {
            _ = try file.makeVirtualCardPersonality()
            Issue.record("the vpcd card took it")
        } catch { #expect(error.reason == built?.description) }
    }

    @Test("A mapping 1.0 file builds the same 1.0 core for the PN532 and the vpcd card as for sim:")
    func mapping10OnEveryDevice() throws {
        let file = try TagFile.load(path: Self.tagsDirectory + "/t4t-v1-uri.json")
        let card = try PN532Card(tagFile: file)
        #expect(card.type4Application?.mappingVersion == 0x10)
        #expect(card.type4Application?.applicationName == h("D2 76 00 00 85 01 00"))
        var vpcd = try file.makeVirtualCardPersonality()
        #expect(vpcd.respond(to: h("00 A4 04 00 07 D2 76 00 00 85 01 01 00")) == h("6A 82"))
        #expect(vpcd.respond(to: h("00 A4 04 00 07 D2 76 00 00 85 01 00")) == h("90 00"))
        #expect(vpcd.respond(to: h("00 A4 00 00 02 E1 03")) == h("90 00"))
        #expect(vpcd.respond(to: h("00 B0 00 00 0F")) == h("00 0F 10 00 FF 00 FF 04 06 E1 04 00 80 00 00 90 00"))
    }

    @Test("The session's NDEF read of the issue's Type 2 tag (control TLVs of length 4 and 2) is D0 00 00, not 102")
    func controlTLVSessionRead() throws {
        var file = try TagFile.load(path: Self.tagsDirectory + "/ultralight-blank.json")
        file.pages[3] = h("E1 10 02 00")
        let data = h("01 04 FF FF FF FF 02 02 FF FF 03 03 D0 00 00 FE")
        for p in 0..<4 { file.pages[4 + p] = Array(data[(p * 4)..<(p * 4 + 4)]) }
        let transport = EmulatedType2Transport(core: try file.makeCore())
        let outcome = try NFCForumNDEFProcedures().readNDEF(.type2(transport))
        #expect(outcome == .message(NDEFMessageBytes(h("D0 00 00"))))
        let status = try NFCForumNDEFProcedures().queryNDEFStatus(.type2(transport))
        #expect(status.status == .readWrite && status.capacity == 4)
    }

    static let tagsDirectory: String = TestPaths.tags.path
}
