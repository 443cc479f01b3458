public import Foundation

/// Finds the bench data (`hardware/`: tags, scenarios, readers, conformance) however the
/// program is run, never from the current directory:
///
/// 1. `$NFCBENCH_DATA` when set (a folder holding `tags/`, `scenarios/`, …);
/// 2. `<exe dir>/../share/nfcbench/hardware` (an installed layout);
/// 3. the first `hardware/` beside the executable or above it (a build in `.build/…` of a
///    clone, or of a package beside it such as `Examples/ReadAnyReader`), following the
///    executable's symlinks first;
/// 4. the `hardware/` of the clone this library was built from (a package elsewhere that
///    depends on nfcbench by path).
public enum BenchData {
    /// The `hardware/` folder (see the type's documentation), or `nil` when there is none.
    public static func hardwareDirectory(
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> String? {
        let fm = FileManager.default
        func isData(_ p: String) -> Bool {
            ["tags", "readers", "scenarios", "conformance"].contains { sub in
                var dir: ObjCBool = false
                return fm.fileExists(atPath: p + "/" + sub, isDirectory: &dir) && dir.boolValue
            }
        }
        if let d = environment["NFCBENCH_DATA"], !d.isEmpty { return d }
        let exe = URL(fileURLWithPath: executablePath()).resolvingSymlinksInPath().deletingLastPathComponent()
        let installed = exe.appendingPathComponent("../share/nfcbench/hardware").standardized.path
        if isData(installed) { return installed }
        var dir = exe
        for _ in 0..<8 {
            let candidate = dir.appendingPathComponent("hardware").path
            if isData(candidate) { return candidate }
            let parent = dir.deletingLastPathComponent()
            if parent.path == dir.path { break }
            dir = parent
        }
        // Sources/NFCBenchKit/BenchData.swift → the clone's hardware/.
        let clone = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("hardware").path
        return isData(clone) ? clone : nil
    }

    /// The running program's path (`/proc/self/exe`), else its `argv[0]`.
    public static func executablePath() -> String {
        if let p = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") { return p }
        return CommandLine.arguments[0]
    }

    /// `name` as given when it is a path to a file; otherwise looked up in `hardware/<sub>/`,
    /// with or without the `.json` extension. A name written from the clone's root, as the
    /// README writes them (`hardware/tags/t4t-uri.json`), is found from any folder.
    public static func resolve(_ name: String, in sub: String) -> String? {
        let fm = FileManager.default
        if name == "-" || fm.fileExists(atPath: name) { return name }  // "-": standard input
        guard let hw = hardwareDirectory() else { return nil }
        let fromRoot = "hardware/\(sub)/"
        let inSub = name.hasPrefix(fromRoot) ? String(name.dropFirst(fromRoot.count)) : name
        let candidates = ["\(hw)/\(sub)/\(inSub)", "\(hw)/\(sub)/\(inSub).json"]
        return candidates.first { fm.fileExists(atPath: $0) }
    }

    /// ``resolve(_:in:)`` or ``BenchDeviceError/Kind/notFound`` naming what was looked for, and
    /// the shipped file whose name is nearest (at most 2 edits: a typo), if one is.
    public static func require(_ name: String, in sub: String) throws(BenchDeviceError) -> String {
        if let p = resolve(name, in: sub) { return p }
        let hw = hardwareDirectory().map { "\($0)/\(sub)" } ?? "hardware/\(sub) (not found; set NFCBENCH_DATA)"
        let near = nearestShipped(to: name, in: sub).map { " (did you mean \($0)?)" } ?? ""
        throw BenchDeviceError(.notFound, "no file '\(name)' here or in \(hw)\(near)")
    }

    /// The name (without `.json`) of the file in `hardware/<sub>/` nearest to `name`, when it is
    /// at most 2 edits away.
    public static func nearestShipped(to name: String, in sub: String) -> String? {
        guard let hw = hardwareDirectory(),
            let files = try? FileManager.default.contentsOfDirectory(atPath: "\(hw)/\(sub)")
        else { return nil }
        // A path's file name counts ("hardware/tags/ntag215-url.json" meant ntag215-uri).
        let file = name.split(separator: "/").last.map(String.init) ?? name
        let given = file.hasSuffix(".json") ? String(file.dropLast(5)) : file
        return files.filter { $0.hasSuffix(".json") }.map { String($0.dropLast(5)) }
            .map { ($0, editDistance($0, given)) }.filter { $0.1 <= 2 }
            .min { ($0.1, $0.0) < ($1.1, $1.0) }?.0
    }

    /// The clone's `scripts/` folder, beside the bench data (`hardware/`); nil without bench data.
    public static func scriptsDirectory() -> String? {
        hardwareDirectory().map {
            URL(fileURLWithPath: $0).deletingLastPathComponent().appendingPathComponent("scripts").path
        }
    }

    /// `scripts/with-pcscd` beside the bench data (a clone), if it is there.
    public static func withPCSCDScript() -> String? {
        guard let script = scriptsDirectory().map({ $0 + "/with-pcscd" }) else { return nil }
        return FileManager.default.isExecutableFile(atPath: script) ? script : nil
    }

    /// How a message names `with-pcscd`: its full path (so an installed binary's user finds
    /// it), else where it lives in a clone.
    public static var withPCSCDHint: String { withPCSCDScript() ?? "scripts/with-pcscd (in the clone)" }
}

/// Edit distance between two short words (names), for "did you mean": insertions, deletions,
/// substitutions and swaps of two neighbours (optimal string alignment) count one each.
package func editDistance(_ a: String, _ b: String) -> Int {
    let a = Array(a)
    let b = Array(b)
    guard !a.isEmpty else { return b.count }
    guard !b.isEmpty else { return a.count }
    var beforePrevious: [Int] = []
    var previous = Array(0...b.count)
    for i in 1...a.count {
        var current = [i] + Array(repeating: 0, count: b.count)
        for j in 1...b.count {
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            // Two neighbours swapped (`shwo` for `show`) is one slip, as people make them.
            if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                current[j] = min(current[j], beforePrevious[j - 2] + 1)
            }
        }
        beforePrevious = previous
        previous = current
    }
    return previous[b.count]
}
