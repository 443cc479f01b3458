import NFCBenchKit
import Testing

/// `nfcbench poll`'s time column (``PollReport/seconds(_:)``).
@Suite("Poll report: the time since the poll started")
struct PollReportTests {
    @Test(
        "Milliseconds with three digits; a detection stamped before the start is 0.000s, not a crash",
        arguments: [
            (Duration.zero, "0.000s"), (.milliseconds(412), "0.412s"), (.milliseconds(12_345), "12.345s"),
            (.milliseconds(1_005), "1.005s"), (.microseconds(-3), "0.000s"), (.milliseconds(-1_500), "0.000s"),
            (.seconds(-2), "0.000s"),
        ])
    func seconds(elapsed: Duration, text: String) {
        #expect(PollReport.seconds(elapsed) == text)
    }
}
