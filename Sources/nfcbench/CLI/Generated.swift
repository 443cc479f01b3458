import NFCBenchKit

/// `nfcbench completion bash|zsh|fish` and `nfcbench man`.
enum GeneratedCommands {
    static let completion = Command(
        path: ["completion"],
        abstract: "Print the shell completion script for bash, zsh or fish (generated from the option tables)",
        positionals: [
            PositionalSpec(
                name: "SHELL", help: "bash, zsh or fish", completion: .words(["bash", "zsh", "fish"]),
                choices: ["bash", "zsh", "fish"])
        ],
        discussion: """
            Commands, options and their values complete; --device completes the readers connected
            now ('nfcbench devices --names'). Install it, e.g.:
              nfcbench completion bash > ~/.local/share/bash-completion/completions/nfcbench
              nfcbench completion zsh > ~/.zfunc/_nfcbench   (with ~/.zfunc in fpath)
              nfcbench completion fish > ~/.config/fish/completions/nfcbench.fish
            './bench install' installs all three beside the man page.
            """,
        run: { o in try now(o) },
        runNow: { o in try now(o) })

    static func now(_ o: ParsedOptions) throws -> Int32 {
        let commands = Registry.commands
        switch o.positional(0)! {
        case "bash": Output.raw(Generated.bash(commands))
        case "zsh": Output.raw(Generated.zsh(commands))
        default: Output.raw(Generated.fish(commands))
        }
        return 0
    }

    static let man = Command(
        path: ["man"],
        abstract: "Print nfcbench's man page (roff, generated from the option tables)",
        discussion:
            "'./bench install' installs it as PREFIX/share/man/man1/nfcbench.1; read it now with: nfcbench man | man -l -",
        run: { _ in manNow() },
        runNow: { _ in manNow() })

    static func manNow() -> Int32 {
        Output.raw(Generated.man(Registry.commands))
        return 0
    }
}
