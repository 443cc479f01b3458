import NFCTags
import ReaderFrontend
import ReaderSession
import Synchronization
import Testing

/// `subscribe`: an in-memory device's polling events pushed to a handler on the thread that
/// changed the field (what a virtual-time host's session uses instead of the stream).
@Suite("Frontend: pushed events for in-memory devices")
struct PushedEventsTests {
    /// An NTAG213 with an empty NDEF area, written by hand: UID 04 11 22 / 33 44 55 66,
    /// BCC0 = 88⊕04⊕11⊕22 = BF, BCC1 = 33⊕44⊕55⊕66 = 44; CC E1 10 12 00.
    static func ntag213() throws -> EmulatedTag {
        var pages: [[UInt8]] = [
            [0x04, 0x11, 0x22, 0xBF], [0x33, 0x44, 0x55, 0x66], [0x44, 0x48, 0x00, 0x00], [0xE1, 0x10, 0x12, 0x00],
            [0x03, 0x00, 0xFE, 0x00],
        ]
        pages += Array(repeating: [0, 0, 0, 0], count: 45 - pages.count)
        pages[42] = [0x04, 0x00, 0x00, 0xFF]  // CFG0: AUTH0 = FF (no protection)
        return try EmulatedTag(
            file: TagFile(
                type: .ntag213,
                activation: try ISO14443AActivation(
                    uid: [0x04, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66], atqa: [0x44, 0x00], sak: 0),
                getVersion: [0x00, 0x04, 0x04, 0x02, 0x01, 0x00, 0x0F, 0x03], pages: pages))
    }

    @Test("Each field change reaches the handler before present/remove returns; after cancel() nothing does")
    func pushed() throws {
        let field = EmulatedField(name: "push")
        let frontend = ReaderFrontend(device: field, clock: ManualClock())
        defer { frontend.close() }
        let got = Mutex<[Result<ReaderBackendEvent?, any Error>]>([])
        let sub = try #require(frontend.subscribe(.iso14443) { r in got.withLock { $0.append(r) } })
        #expect(got.withLock { $0.isEmpty })
        field.present([(name: "A", tag: try Self.ntag213())])
        let detected = got.withLock { g -> [DetectedTarget] in
            if case .success(.detected(let t)?)? = g.last { t } else { [] }
        }
        #expect(detected.count == 1)
        field.remove(["A"])
        #expect(got.withLock { g in if case .success(.lost(detected[0].id)?)? = g.last { true } else { false } })
        let count = got.withLock(\.count)
        sub.cancel()
        sub.cancel()  // idempotent
        field.present([(name: "B", tag: try Self.ntag213())])
        #expect(got.withLock(\.count) == count)
    }

    @Test("A later subscriber starts with the targets in the field; close() ends it with nil")
    func laterSubscriberAndClose() throws {
        let field = EmulatedField(name: "push")
        let frontend = ReaderFrontend(device: field, clock: ManualClock())
        let first = frontend.subscribe(.iso14443) { _ in }
        field.present([(name: "A", tag: try Self.ntag213())])
        let got = Mutex<[Result<ReaderBackendEvent?, any Error>]>([])
        let second = frontend.subscribe(.iso14443) { r in got.withLock { $0.append(r) } }
        #expect(first != nil && second != nil)
        #expect(got.withLock { g in if case .success(.detected(let t)?)? = g.first { t.count == 1 } else { false } })
        frontend.close()
        #expect(got.withLock { g in if case .success(nil)? = g.last { true } else { false } })
    }

    @Test("A device not open yet (hardware opens lazily, on its own thread) offers the stream only: nil")
    func hardwareStreamOnly() {
        let frontend = ReaderFrontend(
            identifier: "hw", clock: ManualClock(),
            open: { () throws(NFCDeviceError) -> any NFCDevice in throw NFCDeviceError(.gone, "not plugged in") })
        let sub = frontend.subscribe(NFCPollingOption.iso14443) { _ in }
        #expect(sub == nil)
    }
}
