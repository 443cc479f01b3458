/// Every command, in the order `nfcbench --help` lists them. Add one line per command.
enum Registry {
    static let commands: [Command] = [
        VersionText.command,
        TagCommand.show,
        WalkCommand.command,
        EmulateCommand.command,
        ProfileCommand.command,
    ]
}
