import Foundation
import NFCFiles

/// The app package `nfcbench new-app DIR` writes: the example app (`Examples/ExampleApp`) of the
/// clone this nfcbench runs from, with a manifest that depends on that clone by its absolute
/// path. Files are made new (never overwritten), sources 0644 and folders 0755; errors are
/// ``BenchError``s: 69 not in a clone, 73 a folder that is not empty or can't be made, 66 an
/// example file that can't be read.
public enum AppScaffold {
    /// The clone this nfcbench runs from: the folder above its `hardware/` that holds the
    /// nfcbench package and the example app.
    public static func cloneDirectory() throws(BenchError) -> String {
        let fm = FileManager.default
        var candidates: [URL] = []
        if let hardware = BenchData.hardwareDirectory() {
            candidates.append(URL(fileURLWithPath: hardware).deletingLastPathComponent())
        }
        var dir = URL(fileURLWithPath: BenchData.executablePath()).resolvingSymlinksInPath()
            .deletingLastPathComponent()
        for _ in 0..<8 {
            candidates.append(dir)
            dir.deleteLastPathComponent()
        }
        for c in candidates.map({ $0.standardizedFileURL.path }) {
            let manifest = (try? String(contentsOfFile: c + "/Package.swift", encoding: .utf8)) ?? ""
            if manifest.contains(#"name: "nfcbench""#), fm.fileExists(atPath: c + "/" + example) { return c }
        }
        throw .unavailable(
            "no nfcbench clone around this executable (\(BenchData.executablePath())): new-app makes a package that depends on a clone's sources; run the nfcbench built in a clone"
        )
    }

    /// The example package inside the clone.
    public static let example = "Examples/ExampleApp"

    /// Writes the package; returns what was written, for the summary line.
    public static func write(to target: String, name: String, clone: String) throws(BenchError) -> [String] {
        let fm = FileManager.default
        var isFolder: ObjCBool = false
        if fm.fileExists(atPath: target, isDirectory: &isFolder) {
            guard isFolder.boolValue else { throw .cantCreate("\(target): is a file; give a new or empty folder") }
            let entries = (try? fm.contentsOfDirectory(atPath: target)) ?? []
            guard entries.isEmpty else {
                throw .cantCreate("\(target) is not empty: new-app writes only into a new or empty folder")
            }
        }
        do throws(FileError) { try Folder.make(target, mode: 0o755) } catch {
            throw BenchError(FileError(error.kind, path: error.path, "can't make the package folder: \(error.reason)"))
        }
        var written: [String] = []
        for part in ["Sources", "Tests"] {
            for file in files(under: "\(clone)/\(example)/\(part)") {
                let relative = part + "/" + file
                guard let data = fm.contents(atPath: "\(clone)/\(example)/\(relative)") else {
                    throw .noInput("\(clone)/\(example)/\(relative): cannot be read")
                }
                try put(Array(data), at: "\(target)/\(relative)")
            }
            written.append(part)
        }
        try put(Array(try manifest(name: name, clone: clone).utf8), at: "\(target)/Package.swift")
        guard let readme = fm.contents(atPath: "\(clone)/\(example)/README.md") else {
            throw .noInput("\(clone)/\(example)/README.md: cannot be read")
        }
        try put(Array(readme), at: "\(target)/README.md")
        try put(Array(".build/\n.swiftpm/\n".utf8), at: "\(target)/.gitignore")
        return ["Package.swift", "README.md"] + written + [".gitignore"]
    }

    /// Every file below `folder`, as paths relative to it, sorted (no build products).
    public static func files(under folder: String) -> [String] {
        let all = FileManager.default.enumerator(atPath: folder)?.compactMap { $0 as? String } ?? []
        return all.filter { path in
            var isFolder: ObjCBool = false
            _ = FileManager.default.fileExists(atPath: folder + "/" + path, isDirectory: &isFolder)
            return !isFolder.boolValue && !path.split(separator: "/").contains { $0.hasPrefix(".") }
        }.sorted()
    }

    /// Writes a new file (nothing is overwritten: an existing one is refused) by
    /// ``/NFCFiles/OutputFile``'s rules, every write checked, with the usual source file mode
    /// 0644 (these are the app's sources, not tag data; its folders 0755).
    public static func put(_ bytes: [UInt8], at path: String) throws(BenchError) {
        do throws(FileError) {
            try Folder.make(FilePath.folder(of: path), mode: 0o755)
            let file = try OutputFile.plan(path, mode: 0o644)
            guard file.destination == .create else {
                throw FileError(.cantCreate, path: path, "is already there; new-app writes only new files")
            }
            try file.write(bytes)
        } catch {
            throw BenchError(error)
        }
    }

    /// The new package's manifest: `Examples/ExampleApp/Package.swift.new-app` (the example's
    /// targets) with the package's name and nfcbench by the clone's absolute path (SwiftPM
    /// names a path dependency after its folder, so the identity is that folder's name).
    public static func manifest(name: String, clone: String) throws(BenchError) -> String {
        let template = "\(clone)/\(example)/Package.swift.new-app"
        guard let data = FileManager.default.contents(atPath: template), let text = String(data: data, encoding: .utf8)
        else { throw .noInput("\(template): cannot be read") }
        let identity = URL(fileURLWithPath: clone).lastPathComponent.lowercased()
        return text.replacingOccurrences(of: "{{NAME_LITERAL}}", with: literal(name))
            .replacingOccurrences(of: "{{NAME}}", with: name.replacingOccurrences(of: "\n", with: " "))
            .replacingOccurrences(of: "{{IDENTITY}}", with: literal(identity))
            .replacingOccurrences(of: "{{CLONE}}", with: literal(clone))
    }

    /// `s` as a Swift string literal.
    public static func literal(_ s: String) -> String {
        var out = "\""
        for c in s.unicodeScalars {
            switch c {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            default: out.unicodeScalars.append(c)
            }
        }
        return out + "\""
    }
}
