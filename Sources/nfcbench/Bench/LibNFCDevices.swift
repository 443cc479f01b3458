import Foundation
import NFCFiles
import NFCHardware
import NFCTags
import ReaderSession
import VirtualHardware

/// libnfc device strings: which drivers exist (from the installed libnfc), what a
/// connstring names, and the virtual PN532 bench the demo starts.
enum LibNFCDevices {
    /// The driver names of the installed libnfc (`nfc_drivers` after `nfc_init`), sorted.
    static var drivers: [String] { LibNFCContext.driverNames }

    /// `true` for a connstring whose driver the installed libnfc has
    /// (`pn532_uart:/dev/ttyUSB0`, `acr122_usb:…`, or a bare driver name).
    static func isConnstring(_ device: String) -> Bool {
        let driver = device.split(separator: ":", maxSplits: 1).first.map(String.init) ?? device
        return drivers.contains(driver)
    }

    /// The first device libnfc finds (`nfc_list_devices`), if any.
    static func firstDevice() -> String? {
        (try? LibNFCContext())?.listDevices(max: 1).first
    }

    /// What libnfc lists (`nfc_list_devices`, with the configured and scanned devices).
    static func list() -> [String] {
        (try? LibNFCContext())?.listDevices(max: 16) ?? []
    }

    /// The path a serial, SPI or I²C connstring names (`pn532_uart:/dev/ttyUSB0:115200` →
    /// `/dev/ttyUSB0`); `nil` for USB connstrings.
    static func path(_ connstring: String) -> String? {
        let parts = connstring.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count >= 2, parts[1].hasPrefix("/") else { return nil }
        return String(parts[1])
    }

    /// The reader's identity for locks and traces: the connstring with its path resolved
    /// through symbolic links (a link to a pty and the pty are one reader).
    static func lockIdentity(_ connstring: String) -> String {
        guard let path = path(connstring), let resolved = realpath(path, nil) else { return connstring }
        defer { free(resolved) }
        // realpath(3), not URL.resolvingSymlinksInPath: no Foundation type lookups on the way
        // to nfc_open (issue 15's start-up budget).
        // Concatenated, not joined(separator:) (a run-time associated-type lookup, which scans
        // every conformance in the program).
        var parts = connstring.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
        parts[1] = String(cString: resolved)
        var out = parts[0]
        for p in parts.dropFirst() { out += ":" + p }
        return out
    }

    /// A clear "unavailable" (69) when a serial path does not exist, before anything is opened.
    static func requirePath(_ connstring: String) throws(CLIError) {
        guard let path = path(connstring) else { return }
        guard FileManager.default.fileExists(atPath: path) else {
            throw .unavailable("\(path) does not exist (is the reader plugged in? 'nfcbench doctor' checks the bench)")
        }
    }

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
