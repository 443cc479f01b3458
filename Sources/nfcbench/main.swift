import Foundation

// The one signal policy (README "Signals"): the signals are blocked before any other thread
// exists, the command runs in a task, and this (the main) thread takes the signals for good.
// Not an async main: its main thread would wait in libdispatch's sigsuspend with every signal
// unblocked, and a signal meant for the policy would kill the process there instead.
Signals.install()
Task.detached {
    let status = await CLI.main(Array(CommandLine.arguments.dropFirst()))
    exit(status)
}
Signals.takeSignals()
