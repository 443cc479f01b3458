import NFCBenchKit

// The command line's names for what NFCBenchKit now holds (the errors with their exit
// statuses, the checked stdout/stderr writes, the signal policy).
typealias CLIError = BenchError
typealias Output = BenchOutput
typealias Signals = BenchSignals
typealias Outputs = BenchOutputs
typealias CardLink = NFCBenchKit.CardLink
// The option tables' machinery (parser, help, completion, man page) is in NFCBenchKit's
// CommandLine folder; each command's table stays here.
typealias Command = NFCBenchKit.Command
typealias OptionSpec = NFCBenchKit.OptionSpec
typealias PositionalSpec = NFCBenchKit.PositionalSpec
typealias OptionValue = NFCBenchKit.OptionValue
typealias DurationUnit = NFCBenchKit.DurationUnit
typealias Durations = NFCBenchKit.Durations
typealias ParsedOptions = NFCBenchKit.ParsedOptions
typealias OptionParser = NFCBenchKit.OptionParser
typealias OutputOptions = NFCBenchKit.OutputOptions
typealias Generated = NFCBenchKit.Generated
// The session runner, its status line and the trace's human lines (NFCBenchKit/Session).
typealias SessionRunner = NFCBenchKit.SessionRunner
typealias StatusLine = NFCBenchKit.StatusLine
typealias TraceLines = NFCBenchKit.TraceLines
typealias Counter = NFCBenchKit.Counter
typealias WalkReport = NFCBenchKit.WalkReport
typealias HCELiveCLI = NFCBenchKit.HCELive
typealias LibNFCTargetLink = NFCBenchKit.LibNFCTargetLink
typealias SignalFlag = NFCBenchKit.SignalFlag
typealias PCSCWalk = NFCBenchKit.PCSCWalk
