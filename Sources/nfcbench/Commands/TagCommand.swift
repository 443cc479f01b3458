import NFCBenchKit
import NFCFiles
import NFCTags
import NFCTrace
import ReaderSession

/// `nfcbench tag show FILE [--json]`: identify a tag file, check its CC and TLVs, decode
/// its NDEF, and warn about what a real reader would trip on.
enum TagCommand {
    static let show = Command(
        path: ["tag", "show"],
        abstract: "Identify a tag file, check its CC and TLVs, decode its NDEF",
        options: [
            OutputOptions.json("one JSON object: identification, CC, TLVs, sizes, records, warnings"),
            OptionSpec(
                "redact", .flag,
                help: """
                    show the UID (IDm), ATS, NDEF message and what was decoded from it as
                    'redacted:<n> bytes', as the other commands' --redact (text and --json)
                    """),
        ],
        positionals: [
            PositionalSpec(
                name: "FILE",
                help: """
                    a tag file: nfcbench JSON (hardware/tags/FORMAT.md), Flipper Zero .nfc
                    (version 2, NTAG/Ultralight) or a Proxmark3 JSON dump; a bare name is
                    looked up in the bench's hardware/tags/
                    """)
        ],
        discussion: """
            The tag is read the way a reader reads it: the file's emulation core is built
            exactly as the devices build it (sim:, the vpcd card, the virtual PN532), then the
            NFC Forum Type 2 procedure runs against the NTAG21x image, or the Type 4 procedure
            (mapping 1.0, 2.0 and 3.0) against the T4T NDEF application. Warnings name what a
            real reader would trip on: a header UID that differs from pages 0-2, a BCC
            mismatch, a CC size that doesn't fit the product, stale bytes after the Terminator,
            AUTH0 protecting the NDEF pages, a Lock/Memory Control TLV of the wrong length, a
            bad optional record in a Smart Poster. With --redact the report is one to share:
            the UID and what the tag holds are their lengths, everywhere (the file's name and
            the warnings too); PWD and PACK are never shown, redacted or not.
            Exit status: 0 when the NDEF area reads and decodes (warnings allowed), 1 when a
            reader would fail on it (the report says why), 65 when the file is malformed
            (FILE:LINE:COLUMN or FILE: field PATH, then why) or no device could present it
            (the report says why), 66 when it is missing.
            """,
        run: { o in
            let json = o.flag("json")
            let name = o.positional(0)!
            let path = try DataLocation.require(name, in: "tags")
            let file: TagFile
            do throws(DataFileError) { file = try TagFile.load(path: path) } catch { throw CLIError(error) }
            let report = TagReport(file: file)
            if o.flag("redact") {
                // The trace's redaction of the JSON object, and each UID in any spelling wherever
                // else it is (a backup's file name, a warning), as dump, poll and restore show it.
                let uids = [file.activation.uid, report.uidOnTag] + (file.feliCa?.systems.map(\.idm) ?? [])
                if json {
                    Output.out(
                        BenchRedaction.scrub(BenchRedaction.json(reportJSON(report, path: path)).serialized, uids))
                } else {
                    Output.out(
                        BenchRedaction.scrub("File:      \(path)\n" + report.text(hiding: BenchRedaction.text), uids))
                }
            } else if json {
                Output.out(reportJSON(report, path: path).serialized)
            } else {
                Output.out("File:      \(path)\n" + report.text)
            }
            if report.emulationError != nil { return 65 }
            return report.isReadable ? 0 : 1
        })

    static func reportJSON(_ r: TagReport, path: String) -> JSONObject {
        var o: JSONObject = [
            "file": .string(path), "source": .string(r.file.source.rawValue),
            "type": .string(r.file.type.rawValue), "product": .string(r.productName),
            "uid": .string(r.uidOnTag.hexString()),
        ]
        if r.file.feliCa == nil, r.file.iso15693 == nil, r.file.activation.uid != r.uidOnTag {
            o["uid_header"] = .string(r.file.activation.uid.hexString())
        }
        if let f = r.file.feliCa {
            // FeliCa: no ATQA/SAK; the IDm is "uid", PMm and the systems beside it.
            o["pmm"] = .string(f.pmm.hexString())
            o["system_codes"] = .array(f.systems.map { .string(String(format: "%04X", $0.code)) })
        } else if let v = r.file.iso15693 {
            o["dsfid"] = .string([v.dsfid].hexString())
            o["afi"] = .string([v.afi].hexString())
            o["block_size"] = .int(Int64(v.blockSize))
            o["blocks"] = .int(Int64(v.blocks.count))
        } else {
            o["atqa"] = .string(r.file.activation.atqa.hexString())
            o["sak"] = .string([r.file.activation.sak].hexString())
            if let ats = r.file.activation.ats { o["ats"] = .string(ats.hexString()) }
        }
        if let a = r.type3Attribute {
            o["attribute"] = .object([
                "nbr": .int(Int64(a.nbr)), "nbw": .int(Int64(a.nbw)), "nmaxb": .int(Int64(a.nmaxb)),
                "write_flag": .string([a.writeFlag].hexString()), "rw_flag": .string([a.rwFlag].hexString()),
                "length": .int(Int64(a.length)),
            ])
        }
        if let l = r.type5Layout { o["cc"] = .string(l.capabilityContainer.bytes.hexString()) }
        if let v = r.version { o["version"] = .string(v.bytes.hexString()) }
        if let l = r.layout {
            let cc = l.capabilityContainer
            o["cc"] = .string(cc.bytes.hexString())
            o["cc_version"] = .string("\(cc.majorVersion).\(cc.minorVersion)")
            o["cc_writable"] = .bool(cc.isWritable)
            o["tlvs"] = .array(
                l.tlvs.map { t in
                    var e: JSONObject = ["tlv": .string(t.description), "address": .int(Int64(t.address))]
                    if let a = t.area { e["area"] = .array([.int(Int64(a.address)), .int(Int64(a.address + a.size))]) }
                    return .object(e)
                })
        }
        if let t4 = r.file.type4 {
            o["ndef_file_id"] = .string(t4.fileID.hexString())
            o["mapping_version"] = .string(t4.mappingVersion)
            o["read_only"] = .bool(t4.readOnly)
        }
        if let d = r.type4Detection {
            let cc = d.capabilityContainer
            o["ndef_application"] = .string(d.applicationName.hexString())
            o["cc"] = .string(cc.bytes.hexString())
            o["cc_version"] = .string("\(cc.majorVersion).\(cc.mappingVersion & 0xF)")
            o["cc_writable"] = .bool(cc.isWritable)
        }
        if let d = r.dataAreaSize { o["data_area_bytes"] = .int(Int64(d)) }
        if let m = r.maximumNDEFMessageSize { o["max_ndef_bytes"] = .int(Int64(m)) }
        if let ndef = r.ndefMessageBytes {
            o["ndef"] = .string(ndef.hexString())
            o["ndef_empty"] = .bool(ndef.isEmpty)
        }
        if let m = r.ndefMessage { o["records"] = m.recordsJSON }
        if let e = r.ndefDecodeError { o["ndef_error"] = .string("\(e)") }
        if let e = r.readError { o["read_error"] = .string("\(e)") }
        if let e = r.type4ReadError { o["read_error"] = .string("\(e)") }
        if let e = r.type3ReadError { o["read_error"] = .string("\(e)") }
        if let e = r.type5ReadError { o["read_error"] = .string("\(e)") }
        if let e = r.emulationError { o["emulation_error"] = .string("\(e)") }
        o["warnings"] = .array(
            r.warnings.map { .object(["kind": .string($0.kind.rawValue), "message": .string($0.message)]) })
        if !r.file.notes.isEmpty { o["notes"] = .array(r.file.notes.map { .string($0) }) }
        return o
    }
}
