// A scriptor-shaped APDU script (pcsc-tools' scriptor(1)): one command APDU a line in hex,
// `#` starts a comment, `reset` re-activates the card, blank lines are skipped. And the
// exchange of one APDU as a person at a bench wants it: 61 xx answered with GET RESPONSE,
// 6C xx with the command again with Le = xx (ISO/IEC 7816-3 §12.2.2 / 7816-4 §5.1.3), each
// step shown.

/// A script's mistake: the line and what is wrong with it.
public struct APDUScriptError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The 1-based line number.
    public var line: Int
    public var reason: String
    public init(line: Int, _ reason: String) {
        self.line = line
        self.reason = reason
    }
    public var description: String { "line \(line): \(reason)" }
}

/// One step of an APDU script.
public enum APDUScriptStep: Sendable, Hashable {
    /// A command APDU (bytes as written), from this 1-based line.
    case apdu([UInt8], line: Int)
    /// `reset`: the card is activated again (a PC/SC reconnect with reset, a WUPA and select).
    case reset(line: Int)
}

public enum APDUScript {
    /// The steps of `text`. Throws on a line that is neither hex, `reset`, a comment nor blank,
    /// and on hex that is no command APDU (ISO/IEC 7816-4 §5.1: a 4-byte header and lengths
    /// that add up).
    public static func parse(_ text: String) throws(APDUScriptError) -> [APDUScriptStep] {
        var steps: [APDUScriptStep] = []
        for (i, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            var line = raw[...]
            if let hash = line.firstIndex(of: "#") { line = line[..<hash] }
            let trimmed = line.trimmingSpaces()
            if trimmed.isEmpty { continue }
            if trimmed.lowercased() == "reset" {
                steps.append(.reset(line: i + 1))
                continue
            }
            steps.append(.apdu(try command(trimmed, line: i + 1), line: i + 1))
        }
        return steps
    }

    /// `text` (hex, spaces allowed) as a command APDU's bytes, checked.
    public static func command(_ text: some StringProtocol, line: Int = 1) throws(APDUScriptError) -> [UInt8] {
        guard let bytes = [UInt8](hex: text) else {
            throw APDUScriptError(line: line, "'\(text)' is not hex bytes (two digits a byte, spaces allowed)")
        }
        do { _ = try CommandAPDU(bytes: bytes) } catch {
            throw APDUScriptError(
                line: line, "'\(bytes.hexString(separator: " "))' is no command APDU: \(error.reason)")
        }
        return bytes
    }

    /// Whether `command` can change a card, so that sending it needs the user's leave
    /// (`--allow-write`), and why: ISO/IEC 7816-4 writing instructions (UPDATE/WRITE/ERASE
    /// BINARY, UPDATE/WRITE/APPEND RECORD, PUT DATA, CREATE/DELETE FILE, ACTIVATE/DEACTIVATE/
    /// TERMINATE), PC/SC part 3 UPDATE BINARY `FF D6`, and the readers' transparent exchanges
    /// (`FF C2` PC/SC 2.02, `FF 00` ACR122U direct transmit), which may carry any frame.
    public static func changesCard(_ command: [UInt8]) -> String? {
        guard command.count >= 2 else { return nil }
        let cla = command[0]
        let ins = command[1]
        if cla == 0xFF {
            switch ins {
            case 0xD6: return "PC/SC UPDATE BINARY (FF D6) writes the card's memory"
            case 0xC2: return "a PC/SC transparent exchange (FF C2) may carry any frame, writes too"
            case 0x00: return "a reader's direct transmit (FF 00) may carry any frame, writes too"
            default: return nil
            }
        }
        let writing: [UInt8: String] = [
            0xD6: "UPDATE BINARY", 0xD7: "UPDATE BINARY", 0xD0: "WRITE BINARY", 0xD1: "WRITE BINARY",
            0x0E: "ERASE BINARY", 0x0F: "ERASE BINARY", 0xDC: "UPDATE RECORD", 0xDD: "UPDATE RECORD",
            0xD2: "WRITE RECORD", 0xE2: "APPEND RECORD", 0xDA: "PUT DATA", 0xDB: "PUT DATA",
            0xE0: "CREATE FILE", 0xE4: "DELETE FILE", 0x44: "ACTIVATE FILE", 0x04: "DEACTIVATE FILE",
            0xE6: "TERMINATE DF", 0xE8: "TERMINATE EF", 0xFE: "TERMINATE CARD USAGE",
        ]
        return writing[ins].map { "\($0) (INS \([ins].hexString())) changes the card" }
    }
}

/// One APDU as sent and answered, with the GET RESPONSE and Le retries it took.
public struct APDUExchange: Sendable, Hashable {
    /// One command and its response, as they went over the wire.
    public struct Step: Sendable, Hashable {
        public var command: [UInt8]
        public var response: [UInt8]
        /// Why this step was sent: `nil` for the command as given, else "GET RESPONSE (61 xx)"
        /// or "again with Le = xx (6C xx)".
        public var reason: String?
    }
    /// Every command sent, in order, the first being the one given.
    public var steps: [Step]
    /// The whole answer: the data of every step joined (GET RESPONSE chains), then the last
    /// status word.
    public var response: [UInt8]

    /// The last status word.
    public var statusWord: StatusWord? {
        guard response.count >= 2 else { return nil }
        return StatusWord(sw1: response[response.count - 2], sw2: response[response.count - 1])
    }
}

extension APDUExchange {
    /// Sends `command` with `transmit` and follows the card's length hints: `61 xx` is
    /// answered with GET RESPONSE (`CLA C0 00 00 xx`, the command's class) until the card
    /// stops asking (at most `limit` times), `6C xx` with the command again with Le = `xx`
    /// (once). Throws what `transmit` throws, and ``/NFCBase/TagCommunicationError/malformedResponse(_:)``
    /// for an answer shorter than a status word.
    public static func run(
        _ command: [UInt8], limit: Int = 32, _ transmit: ([UInt8]) throws -> [UInt8]
    ) throws -> APDUExchange {
        var steps: [Step] = []
        var data: [UInt8] = []
        var next = command
        var reason: String? = nil
        var retriedLe = false
        while true {
            let r = try transmit(next)
            steps.append(Step(command: next, response: r, reason: reason))
            guard r.count >= 2 else {
                throw TagCommunicationError.malformedResponse("an answer of \(r.count) bytes, no status word")
            }
            let sw1 = r[r.count - 2]
            let sw2 = r[r.count - 1]
            if sw1 == 0x6C, !retriedLe, let again = withLe(command, sw2) {
                retriedLe = true
                next = again
                reason = "again with Le = \([sw2].hexString()) (6C \([sw2].hexString()))"
                continue
            }
            data += r.dropLast(2)
            if sw1 == 0x61, steps.count <= limit {
                // Interindustry class: the command's logical channel kept; else the basic class.
                next = [command[0] & 0x80 == 0 ? command[0] & 0x03 : 0x00, 0xC0, 0x00, 0x00, sw2]
                reason = "GET RESPONSE (61 \([sw2].hexString()))"
                continue
            }
            return APDUExchange(steps: steps, response: data + [sw1, sw2])
        }
    }

    /// `command` with its short Le set to `le` (added for case 1 and 3); nil for an extended one.
    static func withLe(_ command: [UInt8], _ le: UInt8) -> [UInt8]? {
        guard let c = try? CommandAPDU(bytes: command), !c.isExtended else { return nil }
        switch c.apduCase {
        case .case1, .case3Short: return command + [le]
        case .case2Short, .case4Short: return command.dropLast() + [le]
        default: return nil
        }
    }
}

extension Substring {
    fileprivate func trimmingSpaces() -> Substring {
        var s = self
        while let f = s.first, f == " " || f == "\t" || f == "\r" { s.removeFirst() }
        while let l = s.last, l == " " || l == "\t" || l == "\r" { s.removeLast() }
        return s
    }
}
