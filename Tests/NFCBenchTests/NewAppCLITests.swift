import Foundation
import Testing

/// `nfcbench new-app DIR` (issue 14 item 11: the example app could not be copied). What the
/// command writes is checked here; that the written package builds and passes its own tests
/// is a step of `./bench test` of its own (a `swift test` inside a unit test would build
/// nfcbench a second time, minutes on 2 cores).
@Suite("new-app: an app package made from the example app")
struct NewAppCLITests {
    /// This clone (the tests live in it: Tests/NFCBenchTests/…).
    static let clone = NFCBench.packageRoot.path

    @Test("The package names this clone by absolute path, once, and no other path of this machine")
    func writesPackage() async throws {
        let folder = try TestFolder("new-app")
        defer { folder.remove() }
        let dir = folder.file("apps/badge-app")  // a folder whose parent is missing too
        let r = try await NFCBench.run(["new-app", dir])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("swift test --package-path \(dir)"), "\(r.stdout)")

        let manifest = try String(contentsOfFile: dir + "/Package.swift", encoding: .utf8)
        #expect(manifest.contains(#".package(path: "\#(Self.clone)")"#), "\(manifest)")
        #expect(manifest.contains(#"name: "badge-app""#))
        let identity = URL(fileURLWithPath: Self.clone).lastPathComponent.lowercased()
        #expect(manifest.contains(#"let nfcbench = "\#(identity)""#))

        // The example's sources and tests, byte for byte; nothing else but the manifest, the
        // README (how to share the files with an Xcode project) and .gitignore.
        let example = Self.clone + "/Examples/ExampleApp"
        let written = FileManager.default.enumerator(atPath: dir)!.compactMap { $0 as? String }.filter {
            var isFolder: ObjCBool = false
            return FileManager.default.fileExists(atPath: dir + "/" + $0, isDirectory: &isFolder) && !isFolder.boolValue
        }.sorted()
        let sources = FileManager.default.enumerator(atPath: example)!.compactMap { $0 as? String }.filter {
            ($0.hasPrefix("Sources/") || $0.hasPrefix("Tests/")) && $0.hasSuffix(".swift")
        }
        #expect(!sources.isEmpty)
        #expect(written == ([".gitignore", "Package.swift", "README.md"] + sources).sorted())
        #expect(
            FileManager.default.contents(atPath: dir + "/README.md")
                == FileManager.default.contents(atPath: example + "/README.md"))
        // The NFC logic compiles in both worlds: Core NFC on iOS, ReaderSession here.
        let logic = try String(contentsOfFile: dir + "/Sources/ScanFeature/BadgeScanner.swift", encoding: .utf8)
        let imports = logic.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.filter {
            $0.hasPrefix("#") || $0.hasPrefix("import ") || $0.hasPrefix("public import ")
        }
        #expect(
            imports == [
                "#if canImport(CoreNFC)", "public import CoreNFC", "#else", "public import ReaderSession", "#endif",
            ])
        #expect(manifest.contains("condition: .when(platforms: [.linux])"))
        for file in sources {
            #expect(
                FileManager.default.contents(atPath: dir + "/" + file)
                    == FileManager.default.contents(atPath: example + "/" + file), "\(file)")
        }

        // Absolute paths: only the dependency line may name one (the user's own clone).
        let home = ProcessInfo.processInfo.environment["HOME"] ?? "/root"
        for file in written {
            let text = try String(contentsOfFile: dir + "/" + file, encoding: .utf8)
            let lines = text.split(separator: "\n").filter {
                $0.contains(Self.clone) || $0.contains(folder.path) || $0.contains(home + "/")
                    || $0.contains("#filePath")
            }
            let allowed = file == "Package.swift" ? [#"    dependencies: [.package(path: "\#(Self.clone)")],"#] : []
            #expect(lines.map(String.init) == allowed, "\(file): the tests find bench data through the library")
        }
    }

    @Test("A folder that is not empty is refused with 73 and left as it was; no DIR is a usage error")
    func refusesNonEmpty() async throws {
        let folder = try TestFolder("new-app")
        defer { folder.remove() }
        try "mine\n".write(toFile: folder.file("notes.txt"), atomically: true, encoding: .utf8)
        let r = try await NFCBench.run(["new-app", folder.path])
        #expect(r.status == 73, "\(r.stderr)")
        #expect(r.stderr.contains("\(folder.path) is not empty"), "\(r.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["notes.txt"])
        #expect(InProcessCLI.mistake(["new-app"]) == "missing DIR")
    }
}
