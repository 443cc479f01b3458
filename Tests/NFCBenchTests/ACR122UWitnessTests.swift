import Foundation
import Testing

/// `nfcbench virtual card --personality acr122u` through other people's PC/SC clients:
/// pcsc-tools' `scriptor` and `pcsc_scan`, and pyscard, send what code written for an ACR122U
/// sends (the pseudo-APDUs of ACS's API manual, READERS.md) and get the reader's answers. The
/// expected bytes were read by hand from `hardware/tags/ntag213-text.json` (UID 04 1C 7E 22 8A
/// 51 80 from pages 0-1, page 4 `01 03 A0 0C`, GET_VERSION `00 04 04 02 01 00 0F 03`) and from
/// the PN532 user manual (GetFirmwareVersion `D5 03 32 01 06 07`), not produced by our code.
@Suite("virtual card --personality acr122u through scriptor, pcsc_scan and pyscard")
struct ACR122UWitnessTests {
    static let serve = """
        "$B" virtual card --port 35963 --tag ntag213-text --personality acr122u --quiet >/dev/null 2>&1 &
        for _ in $(seq 100); do timeout -k 1 10 pcsc_scan -n -t 1 2>/dev/null | grep -q "3B 8F 80 01" && break; sleep 0.1; done

        """

    @Test(
        "scriptor: the firmware version, FF CA, FF B0, the direct transmit (InDataExchange, InCommunicateThru, GetFirmwareVersion), LED"
    )
    func scriptor() async throws {
        let r = try await PrivateBench.run(
            Self.serve + """
                printf '%s\\n' 'FF 00 48 00 00' 'FF CA 00 00 00' 'FF B0 00 04 10' 'FF 00 00 00 02 D4 02' \\
                  'FF 00 00 00 05 D4 40 01 30 04' 'FF 00 00 00 03 D4 42 60' 'FF 00 40 0E 04 00 00 00 00' \\
                  | scriptor -r "Virtual PCD 00 00" 2>&1
                timeout -k 1 10 pcsc_scan -n -t 2 2>&1 | grep "ATR:"
                """)
        try PrivateBench.require(r)
        // scriptor prints each answer after "< ", wrapping after 16 bytes: join the lines first.
        let out = r.stdout.replacingOccurrences(of: " \n", with: " ")
        func answer(_ command: String) -> String? {
            guard let range = out.range(of: "> \(command)\n< ") else { return nil }
            return out[range.upperBound...].split(separator: ":").first.map {
                String($0).trimmingCharacters(in: .whitespaces)
            }
        }
        #expect(answer("FF 00 48 00 00") == "41 43 52 31 32 32 55 32 30 33", "ACR122U203, no status word: \(out)")
        #expect(answer("FF CA 00 00 00") == "04 1C 7E 22 8A 51 80 90 00", "the pages' UID: \(out)")
        #expect(answer("FF B0 00 04 10")?.hasPrefix("01 03 A0 0C") == true, "READ 4 as READ BINARY: \(out)")
        #expect(answer("FF B0 00 04 10")?.hasSuffix("90 00") == true, "\(out)")
        #expect(answer("FF 00 00 00 02 D4 02") == "D5 03 32 01 06 07 90 00", "GetFirmwareVersion: \(out)")
        #expect(answer("FF 00 00 00 05 D4 40 01 30 04")?.hasPrefix("D5 41 00 01 03 A0 0C") == true, "\(out)")
        #expect(answer("FF 00 00 00 03 D4 42 60") == "D5 43 00 00 04 04 02 01 00 0F 03 90 00", "GET_VERSION: \(out)")
        #expect(answer("FF 00 40 0E 04 00 00 00 00") == "90 02", "LED: green on, red off: \(out)")
        #expect(r.stdout.contains("ATR: 3B 8F 80 01 80 4F 0C A0 00 00 03 06 03 00 03 00 00 00 00 68"), "\(r.stdout)")
    }

    @Test("pyscard: the storage-card ATR, FF CA and a READ through the direct transmit")
    func pyscard() async throws {
        let r = try await PrivateBench.run(
            Self.serve + """
                /usr/bin/python3 - <<'PY'
                from smartcard.System import readers
                from smartcard.util import toHexString
                r = [x for x in readers() if str(x) == 'Virtual PCD 00 00'][0]
                c = r.createConnection(); c.connect()
                print("ATR", toHexString(c.getATR()))
                d, s1, s2 = c.transmit([0xFF, 0xCA, 0, 0, 0]); print("UID", toHexString(d + [s1, s2]))
                d, s1, s2 = c.transmit([0xFF, 0x00, 0x00, 0x00, 0x05, 0xD4, 0x40, 0x01, 0x30, 0x04])
                print("READ", toHexString(d + [s1, s2]))
                PY
                """)
        try PrivateBench.require(r)
        #expect(
            r.stdout.contains("ATR 3B 8F 80 01 80 4F 0C A0 00 00 03 06 03 00 03 00 00 00 00 68"),
            "\(r.stdout)\(r.stderr)")
        #expect(r.stdout.contains("UID 04 1C 7E 22 8A 51 80 90 00"), "\(r.stdout)\(r.stderr)")
        #expect(r.stdout.contains("READ D5 41 00 01 03 A0 0C 34 03 13 D1 01 0F 54 02 65 6E 48 65 90 00"), "\(r.stdout)")
    }
}
