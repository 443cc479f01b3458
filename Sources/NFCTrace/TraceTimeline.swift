import Foundation

/// A trace as a timeline picture: plain SVG 1.1 (no script, no external font or style
/// sheet) that any browser or `rsvg-convert` shows, 1200 px wide.
///
/// - A session trace (`session`, `demo`, `check equivalence`): one lane per session — the
///   sheet from `begin` to its end, the active span from `didBecomeActive`, the time limit
///   (a dashed line, or a note when it falls after the chart), each detection, each frame
///   or APDU as a tick whose hover title holds its hex, and the ending with its code and
///   reason.
/// - A walk (`walk`, `emulate`): one lane per reader profile, each from its own field on:
///   the field's span, the wake, SELECTs (by whom they were answered: app, system, express
///   credential, or nobody), other APDUs, and at the end "served" or "useless" with why.
/// - Anything else (bench runs, virtual devices): one lane of its frames and events.
public enum TraceTimeline {
    static let width = 1200.0
    static let labelWidth = 230.0
    static let right = 24.0
    static let laneHeight = 64.0
    static let top = 58.0

    /// The picture of `trace`.
    public static func svg(_ trace: TraceContents) -> String {
        let lanes: [Lane]
        let origin: String?
        switch trace.command {
        case "walk"?, "emulate"?:
            lanes = walkLanes(trace.records)
            origin = "each lane from its reader's field on"
        default:
            if trace.records.contains(where: { $0["source"] != nil && $0["reader"] != nil }) {
                lanes = walkLanes(trace.records)
                origin = "each lane from its reader's field on"
            } else if trace.records.contains(where: { $0["session"] != nil }) {
                lanes = sessionLanes(trace.records)
                origin = "each lane from its session's begin()"
            } else {
                lanes = [genericLane(trace.records, name: trace.command ?? "trace")]
                origin = nil
            }
        }
        return render(lanes, header: trace.header, origin: origin)
    }

    // MARK: model

    struct Span {
        var start: Int64
        var end: Int64
        var style: String
        var title: String
    }

    struct Mark {
        var t: Int64
        var shape: Shape
        var style: String
        var title: String
        var label: String? = nil
        /// 0: the lane's main row; 1: the frames row below it.
        var row = 0
        /// Drawn this many pixels after its time (an NDEF read beside the frames it took).
        var dx = 0.0
    }

    enum Shape { case tick, diamond, triangle, circle, dashed }

    struct Lane {
        var name: String
        var detail: String = ""
        var origin: Int64 = 0
        var end: Int64 = 0
        var spans: [Span] = []
        var marks: [Mark] = []
        var ending: String = ""
        var endingStyle = "end"
        var note: String? = nil
    }

    // MARK: sessions

    static func sessionLanes(_ records: [TraceRecord]) -> [Lane] {
        var order: [Int64] = []
        var lanes: [Int64: Lane] = [:]
        var limits: [Int64: Double] = [:]
        var begins: [Int64: Int64] = [:]
        var active: [Int64: Int64] = [:]
        var targets: [Int64: Int64] = [:]  // target id → session
        for r in records {
            let t = r.time ?? 0
            let event = r.kind ?? ""
            var session = r["session"]?.intValue
            if session == nil, event == .frame, let id = TraceRecord.Frame(r)?.target { session = targets[id] }
            guard let s = session else { continue }
            if lanes[s] == nil {
                order.append(s)
                lanes[s] = Lane(name: "session \(s)", origin: t, end: t)
            }
            var lane = lanes[s]!
            lane.end = max(lane.end, t)
            switch event {
            case .begin:
                begins[s] = t
                lane.origin = t
                lane.detail =
                    (r["mode"]?.stringValue ?? "")
                    + (r["invalidate_after_first_read"] == .bool(true) ? ", first read" : "")
                    + String(format: ", begins at %.3f s", Double(t) / 1_000_000)
            case .thermal:
                if limits[s] == nil, case .double(let l)? = r["time_limit_s"] { limits[s] = l }
            case .didBecomeActive:
                active[s] = t
            case .detected:
                for target in TraceRecord.Detected(r)?.targets ?? [] {
                    targets[target.id] = s
                    lane.marks.append(
                        Mark(
                            t: t, shape: .triangle, style: "detect", title: "detected \(target.kind) UID \(target.uid)",
                            label: "detected"))
                }
            case .lost:
                lane.marks.append(Mark(t: t, shape: .triangle, style: "lost", title: "target lost", label: "lost"))
            case .frame:
                let f = TraceRecord.Frame(r)
                lane.marks.append(
                    Mark(
                        t: t, shape: .tick, style: "frame", title: "\(spaced(f?.command)) → \(spaced(f?.response))",
                        row: 1)
                )
            case .didDetectNDEFs, .readNDEF:
                lane.marks.append(
                    Mark(
                        t: t, shape: .diamond, style: "read", title: event.rawValue + ": " + recordsText(r), row: 1,
                        dx: 10))
            case .didInvalidateWithError:
                let ending = TraceRecord.Ending(r)
                let code = ending?.code ?? 0
                let reason = ending?.reason ?? ""
                lane.ending = "\(code) \(reason)"
                lane.endingStyle = code == 204 || code == 200 ? "end ok" : "end"
                lane.marks.append(
                    Mark(
                        t: t, shape: .circle, style: lane.endingStyle, title: "didInvalidateWithError \(code) \(reason)"
                    ))
                let start = begins[s] ?? lane.origin
                lane.spans.append(Span(start: start, end: t, style: "sheet", title: "the sheet: begin() to the ending"))
                if let a = active[s] {
                    lane.spans.append(
                        Span(start: a, end: t, style: "active", title: "active: didBecomeActive to the ending"))
                }
            default:
                break
            }
            lanes[s] = lane
        }
        return order.map { s in
            var lane = lanes[s]!
            if let limit = limits[s] {
                let at = (begins[s] ?? lane.origin) + Int64(limit * 1_000_000)
                lane.marks.append(
                    Mark(
                        t: at, shape: .dashed, style: "limit", title: String(format: "time limit %.1f s", limit),
                        label: String(format: "limit %.1f s", limit)))
                lane.note = String(format: "time limit %.1f s", limit)
            }
            return lane
        }
    }

    // MARK: walks

    static func walkLanes(_ records: [TraceRecord]) -> [Lane] {
        var order: [String] = []
        var lanes: [String: Lane] = [:]
        var fieldOn: [String: Int64] = [:]
        var woke: Set<String> = []
        var isoDEP: Set<String> = []
        var served: [String: Int] = [:]
        var reasons: [String: String] = [:]
        var technology: [String: String] = [:]
        for r in records {
            let event = r.kind ?? ""
            guard event != .summary, event != .header else { continue }
            let name = r["reader"]?.stringValue ?? "-"
            let t = r.time ?? 0
            if lanes[name] == nil {
                order.append(name)
                lanes[name] = Lane(name: name, origin: t, end: t)
            }
            var lane = lanes[name]!
            lane.end = max(lane.end, t)
            let source = r["source"]?.stringValue ?? "model"
            switch (source, event) {
            case ("model", "fieldOn"):
                fieldOn[name] = t
                technology[name] = r["technology"]?.stringValue
                lane.detail = r["technology"]?.stringValue ?? ""
            case ("model", "fieldOff"):
                lane.spans.append(Span(start: fieldOn[name] ?? lane.origin, end: t, style: "field", title: "field on"))
                fieldOn[name] = nil
            case ("model", "nfcEvent"):
                woke.insert(name)
                lane.marks.append(
                    Mark(
                        t: t, shape: .diamond, style: "wake", title: "default app woken (readerDetected, nfcEvent)",
                        label: "wake"))
            case ("model", "wakeSuppressed"):
                lane.marks.append(
                    Mark(
                        t: t, shape: .diamond, style: "quiet",
                        title: "wake suppressed: \(r["detail"]?.stringValue ?? "")", label: "suppressed"))
                reasons[name] = "wake suppressed (\(r["detail"]?.stringValue ?? ""))"
            case ("model", "isoDepActivated"):
                isoDEP.insert(name)
                lane.marks.append(Mark(t: t, shape: .triangle, style: "detect", title: "ISO-DEP activated (RATS/ATS)"))
            case ("model", "apdu"):
                let apdu = r["apdu"]?.stringValue ?? ""
                let by = r["answered_by"]?.stringValue
                if by == "app" { served[name, default: 0] += 1 }
                let isSelect = apdu.count >= 4 && apdu.dropFirst(2).prefix(2).uppercased() == "A4"
                let aid = isSelect ? String(apdu.dropFirst(10)) : ""
                let style = by.map { "by-" + $0 } ?? "by-none"
                let title =
                    "\(isSelect ? "SELECT " : "")\(spaced(apdu)) → \(spaced(r["response"]?.stringValue)) [\(by ?? "reader timeout")]"
                lane.marks.append(
                    Mark(
                        t: t, shape: isSelect ? .circle : .tick, style: style, title: title,
                        label: isSelect ? shortAID(aid) : nil, row: isSelect ? 0 : 1))
            case ("model", "sessionInvalidated"):
                if let reason = r["reason"]?.stringValue { reasons[name] = reasons[name] ?? reason }
            case ("bench", "notShowable"):
                reasons[name] = "not showable over this stack"
            default:
                break
            }
            lanes[name] = lane
        }
        return order.map { name in
            var lane = lanes[name]!
            if let open = fieldOn[name] {
                lane.spans.append(Span(start: open, end: lane.end, style: "field", title: "field on"))
            }
            if let n = served[name], n > 0 {
                lane.ending = "served (\(n) APDU\(n == 1 ? "" : "s") to the app)"
                lane.endingStyle = "end ok"
            } else if woke.contains(name) {
                let why: String
                if !isoDEP.contains(name) {
                    why = "never reaches ISO-DEP (\(technology[name] ?? "?"))"
                } else if lane.marks.contains(where: { $0.style.hasPrefix("by-") }) {
                    why = "no SELECT for the app"
                } else {
                    why = reasons[name] ?? "no APDU"
                }
                lane.ending = "useless: \(why)"
                lane.endingStyle = "end"
            } else {
                lane.ending = "no wake" + (reasons[name].map { ": \($0)" } ?? "")
                lane.endingStyle = "end quiet"
            }
            return lane
        }
    }

    static func shortAID(_ hex: String) -> String {
        switch hex.uppercased().prefix(28) {
        case "325041592E5359532E4444463031": "PPSE"
        case "4F53452E5641532E3031": "VAS"
        case let h where h.hasPrefix("D276000085010"): "NDEF"
        default: hex.count > 10 ? String(hex.prefix(10)) + "…" : hex
        }
    }

    // MARK: anything else

    static func genericLane(_ records: [TraceRecord], name: String) -> Lane {
        var lane = Lane(name: name)
        lane.origin = records.first?.time ?? 0
        var fieldOpen: Int64?
        for r in records {
            let t = r.time ?? 0
            lane.end = max(lane.end, t)
            let event = r.kind ?? ""
            switch event {
            case .frame where TraceRecord.Frame(r) != nil, .air, .cApdu:
                let exchange: (command: String?, response: String?) =
                    TraceRecord.Frame(r).map { ($0.command, $0.response) } ?? TraceRecord.Air(r).map {
                        ($0.command, $0.response)
                    } ?? (TraceRecord.CommandAPDU(r)?.apdu, nil)
                lane.marks.append(
                    Mark(
                        t: t, shape: .tick, style: "frame",
                        title: "\(spaced(exchange.command)) → \(spaced(exchange.response))", row: 1))
            case .detected:
                lane.marks.append(Mark(t: t, shape: .triangle, style: "detect", title: "detected", label: "detected"))
            case .field, .cardConnected, .cardDisconnected:
                let on = event == .cardConnected || TraceRecord.FieldChange(r)?.isOn == true
                if on {
                    fieldOpen = fieldOpen ?? t
                } else if let open = fieldOpen {
                    lane.spans.append(Span(start: open, end: t, style: "field", title: "field on"))
                    fieldOpen = nil
                }
            default:
                break
            }
        }
        if let open = fieldOpen {
            lane.spans.append(Span(start: open, end: lane.end, style: "field", title: "field on"))
        }
        lane.ending = "\(lane.marks.filter { $0.style == "frame" }.count) exchanges"
        lane.origin = 0
        return lane
    }

    // MARK: drawing

    static func render(_ lanes: [Lane], header: TraceRecord?, origin: String?) -> String {
        let relative = origin != nil
        // Time range: absolute (sessions) or each lane from its own origin (walks).
        var span: Int64 = 1
        for lane in lanes {
            let lastMark = lane.marks.filter { $0.shape != .dashed }.map(\.t).max() ?? lane.end
            let extent = max(lane.end, lastMark) - (relative ? lane.origin : 0)
            span = max(span, extent)
        }
        // Leave room after the last event for the ending's label. A walk's lanes hold events
        // milliseconds apart and fields seconds long: their time axis is a square-root scale.
        let plotWidth = width - labelWidth - right
        let usable = plotWidth * 0.72
        func position(_ us: Double) -> Double {
            let v = max(0, us)
            return relative ? usable * (v / Double(span)).squareRoot() : usable * v / Double(span)
        }
        func x(_ t: Int64, _ lane: Lane) -> Double {
            labelWidth + position(Double(t - (relative ? lane.origin : 0)))
        }
        let height = top + Double(max(1, lanes.count)) * laneHeight + 64
        var out = """
            <?xml version="1.0" encoding="UTF-8"?>
            <svg xmlns="http://www.w3.org/2000/svg" width="\(Int(width))" height="\(Int(height))" \
            viewBox="0 0 \(Int(width)) \(Int(height))" font-family="DejaVu Sans, Helvetica, Arial, sans-serif" font-size="12">
            <style>
            .lane{fill:#f6f7f9}.sheet{fill:#dfe7f3}.active{fill:#9fbbe0}.field{fill:#cde8d3}
            .frame{stroke:#555;stroke-width:1}.detect{fill:#2d6cc0}.lost{fill:#b04a2f}.read{fill:#2e8b57}
            .wake{fill:#d48a00}.quiet{fill:#999}.limit{stroke:#b04a2f;stroke-width:1.5;stroke-dasharray:5 4}
            .end{fill:#b04a2f}.ok{fill:#2e8b57}.by-app{fill:#2e8b57;stroke:#2e8b57}.by-system{fill:#888;stroke:#888}
            .by-express{fill:#7a4fb5;stroke:#7a4fb5}.by-none{fill:#b04a2f;stroke:#b04a2f}
            text.name{font-weight:bold}text.small{font-size:10px;fill:#444}text.ending{font-size:11px}
            </style>

            """
        let command = header?["command"]?.stringValue ?? "trace"
        var title = "nfcbench \(command)"
        if let d = header?["device"]?.stringValue { title += " on \(d)" }
        if let s = header?["started"]?.stringValue { title += " — \(s)" }
        out += "<text x=\"12\" y=\"22\" font-size=\"15\" class=\"name\">\(escape(title))</text>\n"
        out +=
            "<text x=\"12\" y=\"40\" class=\"small\">\(origin.map { $0 + ", time on a square-root scale; " } ?? "")hover a mark for its frame or APDU (hex)</text>\n"
        // Axis.
        let axisY = top + Double(lanes.count) * laneHeight + 8
        out +=
            "<line x1=\"\(f(labelWidth))\" y1=\"\(f(axisY))\" x2=\"\(f(width - right))\" y2=\"\(f(axisY))\" stroke=\"#333\"/>\n"
        var ticks: [Double] = []
        if relative {
            var last = -100.0
            for us in [0.0, 1e3, 2e3, 5e3, 1e4, 2e4, 5e4, 1e5, 2e5, 5e5, 1e6, 2e6, 5e6, 1e7, 2e7, 5e7, 1e8]
            where position(us) <= plotWidth && position(us) - last >= 44 {
                ticks.append(us)
                last = position(us)
            }
        } else {
            let step = niceStep(Double(span) / 8)
            var tick = 0.0
            while position(tick) <= plotWidth {
                ticks.append(tick)
                tick += step
            }
        }
        for tick in ticks {
            let px = labelWidth + position(tick)
            out += "<line x1=\"\(f(px))\" y1=\"\(f(axisY))\" x2=\"\(f(px))\" y2=\"\(f(axisY + 5))\" stroke=\"#333\"/>\n"
            out +=
                "<text x=\"\(f(px))\" y=\"\(f(axisY + 18))\" text-anchor=\"middle\" class=\"small\">\(timeLabel(tick))</text>\n"
        }
        for (i, lane) in lanes.enumerated() {
            let y0 = top + Double(i) * laneHeight
            out += "<g class=\"lane-group\">\n"
            out +=
                "<rect class=\"lane\" x=\"0\" y=\"\(f(y0 + 2))\" width=\"\(Int(width))\" height=\"\(f(laneHeight - 4))\"/>\n"
            out += "<text x=\"12\" y=\"\(f(y0 + 24))\" class=\"name\">\(escape(lane.name))</text>\n"
            if !lane.detail.isEmpty {
                let detail = lane.detail.count > 36 ? String(lane.detail.prefix(35)) + "…" : lane.detail
                out +=
                    "<text x=\"12\" y=\"\(f(y0 + 40))\" class=\"small\">\(escape(detail))<title>\(escape(lane.detail))</title></text>\n"
            }
            for s in lane.spans {
                let a = x(s.start, lane)
                let b = max(a + 1, x(s.end, lane))
                let (yy, hh) = s.style == "active" ? (y0 + 14, 14.0) : (y0 + 10, 22.0)
                out +=
                    "<rect class=\"\(s.style)\" x=\"\(f(a))\" y=\"\(f(yy))\" width=\"\(f(b - a))\" height=\"\(f(hh))\"><title>\(escape(s.title))</title></rect>\n"
            }
            var lastLabelEnd = -1000.0
            // Ticks last, so a frame at the instant of a read stays visible over its diamond.
            let marks = lane.marks.filter { $0.shape != .tick } + lane.marks.filter { $0.shape == .tick }
            for m in marks {
                let px = x(m.t, lane) + m.dx
                let cy = m.row == 0 ? y0 + 21 : y0 + 44
                let titleTag = "<title>\(escape(m.title))</title>"
                switch m.shape {
                case .tick:
                    out +=
                        "<line class=\"\(m.style)\" x1=\"\(f(px))\" y1=\"\(f(cy - 7))\" x2=\"\(f(px))\" y2=\"\(f(cy + 7))\" stroke=\"#555\">\(titleTag)</line>\n"
                case .diamond:
                    out +=
                        "<path class=\"\(m.style)\" d=\"M\(f(px)) \(f(cy - 7))l6 7l-6 7l-6-7z\">\(titleTag)</path>\n"
                case .triangle:
                    out += "<path class=\"\(m.style)\" d=\"M\(f(px)) \(f(cy - 7))l6 12h-12z\">\(titleTag)</path>\n"
                case .circle:
                    out +=
                        "<circle class=\"\(m.style)\" cx=\"\(f(px))\" cy=\"\(f(cy))\" r=\"5\">\(titleTag)</circle>\n"
                case .dashed:
                    if px <= width - right {
                        out +=
                            "<line class=\"limit\" x1=\"\(f(px))\" y1=\"\(f(y0 + 6))\" x2=\"\(f(px))\" y2=\"\(f(y0 + laneHeight - 6))\">\(titleTag)</line>\n"
                    }
                    continue
                }
                if let label = m.label, m.row == 0, px - Double(label.count) * 3.2 > lastLabelEnd + 4 {
                    out +=
                        "<text x=\"\(f(px))\" y=\"\(f(cy - 10))\" text-anchor=\"middle\" class=\"small\">\(escape(label))</text>\n"
                    lastLabelEnd = px + Double(label.count) * 3.2
                }
            }
            let endX = min(x(lane.end, lane) + 22, width - right - 250)
            var textY = y0 + 25
            if !lane.ending.isEmpty {
                // A session's ending: the code on the first line, Core NFC's reason below it.
                var first = lane.ending
                var second: String?
                if let space = lane.ending.firstIndex(of: " "), lane.ending[..<space].allSatisfy(\.isNumber) {
                    first = String(lane.ending[..<space])
                    second = String(lane.ending[lane.ending.index(after: space)...])
                }
                out +=
                    "<text x=\"\(f(endX))\" y=\"\(f(textY))\" class=\"ending \(lane.endingStyle)\">\(escape(first))</text>\n"
                if let second {
                    textY += 13
                    out += "<text x=\"\(f(endX))\" y=\"\(f(textY))\" class=\"small\">\(escape(second))</text>\n"
                }
            }
            if let note = lane.note {
                let limitMark = lane.marks.first { $0.shape == .dashed }
                let offChart = limitMark.map { x($0.t, lane) > width - right } ?? false
                textY += 13
                out +=
                    "<text x=\"\(f(endX))\" y=\"\(f(textY))\" class=\"small\">\(escape(note + (offChart ? " (after the chart's end)" : "")))</text>\n"
            }
            out += "</g>\n"
        }
        // Legend.
        let legendY = axisY + 40
        let items: [(String, String)] =
            origin?.contains("field") == true
            ? [
                ("<path class=\"wake\" d=\"M0 -7l6 7l-6 7l-6-7z\"/>", "wake (the default app is woken)"),
                ("<path class=\"detect\" d=\"M0 -7l6 12h-12z\"/>", "ISO-DEP activation"),
                ("<circle class=\"by-app\" r=\"5\"/>", "SELECT answered by the app"),
                ("<circle class=\"by-system\" r=\"5\"/>", "… by the system"),
                ("<circle class=\"by-none\" r=\"5\"/>", "… by nobody (reader timeout)"),
                ("<rect class=\"field\" x=\"-8\" y=\"-6\" width=\"16\" height=\"12\"/>", "field on"),
            ]
            : [
                ("<rect class=\"sheet\" x=\"-8\" y=\"-6\" width=\"16\" height=\"12\"/>", "sheet (begin to end)"),
                ("<rect class=\"active\" x=\"-8\" y=\"-6\" width=\"16\" height=\"12\"/>", "active"),
                ("<line class=\"limit\" x1=\"0\" y1=\"-7\" x2=\"0\" y2=\"7\"/>", "time limit"),
                ("<path class=\"detect\" d=\"M0 -7l6 12h-12z\"/>", "detected"),
                ("<line class=\"frame\" x1=\"0\" y1=\"-7\" x2=\"0\" y2=\"7\"/>", "frame or APDU"),
                ("<path class=\"read\" d=\"M0 -7l6 7l-6 7l-6-7z\"/>", "NDEF read"),
                ("<circle class=\"end\" r=\"5\"/>", "ending (code, reason)"),
            ]
        var lx = labelWidth
        for (shape, text) in items {
            out += "<g transform=\"translate(\(f(lx)) \(f(legendY)))\">\(shape)</g>"
            out += "<text x=\"\(f(lx + 12))\" y=\"\(f(legendY + 4))\" class=\"small\">\(escape(text))</text>\n"
            lx += 24 + Double(text.count) * 5.6
        }
        out += "</svg>\n"
        return out
    }

    static func niceStep(_ raw: Double) -> Double {
        guard raw > 0 else { return 1 }
        let p = pow(10, floor(log10(raw)))
        for m in [1.0, 2.0, 5.0, 10.0] where m * p >= raw { return m * p }
        return 10 * p
    }

    static func timeLabel(_ us: Double) -> String {
        if us == 0 { return "0" }
        if us >= 1_000_000 {
            return us.truncatingRemainder(dividingBy: 1_000_000) == 0
                ? String(format: "%.0f s", us / 1_000_000) : String(format: "%.1f s", us / 1_000_000)
        }
        if us >= 1000 { return String(format: "%.0f ms", us / 1000) }
        return String(format: "%.0f µs", us)
    }

    static func f(_ v: Double) -> String { String(format: "%.1f", v) }

    static func spaced(_ hex: String?) -> String {
        guard let hex else { return "(no answer)" }
        guard hex.allSatisfy(\.isHexDigit) else { return hex }
        var out = ""
        for (i, c) in hex.enumerated() {
            if i > 0 && i % 2 == 0 { out += " " }
            out.append(c)
        }
        return out
    }

    static func recordsText(_ r: TraceRecord) -> String {
        var records: [JSONValue] = []
        if case .array(let rs)? = r["records"] { records = rs }
        return records.compactMap { $0["uri"]?.stringValue ?? $0["text"]?.stringValue ?? $0["type"]?.stringValue }
            .joined(separator: ", ")
    }

    static func escape(_ s: String) -> String {
        var out = ""
        for c in s {
            switch c {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            default: out.append(c)
            }
        }
        return out
    }
}
