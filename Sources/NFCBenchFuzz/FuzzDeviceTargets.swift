package import NFCTags
import ReaderSession
import VirtualHardware

/// What arrives from outside at run time: a host's frames at the virtual PN532, vpcd's
/// messages at the virtual card, and a hostile tag's or card's answers at the NFC Forum
/// Type 2 and Type 4 reader procedures (a card lying in its CC, NLEN, TLV lengths or status
/// words, answering short, long or not at all).
package enum FuzzDeviceTargets {
    /// The short name of an error code (`communication`, `ccInvalid`), for the report.
    package static func kind(_ code: Any) -> String { String(String(describing: code).prefix { $0 != "(" }) }

    /// ``kind(_:)`` of a Type 2 or Type 4 error's code.
    package static func errorKind(_ error: any Error) -> String {
        if let e = error as? Type2TagError { return kind(e.code) }
        if let e = error as? Type4TagError { return kind(e.code) }
        return "\(type(of: error))"
    }

    package static func tagFile(_ name: String) -> TagFile? { FuzzFileTargets.tagFiles.first { $0.name == name }?.file }

    // MARK: PN532 frames

    /// Host commands (after `D4`) that libnfc's and nfcpy's drivers send (UM0701-02 §7).
    package static let pn532Commands: [[UInt8]] = [
        [0x02], [0x14, 0x01, 0x14, 0x01], [0x12, 0x14], [0x12, 0x04], [0x32, 0x01, 0x01], [0x32, 0x01, 0x00],
        [0x32, 0x05, 0xFF, 0x01, 0xFF], [0x32, 0x02, 0x00, 0x0B, 0x0A], [0x4A, 0x01, 0x00], [0x4A, 0x02, 0x00],
        [0x40, 0x01, 0x30, 0x04], [0x40, 0x01, 0x30, 0xFF], [0x40, 0x01, 0xA2, 0x05, 0x01, 0x02, 0x03, 0x04],
        [0x40, 0x01, 0x60], [0x40, 0x01, 0x3A, 0x00, 0x10],
        [0x40, 0x01, 0x00, 0xA4, 0x04, 0x00, 0x07, 0xD2, 0x76, 0x00, 0x00, 0x85, 0x01, 0x01, 0x00],
        [0x40, 0x01, 0x00, 0xB0, 0x00, 0x00, 0x0F], [0x42, 0x30, 0x04], [0x42, 0xE0, 0x80], [0x42, 0x02, 0x00, 0xA4],
        [0x42, 0xB2], [0x42, 0xC2], [0x42, 0xF2, 0x01], [0x44, 0x01], [0x52, 0x01], [0x52, 0x00],
        [0x60, 0xFF, 0x01, 0x10], [0x60, 0x02, 0x01, 0x00, 0x10], [0x60, 0x01, 0x02, 0x20],
        [0x06, 0x63, 0x02, 0x63, 0x03],
        [0x08, 0x63, 0x02, 0x80, 0x63, 0x03, 0x80], [0x00, 0x00, 0x01, 0x02], [0x04], [0x16, 0x20], [0x10, 0x04],
        [0x10, 0x09],
        [
            0x8C, 0x05, 0x04, 0x00, 0x12, 0x34, 0x56, 0x20, 0x01, 0xFE, 0xA2, 0xA3, 0xA4, 0xA5, 0xA6, 0xA7, 0xC0, 0xC1,
            0xC2, 0xC3, 0xC4, 0xC5, 0xC6, 0xC7, 0xFF, 0xFF, 0xAA, 0x99, 0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11,
            0x00, 0x00,
        ],
        [0x86], [0x8E, 0x90, 0x00], [0x8E, 0x6A, 0x82],
    ]

    /// A host frame: normal (LEN ≤ 255) or extended information frame around `D4 payload`.
    package static func frame(_ payload: [UInt8], extended: Bool) -> [UInt8] {
        let data = [0xD4] + payload
        let dcs = 0 &- data.reduce(0, &+)
        if extended || data.count > 255 {
            let m = UInt8(truncatingIfNeeded: data.count >> 8)
            let l = UInt8(truncatingIfNeeded: data.count)
            return [0x00, 0x00, 0xFF, 0xFF, 0xFF, m, l, 0 &- m &- l] + data + [dcs, 0x00]
        }
        return [0x00, 0x00, 0xFF, UInt8(data.count), 0 &- UInt8(data.count)] + data + [dcs, 0x00]
    }

    /// Input: chunks of `op byte` + argument. op % 8 in 0…3: `n` then `n` host bytes; 4: a
    /// reader comes (target mode); 5: present card `k`; 6: remove; 7: a finite poll's time is up.
    package static var pn532: FuzzTarget {
        let cards = ["ntag215-uri", "t4t-uri", "ultralight-c-text", "mifare-classic-1k", "ntag215-flaky"]
            .compactMap { tagFile($0) }.compactMap { try? PN532Card(tagFile: $0) }
        let script = PN532ReaderScript(steps: [
            .init(command: [0x00, 0xA4, 0x04, 0x00, 0x07, 0xD2, 0x76, 0x00, 0x00, 0x85, 0x01, 0x01, 0x00]),
            .init(command: [0x00, 0xB0, 0x00, 0x00, 0x0F]),
        ])
        let commands = pn532Commands
        return FuzzTarget(
            name: "pn532", feeds: "host frames at the virtual PN532 (libnfc's and nfcpy's commands, mutated)",
            seeds: [], maxInputBytes: 8192,
            generate: { rng in
                var host: [UInt8] = [0x55, 0x55, 0x00, 0x00, 0x00]  // nfcpy's wake-up
                for _ in 0..<Int.random(in: 1...16, using: &rng) {
                    var payload = commands.randomElement(using: &rng) ?? [0x02]
                    if Int.random(in: 0..<3, using: &rng) == 0 {
                        ByteMutator.mutateDeep(&payload, using: &rng, splice: commands, dictionary: [])
                    }
                    var f = frame(Array(payload.prefix(300)), extended: Int.random(in: 0..<16, using: &rng) == 0)
                    if Int.random(in: 0..<10, using: &rng) == 0 {  // a bad checksum, a cut, junk between frames
                        ByteMutator.mutate(
                            &f, using: &rng, splice: [PN532FrameEncoder.ack, [0x00, 0x00, 0xFF, 0xFF, 0x00]])
                    }
                    host += f
                    if Int.random(in: 0..<8, using: &rng) == 0 { host += PN532FrameEncoder.ack }
                }
                var input: [UInt8] = [5, UInt8.random(in: 0...255, using: &rng)]  // a card in the field
                var i = 0
                while i < host.count {
                    if Int.random(in: 0..<12, using: &rng) == 0 {
                        input +=
                            [[4, 0], [5, UInt8.random(in: 0...255, using: &rng)], [6, 0], [7, 0]]
                            .randomElement(using: &rng) ?? []
                    }
                    let n = min(host.count - i, Int.random(in: 1...255, using: &rng))
                    input += [0, UInt8(n)] + host[i..<(i + n)]
                    i += n
                }
                if Int.random(in: 0..<4, using: &rng) == 0 {
                    ByteMutator.mutateDeep(&input, using: &rng, splice: [], dictionary: [])
                }
                return input
            },
            run: { b in
                var chip = PN532Chip()
                var i = 0
                var answered = 0
                while i + 1 < b.count {
                    let op = b[i] % 8
                    let arg = b[i + 1]
                    i += 2
                    var out: [UInt8] = []
                    switch op {
                    case 0...3:
                        let n = min(Int(arg), b.count - i)
                        out = chip.receive(b[i..<(i + n)])
                        i += n
                    case 4: out = chip.startReader(script)
                    case 5: if !cards.isEmpty { out = chip.present(cards[Int(arg) % cards.count]) }
                    case 6: chip.remove()
                    default: if let poll = chip.finitePoll { out = chip.pollTimeElapsed(serial: poll.serial) }
                    }
                    _ = chip.takeAir()
                    answered += out.count
                    // A frame is at most 7 + 265 + 2 bytes; one ACK and one answer per command.
                    if out.count > 8 * 1024 { return .finding("\(out.count) bytes answered to \(b.count) bytes in") }
                }
                return .accepted(answered > 0 ? "answered" : "silent")
            })
    }

    // MARK: vpcd messages

    /// vpcd's framing: each message after its 2-byte big-endian length.
    package static func vpcdStream(_ list: [[UInt8]]) -> [UInt8] {
        list.flatMap { [UInt8(truncatingIfNeeded: $0.count >> 8), UInt8(truncatingIfNeeded: $0.count)] + $0 }
    }

    package static var vpcd: FuzzTarget {
        let personalities: [any VirtualCardPersonality] = [
            "t4t-uri", "t4t-v1-uri", "ntag215-uri", "ntag216-empty", "ultralight-c-text", "mifare-classic-1k",
            "ntag215-flaky",
        ].compactMap { tagFile($0) }.compactMap { try? $0.makeVirtualCardPersonality() }
        let messages: [[UInt8]] = [
            [0x04], [0x01], [0x02], [0x00], [0x05], [],
            [0x00, 0xA4, 0x04, 0x00, 0x07, 0xD2, 0x76, 0x00, 0x00, 0x85, 0x01, 0x01, 0x00],
            [0x00, 0xA4, 0x04, 0x00, 0x07, 0xD2, 0x76, 0x00, 0x00, 0x85, 0x01, 0x00],
            [0x00, 0xA4, 0x00, 0x0C, 0x02, 0xE1, 0x03],
            [0x00, 0xA4, 0x00, 0x0C, 0x02, 0xE1, 0x04], [0x00, 0xB0, 0x00, 0x00, 0x0F], [0x00, 0xB0, 0x00, 0x00, 0x02],
            [0x00, 0xB0, 0x00, 0x02, 0xFF], [0x00, 0xB0, 0x7F, 0xFF, 0x00], [0x00, 0xB0, 0x00, 0x00, 0x00, 0xFF, 0xFF],
            [0x00, 0xB1, 0x00, 0x00, 0x05, 0x54, 0x03, 0x00, 0x80, 0x00, 0x00],
            [0x00, 0xD6, 0x00, 0x00, 0x02, 0x00, 0x00],
            [0x00, 0xD6, 0x00, 0x02, 0x04, 0xD0, 0x00, 0x00, 0xFE], [0xFF, 0xCA, 0x00, 0x00, 0x00],
            [0xFF, 0xCA, 0x01, 0x00, 0x00],
            [0xFF, 0xB0, 0x00, 0x04, 0x10], [0xFF, 0xB0, 0x00, 0xFF, 0x10], [0xFF, 0xB0, 0x00, 0x00, 0x00],
            [0xFF, 0xD6, 0x00, 0x10, 0x04, 0x01, 0x02, 0x03, 0x04],
            [0xFF, 0xD6, 0x00, 0x04, 0x10] + [UInt8](repeating: 0xAA, count: 16),
            [0xFF, 0x82, 0x00, 0x00, 0x06, 1, 2, 3, 4, 5, 6],
            [0xFF, 0x86, 0x00, 0x00, 0x05, 0x01, 0x00, 0x04, 0x60, 0x00],
            [0xFF, 0xC2, 0x00, 0x01, 0x03, 0x95, 0x01, 0x30], [0xFF, 0x00, 0x00, 0x00, 0x02, 0x30, 0x04],
        ]
        return FuzzTarget(
            name: "vpcd", feeds: "vpcd protocol messages at the virtual card (control bytes and APDUs)",
            seeds: [], maxInputBytes: 4096,
            generate: { rng in
                var list: [[UInt8]] = [[0x04], [0x01]]
                for _ in 0..<Int.random(in: 1...24, using: &rng) {
                    var m = messages.randomElement(using: &rng) ?? [0x04]
                    if Int.random(in: 0..<3, using: &rng) == 0 {
                        ByteMutator.mutateDeep(&m, using: &rng, splice: messages, dictionary: [])
                    }
                    list.append(m)
                }
                var b = [UInt8.random(in: 0...255, using: &rng)] + vpcdStream(list)
                if Int.random(in: 0..<6, using: &rng) == 0 {  // lengths that lie, cut messages
                    ByteMutator.mutateDeep(&b, using: &rng, splice: [], dictionary: [])
                }
                return b
            },
            run: { b in
                guard let first = b.first, !personalities.isEmpty else { return .rejected("empty") }
                var card = personalities[Int(first) % personalities.count]
                var i = 1
                var replies = 0
                while i + 2 <= b.count {
                    let n = Int(b[i]) << 8 | Int(b[i + 1])
                    i += 2
                    guard i + n <= b.count else { return .accepted("cut message") }  // vpcd would wait for the rest
                    let body = Array(b[i..<(i + n)])
                    i += n
                    switch VirtualCard.reply(to: body, personality: &card) {
                    case .none: break
                    case .atr(let atr):
                        guard (1...33).contains(atr.count) else { return .finding("ATR of \(atr.count) bytes") }
                    case .response(let r):
                        guard (1...0xFFFF).contains(r.count) else { return .finding("answer of \(r.count) bytes") }
                        replies += 1
                    case .leftField: return .accepted("left the field")
                    }
                }
                return .accepted(replies > 0 ? "answered" : "controls only")
            })
    }

    // MARK: Type 2: a hostile tag

    /// A Type 2 tag whose memory is the fuzz input and that misbehaves now and then:
    /// answers READ short or long, NAKs, stays silent, answers GET_VERSION with anything.
    final class HostileType2Tag: Type2TagTransport {
        var memory: [UInt8]
        var rng: SplitMix64
        let odds: Int
        let version: Int
        var exchanges = 0

        init(_ b: [UInt8]) {
            let control = Array(b.prefix(4)) + [UInt8](repeating: 0, count: max(0, 4 - b.count))
            memory = Array(b.dropFirst(4).prefix(1024))
            if memory.count < 16 { memory += [UInt8](repeating: 0, count: 16 - memory.count) }
            rng = SplitMix64(seed: UInt64(control[2]) << 8 | UInt64(control[3]))
            odds = Int(control[0] % 16)  // 0: never misbehaves
            version = Int(control[1])
        }

        private func misbehaves() -> Bool { odds > 0 && Int.random(in: 0..<(odds * 4), using: &rng) == 0 }

        func read(page: UInt8) throws -> [UInt8] {
            exchanges += 1
            if misbehaves() {
                switch Int.random(in: 0..<5, using: &rng) {
                case 0: throw TagCommunicationError.nak(0)
                case 1: throw TagCommunicationError.noResponse
                case 2:
                    return (0..<Int.random(in: 0..<16, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
                case 3: return (0..<Int.random(in: 17..<40, using: &rng)).map { _ in 0xA5 }
                default: return (0..<16).map { _ in UInt8.random(in: 0...255, using: &rng) }
                }
            }
            // 16 bytes from `page`, rolling over past the end as tags do.
            let start = Int(page) * 4
            return (0..<16).map { memory[(start + $0) % memory.count] }
        }

        func write(page: UInt8, data: [UInt8]) throws {
            exchanges += 1
            if misbehaves() { throw TagCommunicationError.nak(0x5) }
            let at = Int(page) * 4
            guard data.count == 4, at + 4 <= memory.count else { throw TagCommunicationError.nak(0) }
            memory.replaceSubrange(at..<(at + 4), with: data)
        }

        func getVersion() throws -> [UInt8]? {
            switch version % 5 {
            case 0: return nil
            case 1: throw TagCommunicationError.nak(0)
            case 2: return [0x00, 0x04, 0x04, 0x02, 0x01, 0x00, 0x11, 0x03]  // NTAG215
            case 3: return (0..<(version % 12)).map { UInt8(truncatingIfNeeded: $0 &* 37) }
            default: return [0x00, 0x04, 0x03, 0x01, 0x01, 0x00, 0x0B, 0x03]  // Ultralight EV1
            }
        }

        func reactivate() throws {}
    }

    /// CC magic, NDEF/Lock/Memory Control TLV starts, Terminator, NULL, Proprietary.
    package static let type2Tokens: [[UInt8]] = [
        [0xE1, 0x10], [0x03, 0xFF], [0x01, 0x03], [0x02, 0x03], [0xFE], [0x00], [0xFD],
    ]
    /// TLVs with lengths on their edges (T2T 1.0 §2.3): NULL, Lock and Memory Control (L 3 or
    /// not), NDEF (short, 3-byte, zero, past the end), Proprietary, Terminator.
    package static let type2TLVs: [[UInt8]] = [
        [0x00], [0x01, 0x03, 0xA0, 0x10, 0x44], [0x01, 0x03, 0xFF, 0xFF, 0xFF], [0x01, 0x02, 0x00, 0x00],
        [0x02, 0x03, 0x40, 0x30, 0x03], [0x02, 0x03, 0xFF, 0x0F, 0xFF], [0x03, 0x00], [0x03, 0x05, 0xD0, 0x00, 0x00],
        [0x03, 0xFF, 0x00, 0x10], [0x03, 0xFF, 0xFF, 0xFF], [0x03, 0xFE], [0x03, 0xFF], [0xFD, 0x02, 0x01, 0x02],
        [0xFD, 0xFF, 0x07, 0xFF], [0xFE], [0x42, 0x01, 0x00],
    ]

    package static var type2Reader: FuzzTarget {
        let seeds = FuzzFileTargets.tagFiles.filter { !$0.file.pages.isEmpty }.map {
            [0, 0, 0, 0] + Array($0.file.pages.joined())
        }
        let message: [UInt8] = [0xD1, 0x01, 0x05, 0x54, 0x02, 0x65, 0x6E, 0x68, 0x69]
        return FuzzTarget(
            name: "type2-reader",
            feeds: "a hostile Type 2 tag's answers at the T2T procedures (CC, TLV lengths, lock bits, short reads)",
            seeds: seeds, dictionary: type2Tokens, maxInputBytes: 1028,
            generate: { rng in
                // A tag's lies where they matter: control bytes, the CC (page 3), and TLVs
                // with lengths on their edges from page 4 on.
                var b = seeds.randomElement(using: &rng) ?? [UInt8](repeating: 0, count: 68)
                for i in 0..<4 where Bool.random(using: &rng) { b[i] = UInt8.random(in: 0...255, using: &rng) }
                if b.count >= 4 + 16, Bool.random(using: &rng) {
                    let cc = 4 + 12
                    b[cc] = [0xE1, 0xE1, 0xE1, 0x00, 0xE2].randomElement(using: &rng) ?? 0xE1
                    b[cc + 1] = [0x10, 0x11, 0x1F, 0x20, 0x00].randomElement(using: &rng) ?? 0x10
                    b[cc + 2] =
                        [0x00, 0x01, 0x02, 0x06, 0x12, 0x3E, 0x6D, 0x7F, 0xFE, 0xFF].randomElement(using: &rng) ?? 0x12
                    b[cc + 3] = [0x00, 0x0F, 0xF0, 0xFF, 0x08].randomElement(using: &rng) ?? 0x00
                }
                if b.count >= 4 + 16 + 8 {
                    var tlvs: [UInt8] = []
                    for _ in 0..<Int.random(in: 0...4, using: &rng) {
                        tlvs += type2TLVs.randomElement(using: &rng) ?? []
                    }
                    let at = 4 + 16
                    let n = min(tlvs.count, b.count - at)
                    b.replaceSubrange(at..<(at + n), with: tlvs.prefix(n))
                }
                for _ in 0..<Int.random(in: 0...2, using: &rng) {
                    ByteMutator.mutateDeep(&b, using: &rng, splice: seeds, dictionary: type2Tokens)
                }
                return b
            },
            run: { b in
                let tag = HostileType2Tag(b)
                var reader = Type2TagReader(transport: tag)
                _ = try? reader.identify()
                let layout: Type2TagLayout
                do { layout = try reader.readLayout() } catch { return .rejected(errorKind(error)) }
                let dataArea = layout.capabilityContainer.dataAreaSize
                do {
                    let ndef = try reader.readNDEF()
                    if ndef.count > dataArea {
                        return .finding("NDEF of \(ndef.count) bytes from a \(dataArea)-byte data area")
                    }
                    let raw = try reader.readDataArea()
                    if raw.count != dataArea { return .finding("data area of \(raw.count) bytes, CC says \(dataArea)") }
                    _ = try reader.lockedPages()
                    try reader.writeNDEF(message)
                    if tag.exchanges > 2048 { return .finding("\(tag.exchanges) exchanges for one tag") }
                    return .accepted("read and written")
                } catch {
                    return .rejected(errorKind(error))
                }
            })
    }

    // MARK: Type 4: a hostile card

    /// A Type 4 card whose CC and NDEF files are the fuzz input and that lies now and then:
    /// status words, answers longer or shorter than asked, no SW at all, an endless file.
    final class HostileType4Card: APDUTransport {
        var files: [UInt16: [UInt8]] = [:]
        var selected: UInt16?
        var rng: SplitMix64
        let odds: Int
        let endless: Bool
        let version1Only: Bool
        var exchanges = 0
        /// More exchanges than any honest read needs: a reader that keeps asking is looping.
        static let exchangeLimit = 20_000

        init(_ b: [UInt8]) {
            let control = Array(b.prefix(4)) + [UInt8](repeating: 0, count: max(0, 4 - b.count))
            let rest = Array(b.dropFirst(4))
            let ccLength = min(Int(rest.first ?? 0), max(0, rest.count - 1))
            let cc = Array(rest.dropFirst().prefix(ccLength))
            files[0xE103] = cc
            let ndefID: UInt16 = cc.count >= 11 ? UInt16(cc[9]) << 8 | UInt16(cc[10]) : 0xE104
            files[ndefID] = Array(rest.dropFirst(1 + ccLength))
            rng = SplitMix64(seed: UInt64(control[2]) << 8 | UInt64(control[3]))
            odds = Int(control[0] % 16)
            endless = control[1] & 0x01 != 0
            version1Only = control[1] & 0x02 != 0
        }

        private func sw(_ a: UInt8, _ b: UInt8) -> [UInt8] { [a, b] }

        func transmit(_ c: [UInt8]) throws -> [UInt8] {
            exchanges += 1
            guard exchanges <= Self.exchangeLimit else { throw TagCommunicationError.readerFailure("exchange limit") }
            if odds > 0 && Int.random(in: 0..<(odds * 4), using: &rng) == 0 {
                switch Int.random(in: 0..<6, using: &rng) {
                case 0: return []
                case 1: return [0x90]
                case 2:
                    let words: [[UInt8]] = [
                        [0x6A, 0x82], [0x69, 0x82], [0x67, 0x00], [0x62, 0x82], [0x61, 0x10], [0x6C, 0x10],
                    ]
                    return words.randomElement(using: &rng) ?? [0x6F, 0x00]
                case 3:
                    return (0..<Int.random(in: 2...300, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng)
                    }
                default: break
                }
            }
            guard let apdu = try? CommandAPDU(bytes: c) else { return sw(0x67, 0x00) }
            let ins = apdu.ins
            let p1p2 = Int(apdu.p1) << 8 | Int(apdu.p2)
            let body = apdu.data
            switch ins {
            case 0xA4 where apdu.p1 == 0x04:
                let v1 = body == Type4TagReader<HostileType4Card>.ndefApplicationAIDVersion1
                return (v1 || (!version1Only && body == Type4TagReader<HostileType4Card>.ndefApplicationAID))
                    ? sw(0x90, 0x00) : sw(0x6A, 0x82)
            case 0xA4:
                guard body.count == 2 else { return sw(0x67, 0x00) }
                let id = UInt16(body[0]) << 8 | UInt16(body[1])
                guard files[id] != nil else { return sw(0x6A, 0x82) }
                selected = id
                return sw(0x90, 0x00)
            case 0xB0:
                guard let id = selected, let file = files[id] else { return sw(0x69, 0x86) }
                let le = apdu.le ?? 256
                let offset = p1p2 & 0x7FFF
                if endless && id != 0xE103 { return [UInt8](repeating: 0x11, count: le) + sw(0x90, 0x00) }
                guard offset < file.count else { return sw(0x6B, 0x00) }
                let data = Array(file[offset..<min(file.count, offset + le)])
                return data + (data.count < le ? sw(0x62, 0x82) : sw(0x90, 0x00))
            case 0xB1:
                // Offset in a 54 03 data object; answer 53 L data.
                guard body.count >= 5, body[0] == 0x54, body[1] == 0x03 else { return sw(0x6A, 0x80) }
                guard let id = selected, let file = files[id] else { return sw(0x69, 0x86) }
                let offset = Int(body[2]) << 16 | Int(body[3]) << 8 | Int(body[4])
                let le = max(0, (apdu.le ?? 256) - 3)
                let data =
                    endless
                    ? [UInt8](repeating: 0x22, count: min(le, 250))
                    : offset < file.count ? Array(file[offset..<min(file.count, offset + min(le, 250))]) : []
                let length: [UInt8] = data.count < 0x80 ? [UInt8(data.count)] : [0x81, UInt8(data.count)]
                return [0x53] + length + data + sw(0x90, 0x00)
            case 0xD6, 0xD7:
                guard let id = selected, var file = files[id] else { return sw(0x69, 0x86) }
                let offset = p1p2 & 0x7FFF
                if offset + body.count <= 1 << 20 {
                    if file.count < offset + body.count {
                        file += [UInt8](repeating: 0, count: offset + body.count - file.count)
                    }
                    file.replaceSubrange(offset..<(offset + body.count), with: body)
                    files[id] = file
                }
                return sw(0x90, 0x00)
            default:
                return sw(0x6D, 0x00)
            }
        }
    }

    package static let type4Tokens: [[UInt8]] = [
        [0x00, 0x0F], [0x00, 0x11], [0xFF, 0xFF], [0x04, 0x06], [0x06, 0x08], [0xE1, 0x04], [0xE1, 0x03],
        [0xFF, 0xFF, 0xFF, 0xFE], [0x7F, 0xFF], [0x30], [0x10], [0x20],
    ]
    /// CC fields (offset in the CC file) and values on their edges (T4T 2.0 §5.1, 3.0 §4.7).
    package static let type4CCEdges: [(Int, [[UInt8]])] = [
        (0, [[0x00, 0x0F], [0x00, 0x0E], [0x00, 0x11], [0xFF, 0xFF], [0x00, 0x00]]),  // CCLEN
        (2, [[0x10], [0x20], [0x30], [0x00], [0x40], [0xFF], [0x2F]]),  // mapping version
        (3, [[0x00, 0x00], [0x00, 0x01], [0x00, 0x0E], [0x00, 0x0F], [0x00, 0xFF], [0x01, 0x00], [0xFF, 0xFF]]),  // MLe
        (5, [[0x00, 0x00], [0x00, 0x01], [0x00, 0x08], [0xFF, 0xFF]]),  // MLc
        (7, [[0x04, 0x06], [0x06, 0x08], [0x04, 0x08], [0x06, 0x06], [0x05, 0x06], [0x04, 0xFF]]),  // TLV T, L
        (9, [[0xE1, 0x04], [0xE1, 0x03], [0x00, 0x00], [0xFF, 0xFF], [0x3F, 0x00], [0x00, 0x01]]),  // file id
        (11, [[0x00, 0x00], [0x00, 0x05], [0x7F, 0xFF], [0xFF, 0xFE], [0xFF, 0xFF]]),  // max size (NDEF TLV)
        (11, [[0xFF, 0xFF, 0xFF, 0xFE], [0x00, 0x00, 0xFF, 0xFF], [0x7F, 0xFF, 0xFF, 0xFF]]),  // max size (ENDEF TLV)
        (13, [[0x00, 0x00], [0x00, 0xFF], [0x80, 0x00], [0xFF, 0x00]]),  // access (NDEF TLV)
        (15, [[0x00, 0x00], [0x00, 0xFF], [0xFF, 0xFF]]),  // access (ENDEF TLV)
    ]
    /// NLEN and ENLEN values on their edges.
    package static let type4LengthEdges: [[UInt8]] = [
        [0x00, 0x00], [0x00, 0x01], [0x7F, 0xFF], [0x80, 0x00], [0xFF, 0xFD], [0xFF, 0xFE], [0xFF, 0xFF],
        [0x00, 0x00, 0xFF, 0xFF], [0x00, 0x01, 0x00, 0x00], [0x7F, 0xFF, 0xFF, 0xFF], [0xFF, 0xFF, 0xFF, 0xFA],
        [0xFF, 0xFF, 0xFF, 0xFF],
    ]

    package static var type4Reader: FuzzTarget {
        var seeds: [[UInt8]] = []
        for (_, f) in FuzzFileTargets.tagFiles {
            guard let t4 = f.type4 else { continue }
            let version: UInt8 =
                t4.mappingVersion.hasPrefix("3") ? 0x30 : t4.mappingVersion.hasPrefix("1") ? 0x10 : 0x20
            guard
                let cc = try? Type4CapabilityContainer(
                    mappingVersion: version, ndefFileID: 0xE104, maximumNDEFFileSize: t4.maximumNDEFFileSize,
                    writeAccess: t4.readOnly ? 0xFF : 0x00, extendedFile: t4.lengthFieldSize == 4)
            else { continue }
            let file = t4.ndefFile.count > 4096 ? Array(t4.ndefFile.prefix(4096)) : t4.ndefFile
            seeds.append([0, 0, 0, 0, UInt8(cc.bytes.count)] + cc.bytes + file)
        }
        let message: [UInt8] = [0xD1, 0x01, 0x05, 0x54, 0x02, 0x65, 0x6E, 0x68, 0x69]
        let seedList = seeds
        let tokens = type4Tokens
        return FuzzTarget(
            name: "type4-reader",
            feeds:
                "a hostile Type 4 card's answers at the T4T procedures (CC, NLEN/ENLEN, status words, short and long reads)",
            seeds: seeds,
            dictionary: tokens, maxInputBytes: 8192,
            generate: { rng in
                // A card's lies where they matter: the control bytes (misbehaviour odds, an
                // endless file, 1.0 only), CC fields on their edges, NLEN/ENLEN on theirs.
                var b = seedList.randomElement(using: &rng) ?? [0, 0, 0, 0, 0]
                for i in 0..<4 where Bool.random(using: &rng) { b[i] = UInt8.random(in: 0...255, using: &rng) }
                let cc = 5
                let ccLength = Int(b[4])
                for _ in 0..<Int.random(in: 0...3, using: &rng) where ccLength >= 15 {
                    let (offset, values) = type4CCEdges.randomElement(using: &rng) ?? (0, [[0]])
                    let v = values.randomElement(using: &rng) ?? []
                    if offset + v.count <= ccLength {
                        b.replaceSubrange((cc + offset)..<(cc + offset + v.count), with: v)
                    }
                }
                let file = cc + ccLength
                if Bool.random(using: &rng), file + 4 <= b.count {
                    let v = type4LengthEdges.randomElement(using: &rng) ?? [0, 0]
                    b.replaceSubrange(file..<(file + v.count), with: v)
                }
                for _ in 0..<Int.random(in: 0...2, using: &rng) {
                    ByteMutator.mutateDeep(&b, using: &rng, splice: seedList, dictionary: tokens)
                }
                return b
            },
            run: { b in
                let card = HostileType4Card(b)
                let reader = Type4TagReader(transport: card, allowsExtendedLength: b.count > 2 && b[2] & 1 != 0)
                do {
                    let detection = try reader.detectApplication()
                    let cc = detection.capabilityContainer
                    let ndef = try reader.readNDEF(detection: detection)
                    if ndef.count > cc.maximumNDEFMessageSize {
                        return .finding("NDEF of \(ndef.count) bytes; the CC allows \(cc.maximumNDEFMessageSize)")
                    }
                    _ = try reader.maximumNDEFMessageSize()
                    try reader.writeNDEF(message, detection: detection)
                    return .accepted("read and written")
                } catch {
                    if card.exchanges > HostileType4Card.exchangeLimit {
                        return .finding("the reader kept asking: over \(HostileType4Card.exchangeLimit) exchanges")
                    }
                    return .rejected(errorKind(error))
                }
            })
    }
}
