import FoundationEssentials

/// The strict wire parser behind ``NFCNDEFMessage/init(bytes:limits:)`` (NFC Forum NDEF 1.0
/// §3), after swift-asn1: it consumes an `ArraySlice` and checks every length before use.
/// Offsets in errors count from the start of the slice.
enum NDEFParser {
    /// A chunk sequence being reassembled (NDEF 1.0 §2.3.3).
    private struct OpenChunk {
        var format: NFCTypeNameFormat
        var type: ArraySlice<UInt8>
        var identifier: ArraySlice<UInt8>
        var payload: [UInt8]
        var initialSize: Int
        var warnings: [NDEFReadWarning]
    }

    static func parse(_ bytes: ArraySlice<UInt8>, limits: NDEFLimits) throws(NDEFError) -> [NFCNDEFPayload] {
        let base = bytes.startIndex
        func at(_ index: Int) -> Int { index - base }

        guard bytes.count <= limits.maxMessageBytes else {
            throw NDEFError(
                .limitExceeded, offset: 0,
                message: "message of \(bytes.count) bytes is over the \(limits.maxMessageBytes)-byte limit")
        }
        guard !bytes.isEmpty else {
            throw NDEFError(.truncated, offset: 0, message: "an NDEF message holds at least one record")
        }

        var rest = bytes
        var records: [NFCNDEFPayload] = []
        var wireRecords = 0
        var chunk: OpenChunk? = nil

        while true {
            let start = rest.startIndex
            guard let header = rest.popFirst() else {
                throw NDEFError(
                    .missingMessageEnd, offset: at(start),
                    message: "data ends after a record without the ME flag")
            }
            wireRecords += 1
            guard wireRecords <= limits.maxRecords else {
                throw NDEFError(
                    .limitExceeded, offset: at(start),
                    message: "more than \(limits.maxRecords) records")
            }
            let mb = header & 0x80 != 0
            let me = header & 0x40 != 0
            let cf = header & 0x20 != 0
            let sr = header & 0x10 != 0
            let il = header & 0x08 != 0
            let rawTNF = header & 0x07

            if wireRecords == 1 && !mb {
                throw NDEFError(.missingMessageBegin, offset: at(start), message: "the first record has no MB flag")
            }
            if wireRecords > 1 && mb {
                throw NDEFError(
                    .unexpectedMessageBegin, offset: at(start),
                    message: "record \(wireRecords) has the MB flag")
            }

            // Length fields.
            guard let typeLength = rest.popFirst().map(Int.init) else {
                throw NDEFError(.truncated, offset: at(rest.startIndex), message: "TYPE_LENGTH missing")
            }
            let payloadLength: Int
            if sr {
                guard let n = rest.popFirst() else {
                    throw NDEFError(.truncated, offset: at(rest.startIndex), message: "PAYLOAD_LENGTH missing")
                }
                payloadLength = Int(n)
            } else {
                guard rest.count >= 4 else {
                    throw NDEFError(
                        .truncated, offset: at(rest.startIndex),
                        message: "4-byte PAYLOAD_LENGTH has only \(rest.count) bytes")
                }
                var n = 0
                for b in rest.prefix(4) { n = n << 8 | Int(b) }
                rest = rest.dropFirst(4)
                payloadLength = n
            }
            var idLength = 0
            if il {
                guard let n = rest.popFirst() else {
                    throw NDEFError(.truncated, offset: at(rest.startIndex), message: "ID_LENGTH missing")
                }
                idLength = Int(n)
            }
            if payloadLength > limits.maxMessageBytes {
                throw NDEFError(
                    .lengthOverflow, offset: at(start) + 2,
                    message: "PAYLOAD_LENGTH \(payloadLength) is over the \(limits.maxMessageBytes)-byte limit")
            }

            // TNF rules (NDEF 1.0 §3.2.6).
            var warnings: [NDEFReadWarning] = []
            let format: NFCTypeNameFormat
            if let f = NFCTypeNameFormat(rawValue: rawTNF) {
                format = f
            } else {
                format = .unknown
                warnings.append(.reservedTypeNameFormat(rawTNF))
            }
            switch format {
            case .empty:
                if typeLength != 0 || idLength != 0 || payloadLength != 0 {
                    throw NDEFError(
                        .invalidTypeNameFormatFields, offset: at(start),
                        message: "TNF empty needs TYPE, ID and PAYLOAD lengths of 0")
                }
            case .unknown, .unchanged:
                if typeLength != 0 {
                    throw NDEFError(
                        .invalidTypeNameFormatFields, offset: at(start) + 1,
                        message: "TNF \(format.name) needs TYPE_LENGTH 0, found \(typeLength)")
                }
            case .nfcWellKnown, .media, .absoluteURI, .nfcExternal:
                if typeLength == 0 {
                    throw NDEFError(
                        .invalidTypeNameFormatFields, offset: at(start) + 1,
                        message: "TNF \(format.name) needs a TYPE")
                }
            }

            // The fields themselves.
            let fieldsStart = rest.startIndex
            guard rest.count >= typeLength + idLength + payloadLength else {
                throw NDEFError(
                    .truncated, offset: at(fieldsStart),
                    message:
                        "record at byte \(at(start)) declares \(typeLength + idLength + payloadLength) bytes of TYPE, ID and PAYLOAD; \(rest.count) remain"
                )
            }
            let type = rest.prefix(typeLength)
            rest = rest.dropFirst(typeLength)
            let identifier = rest.prefix(idLength)
            rest = rest.dropFirst(idLength)
            let payload = rest.prefix(payloadLength)
            rest = rest.dropFirst(payloadLength)

            // Chunking (NDEF 1.0 §2.3.3, §3.2.3).
            if var open = chunk {
                guard rawTNF == NFCTypeNameFormat.unchanged.rawValue else {
                    throw NDEFError(
                        .chunkFlagMisuse, offset: at(start),
                        message: "a middle or terminating chunk must have TNF unchanged (6), found \(rawTNF)")
                }
                guard !il else {
                    throw NDEFError(
                        .chunkFlagMisuse, offset: at(start), message: "IL set on a chunk after the initial one")
                }
                open.payload += payload
                if cf {
                    if me {
                        throw NDEFError(
                            .chunkFlagMisuse, offset: at(start),
                            message: "the message ends (ME) inside a chunked record")
                    }
                    chunk = open
                } else {
                    let record = NFCNDEFPayload(
                        format: open.format, type: Data(open.type), identifier: Data(open.identifier),
                        payload: Data(open.payload), chunkSize: open.initialSize)
                    record.readWarnings = open.warnings
                    records.append(record)
                    chunk = nil
                }
            } else {
                if rawTNF == NFCTypeNameFormat.unchanged.rawValue {
                    throw NDEFError(
                        .chunkFlagMisuse, offset: at(start),
                        message: "TNF unchanged outside a chunked record")
                }
                if cf {
                    if format == .empty {
                        throw NDEFError(
                            .chunkFlagMisuse, offset: at(start), message: "an empty record cannot be chunked")
                    }
                    if me {
                        throw NDEFError(
                            .chunkFlagMisuse, offset: at(start),
                            message: "the message ends (ME) inside a chunked record")
                    }
                    chunk = OpenChunk(
                        format: format, type: type, identifier: identifier, payload: Array(payload),
                        initialSize: payload.count, warnings: warnings)
                } else {
                    let record = NFCNDEFPayload(
                        format: format, type: Data(type), identifier: Data(identifier),
                        payload: Data(payload))
                    record.readWarnings = warnings
                    records.append(record)
                }
            }

            if me {
                guard rest.isEmpty else {
                    throw NDEFError(
                        .trailingBytes, offset: at(rest.startIndex),
                        message: "\(rest.count) bytes after the record with the ME flag")
                }
                return records
            }
        }
    }
}
