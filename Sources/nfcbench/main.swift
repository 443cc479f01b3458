import Dispatch
import Glibc

// A command that never waits (version, help, a usage error) runs here, before Swift's
// concurrency runtime starts its threads; every other one runs in a task.
let arguments = Array(CommandLine.arguments.dropFirst())
if let status = CLI.mainNow(arguments) { exit(status) }
Task { exit(await CLI.main(arguments)) }
dispatchMain()
