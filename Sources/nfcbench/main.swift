import Dispatch
import Glibc
import ReaderSession
import ReaderSessionLocks

// The one signal policy (README "Signals"): the signals are blocked before any other thread
// exists; a command that never waits (version, help, a usage error) runs here, before Swift's
// concurrency runtime starts its threads; every other one runs in a task, and this (the main)
// thread takes the signals for good. Not dispatchMain() or an async main: the main thread would
// wait in libdispatch's sigsuspend with every signal unblocked, and a signal meant for the
// policy would kill the process there instead.
Signals.install()
// Every reader is locked in the lock folder (cross-process 203, --busy queue tickets, heat files
// beside the locks): the session arbiter's cross-process half, which ReaderSession leaves to the host.
SessionArbiter.installCrossProcessLocks(LockFolder())
let arguments = Array(CommandLine.arguments.dropFirst())
if let status = CLI.mainNow(arguments) { exit(status) }
Task.detached { exit(await CLI.main(arguments)) }
Signals.takeSignals()
