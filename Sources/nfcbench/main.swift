import Foundation

let status = await CLI.main(Array(CommandLine.arguments.dropFirst()))
exit(status)
