import Foundation
public import NFCTags
import ReaderSessionLocks
public import VirtualHardware

/// The virtual bench's devices as the library starts them, one code path per device for
/// every caller (the `nfcbench` command's `virtual pn532`, `check equivalence`, the demo,
/// the tests): a tag file plays the same on each, its faults once per run
/// (`hardware/tags/FORMAT.md`, Faults) and its UID the one readers see
/// (``/NFCTags/TagFile/readerActivation``).
public enum VirtualBench {
    /// A tag file's card on a fresh virtual PN532 whose pty link is in the readers' lock
    /// folder (only this user writes there: nobody can put a pty of theirs in its place), the
    /// card in the field. `pn532_uart:` + the link opens it (``pn532Device(_:)``); ``/VirtualHardware/VirtualPN532/stop()``
    /// removes the link.
    /// - Throws: ``BenchDeviceError`` `.dataFile` when the file can't be emulated, `.unavailable`
    ///   when the lock folder is refused or no pty can be made.
    public static func startPN532(
        tagFile file: TagFile, timing: PN532LinkTiming = .none, present: Bool = true
    ) throws(BenchDeviceError) -> VirtualPN532 {
        let folder: String
        do { folder = try LockFolder.prepare() } catch {
            throw BenchDeviceError(.unavailable, "lock folder \(error)")
        }
        let link = folder + "/pn532-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        do {
            return try VirtualPN532.start(tagFile: file, ptyPath: link, timing: timing, present: present)
        } catch let error as DataFileError {
            throw BenchDeviceError(error)
        } catch {
            throw BenchDeviceError(.unavailable, "no virtual PN532: \(error)")
        }
    }

    /// The libnfc device string of a virtual PN532: `pn532_uart:` and its link (the pty's own
    /// path when it has none).
    public static func pn532Device(_ pn532: VirtualPN532) -> String {
        "pn532_uart:" + (pn532.linkPath ?? pn532.slavePath)
    }
}
