import Foundation
public import NFCFiles
import Synchronization

/// A pcapng file of a trace's frames, for Wireshark, written as the records come (a
/// ``TraceSink`` beside a running command's trace, or fed a trace file by `trace export`).
///
/// The section header names the tool, libnfc and pcsc-lite versions, the command and the
/// device. Each family goes where a Wireshark dissector reads it:
/// - ISO/IEC 14443 (Type 2, ISO-DEP, the activation, field events): interface 0, link type
///   264 (LINKTYPE_ISO_14443, dissector `iso14443`);
/// - FeliCa: an interface of its own, link type 252 (LINKTYPE_WIRESHARK_UPPER_PDU) whose
///   exported-PDU tag names the `felica` dissector (``ExportedPDULinkType``), written before
///   the first FeliCa packet; the frames without their length byte, which that dissector does
///   not expect;
/// - ISO/IEC 15693: left out, since Wireshark (4.0 here) has no ISO 15693 dissector; they
///   stay in the trace, and the export counts them (``Counts``), says so on finishing
///   (`report`) and, as a live export, in the trace's last record (``closingRecords()``).
///
/// One Enhanced Packet Block per packet (``ISO14443Exporter``), timestamped in microseconds
/// at the header's `started` plus the record's `t_us`, with its comment and direction
/// (outbound = reader to card). The newest packet is held back until the next one (or
/// ``finish()``), so notes that follow it can still join its comment.
public final class PcapngExport: TraceSink {
    public let path: String
    private let state: Mutex<State>

    private let stream: FileWriter
    private let report: (@Sendable (String) -> Void)?

    private struct State {
        var exporter: ISO14443Exporter
        var startedMicroseconds: Int64 = 0
        var begun = false
        var held: ISO14443Packet?
        var finished = false
        var written = 0
        var feliCaPackets = 0
        /// The FeliCa interface's id, once its IDB is written.
        var feliCaInterface: UInt32?
        var device: String?
        var closingSaid = false
    }

    /// What an export wrote and what it left out.
    public struct Counts: Sendable, Equatable {
        /// Packets written (all interfaces).
        public var packets: Int
        /// Frames left out because the trace holds them redacted.
        public var skippedFrames: Int
        /// ISO/IEC 15693 frames left out (no Wireshark dissector), kept in the trace.
        public var skippedISO15693Frames: Int
        /// Of ``packets``, the FeliCa ones (on the `felica` interface).
        public var feliCaPackets: Int

        public init(packets: Int, skippedFrames: Int, skippedISO15693Frames: Int = 0, feliCaPackets: Int = 0) {
            self.packets = packets
            self.skippedFrames = skippedFrames
            self.skippedISO15693Frames = skippedISO15693Frames
            self.feliCaPackets = feliCaPackets
        }

        /// What was left out and why, one phrase each ("3 frames left out (ISO 15693
        /// frames: Wireshark has no dissector; kept in the trace)"); empty when nothing was.
        public var skipped: [String] {
            var out: [String] = []
            if skippedFrames > 0 { out.append("\(skippedFrames) frames left out (the trace holds them redacted)") }
            if skippedISO15693Frames > 0 {
                out.append("\(skippedISO15693Frames) frames left out (\(ISO14443Exporter.iso15693Reason))")
            }
            return out
        }

        /// The `--json` result: `packets`, `felica_packets`, and `skipped`, one object per
        /// reason with `frames`, `family` (when it is one family's) and `reason`.
        public var json: JSONObject {
            var skipped: [JSONValue] = []
            if skippedFrames > 0 {
                skipped.append(
                    .object(["frames": .int(Int64(skippedFrames)), "reason": "the trace holds them redacted"]))
            }
            if skippedISO15693Frames > 0 {
                skipped.append(
                    .object([
                        "frames": .int(Int64(skippedISO15693Frames)), "family": "iso15693",
                        "reason": .string(ISO14443Exporter.iso15693Reason),
                    ]))
            }
            return [
                "packets": .int(Int64(packets)), "felica_packets": .int(Int64(feliCaPackets)),
                "skipped": .array(skipped),
            ]
        }
    }

    /// Creates `path` (``TraceFile/create(path:createParentDirectory:label:streaming:)``: `-` is standard
    /// output, an existing file is replaced when the export finishes). `label` names it in
    /// errors (`--pcapng x`). Throws ``TraceFileError``.
    /// `streaming: false` makes a new file as a temporary one renamed into place at the finish
    /// (an export in one go: nothing half-written is ever at `path`).
    /// `report` gets one line when the export finishes having left frames out (what and why,
    /// ``Counts/skipped``), for the command to show.
    public init(
        path: String, redact: Bool = false, label: String? = nil, streaming: Bool = true,
        report: (@Sendable (String) -> Void)? = nil
    )
        throws(TraceFileError)
    {
        self.path = path
        self.report = report
        stream = try TraceFile.create(path: path, label: label, streaming: streaming)
        state = Mutex(State(exporter: ISO14443Exporter(redact: redact)))
    }

    /// The first write that failed (a full disk), if one did.
    public var failure: FileError? { stream.failure }

    deinit { finish() }

    /// Packets written so far (the held one included) and frames left out.
    public var counts: Counts {
        state.withLock { Self.counts($0) }
    }

    private static func counts(_ s: State) -> Counts {
        Counts(
            packets: s.written + (s.held == nil ? 0 : 1), skippedFrames: s.exporter.skippedFrames,
            skippedISO15693Frames: s.exporter.skippedISO15693Frames,
            feliCaPackets: s.feliCaPackets + (s.held?.link == .feliCa ? 1 : 0))
    }

    /// The trace's last record when this export left ISO 15693 frames out (once):
    /// `"event":"pcapng_skipped"` with `pcapng` (the file), `frames`, `family` and `reason`.
    public func closingRecords() -> [TraceRecord] {
        state.withLock { s in
            guard !s.closingSaid, s.exporter.skippedISO15693Frames > 0 else { return [] }
            s.closingSaid = true
            return [
                TraceRecord(
                    .pcapngSkipped, at: 0,
                    [
                        "pcapng": .string(path), "frames": .int(Int64(s.exporter.skippedISO15693Frames)),
                        "family": "iso15693", "reason": .string(ISO14443Exporter.iso15693Reason),
                    ]
                )
            ]
        }
    }

    public func receive(_ record: TraceRecord) {
        state.withLock { s in
            guard !s.finished else { return }
            if !s.begun { begin(&s, header: record.is(.header) ? record.json : nil) }
            for packet in s.exporter.add(record) {
                if let held = s.held { write(&s, held) }
                s.held = packet
            }
        }
    }

    public func finish() {
        let skipped: [String] = state.withLock { s in
            guard !s.finished else { return [] }
            s.finished = true
            if !s.begun { begin(&s, header: nil) }
            let left = s.exporter.finish()
            if var held = s.held {
                if !left.isEmpty {
                    held.comment = ([held.comment].compactMap { $0 } + ["after this: " + left.joined(separator: "; ")])
                        .joined(separator: "; ")
                }
                write(&s, held)
                s.held = nil
            }
            return Self.counts(s).skipped
        }
        try? stream.finish()
        if let report, !skipped.isEmpty { report(skipped.joined(separator: "; ")) }
    }

    /// One call: the whole trace into a pcapng file at `path`. Returns the packets written
    /// and the frames left out (already redacted in the trace; ISO 15693). Throws
    /// ``TraceFileError`` when the file can't be made or written to its end (then nothing is
    /// left at `path`, and a file that was there is untouched).
    public static func export(_ trace: TraceContents, to path: String, redact: Bool, label: String? = nil)
        throws(TraceFileError) -> Counts
    {
        let sink = try PcapngExport(path: path, redact: redact, label: label, streaming: false)
        for r in trace.allRecords { sink.receive(r) }
        sink.finish()
        if let failure = sink.failure { throw TraceFileError(failure) }
        return sink.counts
    }

    private func begin(_ s: inout State, header: JSONObject?) {
        s.begun = true
        let command = header?["command"]?.stringValue ?? "?"
        let device = header?["device"]?.stringValue
        s.startedMicroseconds = header?["started"]?.stringValue.flatMap(TraceHeader.epochMicroseconds) ?? 0
        var application = header?["tool"]?.stringValue ?? "nfcbench"
        if let l = header?["libnfc"]?.stringValue { application += ", libnfc \(l)" }
        if let p = header?["pcsclite"]?.stringValue { application += ", pcsc-lite \(p)" }
        s.device = device
        var comment =
            "nfcbench trace of '\(command)'" + (device.map { " on \($0)" } ?? "")
            + ". Frames carry no CRC (events FA/FB), except one-byte reader frames other than REQA/WUPA, which carry their computed CRC_A (event FE) so that Wireshark does not take them for short frames. Packets marked synthesized were rebuilt from what the device reports."
            + " FeliCa frames, if any, are on an interface of their own (link type 252, Wireshark's exported PDU for its felica dissector), without their length byte; ISO 15693 frames are left out (Wireshark has no ISO 15693 dissector) and stay in the trace."
        if header == nil { comment += " The trace had no header: times count from 1970-01-01." }
        if s.exporter.redact { comment += " Redacted: UIDs, payloads and APDU data are zeros." }
        var name = utsname()
        uname(&name)
        let os = withUnsafeBytes(of: name.sysname) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        stream.write(
            Pcapng.sectionHeader(comment: comment, hardware: device, os: os, application: application))
        stream.write(
            Pcapng.interfaceDescription(
                linkType: ISO14443LinkType.linkType, name: "iso14443",
                description: device.map { "ISO/IEC 14443 frames on \($0)" } ?? "ISO/IEC 14443 frames"))
    }

    private func write(_ s: inout State, _ p: ISO14443Packet) {
        let direction: Pcapng.Direction? = p.fromReader ? .outbound : p.fromCard ? .inbound : nil
        let interface: UInt32
        let data: [UInt8]
        switch p.link {
        case .iso14443:
            interface = 0
            data = ISO14443LinkType.packet(p.event, p.data)
        case .feliCa:
            if s.feliCaInterface == nil {
                stream.write(
                    Pcapng.interfaceDescription(
                        linkType: ExportedPDULinkType.linkType, name: "felica",
                        description: "FeliCa frames (JIS X 6319-4) without their length byte and CRC, for Wireshark's "
                            + "felica dissector" + (s.device.map { ", on \($0)" } ?? "")))
                s.feliCaInterface = 1
            }
            interface = s.feliCaInterface ?? 1
            data = ExportedPDULinkType.packet(dissector: ExportedPDULinkType.feliCaDissector, p.data)
            s.feliCaPackets += 1
        }
        stream.write(
            Pcapng.enhancedPacket(
                interface: interface, timestampMicroseconds: s.startedMicroseconds + p.tMicroseconds, data: data,
                comment: p.comment, direction: direction))
        s.written += 1
    }
}
