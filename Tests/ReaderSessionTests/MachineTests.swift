import ReaderSession
import Testing

private let uri = NDEFMessageBytes([0xD1, 0x01, 0x0C, 0x55, 0x04] + Array("example.com".utf8))
private let t1 = DetectedTargetID(1)
private let t2 = DetectedTargetID(2)
private let ending: [ReaderSessionMachine.Effect] = [.cancelTimeLimit, .stopPolling, .releaseReader]

private func started(_ kind: ReaderSessionKind) -> ReaderSessionMachine {
    var m = ReaderSessionMachine(kind: kind)
    _ = m.begin(at: .seconds(10), anotherSessionActive: false)
    return m
}

@Suite("Session machine: starting and ending")
struct MachineLifecycleTests {
    @Test("begin starts polling, arms the 60 s limit and reports didBecomeActive")
    func beginStarts() {
        var m = ReaderSessionMachine(kind: .ndef(invalidateAfterFirstRead: true))
        #expect(
            m.begin(at: .seconds(10), anotherSessionActive: false)
                == [.startPolling, .armTimeLimit(deadline: .seconds(70)), .didBecomeActive])
        #expect(m.isReady)
    }

    @Test("The time limit ends the session with 201, a stale timer does nothing")
    func timeout() {
        var m = started(.ndefReadWrite)
        #expect(m.timeLimitReached(at: .seconds(69)) == [])
        #expect(
            m.timeLimitReached(at: .seconds(70)) == [
                .stopPolling, .releaseReader,
                .didInvalidate(.readerSessionInvalidationErrorSessionTimeout, errorMessage: nil),
            ])
        #expect(m.invalidationCode == .readerSessionInvalidationErrorSessionTimeout)
    }

    @Test(
        "begin while another session is active is refused with 203 and only didInvalidate",
        arguments: [SessionAdmission.anotherSessionActive, .thermallyThrottled])
    func busy(admission: SessionAdmission) {
        var m = ReaderSessionMachine(kind: .tag(.iso14443))
        #expect(
            m.begin(at: .zero, admission: admission)
                == [.didInvalidate(.readerSessionInvalidationErrorSystemIsBusy, errorMessage: nil)])
        #expect(!m.isReady)
    }

    @Test("A refusal for another reason ends with its code (1 unsupported)")
    func refused() {
        var m = ReaderSessionMachine(kind: .ndefReadWrite)
        #expect(
            m.begin(at: .zero, admission: .refused(.readerErrorUnsupportedFeature))
                == [.didInvalidate(.readerErrorUnsupportedFeature, errorMessage: nil)])
    }

    @Test("Done ends with 200")
    func done() {
        var m = started(.ndef(invalidateAfterFirstRead: false))
        #expect(
            m.userCanceled() == ending + [
                .didInvalidate(.readerSessionInvalidationErrorUserCanceled, errorMessage: nil)
            ])
    }

    @Test("invalidate() ends with 200; invalidate(errorMessage:) with 200 and the message")
    func appInvalidate() {
        var a = started(.ndefReadWrite)
        #expect(
            a.invalidate() == ending + [.didInvalidate(.readerSessionInvalidationErrorUserCanceled, errorMessage: nil)])
        var b = started(.ndefReadWrite)
        #expect(
            b.invalidate(errorMessage: "Not a badge") == ending
                + [.didInvalidate(.readerSessionInvalidationErrorUserCanceled, errorMessage: "Not a badge")])
    }

    @Test("Leaving the foreground ends with 202 and nothing restarts")
    func backgrounded() {
        var m = started(.tag(.iso14443))
        #expect(
            m.backgrounded() == ending + [
                .didInvalidate(.readerSessionInvalidationErrorSessionTerminatedUnexpectedly, errorMessage: nil)
            ])
        #expect(m.begin(at: .seconds(20), anotherSessionActive: false) == [])
        #expect(m.targetsDetected([t1]) == [])
    }

    @Test("A failed reader ends with 202")
    func readerFailed() {
        var m = started(.ndefReadWrite)
        #expect(
            m.readerFailed().last
                == .didInvalidate(.readerSessionInvalidationErrorSessionTerminatedUnexpectedly, errorMessage: nil))
    }

    @Test("No reuse: begin, restartPolling, alertMessage and a second invalidate do nothing after the end")
    func noReuse() {
        var m = started(.ndefReadWrite)
        _ = m.invalidate()
        #expect(m.begin(at: .seconds(30), anotherSessionActive: false) == [])
        #expect(m.restartPolling() == [])
        #expect(m.alertMessageChanged("x") == [])
        #expect(m.invalidate() == [])
        #expect(m.userCanceled() == [])
        #expect(m.timeLimitReached(at: .seconds(100)) == [])
    }

    @Test("Nothing happens before begin")
    func beforeBegin() {
        var m = ReaderSessionMachine(kind: .ndefReadWrite)
        #expect(m.invalidate() == [])
        #expect(m.backgrounded() == [])
        #expect(m.targetsDetected([t1]) == [])
        #expect(m.alertMessageChanged("Hold near the tag") == [])
        #expect(m.state == .notStarted)
    }

    @Test("A second begin on an active session does nothing")
    func doubleBegin() {
        var m = started(.ndefReadWrite)
        #expect(m.begin(at: .seconds(11), anotherSessionActive: false) == [])
    }

    @Test("alertMessage changes while the session is valid")
    func alert() {
        var m = started(.ndef(invalidateAfterFirstRead: false))
        #expect(m.alertMessageChanged("Tag 2 of 5 read") == [.showAlertMessage("Tag 2 of 5 read")])
    }
}

@Suite("Session machine: read-only NDEF mode")
struct MachineReadOnlyTests {
    @Test("A non-empty message is delivered, then 204 with invalidateAfterFirstRead")
    func firstRead() {
        var m = started(.ndef(invalidateAfterFirstRead: true))
        #expect(m.targetsDetected([t1]) == [.readNDEF(t1)])
        #expect(
            m.ndefReadFinished(target: t1, outcome: .message(uri)) == [.didDetectNDEFs([uri])] + ending
                + [.didInvalidate(.readerSessionInvalidationErrorFirstNDEFTagRead, errorMessage: nil)])
    }

    @Test(
        "Empty, non-NDEF, malformed and failed reads keep it polling",
        arguments: [
            NDEFReadOutcome.empty, .notNDEF, .failed(.readerTransceiveErrorTagConnectionLost),
            .message(NDEFMessageBytes([0xD1, 0x01, 0x09])),
        ])
    func keepsPolling(outcome: NDEFReadOutcome) {
        var m = started(.ndef(invalidateAfterFirstRead: true))
        _ = m.targetsDetected([t1])
        #expect(m.ndefReadFinished(target: t1, outcome: outcome) == [])
        #expect(m.isReady)
    }

    @Test(
        "A message of one empty record (D0 00 00) is delivered, as readNDEF returns it (reported: Exxili/capacitor-nfc#25)"
    )
    func oneEmptyRecordDelivered() {
        let empty = NDEFMessageBytes([0xD0, 0x00, 0x00])
        #expect(empty.isWellFormed && !empty.isWellFormedNonEmpty)
        var m = started(.ndef(invalidateAfterFirstRead: true))
        _ = m.targetsDetected([t1])
        #expect(
            m.ndefReadFinished(target: t1, outcome: .message(empty)) == [.didDetectNDEFs([empty])] + ending
                + [.didInvalidate(.readerSessionInvalidationErrorFirstNDEFTagRead, errorMessage: nil)])
    }

    @Test("Each presentation is read once; after the tag leaves a new presentation is read")
    func rePollsByItself() {
        var m = started(.ndef(invalidateAfterFirstRead: false))
        _ = m.targetsDetected([t1])
        #expect(m.ndefReadFinished(target: t1, outcome: .message(uri)) == [.didDetectNDEFs([uri])])
        #expect(m.targetsDetected([t1]) == [])
        #expect(m.targetLost(t1) == [])
        #expect(m.targetsDetected([t2]) == [.readNDEF(t2)])
        #expect(m.isReady)
    }

    @Test("restartPolling() has no effect in read-only mode")
    func restartIgnored() {
        var m = started(.ndef(invalidateAfterFirstRead: false))
        #expect(m.restartPolling() == [])
    }

    @Test("A tag removed mid-read delivers nothing")
    func removedMidRead() {
        var m = started(.ndef(invalidateAfterFirstRead: true))
        _ = m.targetsDetected([t1])
        _ = m.targetLost(t1)
        #expect(m.ndefReadFinished(target: t1, outcome: .message(uri)) == [])
        #expect(m.isReady)
    }
}

@Suite("Session machine: read-write and tag modes")
struct MachineTagModeTests {
    @Test(
        "Several tags are delivered together, and never 204",
        arguments: [ReaderSessionKind.ndefReadWrite, .tag(.iso14443)])
    func deliversTogether(kind: ReaderSessionKind) {
        var m = started(kind)
        #expect(
            m.targetsDetected([t1, t2]) == [
                .didDetectTags([TagHandle(target: t1, generation: 0), TagHandle(target: t2, generation: 0)])
            ])
        #expect(m.targetsDetected([t1]) == [])
        #expect(m.isReady)
    }

    @Test("restartPolling() rediscovers and makes earlier tag objects fail with 104")
    func restartStales() {
        var m = started(.ndefReadWrite)
        _ = m.targetsDetected([t1])
        let old = TagHandle(target: t1, generation: 0)
        #expect(m.restartPolling() == [.restartPolling])
        #expect(
            m.tagOperationRequested(TagOperationID(1), on: old) == [
                .failTagOperation(TagOperationID(1), .readerTransceiveErrorTagNotConnected)
            ])
        #expect(m.targetsDetected([t1]) == [.didDetectTags([TagHandle(target: t1, generation: 1)])])
        #expect(
            m.tagOperationRequested(TagOperationID(2), on: TagHandle(target: t1, generation: 1))
                == [.performTagOperation(TagOperationID(2), TagHandle(target: t1, generation: 1))])
    }

    @Test("An operation that outlives a restart fails with 104")
    func restartMidOperation() {
        var m = started(.tag(.iso14443))
        _ = m.targetsDetected([t1])
        let h = TagHandle(target: t1, generation: 0)
        _ = m.tagOperationRequested(TagOperationID(1), on: h)
        _ = m.restartPolling()
        #expect(
            m.tagOperationFinished(TagOperationID(1), on: h, result: .success) == [
                .failTagOperation(TagOperationID(1), .readerTransceiveErrorTagNotConnected)
            ])
    }

    @Test("Operations after the end fail with 103")
    func afterEnd() {
        var m = started(.ndefReadWrite)
        _ = m.targetsDetected([t1])
        let h = TagHandle(target: t1, generation: 0)
        _ = m.tagOperationRequested(TagOperationID(1), on: h)
        _ = m.invalidate()
        #expect(
            m.tagOperationFinished(TagOperationID(1), on: h, result: .success) == [
                .failTagOperation(TagOperationID(1), .readerTransceiveErrorSessionInvalidated)
            ])
        #expect(
            m.tagOperationRequested(TagOperationID(2), on: h) == [
                .failTagOperation(TagOperationID(2), .readerTransceiveErrorSessionInvalidated)
            ])
    }

    @Test("readNDEF of an empty tag fails with 403")
    func emptyRead() {
        var m = started(.ndefReadWrite)
        _ = m.targetsDetected([t1])
        let h = TagHandle(target: t1, generation: 0)
        _ = m.tagOperationRequested(TagOperationID(1), on: h)
        #expect(
            m.tagOperationFinished(TagOperationID(1), on: h, result: .emptyNDEFMessage) == [
                .failTagOperation(TagOperationID(1), .ndefReaderSessionErrorZeroLengthMessage)
            ])
    }

    @Test("A tag removed mid-read fails the operation with 100 and the session stays valid")
    func removedMidOperation() {
        var m = started(.tag(.iso14443))
        _ = m.targetsDetected([t1])
        let h = TagHandle(target: t1, generation: 0)
        _ = m.tagOperationRequested(TagOperationID(1), on: h)
        #expect(
            m.tagOperationFinished(TagOperationID(1), on: h, result: .failed(.readerTransceiveErrorTagConnectionLost))
                == [.failTagOperation(TagOperationID(1), .readerTransceiveErrorTagConnectionLost)])
        #expect(m.isReady)
        #expect(
            m.tagOperationRequested(TagOperationID(2), on: h) == [
                .failTagOperation(TagOperationID(2), .readerTransceiveErrorTagConnectionLost)
            ])
    }
}

@Suite("NFCReaderError")
struct NFCReaderErrorTests {
    @Test("Raw values are Apple's")
    func rawValues() {
        let expected: [Int] = [
            1, 2, 3, 4, 5, 6, 7, 8, 100, 101, 102, 103, 104, 105, 200, 201, 202, 203, 204, 300, 400, 401, 402, 403,
        ]
        #expect(NFCReaderError.Code.allCases.map(\.rawValue) == expected)
        #expect(NFCReaderError.Code(rawValue: 204) == .readerSessionInvalidationErrorFirstNDEFTagRead)
    }

    @Test("The reason is the Core NFC case name")
    func names() {
        #expect(
            NFCReaderError.Code.readerSessionInvalidationErrorFirstNDEFTagRead.name
                == "readerSessionInvalidationErrorFirstNDEFTagRead")
        for c in NFCReaderError.Code.allCases {
            #expect(c.name == "\(c)".split(separator: " ").first.map(String.init))
            #expect(!c.summary.isEmpty)
        }
    }

    @Test("Transport failures map to transceive codes")
    func mapping() {
        #expect(NFCReaderError(.tagLost).code == .readerTransceiveErrorTagConnectionLost)
        #expect(NFCReaderError(.noResponse).code == .readerTransceiveErrorTagConnectionLost)
        #expect(NFCReaderError(.nak(0)).code == .readerTransceiveErrorTagResponseError)
        #expect(NFCReaderError(.malformedResponse("x")).code == .readerTransceiveErrorTagResponseError)
        #expect(NFCReaderError(.packetTooLong(300)).code == .readerTransceiveErrorPacketTooLong)
        #expect(NFCReaderError(.readerFailure("gone")).code == .readerTransceiveErrorTagConnectionLost)
    }
}
