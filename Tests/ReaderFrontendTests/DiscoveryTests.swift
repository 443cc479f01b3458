import NFCBenchTestSupport
import NFCTags
import ReaderFrontend
import ReaderSession
import Testing

@Suite("Target classification: SAK rules in their stated order, then ATR rules")
struct ClassificationTests {
    @Test(
        "SAK: ISO-DEP first (b6), then MIFARE Classic/Mini and Plus SL2 (AN10833), then NFC Forum Digital",
        arguments: [
            (0x00, TargetFamily.type2), (0x04, .type2), (0x20, .isoDEP), (0x28, .isoDEP), (0x38, .isoDEP),
            (0x08, .mifareClassic), (0x09, .mifareClassic), (0x18, .mifareClassic), (0x88, .mifareClassic),
            (0x10, .mifarePlusSL2), (0x11, .mifarePlusSL2), (0x40, .nfcDEP), (0x60, .isoDEP),
        ] as [(Int, TargetFamily)])
    func sak(_ sak: Int, _ family: TargetFamily) {
        let c = TargetClassification.classify(SensedTarget(presentation: 1, uid: [1, 2, 3, 4], sak: UInt8(sak)))
        #expect(c.family == family, "\(c.rule)")
        #expect(!c.source.isEmpty)
    }

    @Test("ATR (PC/SC part 3): Ultralight family → Type 2, Classic 1K → MIFARE Classic, 14443-4 → ISO-DEP")
    func atr() throws {
        let ul = ATR.storageCard(standard: .iso14443APart3, cardName: .mifareUltralight).bytes
        let classic = ATR.storageCard(standard: .iso14443APart3, cardName: .mifareClassic1K).bytes
        let dep = try ATR.iso14443_4(historicalBytes: [0x80]).bytes
        #expect(TargetClassification.classify(SensedTarget(presentation: 1, uid: [], atr: ul)).family == .type2)
        #expect(
            TargetClassification.classify(SensedTarget(presentation: 1, uid: [], atr: classic)).family
                == .mifareClassic)
        #expect(TargetClassification.classify(SensedTarget(presentation: 1, uid: [], atr: dep)).family == .isoDEP)
        #expect(TargetClassification.classify(SensedTarget(presentation: 1, uid: [], atr: [0x3B])).family == .other)
    }

    @Test("Type B is ISO-DEP, FeliCa is FeliCa, whatever else they carry")
    func technologies() {
        #expect(
            TargetClassification.classify(SensedTarget(presentation: 1, technology: .iso14443B, uid: [])).family
                == .isoDEP)
        #expect(
            TargetClassification.classify(SensedTarget(presentation: 1, technology: .felica, uid: [])).family == .felica
        )
    }
}

@Suite("DiscoveryMachine: ids per presentation, loss, restart, stale ids")
struct DiscoveryMachineTests {
    let a = SensedTarget(presentation: 10, uid: [1, 2, 3, 4], atqa: [0x44, 0x00], sak: 0x00)
    let b = SensedTarget(presentation: 11, uid: [5, 6, 7, 8], atqa: [0x44, 0x03], sak: 0x20)

    @Test("Nothing is reported while polling is off; polling starts afresh")
    func pollingOff() throws {
        var m = DiscoveryMachine()
        #expect(m.sensed([a]).isEmpty)
        m.pollingStarted()
        let found = try #require(
            matched { if case .report(.detected(let found))? = m.sensed([a]).first { found } else { nil } },
            "no detection")
        #expect(found.map(\.id) == [DetectedTargetID(1)])
        #expect(found[0].kind == .type2)
        m.pollingStopped()
        #expect(m.targets.isEmpty)
        m.pollingStarted()
        let again = try #require(
            matched { if case .report(.detected(let again))? = m.sensed([a]).first { again } else { nil } },
            "no detection after polling started again")
        #expect(again.map(\.id) == [DetectedTargetID(2)], "a new session discovers its own tags")
    }

    @Test("Targets sensed together are detected together; the same presentation is reported once")
    func together() throws {
        var m = DiscoveryMachine()
        m.pollingStarted()
        let first = m.sensed([a, b])
        #expect(first.count == 1)
        let found = try #require(
            matched { if case .report(.detected(let found))? = first.first { found } else { nil } }, "no detection")
        #expect(found.map(\.kind) == [.type2, .type4])
        #expect(m.sensed([a, b]).isEmpty)
    }

    @Test("A presentation missing from a sensing is lost; coming back is a new target")
    func lostAndBack() throws {
        var m = DiscoveryMachine()
        m.pollingStarted()
        _ = m.sensed([a])
        #expect(m.sensed([]) == [.report(.lost(DetectedTargetID(1)))])
        #expect(m.target(DetectedTargetID(1)) == nil)
        var back = a
        back.presentation = 12
        let found = try #require(
            matched { if case .report(.detected(let found))? = m.sensed([back]).first { found } else { nil } },
            "no detection")
        #expect(found.map(\.id) == [DetectedTargetID(2)])
    }

    @Test("restartPolling re-activates every target, then reports it under a new id; the old id is stale")
    func restart() throws {
        var m = DiscoveryMachine()
        m.pollingStarted()
        _ = m.sensed([a, b])
        #expect(m.restartRequested() == [.reactivate([a, b])])
        let actions = m.reactivated([a, b], failed: [b.presentation])
        #expect(actions.first == .report(.lost(DetectedTargetID(2))), "a target that left during restart is lost")
        let again = try #require(
            matched { if case .report(.detected(let again))? = actions.last { again } else { nil } }, "no re-detection")
        #expect(again.map(\.id) == [DetectedTargetID(3)])
        #expect(m.target(DetectedTargetID(1)) == nil)
        #expect(m.target(DetectedTargetID(3))?.sensed == a)
    }

    @Test("A transport that saw the tag leave asks for a presence check; a stale id does not")
    func exchangeLoss() {
        var m = DiscoveryMachine()
        m.pollingStarted()
        _ = m.sensed([a])
        #expect(m.exchangeEnded(DetectedTargetID(1), tagLost: false).isEmpty)
        #expect(m.exchangeEnded(DetectedTargetID(1), tagLost: true) == [.checkPresence])
        #expect(m.exchangeEnded(DetectedTargetID(9), tagLost: true).isEmpty)
    }

    @Test("A MIFARE Classic card (SAK 08) is reported as kind other, family mifareClassic")
    func classic() throws {
        var m = DiscoveryMachine()
        m.pollingStarted()
        let c = SensedTarget(presentation: 1, uid: [1, 2, 3, 4], atqa: [0x04, 0x00], sak: 0x08)
        let found = try #require(
            matched { if case .report(.detected(let found))? = m.sensed([c]).first { found } else { nil } },
            "no detection")
        #expect(found[0].kind == .other)
        #expect(found[0].family == .mifareClassic)
    }
}
