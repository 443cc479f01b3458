import Foundation
import HCEEvents
import NFCBenchKit
package import NFCTags
import ReaderSessionConformance
import VirtualHardware

/// The files a stranger can hand the tool: tag files (ours, Flipper `.nfc`, Proxmark3 JSON),
/// Proxmark3 traces, simulator scenarios, conformance scenarios and reader profiles, plus NDEF
/// messages. Seeds are the project's own files (`hardware/`), and Flipper, Proxmark3 and
/// trace seeds made from them in those formats.
package enum FuzzFileTargets {
    /// Every file below `hardware/<sub>` ending in `.json`, as bytes, sorted by name.
    package static func files(_ sub: String) -> [(name: String, bytes: [UInt8])] {
        guard let hw = BenchData.hardwareDirectory() else { return [] }
        let dir = hw + "/" + sub
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []).filter { $0.hasSuffix(".json") }
        return names.sorted().compactMap { n in
            FileManager.default.contents(atPath: dir + "/" + n).map { (n, [UInt8]($0)) }
        }
    }

    /// The shipped tag files, parsed.
    package static let tagFiles: [(name: String, file: TagFile)] = (files("tags") + files("conformance/tags"))
        .compactMap {
            entry in
            guard let file = try? TagFile.parse(String(decoding: entry.bytes, as: UTF8.self)) else { return nil }
            return (String(entry.name.dropLast(5)), file)
        }

    /// A data file error's code, for the report.
    package static func code(_ error: any Error) -> String {
        (error as? DataFileError).map { "\($0.code)" } ?? "\(type(of: error))"
    }

    /// JSON punctuation, extreme numbers and every string of the seeds (field names, enum values).
    package static func jsonDictionary(_ seeds: [[UInt8]]) -> [[UInt8]] {
        var tokens: Set<String> = [
            "{", "}", "[", "]", "\"", ",", ":", "null", "true", "false", "-1", "0", "-0", "1.5", "1e309", "-1e309",
            "4294967295", "4294967296", "18446744073709551616", "9223372036854775807", "\"\"", "\"\\u0000\"",
            "\"\\ud800\"", "[]", "{}", "\"FFFFFFFF\"", "\"00\"", "0x10",
        ]
        for seed in seeds {
            var current: [UInt8]?
            for c in seed {
                if c == UInt8(ascii: "\"") {
                    if let s = current {
                        if s.count <= 40 { tokens.insert("\"" + String(decoding: s, as: UTF8.self) + "\"") }
                        current = nil
                    } else {
                        current = []
                    }
                } else {
                    current?.append(c)
                }
            }
        }
        return tokens.sorted().map { Array($0.utf8) }
    }

    /// What every command does with a tag file a stranger gave it: parse it, build `tag
    /// show`'s report and every device's card from it, and write it back as our JSON, which
    /// must read back (else `dump` would write what it can't read: a finding).
    package static func runTagFile(_ b: [UInt8]) -> FuzzOutcome {
        let file: TagFile
        do { file = try TagFile.parse(String(decoding: b, as: UTF8.self)) } catch { return .rejected(code(error)) }
        _ = TagReport(file: file)
        var served = "not emulated"
        if (try? file.makeEmulationCore()) != nil { served = "emulated" }
        _ = try? PN532Card(tagFile: file)
        _ = try? file.makeVirtualCardPersonality()
        let again: TagFile
        do { again = try TagFile.parse(file.jsonText()) } catch {
            return .finding("our JSON of a parsed \(file.type.rawValue) file does not read back: \(error)")
        }
        guard again.pages == file.pages, again.type == file.type, again.activation == file.activation,
            again.type4 == file.type4
        else { return .finding("our JSON of a parsed \(file.type.rawValue) file reads back different") }
        return .accepted("\(file.source.rawValue) \(file.type.rawValue), \(served)")
    }

    package static var tagJSON: FuzzTarget {
        let seeds = (files("tags") + files("conformance/tags")).map(\.bytes)
        return FuzzTarget(
            name: "tag-json", feeds: "tag files in our JSON (hardware/tags/FORMAT.md)", seeds: seeds,
            dictionary: jsonDictionary(seeds), run: runTagFile)
    }

    /// A Type 2 tag file as a Flipper Zero `.nfc` file (format version 2).
    package static func flipperText(_ f: TagFile) -> String? {
        let device: String
        switch f.type {
        case .ntag213: device = "NTAG213"
        case .ntag215: device = "NTAG215"
        case .ntag216: device = "NTAG216"
        case .ultralight: device = "Mifare Ultralight"
        case .ultralightC: device = "Mifare Ultralight C"
        case .ultralightEV1: device = "Mifare Ultralight 11"
        default: return nil
        }
        let a = f.activation
        var lines = [
            "Filetype: Flipper NFC device", "Version: 2", "# Made by nfcbench bench fuzz", "Device type: \(device)",
            "UID: \(a.uid.hexString(separator: " "))", "ATQA: \([a.atqa[1], a.atqa[0]].hexString(separator: " "))",
            "SAK: \([a.sak].hexString())",
        ]
        if let v = f.getVersion { lines.append("Mifare version: \(v.hexString(separator: " "))") }
        if let s = f.signature { lines.append("Signature: \(s.hexString(separator: " "))") }
        lines.append("Pages total: \(f.pages.count)")
        lines.append("Pages read: \(f.pages.count)")
        for (i, p) in f.pages.enumerated() { lines.append("Page \(i): \(p.hexString(separator: " "))") }
        return lines.joined(separator: "\n") + "\n"
    }

    package static var tagFlipper: FuzzTarget {
        let seeds = tagFiles.compactMap { flipperText($0.file) }.map { Array($0.utf8) }
        var dictionary: Set<String> = ["\n", "\r\n", ": ", "#", "Page 1023: ", "Page -1: ", "Pages total: 1024", "00 "]
        for seed in seeds {
            for line in String(decoding: seed, as: UTF8.self).split(separator: "\n") {
                if let colon = line.firstIndex(of: ":") { dictionary.insert(String(line[...colon]) + " ") }
            }
        }
        return FuzzTarget(
            name: "tag-flipper", feeds: "Flipper Zero .nfc tag files (NTAG/Ultralight, version 2)", seeds: seeds,
            dictionary: dictionary.sorted().map { Array($0.utf8) }, run: runTagFile)
    }

    /// A Type 2 tag file as a Proxmark3 `hf mfu dump` JSON file.
    package static func proxmark3JSON(_ f: TagFile) -> String? {
        guard f.type != .type4, !f.type.isSensedOnly else { return nil }
        let a = f.activation
        var card = [
            "\"UID\": \"\(a.uid.hexString())\"", "\"ATQA\": \"\([a.atqa[1], a.atqa[0]].hexString())\"",
            "\"SAK\": \"\([a.sak].hexString())\"",
        ]
        if let v = f.getVersion { card.append("\"Version\": \"\(v.hexString())\"") }
        if let s = f.signature { card.append("\"Signature\": \"\(s.hexString())\"") }
        let blocks = f.pages.enumerated().map { "\"\($0.offset)\": \"\($0.element.hexString())\"" }
        return """
            {"Created": "proxmark3", "FileType": "mfu", "Card": {\(card.joined(separator: ", "))},
             "blocks": {\(blocks.joined(separator: ", "))}}
            """
    }

    package static var tagProxmark3: FuzzTarget {
        let seeds = tagFiles.compactMap { proxmark3JSON($0.file) }.map { Array($0.utf8) }
        return FuzzTarget(
            name: "tag-proxmark3", feeds: "Proxmark3 JSON dumps (hf mfu dump)", seeds: seeds,
            dictionary: jsonDictionary(seeds) + [Array("\"1024\"".utf8), Array("\"-1\"".utf8)], run: runTagFile)
    }

    /// A Proxmark3 `.trace` of a reader activating an ISO-DEP card and sending `apdus`, each
    /// answered 90 00: records of timestamp, duration, length (bit 15: from the tag), bytes
    /// with CRC_A, parity bytes.
    package static func proxmarkTrace(_ apdus: [[UInt8]]) -> [UInt8] {
        var out: [UInt8] = []
        var t: UInt32 = 1000
        var block: UInt8 = 0
        func record(_ bytes: [UInt8], fromTag: Bool, crc: Bool = true) {
            let data = crc ? bytes + ProxmarkTrace.crcA(bytes) : bytes
            let n = UInt16(data.count) | (fromTag ? 0x8000 : 0)
            out += withUnsafeBytes(of: t.littleEndian) { Array($0) }
            out += withUnsafeBytes(of: UInt16(8 * data.count).littleEndian) { Array($0) }
            out += withUnsafeBytes(of: n.littleEndian) { Array($0) }
            out += data + [UInt8](repeating: 0, count: (data.count + 7) / 8)
            t &+= 2000
        }
        record([0x26], fromTag: false, crc: false)
        record([0x04, 0x00], fromTag: true, crc: false)
        record([0x93, 0x20], fromTag: false, crc: false)
        record([0x08, 0x11, 0x22, 0x33, 0x08 ^ 0x11 ^ 0x22 ^ 0x33], fromTag: true, crc: false)
        record([0x93, 0x70, 0x08, 0x11, 0x22, 0x33, 0x08 ^ 0x11 ^ 0x22 ^ 0x33], fromTag: false)
        record([0x20], fromTag: true)
        record([0xE0, 0x80], fromTag: false)
        record([0x05, 0x78, 0x80, 0x70, 0x02], fromTag: true)
        for apdu in apdus {
            record([0x02 | block] + apdu, fromTag: false)
            record([0x02 | block, 0x90, 0x00], fromTag: true)
            block ^= 1
        }
        record([0xC2], fromTag: false)
        record([0xC2], fromTag: true)
        return out
    }

    package static var proxmarkTraceTarget: FuzzTarget {
        let profiles = files("readers").compactMap { try? ReaderProfile(json: Data($0.bytes)) }
        var seeds = profiles.map { p in proxmarkTrace(p.steps.map(\.apdu)) }.filter { !$0.isEmpty }
        seeds.append(proxmarkTrace([[0x00, 0xA4, 0x04, 0x00, 0x07, 0xA0, 0, 0, 0, 0x03, 0x10, 0x10, 0x00]]))
        return FuzzTarget(
            name: "proxmark-trace", feeds: "Proxmark3 .trace files (profile import)", seeds: seeds,
            dictionary: [
                [0x26], [0x52], [0x93, 0x20], [0x95, 0x20], [0xE0, 0x80], [0x50, 0x00], [0xFF, 0xFF], [0x00, 0x80],
            ],
            run: { b in
                let trace: ProxmarkTrace
                do { trace = try ProxmarkTrace(bytes: b) } catch {
                    return .rejected((error as? ProxmarkTrace.Error) == .empty ? "no frames" : "truncated record")
                }
                do {
                    let report = try ProxmarkProfileImporter.profile(from: trace, name: "fuzz", source: "fuzz")
                    _ = report
                    return .accepted("profile")
                } catch {
                    return .rejected("no profile")
                }
            })
    }

    package static var scenario: FuzzTarget {
        let seeds = files("scenarios").map(\.bytes)
        return FuzzTarget(
            name: "scenario", feeds: "simulator scenario files (hardware/scenarios/FORMAT.md)", seeds: seeds,
            dictionary: jsonDictionary(seeds),
            run: { b in
                do {
                    let s = try Scenario(json: Data(b), file: "fuzz", defaultReader: "fuzz")
                    return .accepted("\(s.steps.count > 8 ? "long" : "short")")
                } catch {
                    return .rejected(code(error))
                }
            })
    }

    package static var conformance: FuzzTarget {
        let seeds = files("conformance").map(\.bytes)
        let tags = Dictionary(tagFiles.map { ($0.name, $0.file) }, uniquingKeysWith: { a, _ in a })
        return FuzzTarget(
            name: "conformance", feeds: "conformance scenario files (hardware/conformance/FORMAT.md)", seeds: seeds,
            dictionary: jsonDictionary(seeds),
            run: { b in
                do {
                    let s = try ConformanceScenario(json: Data(b), name: "fuzz") { ref in
                        guard let t = tags[ref] ?? tags[String(ref.prefix { $0 != "." })] else {
                            throw DataFileError(.notFound, "no tag '\(ref)'")
                        }
                        return t
                    }
                    return .accepted(s.steps.isEmpty ? "no steps" : "steps")
                } catch {
                    return .rejected(code(error))
                }
            })
    }

    package static var profile: FuzzTarget {
        let seeds = files("readers").map(\.bytes)
        return FuzzTarget(
            name: "profile", feeds: "reader profiles (hardware/readers/FORMAT.md)", seeds: seeds,
            dictionary: jsonDictionary(seeds),
            run: { b in
                do {
                    let p = try ReaderProfile(json: Data(b), file: "fuzz")
                    return .accepted(p.steps.isEmpty ? "no steps" : "steps")
                } catch {
                    return .rejected(code(error))
                }
            })
    }

    /// `bench ndef-fuzz`'s parse and round trip as a target.
    package static var ndef: FuzzTarget {
        let relaxed = NDEFLimits(
            maxMessageBytes: .max, maxRecords: .max, maxNestingDepth: NDEFLimits.default.maxNestingDepth)
        return FuzzTarget(
            name: "ndef", feeds: "NDEF messages (what a tag holds; bench ndef-fuzz's generator)", seeds: ndefFuzzSeeds,
            maxInputBytes: 4096,
            generate: { rng in
                var b = ndefFuzzSeeds[Int.random(in: 0..<ndefFuzzSeeds.count, using: &rng)]
                for _ in 0..<Int.random(in: 1...4, using: &rng) {
                    ByteMutator.mutate(&b, using: &rng, splice: ndefFuzzSeeds)
                }
                return b
            },
            run: { b in
                do {
                    let m = try NFCNDEFMessage(bytes: b)
                    for r in m.records { _ = r.content }
                    guard (try? NFCNDEFMessage(bytes: m.bytes, limits: relaxed)) == m else {
                        return .finding("round trip differs")
                    }
                    return .accepted("message")
                } catch {
                    return .rejected((error as? NDEFError)?.code.rawValue ?? "\(error)")
                }
            })
    }
}
