import Foundation
import Testing

/// Every private pcscd calls its vpcd reader "Virtual PCD 00 00": two private benches on one
/// host, sharing one lock folder, must not refuse each other (`scripts/with-pcscd` exports
/// `NFCBENCH_PCSC_INSTANCE`, which the reader's lock name carries).
@Suite("Private benches side by side")
struct PrivateBenchLockTests {
    @Test(
        "Two with-pcscd benches with one lock folder each hold their own 'Virtual PCD 00 00' at once: 201 both, no 203")
    func twoPrivateBenches() async throws {
        let shared = try TestFolder("shared-locks")
        defer { shared.remove() }
        let shell = """
            export NFCBENCH_LOCK_DIR='\(shared.file("locks"))'
            echo "instance $NFCBENCH_PCSC_INSTANCE"
            "$B" virtual card --tag t4t-uri --quiet >/dev/null 2>&1 &
            for _ in $(seq 100); do "$B" devices --json 2>/dev/null | grep -qF '["present"]' && break; sleep 0.1; done
            "$B" session --device "pcsc:Virtual PCD 00 00" --mode ndef-rw --timeout 4 2>&1
            echo "exit $?"
            """
        async let a = PrivateBench.run(shell)
        async let b = PrivateBench.run(shell)
        let (ra, rb) = try await (a, b)
        try PrivateBench.require(ra)
        try PrivateBench.require(rb)
        for r in [ra, rb] {
            #expect(r.stdout.contains("didInvalidateWithError 201"), "\(r.stdout)\(r.stderr)")
            #expect(!r.stdout.contains("didInvalidateWithError 203"), "\(r.stdout)\(r.stderr)")
        }
        let instances = [ra, rb].compactMap { $0.stdoutLines.first { $0.hasPrefix("instance with-pcscd-") } }
        #expect(instances.count == 2 && instances[0] != instances[1], "\(instances)")
    }
}
