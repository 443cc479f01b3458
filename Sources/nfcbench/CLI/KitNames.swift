import NFCBenchKit

// The command line's names for what NFCBenchKit now holds (the errors with their exit
// statuses, the checked stdout/stderr writes, the signal policy).
typealias CLIError = BenchError
typealias Output = BenchOutput
typealias Signals = BenchSignals
typealias Outputs = BenchOutputs
typealias CardLink = NFCBenchKit.CardLink
