import Foundation
import Testing

/// The ISO 15693 and FeliCa vpcd cards through other people's PC/SC clients: pcsc-tools'
/// `pcsc_scan` names them from its own list (Debian's smartcard_list.txt) and `scriptor`
/// exchanges the storage-card pseudo-APDUs. The expected bytes are the reference's (shared/
/// reference/felica-iso15693.md §6.5-6.6) and `hardware/tags/icode-slix-text.json`'s, read by
/// hand: UID E0 04 01 00 8A 5C 98 2E (FF CA gives it LSB first), CC E1 40 0D 00 in block 0.
@Suite("ISO 15693 and FeliCa vpcd cards through pcsc_scan and scriptor")
struct VicinityPCSCWitnessTests {
    static func serve(_ tag: String, atr: String) -> String {
        """
        "$B" virtual card --port 35963 --tag \(tag) --quiet >/dev/null 2>&1 &
        for _ in $(seq 100); do timeout -k 1 10 pcsc_scan -n -t 1 2>/dev/null | grep -q "\(atr)" && break; sleep 0.1; done

        """
    }

    /// scriptor prints each answer after "< ", wrapping after 16 bytes: the lines joined first.
    static func answers(_ stdout: String) -> (String) -> String? {
        let out = stdout.replacingOccurrences(of: " \n", with: " ")
        return { command in
            guard let range = out.range(of: "> \(command)\n< ") else { return nil }
            return out[range.upperBound...].split(separator: ":").first.map {
                String($0).trimmingCharacters(in: .whitespaces)
            }
        }
    }

    @Test("ICODE SLIX: pcsc_scan names an ISO 15693 ICODE; scriptor reads the UID, the CC and a block, writes one")
    func iso15693() async throws {
        let atr = "3B 8F 80 01 80 4F 0C A0 00 00 03 06 0B 00 14 00 00 00 00 77"
        let r = try await PrivateBench.run(
            Self.serve("icode-slix-text", atr: atr) + """
                timeout -k 1 10 pcsc_scan -t 2 2>&1 | grep -E "ATR:|ISO 15693|ICODE|ICode" | sort -u
                printf '%s\\n' 'FF CA 00 00 00' 'FF B0 00 00 04' 'FF B0 00 01 08' 'FF B0 00 1B 08' 'FF B0 00 1C 04' \\
                  'FF D6 00 05 04 01 02 03 04' 'FF B0 00 05 04' \\
                  | scriptor -r "Virtual PCD 00 00" 2>&1
                """)
        try PrivateBench.require(r)
        #expect(r.stdout.contains("ATR: \(atr)"), "\(r.stdout)")
        #expect(r.stdout.contains("ISO 15693"), "pcsc_scan names the standard: \(r.stdout)")
        #expect(r.stdout.contains("ICODE") || r.stdout.contains("ICode"), "and the card: \(r.stdout)")
        let answer = Self.answers(r.stdout)
        #expect(answer("FF CA 00 00 00") == "2E 98 5C 8A 00 01 04 E0 90 00", "\(r.stdout)")
        #expect(answer("FF B0 00 00 04") == "E1 40 0D 00 90 00", "\(r.stdout)")
        #expect(answer("FF B0 00 01 08")?.hasPrefix("03 1F D1 01 1B 54 02 65") == true, "\(r.stdout)")
        #expect(answer("FF B0 00 1B 08") == "00 00 00 00 62 82", "the last block, then the end: \(r.stdout)")
        #expect(answer("FF B0 00 1C 04") == "6A 82", "past the memory: \(r.stdout)")
        #expect(answer("FF D6 00 05 04 01 02 03 04") == "90 00", "\(r.stdout)")
        #expect(answer("FF B0 00 05 04") == "01 02 03 04 90 00", "\(r.stdout)")
    }

    @Test("FeliCa Lite-S: pcsc_scan names a FeliCa card; scriptor gets the IDm and a Check through the direct transmit")
    func feliCa() async throws {
        let atr = "3B 8F 80 01 80 4F 0C A0 00 00 03 06 11 00 3B 00 00 00 00 42"
        let r = try await PrivateBench.run(
            Self.serve("felica-lite-s-uri", atr: atr) + """
                timeout -k 1 10 pcsc_scan -t 2 2>&1 | grep -E "ATR:|FeliCa" | sort -u
                printf '%s\\n' 'FF CA 00 00 00' 'FF 00 00 00 10 10 06 01 2E 4C E4 45 05 5B 87 01 0B 00 01 80 00' \\
                  | scriptor -r "Virtual PCD 00 00" 2>&1
                """)
        try PrivateBench.require(r)
        #expect(r.stdout.contains("ATR: \(atr)"), "\(r.stdout)")
        #expect(r.stdout.contains("FeliCa"), "pcsc_scan names it: \(r.stdout)")
        let answer = Self.answers(r.stdout)
        #expect(answer("FF CA 00 00 00") == "01 2E 4C E4 45 05 5B 87 90 00", "the IDm: \(r.stdout)")
        #expect(
            answer("FF 00 00 00 10 10 06 01 2E 4C E4 45 05 5B 87 01 0B 00 01 80 00")
                == "1D 07 01 2E 4C E4 45 05 5B 87 00 00 01 10 04 01 00 0D 00 00 00 00 00 01 00 00 1D 00 40 90 00",
            "the attribute block: \(r.stdout)")
    }
}
