import Foundation
import NFCBenchKit
import NFCFiles
import NFCTags
import VirtualHardware

extension LibNFCDevices {
    /// A virtual PN532 on a fresh pty serving `tag` (a tag file path or a name in
    /// `hardware/tags/`), for the demo when no pcscd can be had. Returns the device string
    /// (`pn532_uart:PATH`) and a function that stops it and removes the link. The link lives
    /// in the readers' lock folder, which only this user controls (``requireLockFolder()``):
    /// no one else can put a pty of theirs in its place.
    static func startVirtualBench(tag: String) throws -> (device: String, stop: @Sendable () -> Void) {
        let (_, card) = try loadPN532Card(tag)
        let folder = try requireLockFolder()
        let link = folder + "/pn532-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let fake = try VirtualPN532.start(ptyPath: link)
        let cleanup = Signals.removeAtDeath(link: link, to: fake.slavePath)
        fake.present(card)
        return (
            "pn532_uart:\(link)",
            {
                fake.stop()
                cleanup.cancel()
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
