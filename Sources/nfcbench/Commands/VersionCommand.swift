import NFCHardware

enum VersionText {
    static func text() -> String {
        "nfcbench \(CLI.version)\nlibnfc \(NativeLibraries.libnfcVersion)\npcsc-lite \(NativeLibraries.pcscLiteVersion)"
    }

    static let command = Command(
        path: ["version"],
        abstract: "Print the versions of nfcbench, libnfc and pcsc-lite",
        discussion: "Same as 'nfcbench --version'.",
        run: { o in try now(o) },
        runNow: { o in try now(o) })

    static func now(_ o: ParsedOptions) throws -> Int32 {
        Output.out(text())
        return 0
    }
}
