import NFCBenchTestSupport
import NFCTags
import Testing

/// The rule every device plays a tag file's faults by (`hardware/tags/FORMAT.md`, Faults):
/// each fires at most once per load of the file; a tag pulled from the field comes back
/// whole, its memory as it left; a presentation's own faults belong to that presentation.
@Suite("Faults fire once per load of the tag file")
struct FaultRuleTests {
    static let lostAtPage8 = TagFault(.pageRead(8), kind: .tagLost)

    @Test("FaultPlan: a fired fault stays spent on the next presentation, an unfired one stays armed")
    func planAcrossPresentations() {
        var plan = FaultPlan([Self.lostAtPage8, TagFault(.firstWrite, kind: .noAnswer)])
        #expect(plan.check(type2: [0x30, 0x04]) == nil)
        #expect(plan.check(type2: [0x30, 0x08]) == .tagLost)
        #expect(plan.firedTagFaults == [Self.lostAtPage8])
        plan.enterField()
        #expect(plan.check(type2: [0x30, 0x08]) == nil, "page 8 reads the second time")
        #expect(plan.check(type2: [0xA2, 0x04, 0, 0, 0, 0]) == .noAnswer, "the write fault waited for its write")
        plan.enterField()
        #expect(plan.check(type2: [0xA2, 0x04, 0, 0, 0, 0]) == nil)
        #expect(plan.isSpent)
    }

    @Test("A presentation's own faults are dropped when the next presentation brings its own")
    func presentationFaults() {
        var plan = FaultPlan([], presentation: [TagFault(.afterCCRead, kind: .tagLost)])
        plan.enterField()
        #expect(plan.check(type2: [0x30, 0x00]) == nil)
        #expect(plan.check(type2: [0x30, 0x04]) == nil, "not this presentation's fault any more")
        plan.enterField(adding: [Self.lostAtPage8])
        #expect(plan.check(type2: [0x30, 0x08]) == .tagLost)
    }

    @Test("The CC-read trigger starts afresh with each presentation, as the reader's procedure does")
    func triggerStatePerPresentation() {
        var plan = FaultPlan([TagFault(.afterCCRead, kind: .noAnswer)])
        #expect(plan.check(type2: [0x30, 0x00]) == nil, "reads the CC")
        plan.enterField()
        #expect(plan.check(type2: [0x30, 0x10]) == nil, "no CC read in this presentation yet")
        #expect(plan.check(type2: [0x30, 0x00]) == nil)
        #expect(plan.check(type2: [0x30, 0x04]) == .noAnswer)
    }

    @Test("FaultyType2Core: tag_lost leaves; entering the field again it is back, its writes kept, the fault spent")
    func type2Core() throws {
        var pages = [[UInt8]](repeating: [0, 0, 0, 0], count: 135)
        pages[0] = [0x04, 0xA1, 0xB2, 0x88 ^ 0x04 ^ 0xA1 ^ 0xB2]
        pages[1] = [0xC3, 0xD4, 0xE5, 0xF6]
        pages[2] = [0xC3 ^ 0xD4 ^ 0xE5 ^ 0xF6, 0x48, 0, 0]
        pages[3] = [0xE1, 0x10, 0x3E, 0x00]
        pages[131] = [0x04, 0x00, 0x00, 0xFF]
        var card = FaultyType2Core(core: try NTAG21xCore(variant: .ntag215, pages: pages), faults: [Self.lostAtPage8])
        card.wakeUp()
        #expect(card.respond(to: [0xA2, 0x05, 1, 2, 3, 4]) == .ack)
        #expect(card.respond(to: [0x30, 0x08]) == .silent)
        #expect(card.isGone)
        #expect(card.respond(to: [0x30, 0x04]) == .silent, "gone: nothing answers")
        card.enterField()
        #expect(!card.isGone)
        let d = try #require(
            matched { if case .data(let d) = card.respond(to: [0x30, 0x04]) { d } else { nil } },
            "no answer after entering the field again")
        #expect(Array(d[4..<8]) == [1, 2, 3, 4], "the write before the loss is on the tag")
        if case .data = card.respond(to: [0x30, 0x08]) {} else { Issue.record("page 8 must read now") }
    }
}

/// The in-memory field (`sim:` and the conformance reader): a key presented again is the same
/// tag, another key another copy of the file.
@Suite("EmulatedField presents the same tag again by key")
struct EmulatedFieldFaultRuleTests {
    static func flakyFile() throws -> TagFile {
        var pages = [[UInt8]](repeating: [0, 0, 0, 0], count: 135)
        pages[0] = [0x04, 0xA1, 0xB2, 0x88 ^ 0x04 ^ 0xA1 ^ 0xB2]
        pages[1] = [0xC3, 0xD4, 0xE5, 0xF6]
        pages[2] = [0xC3 ^ 0xD4 ^ 0xE5 ^ 0xF6, 0x48, 0, 0]
        pages[3] = [0xE1, 0x10, 0x3E, 0x00]
        pages[4] = [0x03, 0x00, 0xFE, 0x00]
        pages[131] = [0x04, 0x00, 0x00, 0xFF]
        var file = TagFile(
            type: .ntag215,
            activation: try ISO14443AActivation(
                uid: [0x04, 0xA1, 0xB2, 0xC3, 0xD4, 0xE5, 0xF6], atqa: [0x44, 0x00], sak: 0), pages: pages)
        file.faults = [FaultRuleTests.lostAtPage8]
        return file
    }

    static func readPage8(_ field: EmulatedField) throws -> [UInt8] {
        let targets = try field.sense([.iso14443A], timeout: nil)
        guard let target = targets.first else { throw TagCommunicationError.tagLost }
        guard case .type2(let t) = try field.connect(target, as: .type2) else {
            throw TagCommunicationError.noResponse
        }
        try t.write(page: 5, data: [9, 9, 9, 9])
        return try t.read(page: 8)
    }

    @Test("Lost while page 8 is read; the same key presented again reads, with the write kept; another key fails anew")
    func sameKeyAgain() throws {
        let file = try Self.flakyFile()
        let field = EmulatedField(name: "t")
        let fresh = try EmulatedTag(file: file)
        field.present([(key: "flaky/A", name: "A", tag: fresh, faults: [])])
        #expect(throws: TagCommunicationError.tagLost) { try Self.readPage8(field) }
        #expect(try field.sense([.iso14443A], timeout: nil).isEmpty, "gone from the field")
        field.present([(key: "flaky/A", name: "A", tag: fresh, faults: [])])
        #expect(try Self.readPage8(field).count == 16, "the fault is spent for this tag")
        #expect(field.type2Core("A")?.pages[5] == [9, 9, 9, 9])
        field.remove(["A"])
        field.present([(key: "flaky/B", name: "B", tag: fresh, faults: [])])
        #expect(throws: TagCommunicationError.tagLost) { try Self.readPage8(field) }
    }
}
