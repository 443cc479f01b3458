import Foundation
import NFCTrace
import Testing

/// The typed payloads (`TracePayload`) against real traces (`Tests/Fixtures/traces`): every
/// record of a typed kind reads as its payload and the payload writes the same bytes; a record
/// missing a required field gives the documented `TraceFieldError`; the catalog's fields for a
/// typed kind are the payload's keys.
@Suite("Typed trace payloads")
struct TracePayloadTests {
    /// The payload types of `kind` (two for `frame`: a target's, the virtual PN532's host link).
    static func types(of kind: TraceRecord.Kind) -> [any TracePayload.Type] {
        TraceRecord.payloadTypes.filter { $0.kind == kind }
    }

    /// Reads `r` with the first of its kind's payload types that reads it.
    static func decode(_ r: TraceRecord) -> (any TracePayload)? {
        for type in types(of: r.kind ?? "") {
            if let p = try? type.init(decoding: r) { return p }
        }
        return nil
    }

    /// The record `payload` writes with `r`'s time and session keys.
    static func rewrite(_ payload: any TracePayload, like r: TraceRecord) -> TraceRecord {
        payload.record(at: r.time, session: r.session, sessionTime: r[TraceRecord.Key.sessionTime]?.intValue)
    }

    @Test(
        "Every record of a typed kind in the old traces reads as its payload and writes back byte for byte",
        arguments: TraceRecordTests.names)
    func roundTrip(_ name: String) throws {
        for line in try TraceRecordTests.lines(name) {
            let r = try TraceRecord(line: line)
            let kind = try #require(r.kind)
            guard !Self.types(of: kind).isEmpty else { continue }
            let payload = try #require(Self.decode(r), "\(name): \(line) does not read as a payload")
            #expect(Self.rewrite(payload, like: r).line == line)
        }
    }

    @Test("Together the old traces hold a record of most payload types")
    func fixturesCoverPayloads() throws {
        var seen = Set<String>()
        for name in TraceRecordTests.names {
            for line in try TraceRecordTests.lines(name) {
                if let p = Self.decode(try TraceRecord(line: line)) { seen.insert(type(of: p).typeName) }
            }
        }
        // The rest (fault, the virtual PN532's air, field and host-link frames, a failed tag
        // operation) are pinned below: no old trace holds them.
        for name in [
            "TraceRecord.Detected", "TraceRecord.Frame", "TraceRecord.Lost", "TraceRecord.TagOperationEnded",
            "TraceRecord.Ending",
            "TraceRecord.Signal", "TraceRecord.CommandAPDU", "TraceRecord.ResponseAPDU", "TraceRecord.PN532Event",
        ] {
            #expect(seen.contains(name), "no fixture record reads as \(name)")
        }
    }

    /// Full records (every optional field given; two for `tagOperationEnded`, whose failure and
    /// success have different fields) of each payload type, as today's writers write them.
    static let full: [(any TracePayload, String)] = [
        (
            TraceRecord.Detected(targets: [
                .init(
                    id: 1, kind: "type4", family: "type4", uid: "04A1", atqa: "4403", sak: "20", ats: "0578",
                    atr: "3B80",
                    pmm: "0102", systemCode: "12FC", dsfid: "00")
            ]),
            #"{"t_us":5,"event":"detected","targets":[{"id":1,"kind":"type4","family":"type4","uid":"04A1","atqa":"4403","sak":"20","ats":"0578","atr":"3B80","pmm":"0102","system_code":"12FC","dsfid":"00"}]}"#
        ),
        (
            TraceRecord.Frame(target: 1, command: "3000", response: "0102"),
            #"{"t_us":5,"event":"frame","target":1,"command":"3000","response":"0102"}"#
        ),
        (
            TraceRecord.HostLinkFrame(direction: .hostToChip, frame: "0000FF02FED4021A00"),
            #"{"t_us":5,"event":"frame","dir":"host_to_chip","frame":"0000FF02FED4021A00"}"#
        ),
        (TraceRecord.Lost(target: 2), #"{"t_us":5,"event":"lost","target":2}"#),
        (
            TraceRecord.TagOperationEnded(
                operation: "op3", failure: .init(code: 100, reason: "readerTransceiveErrorTagConnectionLost")),
            #"{"t_us":5,"event":"tagOperationEnded","operation":"op3","code":100,"reason":"readerTransceiveErrorTagConnectionLost"}"#
        ),
        (
            TraceRecord.TagOperationEnded(operation: "op1", failure: nil),
            #"{"t_us":5,"event":"tagOperationEnded","operation":"op1","result":"success"}"#
        ),
        (
            TraceRecord.Ending(
                code: 200, reason: "readerSessionInvalidationErrorUserCanceled", errorMessage: "bye",
                cause: "SIGINT: the user tapped Done"),
            #"{"t_us":5,"event":"didInvalidateWithError","code":200,"reason":"readerSessionInvalidationErrorUserCanceled","error_message":"bye","cause":"SIGINT: the user tapped Done"}"#
        ),
        (
            TraceRecord.Signal(signal: 2, name: "SIGINT", reason: "SIGINT: the user tapped Done"),
            #"{"t_us":5,"event":"signal","signal":2,"name":"SIGINT","reason":"SIGINT: the user tapped Done"}"#
        ),
        (TraceRecord.CommandAPDU(apdu: "FFCA000000"), #"{"t_us":5,"event":"c_apdu","apdu":"FFCA000000"}"#),
        (TraceRecord.ResponseAPDU(response: "9000"), #"{"t_us":5,"event":"r_apdu","response":"9000"}"#),
        (TraceRecord.Fault(fault: "silence"), #"{"t_us":5,"event":"fault","fault":"silence"}"#),
        (TraceRecord.PN532Event(note: "load UID 04A2"), #"{"t_us":5,"event":"pn532_event","note":"load UID 04A2"}"#),
        (
            TraceRecord.FieldChange(on: true, note: "RF field on"),
            #"{"t_us":5,"event":"field","state":"on","note":"RF field on"}"#
        ),
        (
            TraceRecord.Air(exchange: "type2", command: "3004", response: nil, note: "a READ"),
            #"{"t_us":5,"event":"air","kind":"type2","command":"3004","response":null,"note":"a READ"}"#
        ),
    ]

    @Test("Each payload type writes today's line and reads it back; every type is pinned once")
    func pinned() throws {
        for (payload, line) in Self.full {
            let r = payload.record(at: 5)
            #expect(r.line == line)
            let back = try type(of: payload).init(decoding: try TraceRecord(line: line))
            #expect(back.record(at: 5).line == line)
        }
        #expect(
            Set(Self.full.map { type(of: $0.0).typeName }) == Set(TraceRecord.payloadTypes.map { $0.typeName }))
        let frame = try #require(
            TraceRecord.Frame(
                try TraceRecord(line: #"{"t_us":1,"event":"frame","target":1,"command":"60","response":null}"#)))
        #expect(frame.response == nil)
        let success = try #require(
            TraceRecord.TagOperationEnded(
                try TraceRecord(line: #"{"t_us":1,"event":"tagOperationEnded","operation":"op1","result":"success"}"#)))
        #expect(success.failure == nil)
    }

    @Test("The catalog's fields of a typed kind are its types' keys, in the order the types write them")
    func catalogMatchesTypes() throws {
        for type in TraceRecord.payloadTypes {
            let spec = try #require(TraceRecord.spec(of: type.kind))
            #expect(spec.payloads.contains(type.typeName), "\(type.kind): \(type.typeName) is not named")
            // The keys its full records write are the ones it lists, in the listed order.
            var keys: [String] = []
            for (p, _) in Self.full where Swift.type(of: p) == type {
                for k in p.fields.keys where !keys.contains(k) { keys.append(k) }
                #expect(Set(type.requiredKeys).isSubset(of: Set(p.fields.keys)))
            }
            #expect(keys == type.catalogFields.map(\.key), "\(type.typeName) writes \(keys)")
        }
        for spec in TraceRecord.catalog where !spec.payloads.isEmpty {
            let listed = Self.full.filter { spec.payloads.contains(type(of: $0.0).typeName) }
            var keys: [String] = []
            for (p, _) in listed { for k in p.fields.keys where !keys.contains(k) { keys.append(k) } }
            #expect(spec.fields.map(\.key) == keys, "\(spec.kind): catalog \(spec.fields.map(\.key)), types \(keys)")
        }
        // The kinds written in one module and read in another are typed.
        for kind: TraceRecord.Kind in [
            .frame, .lost, .tagOperationEnded, .didInvalidateWithError, .signal, .cApdu, .rApdu, .fault, .pn532Event,
            .field, .air,
        ] {
            #expect(!Self.types(of: kind).isEmpty, "\(kind) has no payload type")
        }
    }

    @Test("A record missing a required field, or with one of another JSON type, gives the documented error")
    func missingField() throws {
        for (payload, line) in Self.full {
            let type = type(of: payload)
            let r = try TraceRecord(line: line)
            for key in type.requiredKeys {
                var missing = r
                missing[key] = nil
                #expect(throws: TraceFieldError(kind: type.kind, key: key, problem: .missing)) {
                    try type.init(decoding: missing)
                }
                #expect(type.init(missing) == nil)
                var wrong = r
                wrong[key] = .bool(true)
                #expect(throws: TraceFieldError.self) { try type.init(decoding: wrong) }
            }
            // An optional field may be absent: the payload reads, without it (a failed tag
            // operation's reason is required with its code: below).
            for key in payload.fields.keys
            where !type.requiredKeys.contains(key) && !(key == "reason" && type.kind == .tagOperationEnded) {
                var without = r
                without[key] = nil
                let read = try type.init(decoding: without)
                #expect(read.fields[key] == nil || read.fields[key] == .null || key == "result")
            }
            // Another kind is not this payload.
            #expect(throws: TraceFieldError(kind: type.kind, key: "", problem: .wrongKind(.closed))) {
                try type.init(decoding: TraceRecord(.closed, at: 1))
            }
        }
        // A detected target is read field by field; the error names the target.
        let noUID = try TraceRecord(line: #"{"t_us":1,"event":"detected","targets":[{"id":1,"kind":"type2"}]}"#)
        #expect(throws: TraceFieldError(kind: .detected, key: "targets[0].uid", problem: .missing)) {
            try TraceRecord.Detected(decoding: noUID)
        }
        let full = try #require(Self.full.first?.0 as? TraceRecord.Detected)
        #expect(
            full.targets[0].object.keys
                == TraceRecord.Detected.Target.alwaysWritten + TraceRecord.Detected.Target.whenKnown)
        for key in TraceRecord.Detected.Target.requiredKeys {
            var target = full.targets[0].object
            target[key] = nil
            #expect(throws: TraceFieldError(kind: .detected, key: "targets[0].\(key)", problem: .missing)) {
                try TraceRecord.Detected(
                    decoding: TraceRecord(.detected, at: 1, ["targets": .array([.object(target)])]))
            }
        }
        // An old target without `family` reads (its kind names it).
        let noFamily = try TraceRecord(
            line: #"{"t_us":1,"event":"detected","targets":[{"id":1,"kind":"type2","uid":"04A1"}]}"#)
        #expect(TraceRecord.Detected(noFamily)?.targets.first?.family == nil)
        #expect(TraceRecord.Detected(noFamily)?.record(at: 1).line == noFamily.line)
        // A failed tag operation needs its reason.
        let noReason = try TraceRecord(line: #"{"t_us":1,"event":"tagOperationEnded","operation":"op1","code":100}"#)
        #expect(throws: TraceFieldError(kind: .tagOperationEnded, key: "reason", problem: .missing)) {
            try TraceRecord.TagOperationEnded(decoding: noReason)
        }
        // A field written from a fixed set says which.
        let badState = try TraceRecord(line: #"{"t_us":1,"event":"field","state":"dim","note":"x"}"#)
        #expect(throws: TraceFieldError(kind: .field, key: "state", problem: .wrongType(expected: "`on` or `off`"))) {
            try TraceRecord.FieldChange(decoding: badState)
        }
        #expect(
            TraceFieldError(kind: .frame, key: "command", problem: .missing).description
                == "frame record without its command")
    }

    @Test("Keys a payload does not list stay in the record, which is what is passed on")
    func unknownKeysKept() throws {
        let line = #"{"t_us":9,"event":"frame","target":1,"command":"30","response":null,"rssi":-40}"#
        let r = try TraceRecord(line: line)
        let frame = try #require(TraceRecord.Frame(r))
        #expect(frame == TraceRecord.Frame(target: 1, command: "30", response: nil))
        #expect(r.line == line)
        let contents = try TraceContents(text: line + "\n")
        #expect(contents.records.map(\.serialized) == [line])
    }
}
