import Foundation
import NFCBenchTestSupport
import NFCTags
import Testing
import VirtualHardware

@testable import NFCHardware

@Suite("libnfc values: timeouts and errors")
struct LibNFCValueTests {
    @Test("TransceiveTimeout encodes -1, 0 and whole milliseconds rounded up")
    func timeoutEncoding() {
        #expect(TransceiveTimeout.deviceDefault.milliseconds == -1)
        #expect(TransceiveTimeout.forever.milliseconds == 0)
        #expect(TransceiveTimeout.after(.milliseconds(250)).milliseconds == 250)
        #expect(TransceiveTimeout.after(.microseconds(1500)).milliseconds == 2)
        #expect(TransceiveTimeout.after(.zero).milliseconds == 1)
        #expect(TransceiveTimeout.after(.seconds(-3)).milliseconds == 1)
    }

    @Test("Error codes carry their NFC_E* names")
    func codeNames() {
        #expect(LibNFCError.Code.timeout.name == "NFC_ETIMEOUT")
        #expect(LibNFCError.Code(rawValue: -20).name == "NFC_ERFTRANS")
        #expect(LibNFCError.Code(rawValue: -42).name == "NFC_E?(-42)")
    }

    @Test("libnfc codes map to the tag procedures' vocabulary")
    func mapping() {
        func map(_ c: LibNFCError.Code) -> TagCommunicationError {
            LibNFCError(code: c, operation: "nfc_initiator_transceive_bytes", message: "x").tagCommunicationError
        }
        #expect(map(.targetReleased) == .tagLost)
        #expect(map(.timeout) == .noResponse)
        #expect(map(.rfTransmission) == .noResponse)
        #expect(map(.io) == .readerFailure("NFC_EIO: x"))
        #expect(map(.aborted) == .readerFailure("NFC_EOPABORTED: x"))
        if case .malformedResponse = map(.overflow) {} else { Issue.record("EOVFLOW should be malformedResponse") }
    }

    @Test("Errors compare by code, not by text")
    func equality() {
        #expect(
            LibNFCError(code: .io, operation: "a", message: "b") == LibNFCError(code: .io, operation: "c", message: "d")
        )
        #expect(
            LibNFCError(code: .io, operation: "a", message: "b")
                != LibNFCError(code: .timeout, operation: "a", message: "b"))
    }

    @Test("libnfc reports its version")
    func version() {
        #expect(LibNFCContext.version.hasPrefix("1."))
    }
}

/// Every in-process libnfc session against a virtual PN532, one at a time: concurrent
/// `nfc_open` calls in one process were seen to fail (NFC_ENOTSUCHDEV) under load.
@Suite("libnfc against a virtual PN532, in-process", .serialized)
struct LibNFCInProcessTests {}

extension LibNFCInProcessTests {
    /// The wrappers against the real libnfc `pn532_uart` driver and a virtual PN532.
    @Suite("libnfc wrappers against a virtual PN532", .serialized, .enabled(if: LibNFCTestBench.enabled))
    struct LibNFCDeviceTests {
        let fake: VirtualPN532
        let context: LibNFCContext
        let link: String

        init() throws {
            link = LibNFCTestBench.linkPath("dev")
            fake = try VirtualPN532.start(ptyPath: link)
            context = try LibNFCContext()
        }

        func open() throws -> LibNFCDevice {
            let device = try context.open("pn532_uart:\(link)")
            try device.initiatorInit()
            return device
        }

        @Test("Opens by connstring, names the chip and lists its modulations")
        func openAndDescribe() async throws {
            // libnfc waits on the virtual PN532 here: off the cooperative pool, which
            // the rest of the run needs (2 threads on 2 cores).
            try await offPool { [self] in
                defer { fake.stop() }
                let device = try open()
                #expect(
                    device.name == "pn532_uart:\(link)", "libnfc's pn532_uart driver names the device by its connstring"
                )
                #expect(device.connstring == "pn532_uart:\(link)")
                let modulations = try device.supportedModulations()
                #expect(
                    modulations.contains(.iso14443a) && modulations.contains(.iso14443b)
                        && modulations.contains(.felica))
            }
        }

        @Test("A failed open throws NFC_ENOTSUCHDEV")
        func openMissing() async throws {
            // libnfc waits on the virtual PN532 here: off the cooperative pool, which
            // the rest of the run needs (2 threads on 2 cores).
            try await offPool { [self] in
                fake.stop()
                #expect(throws: LibNFCError(code: .noSuchDevice, operation: "", message: "")) {
                    _ = try context.open("pn532_uart:\(link)-absent")
                }
            }
        }

        @Test("Polling and listing find the presented NTAG; nothing when the field is empty")
        func pollAndList() async throws {
            // libnfc waits on the virtual PN532 here: off the cooperative pool, which
            // the rest of the run needs (2 threads on 2 cores).
            try await offPool { [self] in
                defer { fake.stop() }
                let device = try open()
                let started = ContinuousClock.now
                #expect(try device.poll(count: 1, period: .milliseconds(150)) == nil)
                // One poll of ISO 14443-4A and 106A (libnfc adds the first) × 150 ms, as a PN532 takes.
                #expect(ContinuousClock.now - started >= .milliseconds(250))
                fake.present(try LibNFCTestBench.ntag215())
                let target = try #require(try device.poll(count: 1))
                #expect(target.uid == LibNFCTestBench.uid)
                #expect(target.atqa == [0x00, 0x44])
                #expect(target.sak == 0x00)
                #expect(!target.isISODEP)
                try device.deselect()
                try device.idle()
                try device.initiatorInit()
                let listed = try device.listPassiveTargets()
                #expect(listed.map(\.uid) == [LibNFCTestBench.uid])
            }
        }

        @Test("Reads all 135 pages of an NTAG215, gets its version, and survives a NAK by re-activating")
        func readType2() async throws {
            // libnfc waits on the virtual PN532 here: off the cooperative pool, which
            // the rest of the run needs (2 threads on 2 cores).
            try await offPool { [self] in
                defer { fake.stop() }
                let device = try open()
                let reference = LibNFCTestNTAG215.self
                fake.present(try LibNFCTestBench.ntag215())
                let target = try #require(try device.selectPassiveTarget())
                let tag = try LibNFCType2Transport(device: device, target: target)
                #expect(try tag.getVersion() == [0x00, 0x04, 0x04, 0x02, 0x01, 0x00, 0x11, 0x03])
                var image: [[UInt8]] = []
                for page in stride(from: 0, to: 135, by: 4) {
                    let d = try tag.read(page: UInt8(page))
                    for i in 0..<4 where page + i < 135 { image.append(Array(d[(i * 4)..<(i * 4 + 4)])) }
                }
                #expect(image == reference.pages)
                #expect(throws: TagCommunicationError.nak(0)) { _ = try tag.read(page: 200) }
                #expect(throws: TagCommunicationError.noResponse) { _ = try tag.read(page: 4) }  // idle after the NAK
                try tag.reactivate()
                try tag.write(page: 4, data: [1, 2, 3, 4])
                #expect(Array(try tag.read(page: 4).prefix(4)) == [1, 2, 3, 4])
            }
        }

        @Test(
            "Any Type 2 frame goes raw through libnfc (sendMiFareCommand's carrier): FAST_READ, READ_SIG, PWD_AUTH, a NAK"
        )
        func rawFrames() async throws {
            // libnfc waits on the virtual PN532 here: off the cooperative pool, which
            // the rest of the run needs (2 threads on 2 cores).
            try await offPool { [self] in
                defer { fake.stop() }
                let device = try open()
                fake.present(try LibNFCTestBench.ntag215())
                let target = try #require(try device.selectPassiveTarget())
                let tag = try LibNFCType2Transport(device: device, target: target)
                let reference = LibNFCTestNTAG215.pages
                #expect(try tag.transceive([0x3A, 0x04, 0x07]) == .data(Array(reference[4...7].joined())))
                let signature = try #require(
                    matched {
                        if case .data(let signature) = try tag.transceive([0x3C, 0x00]) { signature } else { nil }
                    }, "no READ_SIG answer")
                #expect(signature.count == 32)
                // This image's password page (133) is 00 00 00 00.
                let pack = try #require(
                    matched {
                        if case .data(let pack) = try tag.transceive([0x1B, 0x00, 0x00, 0x00, 0x00]) {
                            pack
                        } else {
                            nil
                        }
                    }, "no PWD_AUTH answer")
                #expect(pack.count == 2)
                #expect(try tag.transceive([0x1B, 0x01, 0x02, 0x03, 0x04]) == .nak(0))
                #expect(try tag.transceive([0x30, 0x04]) == .silent)  // idle after the NAK
            }
        }

        @Test("ISO-DEP: the ATS comes with the target and an APDU gets its answer")
        func isoDEP() async throws {
            // libnfc waits on the virtual PN532 here: off the cooperative pool, which
            // the rest of the run needs (2 threads on 2 cores).
            try await offPool { [self] in
                defer { fake.stop() }
                let device = try open()
                fake.present(LibNFCTestBench.isoDEP())
                let target = try #require(try device.selectPassiveTarget())
                #expect(target.isISODEP)
                #expect(target.ats == [0x75, 0x77, 0x80, 0x02, 0x7A])
                let apdu = try LibNFCAPDUTransport(device: device)
                #expect(try apdu.transmit([0x00, 0xA4, 0x04, 0x00, 0x02, 0xA0, 0x00]) == [0x90, 0x00])
                #expect(try device.isTargetPresent())
            }
        }

        @Test("Presence check: present, then gone after removal")
        func presence() async throws {
            // libnfc waits on the virtual PN532 here: off the cooperative pool, which
            // the rest of the run needs (2 threads on 2 cores).
            try await offPool { [self] in
                defer { fake.stop() }
                let device = try open()
                fake.present(try LibNFCTestBench.ntag215())
                _ = try #require(try device.selectPassiveTarget())
                #expect(try device.isTargetPresent())
                fake.remove()
                #expect(try device.isTargetPresent() == false)
            }
        }

        /// Waits until the virtual PN532 has received an InAutoPoll (`D4 60`) after `index`.
        func pollOnTheWire(after index: Int) async throws {
            try await wait(for: "InAutoPoll on the wire") {
                fake.frameLog.dropFirst(index).contains(where: { e in
                    e.direction == .hostToChip
                        && e.bytes.firstIndex(of: 0xD4).map { $0 + 1 < e.bytes.count && e.bytes[$0 + 1] == 0x60 }
                            == true
                })
            }
            await pause(
                .milliseconds(50), because: "libnfc must be waiting for the poll's answer, or the abort is lost")
        }

        @Test("abort() (nfc_abort_command) from another thread ends a blocking endless poll (NFC_EOPABORTED) promptly")
        func abortPoll() async throws {
            defer { fake.stop() }
            let device = try open()
            let before = fake.frameLog.count
            let task = Task { try await offPool { try device.poll(count: nil) } }
            // An abort that comes before libnfc waits is lost (pn532_uart replaces a pipe): wait for the poll.
            try await pollOnTheWire(after: before)
            let started = ContinuousClock.now
            device.abort()
            let result = await task.result
            #expect(throws: LibNFCError(code: .aborted, operation: "", message: "")) { _ = try result.get() }
            #expect(ContinuousClock.now - started < .seconds(1))
            // The device is usable afterwards.
            fake.present(try LibNFCTestBench.ntag215())
            #expect(try device.selectPassiveTarget()?.uid == LibNFCTestBench.uid)
        }

        @Test("An endless poll ends with the card that arrives later")
        func pollWaitsForCard() async throws {
            defer { fake.stop() }
            let device = try open()
            fake.schedule(present: try LibNFCTestBench.ntag215(), after: .milliseconds(100))
            let target = try await offPool { try device.poll(count: nil) }
            #expect(target?.uid == LibNFCTestBench.uid)
        }

        @Test("The pty closed under a running exchange gives a clear error within 1 s")
        func unplugged() async throws {
            defer { fake.stop() }
            let device = try open()
            let before = fake.frameLog.count
            let task = Task { try await offPool { try device.poll(count: nil) } }
            try await pollOnTheWire(after: before)
            let unpluggedAt = ContinuousClock.now
            fake.unplug()
            let result = await task.result
            let elapsed = ContinuousClock.now - unpluggedAt
            #expect(elapsed < .seconds(1), "\(elapsed)")
            do {
                _ = try result.get()
                Issue.record("the poll should fail")
            } catch let e as LibNFCError {
                #expect(e.code == .io || e.code == .timeout, "\(e)")
            }
        }

        @Test("Corrupt frames and silence give NFC_EIO and NFC_ETIMEOUT, and the next exchange works")
        func corruptFrames() async throws {
            // libnfc waits on the virtual PN532 here: off the cooperative pool, which
            // the rest of the run needs (2 threads on 2 cores).
            try await offPool { [self] in
                defer { fake.stop() }
                let device = try open()
                fake.present(LibNFCTestBench.isoDEP())
                _ = try #require(try device.selectPassiveTarget())
                let select: [UInt8] = [0x00, 0xA4, 0x04, 0x00, 0x02, 0xA0, 0x00]
                fake.inject(.corruptResponseChecksum)
                #expect(throws: LibNFCError(code: .io, operation: "", message: "")) {
                    _ = try device.transceive(select)
                }
                fake.inject(.corruptLengthChecksum)
                #expect(throws: LibNFCError(code: .io, operation: "", message: "")) {
                    _ = try device.transceive(select)
                }
                fake.inject(.silence)
                #expect(throws: LibNFCError(code: .timeout, operation: "", message: "")) {
                    _ = try device.transceive(select, timeout: .after(.milliseconds(100)))
                }
                #expect(try device.transceive(select) == [0x90, 0x00])
                fake.inject(.fieldLossMidExchange)
                #expect(throws: TagCommunicationError.noResponse) {
                    _ = try LibNFCAPDUTransport(device: device).transmit(select)
                }
            }
        }

        @Test("Target mode: the wrapper emulates a card for the scripted reader until it leaves")
        func targetMode() async throws {
            // libnfc waits on the virtual PN532 here: off the cooperative pool, which
            // the rest of the run needs (2 threads on 2 cores).
            try await offPool { [self] in
                defer { fake.stop() }
                let device = try context.open("pn532_uart:\(link)")
                fake.startReader(
                    PN532ReaderScript(steps: [
                        .init(command: [0x00, 0xA4, 0x04, 0x00, 0x02, 0xF0, 0x01], expectedResponse: [0x90, 0x00]),
                        .init(command: [0x80, 0xCA, 0x00, 0x00], expectedResponse: [0x42, 0x90, 0x00]),
                    ]))
                _ = try device.targetInit(timeout: .after(.seconds(2)))
                var answered = 0
                while true {
                    let command: [UInt8]
                    do { command = try device.targetReceive(timeout: .after(.seconds(2))) } catch let e as LibNFCError {
                        #expect(e.code == .targetReleased)
                        break
                    }
                    try device.targetSend(command[1] == 0xA4 ? [0x90, 0x00] : [0x42, 0x90, 0x00])
                    answered += 1
                }
                #expect(answered == 2)
                #expect(fake.chip.readerExchanges.allSatisfy { $0.matched })
            }
        }
    }
}
