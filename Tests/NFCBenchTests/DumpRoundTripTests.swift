import Foundation
import NFCBenchTestSupport
import Testing

/// The round trip of every dump (issue 28): every shipped tag file is dumped on every device
/// (`sim:tag:FILE`, a virtual PN532 through libnfc's `pn532_uart`, a vpcd card through the real
/// pcscd), the dump is read back by `tag show`, presented again on every device, and dumped
/// again: the same pages (Type 4: the same NDEF file and CC values), the same type and UID.
/// The property is over the files and the devices, all of them; a file that can't be dumped by
/// design (MIFARE Classic is sensed only; ntag215-flaky loses itself at page 8) must fail on
/// every device alike.
///
/// Each file is a case of its own, in a private pcscd of its own: the files run side by side,
/// a few at a time (``slots``).
@Suite("Dump round trip: every shipped tag file, every device, dump → tag show → every device → dump")
struct DumpRoundTripTests {
    static let devices = ["sim", "pn532", "pcsc"]
    static let tagFolder = NFCBench.packageRoot.appendingPathComponent("hardware/tags").path
    static var shipped: [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: tagFolder)) ?? []).filter { $0.hasSuffix(".json") }
            .map { String($0.dropLast(5)) }.sorted()
    }
    /// The cases: the shipped files, listed when the suite is declared (``everyFileIsACase()``).
    static let cases = shipped
    /// The cases that run at once: each starts virtual PN532s and vpcd cards one after another.
    static let slots = Slots.busyRealParts

    /// Files no device can dump, by design, with why.
    static let undumpable = [
        "mifare-classic-1k": "a MIFARE Classic is sensed, never read (not an NFC Forum tag)",
        "ntag215-flaky": "its fault schedule loses the tag when page 8 is read",
        "felica-lite-s-flaky": "its fault schedule loses the tag when block 1 is read",
        "icode-slix-flaky": "its fault schedule leaves the first READ of block 2 unanswered",
        "felica-standard-transit": "no NFC Forum system (12FC): its other systems' services are not enumerated",
    ]

    /// The devices that can present `file`: a PN532 has no ISO 15693 (the ICODE and ST25 files
    /// are not put on it; `virtual pn532 --tag` refuses them).
    static func devices(for file: String) -> [String] {
        file.hasPrefix("icode-") || file.hasPrefix("st25tv-") ? devices.filter { $0 != "pn532" } : devices
    }

    /// The script: `dump_on DEVICE FILE OUT` presents FILE on DEVICE and dumps it to OUT,
    /// printing `status DEVICE FILE OUT CODE`.
    static let functions = #"""
        dump_on() {
            local dev=$1 file=$2 out=$3 st
            case $dev in
                sim) "$B" dump --device "sim:tag:$file" --out "$out" --wait 5 >/dev/null 2>"$out.err"; st=$? ;;
                pn532)
                    "$B" virtual pn532 --pty "$W/pn532" --tag "$file" --quiet >/dev/null 2>&1 & local v=$!
                    for _ in $(seq 100); do [ -L "$W/pn532" ] && break; sleep 0.05; done
                    "$B" dump --device "pn532_uart:$W/pn532" --out "$out" --wait 5 >/dev/null 2>"$out.err"; st=$?
                    kill -INT $v; wait $v ;;
                pcsc)
                    "$B" virtual card --tag "$file" --quiet >/dev/null 2>&1 & local v=$!
                    "$B" dump --device "pcsc:Virtual PCD 00 00" --out "$out" --wait 5 >/dev/null 2>"$out.err"; st=$?
                    kill -INT $v; wait $v
                    sleep 0.9 ;;  # pcscd sees the card leave at its next poll (≈ 0.4 s)
            esac
            echo "status $dev $(basename "$file" .json) $(basename "$out") $st"
        }
        """#

    struct Dump: Equatable {
        var type: String
        var uid: String
        var pages: [String]
        var unread: [Int]
        var ndefFile: String?
        var maxNDEF: Int?
        var mapping: String?
        var readOnly: Bool?
        /// FeliCa: the IDm, PMm and each system's code and blocks; ISO 15693: the block size
        /// and the blocks.
        var idm: String?
        var pmm: String?
        var blocks: [String]
        var blockSize: Int?

        init?(_ path: String) {
            guard let data = FileManager.default.contents(atPath: path),
                let o = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
            else { return nil }
            type = o["type"] as? String ?? ""
            uid = o["uid"] as? String ?? ""
            pages = o["pages"] as? [String] ?? []
            unread = o["unread_pages"] as? [Int] ?? []
            ndefFile = o["ndef_file"] as? String
            maxNDEF = o["max_ndef_file_size"] as? Int
            mapping = o["mapping_version"] as? String
            readOnly = o["read_only"] as? Bool
            idm = o["idm"] as? String
            pmm = o["pmm"] as? String
            blockSize = o["block_size"] as? Int
            let systems = o["systems"] as? [[String: Any]] ?? []
            blocks =
                (o["blocks"] as? [String] ?? [])
                + systems.flatMap { [($0["code"] as? String ?? "?") + ":"] + ($0["blocks"] as? [String] ?? []) }
        }
    }

    @Test("The cases are every shipped tag file, the undumpable ones among them")
    func everyFileIsACase() {
        #expect(Self.cases == Self.shipped)
        #expect(Self.cases.count >= 10, "\(Self.cases)")
        #expect(Set(Self.undumpable.keys).isSubset(of: Self.cases), "\(Self.cases)")
    }

    @Test(
        "Every shipped tag file on every device: the dump reads back, and dumped again on every device it is the same",
        arguments: cases)
    func roundTrip(file f: String) async throws {
        let folder = try TestFolder("roundtrip")
        defer { folder.remove() }
        var script = "W=\"$NFCBENCH_TRACE_DIR.w\"; mkdir -p \"$W\"\n" + Self.functions + "\n"
        for x in Self.devices(for: f) {
            script += "dump_on \(x) \"\(Self.tagFolder)/\(f).json\" \"$W/\(x)-\(f).json\"\n"
            if Self.undumpable[f] != nil { continue }
            script += "\"$B\" tag show \"$W/\(x)-\(f).json\" >/dev/null 2>&1; echo \"show \(x) \(f) $?\"\n"
            for y in Self.devices(for: f) {
                script += "dump_on \(y) \"$W/\(x)-\(f).json\" \"$W/\(x)-\(f)-\(y).json\"\n"
            }
        }
        let shell = script
        let r = try await Self.slots.run { try await PrivateBench.run(shell, in: folder, timeout: .seconds(600)) }
        try PrivateBench.require(r)
        let w = folder.file("traces.w")
        let status = Dictionary(
            r.stdout.split(separator: "\n").filter { $0.hasPrefix("status ") }.map { line -> (String, Int) in
                let p = line.split(separator: " ")
                return (String(p[3]), Int(p[4]) ?? -1)
            }, uniquingKeysWith: { a, _ in a })
        func err(_ name: String) -> String { (try? String(contentsOfFile: "\(w)/\(name).err", encoding: .utf8)) ?? "" }
        var checked = 0
        if let why = Self.undumpable[f] {
            for x in Self.devices(for: f) {
                #expect(status["\(x)-\(f).json"].map { $0 != 0 } == true, "\(f) on \(x): \(why); it dumped")
            }
        } else {
            for x in Self.devices(for: f) {
                let first = "\(x)-\(f).json"
                #expect(status[first] == 0, "\(f) dumped on \(x): \(err(first))")
                guard let d1 = Dump("\(w)/\(first)") else {
                    Issue.record("\(f) on \(x): no dump")
                    continue
                }
                #expect(r.stdout.contains("show \(x) \(f) 0\n"), "tag show reads \(first) back")
                if f.hasPrefix("ultralight-c") {
                    #expect(
                        d1.type == "ultralight_c" && d1.pages.count == 48, "\(first): \(d1.type), \(d1.pages.count)")
                    #expect(d1.unread == [44, 45, 46, 47], "\(first)")
                }
                for y in Self.devices(for: f) {
                    let second = "\(x)-\(f)-\(y).json"
                    #expect(status[second] == 0, "\(first) presented on \(y) and dumped: \(err(second))")
                    guard let d2 = Dump("\(w)/\(second)") else {
                        Issue.record("\(second): no dump")
                        continue
                    }
                    #expect(d2 == d1, "\(f): the dump from \(x) dumped again on \(y) differs")
                    checked += 1
                }
            }
        }
        let n = Self.devices(for: f).count
        #expect(checked == (Self.undumpable[f] == nil ? n * n : 0))
    }
}
