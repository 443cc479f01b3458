import Foundation
public import NFCFiles
import NFCTags
import NFCTrace
import ReaderSession

/// The one writer of conformance scenario files (`hardware/conformance/FORMAT.md`): what
/// ``init(json:name:file:loadTag:)`` reads, ``fileText`` writes, so a written scenario
/// reads back equal (tags by their references, resolved again when read). The explorer
/// saves its counterexamples through it; a replay's lines show each step as it writes it.
extension ConformanceScenario {
    /// The scenario as a file: a JSON object with one field per line and one step per line,
    /// ending with a newline. Fields at their defaults (`thermal` true, `busy` refuse, empty
    /// lists) are left out; `name` is always written.
    public var fileText: String {
        var fields: [(String, String)] = [
            ("format", json(.string("nfcbench-conformance"))), ("version", "1"), ("name", json(.string(name))),
        ]
        if !description.isEmpty { fields.append(("description", json(.string(description)))) }
        fields.append(("duration_ms", Self.milliseconds(duration)))
        if !thermal { fields.append(("thermal", "false")) }
        if busyPolicy != .refuse { fields.append(("busy", json(.string(busyPolicy.rawValue)))) }
        if !selectIdentifiers.isEmpty {
            fields.append(
                ("select_identifiers", "[" + selectIdentifiers.map { json(.string($0)) }.joined(separator: ", ") + "]"))
        }
        if let b = backgroundReading {
            let d = BackgroundTagReading()
            var o: [(String, String)] = []
            func flag(_ key: String, _ v: Bool, _ dv: Bool) { if v != dv { o.append((key, v ? "true" : "false")) } }
            flag("supported", b.conditions.supported, d.conditions.supported)
            flag("unlocked_since_boot", b.conditions.unlockedSinceBoot, d.conditions.unlockedSinceBoot)
            flag("in_use", b.conditions.inUse, d.conditions.inUse)
            flag("locked", b.conditions.locked, d.conditions.locked)
            flag("wallet_in_use", b.conditions.walletInUse, d.conditions.walletInUse)
            flag("camera_in_use", b.conditions.cameraInUse, d.conditions.cameraInUse)
            flag("airplane_mode", b.conditions.airplaneMode, d.conditions.airplaneMode)
            if b.uriRecordRule != d.uriRecordRule { o.append(("uri_record", json(.string(b.uriRecordRule.rawValue)))) }
            fields.append(("background_reading", o.isEmpty ? "true" : Self.object(o)))
            if !b.associatedDomains.isEmpty {
                fields.append(
                    (
                        "associated_domains",
                        "[" + b.associatedDomains.map { json(.string($0)) }.joined(separator: ", ") + "]"
                    ))
            }
        }
        let stepLines = steps.indices.map { "    " + stepJSON($0) }
        fields.append(("steps", stepLines.isEmpty ? "[]" : "[\n" + stepLines.joined(separator: ",\n") + "\n  ]"))
        if !expectEndings.isEmpty {
            fields.append(("expect_endings", "[" + expectEndings.map(String.init).joined(separator: ", ") + "]"))
        }
        if expectErrorMessage { fields.append(("expect_error_message", "true")) }
        if !expectEvents.isEmpty {
            let events = expectEvents.map { e -> String in
                var pairs = [("event", json(.string(e.event)))]
                for key in e.fields.keys.sorted() {
                    switch e.fields[key]! {
                    case .int(let v): pairs.append((key, String(v)))
                    case .string(let v): pairs.append((key, json(.string(v))))
                    case .bool(let v): pairs.append((key, v ? "true" : "false"))
                    }
                }
                return "    " + Self.object(pairs)
            }
            fields.append(("expect_events", "[\n" + events.joined(separator: ",\n") + "\n  ]"))
        }
        return "{\n" + fields.map { "  \(json(.string($0.0))): \($0.1)" }.joined(separator: ",\n") + "\n}\n"
    }

    /// Step `index` as one JSON object on one line, as ``fileText`` writes it
    /// (`{"at_ms": 0, "user": "scan"}`). `index` must be a valid index of ``steps``.
    public func stepJSON(_ index: Int) -> String {
        let step = steps[index]
        var pairs: [(String, String)] = []
        switch step.when {
        case .at(let t): pairs.append(("at_ms", Self.milliseconds(t)))
        case .afterPrevious(let d): pairs.append(("after_ms", Self.milliseconds(d)))
        case .afterSessionEnd(let d): pairs.append(("after_end_ms", Self.milliseconds(d)))
        }
        switch step.action {
        case .user(let u):
            switch u {
            case .scan(let r):
                pairs.append(("user", json(.string("scan"))))
                if r.tagCount != 1 { pairs.append(("tags", String(r.tagCount))) }
                if r.readWrite && r.tagCount == 1 && r.session == .ndef { pairs.append(("read_write", "true")) }
                if r.session != .ndef { pairs.append(("session", json(.string(r.session.rawValue)))) }
                if !r.commands.isEmpty {
                    pairs.append(
                        (
                            "commands",
                            "[" + r.commands.map { json(.string($0.hexString())) }.joined(separator: ", ") + "]"
                        ))
                }
                if !r.selectIdentifiers.isEmpty {
                    pairs.append(
                        (
                            "iso7816_select_identifiers",
                            "[" + r.selectIdentifiers.map { json(.string($0)) }.joined(separator: ", ") + "]"
                        ))
                }
                if r.readAll { pairs.append(("read_all", "true")) }
                if r.commandInterval != .zero {
                    pairs.append(("command_interval_ms", Self.milliseconds(r.commandInterval)))
                }
            case .done: pairs.append(("user", json(.string("done"))))
            case .background: pairs.append(("user", json(.string("background"))))
            case .foreground: pairs.append(("user", json(.string("foreground"))))
            case .inactive: pairs.append(("user", json(.string("inactive"))))
            case .tapNotification: pairs.append(("user", json(.string("tap-notification"))))
            }
        case .otherAppSession(let length): pairs.append(("other_app_session_ms", Self.milliseconds(length)))
        case .present(let list):
            func item(_ p: (tag: String, name: String, faults: [TagFault])) -> String {
                if p.name == p.tag && p.faults.isEmpty { return json(.string(p.tag)) }
                var o = [("tag", json(.string(p.tag)))]
                if p.name != p.tag { o.append(("as", json(.string(p.name)))) }
                if !p.faults.isEmpty {
                    o.append(
                        ("faults", "[" + p.faults.map { Self.object($0.jsonFields) }.joined(separator: ", ") + "]"))
                }
                return Self.object(o)
            }
            pairs.append(
                ("present", list.count == 1 ? item(list[0]) : "[" + list.map(item).joined(separator: ", ") + "]"))
        case .remove(let name): pairs.append(("remove", json(.string(name))))
        case .system(let a):
            pairs.append(("system", json(.string(a.name))))
            switch a {
            case .terminate, .terminateNextBegin: break
            case .busyPolicy(let p): pairs.append(("policy", json(.string(p.rawValue))))
            case .heat(let h): pairs.append(("field_seconds", Self.number(h)))
            }
        }
        return Self.object(pairs)
    }

    /// Writes ``fileText`` to `path` by ``/NFCFiles/OutputFile``'s rules (a file there is
    /// replaced atomically; every write checked).
    /// - Throws: ``/NFCFiles/FileError`` when the file cannot be made (73) or written (74).
    public func write(to path: String) throws(FileError) {
        try OutputFile.plan(path).write(Array(fileText.utf8))
    }

    /// Milliseconds as the format writes them: a whole number, or decimals down to 1 µs.
    public static func milliseconds(_ d: Duration) -> String {
        let c = d.components
        let us = c.seconds * 1_000_000 + c.attoseconds / 1_000_000_000_000
        let whole = us / 1000
        let frac = us % 1000
        guard frac != 0 else { return String(whole) }
        var f = String(frac)
        f = String(repeating: "0", count: 3 - f.count) + f
        while f.hasSuffix("0") { f.removeLast() }
        return "\(whole).\(f)"
    }

    private static func number(_ v: Double) -> String {
        v == v.rounded() && abs(v) < 1e15 ? String(Int64(v)) : String(v)
    }

    private static func object(_ pairs: [(String, String)]) -> String {
        "{" + pairs.map { "\(JSONValue.string($0.0).serialized): \($0.1)" }.joined(separator: ", ") + "}"
    }
}

private func json(_ v: JSONValue) -> String { v.serialized }
