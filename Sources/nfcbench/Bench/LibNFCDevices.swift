import Foundation
import NFCHardware
import NFCTags
import NFCTrace
import ReaderSession
import VirtualHardware

// libnfc devices for the bench: the hooks `DeviceFactory` (devices, dump, measure, demo)
// calls, and the tag access `write`/`format`/`lock`/`dump` share.

/// libnfc drivers whose connstrings `--device` accepts as they are (libnfc 1.8.0's list).
let libnfcDrivers = ["pn532_uart", "pn532_spi", "pn532_i2c", "pn53x_usb", "acr122_usb", "arygon", "pn71xx"]

/// `true` for a libnfc connstring (`pn532_uart:/dev/ttyUSB0`, `acr122_usb:…`) or `libnfc`
/// (libnfc's first device).
func isLibNFCDevice(_ device: String) -> Bool {
    device == "libnfc" || libnfcDrivers.contains { device == $0 || device.hasPrefix($0 + ":") }
}

/// The ReaderSession backend for a libnfc connstring (`libnfc` = the first device libnfc
/// finds). Throws `CLIError.unavailable` naming the device and what to check.
func makeLibNFCBackend(connstring: String) throws -> any ReaderBackend {
    try openLibNFCBackend(connstring)
}

func openLibNFCBackend(_ connstring: String) throws(CLIError) -> LibNFCReaderBackend {
    let target: String
    if connstring == "libnfc" {
        guard let first = (try? LibNFCContext())?.listDevices(max: 1).first else {
            throw .unavailable(
                "libnfc finds no device (set LIBNFC_DEVICE or /etc/nfc/libnfc.conf; run 'nfcbench doctor')")
        }
        target = first
    } else {
        target = connstring
    }
    do {
        return try LibNFCReaderBackend(connstring: target)
    } catch {
        throw .unavailable("cannot open \(target): \(error) (is another program using it? run 'nfcbench doctor')")
    }
}

/// What libnfc lists (`nfc_list_devices`, with the configured and scanned devices).
func listLibNFCDevices() -> [String] {
    (try? LibNFCContext())?.listDevices(max: 16) ?? []
}

/// A virtual PN532 on a fresh pty serving `tag` (a tag file path or a name in
/// `hardware/tags/`), for the demo when no pcscd can be had. Returns the device string
/// (`pn532_uart:PATH`) and a function that stops it and removes the link.
func startVirtualPN532Bench(tag: String) throws -> (device: String, stop: @Sendable () -> Void) {
    let (_, card) = try loadPN532Card(tag)
    let link = NSTemporaryDirectory() + "nfcbench-pn532-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
    let fake = try VirtualPN532.start(ptyPath: link)
    fake.present(card)
    return ("pn532_uart:\(link)", { fake.stop() })
}

/// The first tag a libnfc device sees, for one-shot commands (write, format, lock, dump):
/// waits up to `timeout` for a detection, then runs `body` with the tag's connection on a
/// thread of its own (libnfc calls block). Polling ends when `body` returns.
func withFirstLibNFCTag<R: Sendable>(
    device: String, timeout: Duration,
    _ body: @escaping @Sendable (LibNFCReaderBackend, DetectedTarget, TagConnection) throws -> R
) async throws -> R {
    let backend = try openLibNFCBackend(device)
    let lease = try takeReader(backend.identifier)
    defer { lease.release() }
    let stream = backend.events(.iso14443)
    let target: DetectedTarget = try await withThrowingTaskGroup(of: DetectedTarget?.self) { group in
        group.addTask {
            for try await event in stream {
                if case .detected(let found) = event, let first = found.first { return first }
            }
            return nil
        }
        group.addTask {
            try await Task.sleep(for: timeout)
            return nil
        }
        defer { group.cancelAll() }
        guard let first = try await group.next(), let found = first else {
            throw CLIError.unavailable("no tag on \(device) within \(timeout.seconds) s")
        }
        return found
    }
    return try await withCheckedThrowingContinuation { (c: CheckedContinuation<R, any Error>) in
        Thread {
            c.resume(with: Result { try backend.withTag(target.id) { conn in try body(backend, target, conn) } })
        }.start()
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

/// `nfcbench dump --device pn532_uart:…`: the tag as our tag-file JSON (never writes).
func dumpLibNFC(device: String, out: String?, wait: Duration) async throws -> Int32 {
    let file = try await withFirstLibNFCTag(device: device, timeout: wait) { backend, target, connection in
        try snapshotTagFile(target, connection, version: backend.tagVersion(of: target.id))
    }
    if let out {
        do { try file.save(path: out) } catch { throw CLIError.failure("cannot write \(out): \(error)") }
        Output.err("dumped \(file.type.rawValue) \(file.activation.uid.hexString()) to \(out)")
    } else {
        Output.out(file.jsonText())
    }
    return 0
}

/// `nfcbench measure apdu|read --device pn532_uart:…`: `count` exchanges with the tag in the
/// field (APDU: SELECT of the NDEF application for ISO-DEP, READ page 0 for Type 2; read:
/// the whole NDEF read), timed one by one; the same output as the PC/SC measurement.
func measureLibNFC(_ what: String, device: String, count: Int, json: Bool) async throws -> Int32 {
    guard what == "apdu" || what == "read" else {
        throw CLIError.usage(
            "measure \(what) on a libnfc device needs the bench to move the tag: use 'virtual pn532 --present-for S --absent-for S' and a session instead"
        )
    }
    let read = what == "read"
    let started = ContinuousClock.now
    let samples = try await withFirstLibNFCTag(device: device, timeout: .seconds(10)) {
        _, _, connection -> [Duration] in
        let clock = ContinuousClock()
        var out: [Duration] = []
        out.reserveCapacity(count)
        switch connection {
        case .iso7816(let t):
            let select: [UInt8] = [0x00, 0xA4, 0x04, 0x00, 0x07, 0xD2, 0x76, 0x00, 0x00, 0x85, 0x01, 0x01, 0x00]
            let reader = Type4TagReader(transport: AnyAPDUTransport(t))
            for _ in 0..<count {
                out.append(
                    try clock.measure { if read { _ = try reader.readNDEF() } else { _ = try t.transmit(select) } })
            }
        case .type2(let t):
            for _ in 0..<count {
                out.append(
                    try clock.measure {
                        if read { _ = try Type2TagReader(transport: t).readNDEF() } else { _ = try t.read(page: 0) }
                    })
            }
        }
        return out
    }
    let total = ContinuousClock.now - started
    guard let stats = TimingStatistics(samples) else { throw CLIError.failure("no samples") }
    let busy = samples.reduce(Duration.zero, +)
    let perSecond = Double(samples.count) / max(1e-9, TimingStatistics.microseconds(busy) / 1e6)
    if json {
        var o = JSONObject()
        o["measure"] = .string(what)
        o["device"] = .string(device)
        o["count"] = .int(Int64(stats.count))
        o["min_us"] = .double(TimingStatistics.microseconds(stats.min))
        o["median_us"] = .double(TimingStatistics.microseconds(stats.median))
        o["p99_us"] = .double(TimingStatistics.microseconds(stats.p99))
        o["max_us"] = .double(TimingStatistics.microseconds(stats.max))
        o["per_second"] = .double(perSecond)
        o["total_us"] = .double(TimingStatistics.microseconds(total))
        Output.out(JSONValue.object(o).serialized)
    } else {
        Output.out("\(what) on \(device): \(stats.text)")
        if what == "apdu" { Output.out(String(format: "%.0f exchanges per second", perSecond)) }
    }
    return 0
}

// MARK: Tag images (backup, dump)

/// A Type 2 tag's whole memory read with 16-byte READs: the product's page count when
/// GET_VERSION named it, else the pages up to the end of the data area the CC declares.
func readType2Image(_ t: any Type2TagTransport, version: TagVersion?) throws -> [[UInt8]] {
    var total = version?.totalPages ?? 0
    if total == 0 {
        let cc = try t.read(page: 0)
        guard cc.count == 16 else { throw TagCommunicationError.malformedResponse("READ answered \(cc.count) bytes") }
        total = cc[12] == 0xE1 ? 4 + Int(cc[14]) * 2 : 16
    }
    var pages: [[UInt8]] = []
    var page = 0
    while page < total {
        let data = try t.read(page: UInt8(truncatingIfNeeded: page))
        guard data.count == 16 else {
            throw TagCommunicationError.malformedResponse("READ \(page) answered \(data.count) bytes")
        }
        for i in 0..<4 where page + i < total { pages.append(Array(data[(i * 4)..<(i * 4 + 4)])) }
        page += 4
    }
    return pages
}

/// The tag-file type for a Type 2 tag, from GET_VERSION or the page count.
func type2FileType(_ version: TagVersion?, pageCount: Int) -> TagFile.TagType {
    switch version?.product {
    case .ntag213?: .ntag213
    case .ntag215?: .ntag215
    case .ntag216?: .ntag216
    case .ultralightEV1MF0UL11?, .ultralightEV1MF0UL21?: .ultralightEV1
    default:
        switch pageCount {
        case 45: .ntag213
        case 135: .ntag215
        case 231: .ntag216
        default: .ultralight
        }
    }
}

/// A tag file of what `target` holds now (our JSON), for `--backup` and `dump`.
func snapshotTagFile(_ target: DetectedTarget, _ connection: TagConnection, version: TagVersion?) throws -> TagFile {
    let wireATQA = target.atqa ?? [0x44, 0x00]
    switch connection {
    case .type2(let t):
        let pages = try readType2Image(t, version: version)
        let type = type2FileType(version, pageCount: pages.count)
        let activation = try ISO14443AActivation(uid: target.uid, atqa: wireATQA, sak: target.sak ?? 0)
        return TagFile(
            type: type, activation: activation, getVersion: version?.bytes, pages: pages,
            comment:
                "read by nfcbench \(CLI.version) at \(ISO8601DateFormatter().string(from: Date())); PWD/PACK pages read as 00 (a tag never reveals them)"
        )
    case .iso7816(let t):
        let reader = Type4TagReader(transport: AnyAPDUTransport(t))
        let cc = try reader.detect()
        let message = try reader.readNDEF(capabilityContainer: cc)
        let width = cc.lengthFieldSize
        let file = (0..<width).reversed().map { UInt8((message.count >> ($0 * 8)) & 0xFF) } + message
        let activation = try ISO14443AActivation(
            uid: target.uid, atqa: wireATQA, sak: target.sak ?? 0x20, ats: target.ats)
        let contents = TagFile.Type4Contents(
            ndefFile: file, maximumNDEFFileSize: cc.maximumNDEFFileSize,
            mappingVersion: cc.majorVersion >= 3 ? "3.0" : "2.0", readOnly: !cc.isWritable,
            fileID: [UInt8(cc.ndefFileID >> 8), UInt8(cc.ndefFileID & 0xFF)])
        return TagFile(
            type: .type4, activation: activation, type4: contents,
            comment: "backup by nfcbench \(CLI.version) at \(ISO8601DateFormatter().string(from: Date()))")
    }
}

/// `any APDUTransport` as a concrete type for `Type4TagReader<Transport>`.
struct AnyAPDUTransport: APDUTransport {
    let base: any APDUTransport
    init(_ base: any APDUTransport) { self.base = base }
    func transmit(_ command: [UInt8]) throws -> [UInt8] { try base.transmit(command) }
}

/// Takes the reader's session lock for a one-shot command (dump, write, format, lock), so it
/// never talks to a tag while a session holds the reader (in this process or another).
func takeReader(_ identifier: String) throws(CLIError) -> ReaderLease {
    switch SessionArbiter.shared.acquire(reader: identifier) {
    case .acquired(let lease): return lease
    case .busy: throw .unavailable("\(identifier) is busy: a reader session holds it (try again when it ends)")
    case .failed(let why): throw .failure("can't take the reader's lock: \(why)")
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
