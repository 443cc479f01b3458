import Foundation
import NFCBenchTestSupport

/// The support module's private test folder, under the name every file of this target uses
/// (one definition, in NFCBenchTestSupport).
typealias TestFolder = NFCBenchTestSupport.TestFolder

/// The environment for a process a test starts: this process's, with `extra` on top, and
/// `NFCBENCH_TRACE_DIR` and `XDG_STATE_HOME` (where write, format and lock keep their backups)
/// pointing at folders of this test run's own when neither gives one.
/// `./bench test` gives one; a `swift test` run by hand did not, and its commands' traces went
/// to the user's trace folder, which keeps only the newest 100: a test run pushed out a lab's
/// traces. The folder is made once, 0700, and removed when the test process exits.
enum TestTraces {
    static let folder: String = {
        guard let made = try? TestFolder("test-traces") else {
            return "\(NSTemporaryDirectory())nfcbench-test-traces-unmade"
        }
        atexit { try? FileManager.default.removeItem(atPath: TestTraces.folder) }
        return made.path
    }()

    static func childEnvironment(_ extra: [String: String] = [:]) -> [String: String] {
        var env = ProcessInfo.processInfo.environment
        for (k, v) in extra { env[k] = v }
        if env["NFCBENCH_TRACE_DIR"] == nil { env["NFCBENCH_TRACE_DIR"] = folder }
        if env["XDG_STATE_HOME"] == nil { env["XDG_STATE_HOME"] = state }
        return env
    }

    /// The run's state folder (backups), made once like ``folder``.
    static let state: String = {
        guard let made = try? TestFolder("test-state") else {
            return "\(NSTemporaryDirectory())nfcbench-test-state-unmade"
        }
        atexit { try? FileManager.default.removeItem(atPath: TestTraces.state) }
        return made.path
    }()
}
