import NFCBase
import NFCBenchFuzz
import Testing

/// The fuzzing library without a process (NFCBenchFuzz): the CLI's bench fuzz and ndef-fuzz
/// are tables and printing over it.
@Suite("NFCBenchFuzz in process: seeds accepted, mutations seeded, the NDEF round trip")
struct FuzzLibraryTests {
    @Test("Every seed of the file targets is accepted as it is: no finding, no refusal")
    func seedsAccepted() {
        for t in [FuzzFileTargets.ndef, FuzzFileTargets.tagJSON, FuzzFileTargets.scenario, FuzzFileTargets.profile] {
            #expect(!t.seeds.isEmpty, "\(t.name) has seeds (bench data found)")
            for (i, seed) in t.seeds.enumerated() {
                switch t.run(seed) {
                case .accepted: continue
                case .rejected(let why): Issue.record("\(t.name) seed \(i) rejected: \(why)")
                case .finding(let what): Issue.record("\(t.name) seed \(i) finding: \(what)")
                }
            }
        }
    }

    @Test("A mutation is a function of the seed: the same seed, the same bytes; another seed, others")
    func mutationsSeeded() {
        let seed: [UInt8] = Array(0..<64)
        func mutated(_ s: UInt64) -> [UInt8] {
            var rng = SplitMix64(seed: s)
            var b = seed
            ByteMutator.mutate(&b, using: &rng, splice: [[0xFF, 0xFE]])
            return b
        }
        #expect(mutated(1) == mutated(1))
        #expect((2...9).contains { mutated($0) != mutated(1) })
    }

    @Test("ndef-fuzz: 2,000 mutated messages, no round-trip failure, every one counted")
    func ndefRoundTrip() {
        let r = runNDEFFuzz(seed: 1, count: 2000) { _ in }
        #expect(r.messages == 2000)
        #expect(r.roundTripFailures == 0, "\(r.roundTripExamples)")
        #expect(r.parsed + r.rejected.values.reduce(0, +) == r.messages)
    }
}
