import Foundation
import Testing

@testable import nfcbench

/// The demo presents and reads its own card; a virtual card that vpcd does not take says why.
/// Each run has its own private pcscd (scripts/with-pcscd), with another card already on
/// vpcd's port 35963 where the issue's reproduction puts it.
@Suite("The demo's own card; a virtual card whose port is taken or refused", .serialized)
struct OwnCardTests {
    /// `nfcbench virtual card --tag ntag213-text` already on port 35963 ("Hello, bench"), in the
    /// field before the script goes on: it keeps trying (`--wait`) and the script waits for its
    /// "in the field" line (at most 30 s). A fixed `sleep 1.5` was the flake of a fresh clone's CI:
    /// when the private pcscd had not polled vpcd within the foreign card's own 3 s, that card
    /// gave up and left the port, so the card under test found no one holding it ("took the
    /// virtual card's connection but pcscd never polled the card").
    static let foreignCard = """
        "$B" virtual card --tag ntag213-text --wait >"$NFCBENCH_TRACE_DIR.foreign" 2>&1 &
        for _ in $(seq 600); do grep -q 'in the field' "$NFCBENCH_TRACE_DIR.foreign" 2>/dev/null && break; sleep 0.05; done
        grep -q 'in the field' "$NFCBENCH_TRACE_DIR.foreign" || { echo "the foreign card never came into the field"; cat "$NFCBENCH_TRACE_DIR.foreign"; }
        """

    /// The private pcscd stopped for 4 s (SIGSTOP, then SIGCONT) as the script starts: what a
    /// loaded machine does to a pcscd that has just started, so the first poll comes late.
    static let stalledPCSCD = #"kill -STOP "$NFCBENCH_PCSCD_PID"; ( sleep 4; kill -CONT "$NFCBENCH_PCSCD_PID" ) &"#

    @Test(
        "With a foreign card on vpcd's port: the demo reads its own card on its own pcscd; --bench shared-pcscd says the port is taken (69)"
    )
    func demoWithForeignCard() async throws {
        let r = try await PrivateBench.run(
            """
            \(Self.foreignCard)
            "$B" demo --timeout 0.5; echo "exit $?"
            echo ---
            "$B" demo --bench shared-pcscd --timeout 0.5 2>&1; echo "exit $?"
            """)
        try PrivateBench.require(r)
        let parts = r.stdout.components(separatedBy: "---\n")
        try #require(parts.count == 2, "\(r.stdout)\n\(r.stderr)")
        let own = parts[0]
        #expect(own.contains("exit 0"), "\(own)\n\(r.stderr)")
        #expect(own.contains("a private pcscd"))
        #expect(own.contains("https://example.com/nfcbench/t4t"), "the demo decodes its own t4t-uri")
        #expect(!own.contains("Hello, bench"), "never the foreign card's text")
        #expect(own.contains("detected       type4 UID 04 51 8A 2B 6C 1F 90"))
        #expect(!own.contains("type2"), "no other card is detected")
        let shared = parts[1]
        #expect(shared.contains("exit 69"), "\(shared)")
        #expect(shared.contains("vpcd's port 35963 is taken"), "\(shared)")
        #expect(shared.contains("virtual card --tag ntag213-text"), "the holder is named: \(shared)")
        // The remedy is one the demo has (it has no --slot): its own private pcscd.
        #expect(shared.contains("without --bench shared-pcscd") && !shared.contains("--slot"), "\(shared)")
        #expect(!shared.contains("Hello, bench"))
    }

    @Test("A Type 2 tag through the private pcscd: the UID read (FF CA) is the one presented, so the demo passes")
    func demoType2OwnUID() async throws {
        let r = try await PrivateBench.run(#""$B" demo --tag ntag213-text --timeout 0.5; echo "exit $?""#)
        try PrivateBench.require(r)
        #expect(r.stdout.contains("exit 0"), "\(r.stdout)\n\(r.stderr)")
        #expect(r.stdout.contains("Hello, bench"))
        #expect(!r.stdout.contains("another card"))
    }

    @Test(
        "A second virtual card on a taken port says so and exits 69; with nothing listening it says so too; --wait keeps trying, saying why"
    )
    func virtualCardNotInField() async throws {
        // Port 29990 is below Linux's ephemeral range (32768-60999): no other test's listener
        // on port 0, and no connection to itself, can take it (45990 was once taken in CI).
        let r = try await PrivateBench.run(
            """
            \(Self.foreignCard)
            "$B" virtual card --tag t4t-uri 2>&1; echo "exit $?"
            echo ---
            "$B" virtual card --tag t4t-uri --port 29990 2>&1; echo "exit $?"
            echo ---
            "$B" virtual card --tag t4t-uri --port 29990 --wait > "$NFCBENCH_TRACE_DIR.wait" 2>&1 & w=$!
            sleep 4.5; kill -INT $w; wait $w; echo "exit $?"; cat "$NFCBENCH_TRACE_DIR.wait"
            """)
        try PrivateBench.require(r)
        let parts = r.stdout.components(separatedBy: "---\n")
        try #require(parts.count == 3, "\(r.stdout)\n\(r.stderr)")
        #expect(parts[0].contains("exit 69"), "\(parts[0])")
        #expect(parts[0].contains("vpcd's port 35963 is taken"))
        #expect(!parts[0].contains("in the field (connected"), "never in the field: \(parts[0])")
        #expect(parts[1].contains("exit 69"), "\(parts[1])")
        #expect(parts[1].contains("nothing listens there"), "\(parts[1])")
        #expect(parts[2].contains("exit 0"), "\(parts[2])")
        #expect(
            parts[2].contains("waiting: the virtual card could not connect to vpcd on 127.0.0.1:29990"), "\(parts[2])")
        #expect(parts[2].contains("stopped"))
    }

    @Test(
        "With the private pcscd slow to poll (stopped 4 s at start), the foreign card still holds the port and the second card says it is taken (the fresh-clone flake)"
    )
    func portTakenUnderSlowPCSCD() async throws {
        let r = try await PrivateBench.run(
            """
            \(Self.stalledPCSCD)
            \(Self.foreignCard)
            "$B" virtual card --tag t4t-uri 2>&1; echo "exit $?"
            """)
        try PrivateBench.require(r)
        #expect(!r.stdout.contains("never came into the field"), "\(r.stdout)")
        #expect(r.stdout.contains("exit 69"), "\(r.stdout)")
        #expect(r.stdout.contains("vpcd's port 35963 is taken"), "\(r.stdout)")
        #expect(r.stdout.contains("virtual card --tag ntag213-text"), "the holder is named: \(r.stdout)")
        #expect(!r.stdout.contains("never polled the card:"), "\(r.stdout)")
    }

    @Test("measure detect --virtual-card with the port taken: the error names the cause, not only a timeout")
    func measureWithPortTaken() async throws {
        let r = try await PrivateBench.run(
            """
            \(Self.foreignCard)
            "$B" measure detect --device "pcsc:Virtual PCD 00 00" --virtual-card t4t-uri --count 3 2>&1; echo "exit $?"
            """)
        try PrivateBench.require(r)
        #expect(r.stdout.contains("exit 69"), "\(r.stdout)")
        #expect(r.stdout.contains("vpcd's port 35963 is taken"), "\(r.stdout)")
        #expect(r.stdout.contains("--port 35964"), "measure's own flag for the other slot: \(r.stdout)")
        #expect(!r.stdout.contains("no detection within"))
    }

    @Test("The demo's UID check: the first detected UID that is not the presented one, said with both UIDs")
    func foreignUID() {
        let own: [UInt8] = [0x04, 0x51, 0x8A, 0x2B, 0x6C, 0x1F, 0x90]
        let other: [UInt8] = [0x04, 0x1C, 0x7E, 0x22, 0x8A, 0x51, 0x80]
        #expect(DemoCommand.foreignUID(presented: own, detected: [own, own]) == nil)
        #expect(DemoCommand.foreignUID(presented: own, detected: [own, other, own]) == other)
        let message = DemoCommand.foreignCardMessage(presented: "t4t-uri", uid: own, read: other)
        #expect(message.contains("t4t-uri (UID 04 51 8A 2B 6C 1F 90)"))
        #expect(message.contains("read a card with UID 04 1C 7E 22 8A 51 80"))
    }
}
