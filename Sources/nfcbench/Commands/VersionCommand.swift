import NFCHardware

enum VersionText {
    static func text() -> String {
        "nfcbench \(CLI.version)\nlibnfc \(NativeLibraries.libnfcVersion)\npcsc-lite \(NativeLibraries.pcscLiteVersion)"
    }

    static let command = Command(
        path: ["version"],
        abstract: "Print the versions of nfcbench, libnfc and pcsc-lite",
        usage: "version",
        help: "Same as 'nfcbench --version'.",
        run: { args in try now(&args) },
        runNow: { args in try now(&args) })

    static func now(_ args: inout Arguments) throws -> Int32 {
        try args.finish()
        Output.out(text())
        return 0
    }
}
