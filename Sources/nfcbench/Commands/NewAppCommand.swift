import Foundation
import NFCBenchKit

/// `nfcbench new-app DIR`: an app team's package, made from the example app
/// (`Examples/ExampleApp`), depending on this clone by its absolute path.
enum NewAppCommand {
    static let command = Command(
        path: ["new-app"],
        abstract: "Write an app package that tests its NFC logic with the conformance harness (from the example app)",
        options: [OptionSpec("name", value: "NAME", help: "the package's name (default: DIR's folder name)")],
        positionals: [PositionalSpec(name: "DIR", help: "a new or empty folder", completion: .directory)],
        discussion: """
            Writes a Swift package in DIR (a new or empty folder): the example app's NFC logic
            (ScanFeature, a badge scanner whose file compiles against Core NFC on iOS and
            against ReaderSession here, the conditional import its only difference; README.md
            says how to share it with an Xcode project) and its Swift Testing
            tests under ReaderSessionConformance, with a Package.swift that depends on this
            nfcbench clone by its absolute path. Then run its tests:

              swift test --package-path DIR

            Exit status: 0 written; 64 usage; 69 this nfcbench is not in a clone (an installed
            copy has no package to depend on); 73 DIR is not empty or can't be made.
            """,
        run: { o in
            let name = o.string("name")
            let dir = o.positional(0)!
            guard dir != "-" else {
                throw CLIError.usage("DIR is a folder to write the package in; - (standard output) can't hold one")
            }
            let clone = try AppScaffold.cloneDirectory()
            let target = URL(fileURLWithPath: dir).standardizedFileURL.path
            let written = try AppScaffold.write(
                to: target, name: name ?? URL(fileURLWithPath: target).lastPathComponent, clone: clone)
            Output.out("wrote an app package in \(target): \(written.joined(separator: ", "))")
            Output.out("it depends on nfcbench at \(clone); run its tests with:")
            Output.out("  swift test --package-path \(target)")
            return 0
        })
}
