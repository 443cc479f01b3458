import Foundation
import NFCHardware
import NFCTags
import ReaderFrontend
import ReaderSession

/// `nfcbench dump`: a real tag into our tag-file JSON (hardware/tags/FORMAT.md). Read-only.
enum DumpCommand {
    static let command = Command(
        path: ["dump"],
        abstract: "Read a tag on a reader into a tag file (never writes to the tag)",
        usage: "dump --device D [--out FILE] [--wait S]",
        help: """
            OPTIONS:
              --device D   pcsc:READER (see 'nfcbench devices')
              --out FILE   write the tag file there (default: standard output)
              --wait S     how long to wait for a tag (default 10 s)

            Type 2 tags: every page the tag answers (count from GET_VERSION, else the CC size),
            GET_VERSION, the UID. Type 4 tags: the CC and the NDEF file, the UID and the ATR's
            historical bytes. PC/SC does not report ATQA and SAK: the file gets the values of the
            tag family (44 00 / 00 for Type 2, 44 03 / 20 for Type 4) and a note saying so.
            """,
        run: { args in
            let device = try args.option("device")
            let out = try args.option("out")
            let wait = try args.seconds("wait") ?? .seconds(10)
            try args.finish()
            guard let device else { throw CLIError.usage("--device is required") }
            if isLibNFCDevice(device) { return try await dumpLibNFC(device: device, out: out, wait: wait) }
            let backend = try DeviceFactory.pcscBackend(device)
            let lease = try takeReader(backend.identifier)
            defer { lease.release() }
            defer { backend.close() }
            let watcher = BackendWatcher(backend)
            defer { watcher.stop() }
            let (target, _, _) = try await watcher.next(from: 0, timeout: wait, what: "tag", BackendWatcher.detected)
            let file = try await onBenchThread { try dump(backend, target) }
            if let out {
                do { try file.save(path: out) } catch { throw CLIError.failure("cannot write \(out): \(error)") }
                Output.err("dumped \(file.type.rawValue) \(target.uid.hexString()) to \(out)")
            } else {
                Output.out(file.jsonText())
            }
            return 0
        })

    static func dump(_ backend: ReaderFrontend, _ target: DetectedTarget) throws -> TagFile {
        try backend.withTag(target.id) { c throws -> TagFile in
            switch c {
            case .type2(let t):
                return try dumpType2(t, target: target, version: identifyType2(c))
            case .iso7816(let t):
                return try dumpType4(t, target: target)
            }
        }
    }

    static func activation(_ target: DetectedTarget, type4: Bool) throws -> ISO14443AActivation {
        var ats: [UInt8]? = nil
        if type4 {
            let historical = (try? ATR(bytes: target.atr ?? []))?.historicalBytes ?? []
            ats = [UInt8(2 + historical.count), 0x05] + historical  // T0: FSCI 5, no TA/TB/TC
        }
        do {
            return try ISO14443AActivation(
                uid: target.uid, atqa: type4 ? [0x44, 0x03] : [0x44, 0x00], sak: type4 ? 0x20 : 0x00, ats: ats)
        } catch {
            throw CLIError.data("the reader gave UID \(target.uid.hexString()): \(error)")
        }
    }

    static func dumpType2(_ t: any Type2TagTransport, target: DetectedTarget, version: TagVersion?) throws -> TagFile {
        let page3 = try t.read(page: 0)
        let ccSize = Int(page3[14]) * 8  // CC byte 2 in page 3 (bytes 12…15 of READ 0)
        let total = version?.totalPages ?? (4 + ccSize / 4 + (ccSize > 48 ? 5 : 0))
        var pages: [[UInt8]] = []
        var page = 0
        while page < total {
            let block = try t.read(page: UInt8(truncatingIfNeeded: page))
            for i in 0..<4 where page + i < total {
                pages.append(Array(block[(i * 4)..<(i * 4 + 4)]))
            }
            page += 4
        }
        let type: TagFile.TagType
        switch version?.product?.rawValue {
        case "ntag213"?: type = .ntag213
        case "ntag215"?: type = .ntag215
        case "ntag216"?: type = .ntag216
        case let p? where p.hasPrefix("ultralightEV1"): type = .ultralightEV1
        default:
            type =
                total <= 16
                ? .ultralight
                : (ccSize == 0x12 * 8
                    ? .ntag213 : ccSize == 0x3E * 8 ? .ntag215 : ccSize == 0x6D * 8 ? .ntag216 : .ultralight)
        }
        var file = TagFile(
            type: type, activation: try activation(target, type4: false), getVersion: version?.bytes, pages: pages,
            comment:
                "dumped by nfcbench \(CLI.version) from \(target.atr.map { "ATR " + $0.hexString() } ?? "a PC/SC reader")"
        )
        file.notes.append("ATQA and SAK are not reported by PC/SC: 44 00 / 00 assumed")
        if version == nil {
            file.notes.append(
                "no GET_VERSION (reader without transparent exchange, or an Ultralight): type from the CC size")
        }
        return file
    }

    static func dumpType4(_ t: any APDUTransport, target: DetectedTarget) throws -> TagFile {
        func read<T: APDUTransport>(_ t: T) throws -> (Type4CapabilityContainer, [UInt8]) {
            let reader = Type4TagReader(transport: t)
            let cc = try reader.detect()
            return (cc, try reader.readNDEF(capabilityContainer: cc))
        }
        let (cc, message) = try read(t)
        let width = cc.lengthFieldSize
        let nlen = (0..<width).reversed().map { UInt8((message.count >> ($0 * 8)) & 0xFF) }
        let contents = TagFile.Type4Contents(
            ndefFile: nlen + message, maximumNDEFFileSize: cc.maximumNDEFFileSize,
            mappingVersion: "\(cc.majorVersion).\(cc.mappingVersion & 0x0F)", readOnly: cc.writeAccess != 0x00,
            fileID: [UInt8(cc.ndefFileID >> 8), UInt8(cc.ndefFileID & 0xFF)])
        var file = TagFile(
            type: .type4, activation: try activation(target, type4: true), type4: contents,
            comment: "dumped by nfcbench \(CLI.version); NDEF file up to NLEN (the rest of the file is not read)")
        file.notes.append(
            "ATQA and SAK are not reported by PC/SC: 44 03 / 20 assumed; ATS rebuilt from the ATR's historical bytes")
        return file
    }
}
