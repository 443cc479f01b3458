import Foundation
public import NFCFiles
import Synchronization

/// A pcapng file of a trace's ISO/IEC 14443 frames, written as the records come (a
/// ``TraceSink`` beside a running command's trace, or fed a trace file by `trace export`).
///
/// The section header names the tool, libnfc and pcsc-lite versions, the command and the
/// device; one interface of link type 264 (LINKTYPE_ISO_14443); one Enhanced Packet Block
/// per packet (``ISO14443Exporter``), timestamped in microseconds at the header's `started`
/// plus the record's `t_us`, with its comment and direction (outbound = reader to card).
/// The newest packet is held back until the next one (or ``finish()``), so notes that
/// follow it can still join its comment.
public final class PcapngExport: TraceSink {
    public let path: String
    private let state: Mutex<State>

    private let stream: FileWriter

    private struct State {
        var exporter: ISO14443Exporter
        var startedMicroseconds: Int64 = 0
        var begun = false
        var held: ISO14443Packet?
        var finished = false
        var written = 0
    }

    /// Creates `path` (``TraceFile/create(path:createParentDirectory:label:streaming:)``: `-` is standard
    /// output, an existing file is replaced when the export finishes). `label` names it in
    /// errors (`--pcapng x`). Throws ``TraceFileError``.
    /// `streaming: false` makes a new file as a temporary one renamed into place at the finish
    /// (an export in one go: nothing half-written is ever at `path`).
    public init(path: String, redact: Bool = false, label: String? = nil, streaming: Bool = true)
        throws(TraceFileError)
    {
        self.path = path
        stream = try TraceFile.create(path: path, label: label, streaming: streaming)
        state = Mutex(State(exporter: ISO14443Exporter(redact: redact)))
    }

    /// The first write that failed (a full disk), if one did.
    public var failure: FileError? { stream.failure }

    deinit { finish() }

    /// Packets written so far, and frames left out because the trace holds them redacted.
    public var counts: (packets: Int, skippedFrames: Int) {
        state.withLock { ($0.written + ($0.held == nil ? 0 : 1), $0.exporter.skippedFrames) }
    }

    public func receive(_ record: JSONObject) {
        state.withLock { s in
            guard !s.finished else { return }
            if !s.begun { begin(&s, header: record["event"]?.stringValue == "header" ? record : nil) }
            for packet in s.exporter.add(record) {
                if let held = s.held { write(&s, held) }
                s.held = packet
            }
        }
    }

    public func finish() {
        state.withLock { s in
            guard !s.finished else { return }
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
        }
        try? stream.finish()
    }

    /// One call: the whole trace into a pcapng file at `path`. Returns the packets written
    /// and the frames left out (already redacted in the trace). Throws ``TraceFileError`` when
    /// the file can't be made or written to its end (then nothing is left at `path`, and a
    /// file that was there is untouched).
    public static func export(_ trace: TraceContents, to path: String, redact: Bool, label: String? = nil)
        throws(TraceFileError) -> (packets: Int, skippedFrames: Int)
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
        var comment =
            "nfcbench trace of '\(command)'" + (device.map { " on \($0)" } ?? "")
            + ". Frames carry no CRC (events FA/FB), except one-byte reader frames other than REQA/WUPA, which carry their computed CRC_A (event FE) so that Wireshark does not take them for short frames. Packets marked synthesized were rebuilt from what the device reports."
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
        stream.write(
            Pcapng.enhancedPacket(
                timestampMicroseconds: s.startedMicroseconds + p.tMicroseconds,
                data: ISO14443LinkType.packet(p.event, p.data), comment: p.comment, direction: direction))
        s.written += 1
    }
}
