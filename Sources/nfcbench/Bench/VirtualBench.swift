import Foundation
import NFCBenchKit
import NFCFiles
import NFCTags
import VirtualHardware

extension LibNFCDevices {
    /// A virtual PN532 on a fresh pty serving `tag` (a tag file path or a name in
    /// `hardware/tags/`): NFCBenchKit's ``VirtualBench/startPN532(tagFile:timing:present:)``,
    /// the one way every caller starts one, with the link removed if the process dies.
    /// Returns the device string (`pn532_uart:PATH`) and a function that stops it and removes
    /// the link.
    static func startVirtualBench(tag: String) throws -> (device: String, stop: @Sendable () -> Void) {
        let (file, _) = try loadPN532Card(tag)
        try requireLockFolder()
        let fake: VirtualPN532
        do { fake = try VirtualBench.startPN532(tagFile: file) } catch { throw CLIError(error) }
        let cleanup = fake.linkPath.map { Signals.removeAtDeath(link: $0, to: fake.slavePath) }
        return (
            VirtualBench.pn532Device(fake),
            {
                fake.stop()
                cleanup?.cancel()
            }
        )
    }
}

extension Duration {
    /// Whole and fractional seconds, for messages (`2.5`).
    var seconds: String {
        let (s, a) = components
        let ms = a / 1_000_000_000_000_000
        return ms == 0 ? "\(s)" : String(format: "%.3g", Double(s) + Double(ms) / 1000)
    }
}

/// A tag file (found by name in `hardware/tags/`, or a path) as a card for the virtual PN532;
/// a data error (65) naming the file when it can't be loaded or emulated, 66 when it is missing.
func loadPN532Card(_ tag: String) throws(CLIError) -> (TagFile, PN532Card) {
    let path = try DataLocation.require(tag, in: "tags")
    do {
        let file = try TagFile.load(path: path)
        return (file, try PN532Card(tagFile: file))
    } catch {
        throw CLIError(error.inFile(path))
    }
}
