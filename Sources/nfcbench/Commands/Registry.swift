/// Every command, in the order `nfcbench --help` lists them. Add one line per command.
enum Registry {
    static let commands: [Command] = [
        VersionText.command,
        TagCommand.show,
        SessionCommand.command,
        DemoCommand.command,
        WalkCommand.command,
        EmulateCommand.command,
        ProfileCommand.command,
        DevicesCommand.command,
        VirtualCardCommand.command,
        DumpCommand.command,
        MeasureCommand.command,
        VirtualPN532Command.command,
        WriteCommand.command,
        FormatCommand.command,
        LockCommand.command,
        DoctorCommand.command,
        BenchCommand.session,
        BenchCommand.ndefFuzz,
        ConformanceCommand.command,
        CheckCommand.equivalence,
        TraceCommand.export,
        TraceCommand.show,
        TraceCommand.diff,
        TraceCommand.plot,
    ]
}
