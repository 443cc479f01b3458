package import NFCBase

/// The seeded mutations of `bench ndef-fuzz` and `bench fuzz`: what a stranger's file, a
/// hostile card or a rogue host could hand the tool, made from valid inputs.
package enum ByteMutator {
    /// One mutation, `bench ndef-fuzz`'s own (kept as it was, so its runs reproduce): bit
    /// flip, byte insert, byte delete, length-field edit (a byte among the first 8 set to
    /// 00, 01, FF or ±1), truncation, or a splice with a suffix of another `splice` input.
    package static func mutate(_ b: inout [UInt8], using rng: inout SplitMix64, splice: [[UInt8]]) {
        switch Int.random(in: 0..<6, using: &rng) {
        case 0 where !b.isEmpty:  // bit flip
            let i = Int.random(in: 0..<b.count, using: &rng)
            b[i] ^= 1 << UInt8.random(in: 0..<8, using: &rng)
        case 1:  // byte insert
            b.insert(UInt8.random(in: 0...255, using: &rng), at: Int.random(in: 0...b.count, using: &rng))
        case 2 where !b.isEmpty:  // byte delete
            b.remove(at: Int.random(in: 0..<b.count, using: &rng))
        case 3 where b.count > 3:  // length-field edit: TYPE_LENGTH / PAYLOAD_LENGTH / ID_LENGTH slots
            let i = Int.random(in: 1..<min(b.count, 8), using: &rng)
            let edits: [UInt8] = [0, 1, 0xFF, b[i] &+ 1, b[i] &- 1]
            b[i] = edits[Int.random(in: 0..<edits.count, using: &rng)]
        case 4 where !b.isEmpty:  // truncation
            b.removeLast(Int.random(in: 1...b.count, using: &rng))
        default:  // splice: a prefix of this input and a suffix of another seed
            guard let other = splice.randomElement(using: &rng) else { return }
            let cut = Int.random(in: 0...b.count, using: &rng)
            let from = Int.random(in: 0...other.count, using: &rng)
            b = Array(b[..<cut]) + other[from...]
        }
    }

    /// Values that sit on the edges of length and count fields.
    package static let interesting: [UInt8] = [0x00, 0x01, 0x02, 0x03, 0x0F, 0x10, 0x7F, 0x80, 0xFE, 0xFF]

    /// One mutation of `bench fuzz`: the six above anywhere in the input (not only its first
    /// bytes), an interesting byte (00, 01, 7F, 80, FF…) written anywhere, a 2-byte field set
    /// to 0000/0001/7FFF/8000/FFFE/FFFF, a run of bytes duplicated or deleted, or a token of
    /// `dictionary` (JSON punctuation, field names, extreme numbers) inserted or written over
    /// bytes. `dictionary` steers text formats past their syntax check.
    package static func mutateDeep(
        _ b: inout [UInt8], using rng: inout SplitMix64, splice: [[UInt8]], dictionary: [[UInt8]]
    ) {
        switch Int.random(in: 0..<12, using: &rng) {
        case 0...5:
            mutate(&b, using: &rng, splice: splice)
        case 6 where !b.isEmpty:  // an interesting byte anywhere
            b[Int.random(in: 0..<b.count, using: &rng)] = interesting.randomElement(using: &rng) ?? 0
        case 7 where b.count > 1:  // a 16-bit field on an edge, either byte order
            let i = Int.random(in: 0..<(b.count - 1), using: &rng)
            let v = [0x0000, 0x0001, 0x7FFF, 0x8000, 0xFFFE, 0xFFFF].randomElement(using: &rng) ?? 0
            let bigEndian = Bool.random(using: &rng)
            b[i] = UInt8(truncatingIfNeeded: bigEndian ? v >> 8 : v)
            b[i + 1] = UInt8(truncatingIfNeeded: bigEndian ? v : v >> 8)
        case 8 where !b.isEmpty:  // duplicate a run
            let start = Int.random(in: 0..<b.count, using: &rng)
            let n = Int.random(in: 1...min(64, b.count - start), using: &rng)
            let at = Int.random(in: 0...b.count, using: &rng)
            b.insert(contentsOf: b[start..<(start + n)], at: at)
        case 9 where b.count > 1:  // delete a run
            let start = Int.random(in: 0..<b.count, using: &rng)
            b.removeSubrange(start..<(start + Int.random(in: 1...min(64, b.count - start), using: &rng)))
        case 10, 11:  // a dictionary token, inserted or written over
            guard let token = dictionary.randomElement(using: &rng) else {
                mutate(&b, using: &rng, splice: splice)
                return
            }
            let at = Int.random(in: 0...b.count, using: &rng)
            if Bool.random(using: &rng) || at + token.count > b.count {
                b.insert(contentsOf: token, at: at)
            } else {
                b.replaceSubrange(at..<(at + token.count), with: token)
            }
        default:
            mutate(&b, using: &rng, splice: splice)
        }
    }
}
