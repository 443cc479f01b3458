/// What an NDEF write actually sent, recorded on the transport as it happened, and the words
/// for a write that failed: what reached the tag and what the tag now reads as. The write
/// procedures (``Type2TagReader/writeNDEF(_:)``, ``Type4TagReader/writeNDEF(_:capabilityContainer:)``)
/// zero the NDEF length first (a Type 2 tag whose length reads 0 already is not zeroed again)
/// and set it last, so a failure leaves the old message (nothing sent), an empty one (the length
/// was zeroed, or was 0) or the new one (the length was set).
public enum NDEFWriteReport {
    /// One WRITE (`A2`) a Type 2 write sent.
    public struct PageWrite: Sendable, Equatable {
        public var page: UInt8
        public var data: [UInt8]
        /// `nil` when the tag acknowledged it; else what went wrong.
        public var failure: TagCommunicationError?
    }

    /// One APDU a Type 4 write sent and the answer (`nil`: none came).
    public struct APDUExchange: Sendable, Equatable {
        public var command: [UInt8]
        public var response: [UInt8]?
        /// UPDATE BINARY (`D6`, or `D7` with an offset data object).
        public var isUpdate: Bool { command.count >= 2 && (command[1] == 0xD6 || command[1] == 0xD7) }
        var statusText: String {
            guard let response, response.count >= 2 else { return "no answer" }
            return Array(response.suffix(2)).hexString(separator: " ")
        }
        var succeeded: Bool { response.map { $0.count >= 2 && $0.suffix(2) == [0x90, 0x00] } ?? false }
    }

    /// A Type 2 write that failed: `writes` are every WRITE the transport sent, in order;
    /// `ndefTLVAddress` (the NDEF TLV's T byte in the tag's memory) and `messageLength` say
    /// which pages hold the TLV's length (one byte after T, or the two after `FF`).
    public static func type2Failure(
        _ error: Type2TagError, writes: [PageWrite], ndefTLVAddress: Int?, messageLength: Int
    ) -> String {
        guard !writes.isEmpty else {
            return "refused: \(error); no WRITE was sent, the tag is unchanged"
        }
        var out = "write failed: \(error). Sent \(writes.count) WRITE(s): "
        out += writes.map { "page \($0.page) " + ($0.failure.map { "(\($0))" } ?? "ACK") }.joined(separator: ", ")
        return out + ". " + type2State(writes: writes, ndefTLVAddress: ndefTLVAddress, messageLength: messageLength)
    }

    /// What a Type 2 tag reads as after `writes` of an NDEF write (every WRITE the transport
    /// sent, in order, acknowledged or not), as a sentence: the procedure zeroes the NDEF length
    /// first (unless it reads 0), writes the pages that change, then sets the length.
    public static func type2State(writes: [PageWrite], ndefTLVAddress: Int?, messageLength: Int) -> String {
        let acknowledged = writes.filter { $0.failure == nil }
        guard !acknowledged.isEmpty else {
            return writes.isEmpty
                ? "No WRITE was sent: the tag is unchanged"
                : "None was acknowledged: the tag reads as before, or differs where a failed WRITE landed"
        }
        guard let t = ndefTLVAddress else { return "The tag holds the acknowledged pages" }
        return type2LengthState(acknowledged: acknowledged, ndefTLVAddress: t, messageLength: messageLength)
    }

    /// What the tag reads as from the acknowledged WRITEs' length bytes: the procedure
    /// (``Type2TagReader/writeNDEF(_:)``) zeroes the NDEF length before it rewrites a data page
    /// (or finds it 0 already) and sets it last, so the last length WRITE on the tag says which.
    static func type2LengthState(acknowledged: [PageWrite], ndefTLVAddress t: Int, messageLength: Int) -> String {
        let lengthAddresses = messageLength < 0xFF ? [t + 1] : [t + 2, t + 3]
        var lengthBytes: [UInt8?] = Array(repeating: nil, count: lengthAddresses.count)
        for w in acknowledged {
            for (i, a) in lengthAddresses.enumerated() where a / 4 == Int(w.page) && w.data.count == 4 {
                lengthBytes[i] = w.data[a % 4]
            }
        }
        if lengthBytes.allSatisfy({ $0 == nil }) {
            return "The NDEF length read 0 before the pages were written and was not yet set to the new length: "
                + "the tag reads as an empty message"
        }
        if lengthBytes.allSatisfy({ $0 == 0 }) {
            return "The NDEF length was set to 0 first and not yet to the new length: the tag reads as an empty message"
        }
        if lengthBytes.allSatisfy({ $0 != nil }) {
            return "The new length was written: the tag reads as the new message"
        }
        return "Only part of the NDEF length was written: the tag may read as a damaged message"
    }

    /// What a Type 2 tag is after the acknowledged `writes` of a lock (``Type2TagReader/setReadOnly(lockBits:)``:
    /// the CC's write access on page 3 first, then the static lock bytes on page 2, then the
    /// dynamic lock bits), as a sentence.
    public static func lockState(writes: [PageWrite]) -> String {
        let done = Set(writes.filter { $0.failure == nil }.map(\.page))
        guard !done.isEmpty else { return "No lock WRITE was acknowledged: the tag is unchanged" }
        var parts: [String] = []
        if done.contains(3) { parts.append("its CC says read-only (write access Fh): NDEF readers will not write it") }
        if done.contains(2) {
            parts.append("its static lock bits are set: pages 3–15 can never be written again")
        } else {
            parts.append("its static lock bits are not set yet: its pages can still be written")
        }
        let dynamic = done.subtracting([2, 3])
        if !dynamic.isEmpty {
            parts.append(
                "dynamic lock bits set on page(s) \(dynamic.sorted().map(String.init).joined(separator: ", "))")
        }
        return "The tag is partly locked: " + parts.joined(separator: "; ")
    }

    /// A Type 4 write that failed: `exchanges` are every APDU the transport sent, in order;
    /// `lengthFieldSize` is the CC's NLEN (2) or ENLEN (4) width.
    public static func type4Failure(_ error: Type4TagError, exchanges: [APDUExchange], lengthFieldSize: Int) -> String {
        let updates = exchanges.filter(\.isUpdate)
        guard let first = updates.first else {
            let others = exchanges.isEmpty ? "" : " (only \(exchanges.count) SELECT/READ BINARY APDU(s))"
            return "refused: \(error); no UPDATE BINARY was sent\(others), the tag is unchanged"
        }
        var out = "write failed: \(error). Sent \(updates.count) UPDATE BINARY: "
        out += updates.enumerated().map { i, u in
            let what =
                i == 0
                ? "\(lengthFieldSize == 4 ? "ENLEN" : "NLEN") := 0"
                : Self.updateOffset(u.command).map { "at \($0), \(max(0, u.command.count - 5)) bytes" } ?? "?"
            return "\(what) → \(u.statusText)"
        }.joined(separator: ", ")
        if !first.succeeded {
            out += ". The first one (the length set to 0) did not succeed: the tag reads as before"
            if first.response == nil { out += ", or as an empty message if it landed" }
        } else {
            out += ". The length was set to 0 first and not yet to the new length: the tag reads as an empty message"
        }
        return out
    }

    /// What a Type 4 Tag reads as after `exchanges` of an NDEF write (the length set to 0 first,
    /// the data, the new length last), as a sentence.
    public static func type4State(exchanges: [APDUExchange]) -> String {
        let updates = exchanges.filter(\.isUpdate)
        guard let first = updates.first else { return "No UPDATE BINARY was sent: the tag is unchanged" }
        guard first.succeeded else {
            return "The first UPDATE BINARY (the length set to 0) did not succeed: the tag reads as before"
        }
        return "The length was set to 0 first and not yet to the new length: the tag reads as an empty message"
    }

    /// P1-P2 of a short UPDATE BINARY (`D6`); `nil` for an ODO one.
    static func updateOffset(_ command: [UInt8]) -> Int? {
        guard command.count >= 4, command[1] == 0xD6 else { return nil }
        return Int(command[2]) << 8 | Int(command[3])
    }
}

/// A ``/NFCBase/Type2TagTransport`` that forwards everything and records every WRITE and its outcome
/// (``NDEFWriteReport/PageWrite``), for ``NDEFWriteReport/type2Failure(_:writes:ndefTLVAddress:messageLength:)``.
/// With a ``StopRequest``, the next WRITE after the stop was asked is not sent (it throws
/// ``StoppedByRequest`` and is not recorded): a write stops between two pages, each on the tag
/// whole or not at all.
public final class Type2WriteRecorder: Type2TagTransport {
    public let base: any Type2TagTransport
    public let stop: StopRequest?
    public private(set) var writes: [NDEFWriteReport.PageWrite] = []
    public init(base: any Type2TagTransport, stop: StopRequest? = nil) {
        self.base = base
        self.stop = stop
    }
    public func read(page: UInt8) throws -> [UInt8] { try base.read(page: page) }
    public func getVersion() throws -> [UInt8]? { try base.getVersion() }
    public func reactivate() throws { try base.reactivate() }
    public func fastRead(from first: UInt8, to last: UInt8) throws -> [UInt8] {
        try base.fastRead(from: first, to: last)
    }
    public var fastReadPageLimit: Int { base.fastReadPageLimit }
    public func write(page: UInt8, data: [UInt8]) throws {
        if let why = stop?.requested { throw StoppedByRequest(reason: why) }
        do {
            try base.write(page: page, data: data)
            writes.append(.init(page: page, data: data, failure: nil))
        } catch {
            let cause = (error as? TagCommunicationError) ?? .readerFailure(String(describing: error))
            writes.append(.init(page: page, data: data, failure: cause))
            throw error
        }
    }
}

/// An ``/NFCBase/APDUTransport`` that forwards every APDU and records it with its answer
/// (``NDEFWriteReport/APDUExchange``), for ``NDEFWriteReport/type4Failure(_:exchanges:lengthFieldSize:)``.
/// With a ``StopRequest``, the next UPDATE BINARY after the stop was asked is not sent.
public final class APDURecorder: APDUTransport {
    public let base: any APDUTransport
    public let stop: StopRequest?
    public private(set) var exchanges: [NDEFWriteReport.APDUExchange] = []
    public init(base: any APDUTransport, stop: StopRequest? = nil) {
        self.base = base
        self.stop = stop
    }
    public var maximumResponseLength: Int { base.maximumResponseLength }
    public func transmit(_ command: [UInt8]) throws -> [UInt8] {
        if command.count >= 2, command[1] == 0xD6 || command[1] == 0xD7, let why = stop?.requested {
            throw StoppedByRequest(reason: why)
        }
        do {
            let response = try base.transmit(command)
            exchanges.append(.init(command: command, response: response))
            return response
        } catch {
            exchanges.append(.init(command: command, response: nil))
            throw error
        }
    }
}
