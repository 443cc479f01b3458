import Foundation
import NFCBenchKit

/// The bench data (`hardware/`) as NFCBenchKit's ``BenchData`` finds it, with the command's
/// errors: `$NFCBENCH_DATA`, an installed layout, the first `hardware/` beside or above the
/// executable, the clone it was built from; never the current directory.
enum DataLocation {
    static func hardwareDirectory(environment: [String: String] = ProcessInfo.processInfo.environment) -> String? {
        BenchData.hardwareDirectory(environment: environment)
    }

    static func executablePath() -> String { BenchData.executablePath() }

    /// ``BenchData/resolve(_:in:)``.
    static func resolve(_ name: String, in sub: String) -> String? { BenchData.resolve(name, in: sub) }

    /// The clone's `scripts/` folder, beside the bench data (`hardware/`); nil without bench data.
    static func scriptsDirectory() -> String? { BenchData.scriptsDirectory() }

    /// `scripts/with-pcscd` beside the bench data (a clone), if it is there.
    static func withPCSCDScript() -> String? { BenchData.withPCSCDScript() }

    /// How a message names `with-pcscd`: its full path, else where it lives in a clone.
    static var withPCSCDHint: String { BenchData.withPCSCDHint }

    /// ``BenchData/require(_:in:)``: a no-input error (66) naming what was looked for, and the
    /// shipped file whose name is nearest, if one is.
    static func require(_ name: String, in sub: String) throws(CLIError) -> String {
        do { return try BenchData.require(name, in: sub) } catch { throw CLIError(error) }
    }

    /// ``BenchData/nearestShipped(to:in:)``.
    static func nearestShipped(to name: String, in sub: String) -> String? {
        BenchData.nearestShipped(to: name, in: sub)
    }
}
