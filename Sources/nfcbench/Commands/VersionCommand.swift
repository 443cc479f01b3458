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
        run: { args in
            try args.finish()
            Output.out(text())
            return 0
        })
}
