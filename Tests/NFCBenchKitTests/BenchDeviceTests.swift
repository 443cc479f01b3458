import Foundation
import NFCBenchKit
import NFCBenchTestSupport
import NFCHardware
import NFCTags
import ReaderSession
import Synchronization
import Testing

private func failure(_ body: () throws(BenchDeviceError) -> String) -> BenchDeviceError? {
    do {
        _ = try body()
        return nil
    } catch {
        return error
    }
}

@Suite("Device strings: pcsc: by name, number or piece of a name (pure rules)")
struct PCSCNameTests {
    static let two = ["Virtual PCD 00 00", "Virtual PCD 00 01"]

    @Test("An exact name, a number (pcscd's order) and a piece that fits one reader (any case) each name it")
    func names() throws {
        #expect(try BenchDevice.pcscReader("Virtual PCD 00 01", among: Self.two) == "Virtual PCD 00 01")
        #expect(try BenchDevice.pcscReader("0", among: Self.two) == "Virtual PCD 00 00")
        #expect(try BenchDevice.pcscReader("1", among: Self.two) == "Virtual PCD 00 01")
        #expect(
            try BenchDevice.pcscReader("acr122", among: ["ACS ACR122U 00 00", "Virtual PCD 00 00"])
                == "ACS ACR122U 00 00")
        #expect(try BenchDevice.pcscReader("00 01", among: Self.two) == "Virtual PCD 00 01")
        #expect(try BenchDevice.pcscReader("", among: ["Only 00 00"]) == "Only 00 00")
    }

    @Test("An exact name always wins over a number and over a piece of another reader's name")
    func exactWins() throws {
        #expect(try BenchDevice.pcscReader("1", among: ["Reader 1 00 00", "1"]) == "1")
        #expect(
            try BenchDevice.pcscReader("Virtual PCD", among: ["Virtual PCD", "Virtual PCD 00 00"]) == "Virtual PCD")
    }

    @Test(
        "A piece that fits several readers is ambiguous and names them; none, or a number past the end, lists what there is"
    )
    func refusals() {
        let several = failure { () throws(BenchDeviceError) in try BenchDevice.pcscReader("virtual", among: Self.two) }
        #expect(several?.kind == .ambiguous)
        #expect(several?.candidates == ["pcsc:Virtual PCD 00 00", "pcsc:Virtual PCD 00 01"])
        #expect(
            several?.message.contains("'pcsc:virtual' fits several PC/SC readers") == true,
            "\(String(describing: several))")
        let none = failure { () throws(BenchDeviceError) in try BenchDevice.pcscReader("ACR122", among: Self.two) }
        #expect(none?.kind == .unavailable)
        #expect(
            none?.message
                == "pcscd has no reader 'ACR122'; it has: pcsc:Virtual PCD 00 00 (pcsc:0), pcsc:Virtual PCD 00 01 (pcsc:1)"
        )
        #expect(none?.candidates == ["pcsc:Virtual PCD 00 00", "pcsc:Virtual PCD 00 01"])
        let past = failure { () throws(BenchDeviceError) in try BenchDevice.pcscReader("2", among: Self.two) }
        #expect(past?.kind == .unavailable)
        #expect(past?.message.contains("2 readers, numbered from 0") == true, "\(String(describing: past))")
        let bare = failure { () throws(BenchDeviceError) in try BenchDevice.pcscReader("", among: Self.two) }
        #expect(bare?.kind == .ambiguous)
        let empty = failure { () throws(BenchDeviceError) in try BenchDevice.pcscReader("", among: []) }
        #expect(empty?.kind == .invalid)
        #expect(empty?.message == "no PC/SC reader connected")
    }
}

@Suite("Device strings: sim:, connstrings, mistakes, NFCBENCH_DEVICE")
struct DeviceStringTests {
    @Test("sim:NAME is the shipped scenario, locked and traced by the string as given")
    func simulated() throws {
        let d = try BenchDevice("sim:tap-uri")
        #expect(d.identifier == "sim:tap-uri")
        let simulated: String? = if case .simulated(let path) = d.kind { path } else { nil }
        let path = try #require(simulated, "not simulated: \(d.kind)")
        #expect(path.hasSuffix("/scenarios/tap-uri.json"), "\(path)")
    }

    @Test("Mistakes get a typed error with the command's wording: no scenario, a typo, an unknown kind, a missing path")
    func mistakes() {
        func error(_ s: String) -> BenchDeviceError? {
            failure { () throws(BenchDeviceError) in try BenchDevice(s).identifier }
        }
        #expect(error("sim:")?.kind == .invalid)
        let typo = error("sim:tap-ur")
        #expect(typo?.kind == .notFound)
        #expect(typo?.message.contains("(did you mean tap-uri?)") == true, "\(String(describing: typo))")
        let bogus = error("bogus")
        #expect(bogus?.kind == .invalid)
        #expect(bogus?.message.hasPrefix("unknown device 'bogus': use sim:SCENARIO, pcsc:READER") == true)
        let missing = "/tmp/nfcbench-no-such-tty-\(UUID().uuidString)"
        let gone = error("pn532_uart:\(missing)")
        #expect(gone?.kind == .unavailable)
        #expect(
            gone?.message == "\(missing) does not exist (is the reader plugged in? 'nfcbench doctor' checks the bench)")
    }

    @Test("A connstring through a link is the device it points at (two links to one pty are one reader)")
    func connstringIdentity() throws {
        let link = FileManager.default.temporaryDirectory.appendingPathComponent("nfcbench-kit-\(UUID().uuidString)")
            .path
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: "/dev/null")
        defer { try? FileManager.default.removeItem(atPath: link) }
        let d = try BenchDevice("pn532_uart:\(link)")
        #expect(d.identifier == "pn532_uart:/dev/null")
        #expect(d.kind == .libnfc(connstring: "pn532_uart:\(link)"))
    }

    @Test("A device left out is $NFCBENCH_DEVICE (unset or empty: none)")
    func environmentDefault() throws {
        #expect(BenchDevice.string(nil, environment: ["NFCBENCH_DEVICE": "sim:tap-uri"]) == "sim:tap-uri")
        #expect(BenchDevice.string("pcsc:0", environment: ["NFCBENCH_DEVICE": "sim:tap-uri"]) == "pcsc:0")
        #expect(BenchDevice.string(nil, environment: ["NFCBENCH_DEVICE": ""]) == nil)
        #expect(BenchDevice.string(nil, environment: [:]) == nil)
        #expect(try BenchDevice.default(environment: ["NFCBENCH_DEVICE": "sim:tap-uri"])?.identifier == "sim:tap-uri")
        #expect(try BenchDevice.default(environment: [:]) == nil)
    }

    @Test("sim: opened by name reads the tag file's UID through the one frontend, in virtual time")
    func readsSimulatedUID() async throws {
        let clock = ManualClock()
        let frontend = try BenchDevice("sim:tap-uri").frontend(clock: clock)
        defer { frontend.close() }
        let stream = frontend.events(.iso14443)
        // The scenario presents ntag215-uri at 300 ms.
        clock.advance(by: .milliseconds(400))
        var events = stream.makeAsyncIterator()
        let event = try await events.next()
        let detected: [DetectedTarget]? = if case .detected(let targets)? = event { targets } else { nil }
        let target = try #require(detected?.first, "no detection: \(String(describing: event))")
        let file = try TagFile.load(path: try #require(BenchData.resolve("ntag215-uri", in: "tags")))
        #expect(target.uid == file.activation.uid)
        #expect(target.uid.count == 7)
    }

    @Test(
        "A bench watcher follows the reader on a thread of its own, not the shared pool: its detection's time is the reader's, whatever other tasks queue there"
    )
    func watcherHasItsOwnThread() async throws {
        let clock = ManualClock()
        let frontend = try BenchDevice("sim:tap-uri").frontend(clock: clock)
        defer { frontend.close() }
        let seenOn = Mutex<[String]>([])
        let watcher = BackendWatcher(frontend) { _ in seenOn.withLock { $0.append(callingThreadName()) } }
        defer { watcher.stop() }
        clock.advance(by: .milliseconds(400))
        let (target, _, _) = try await watcher.next(
            from: 0, timeout: .seconds(60), what: "tag", BackendWatcher.detected)
        #expect(target.uid.count == 7)
        // A `Task {}` there ran on the cooperative pool, where a test process's queue held
        // `poll --once`'s detection past its 30 s (RedactCommandsTests, two suites at once).
        #expect(seenOn.withLock { $0 } == ["nfcbench.watch"])
    }
}

@Suite(
    "Device strings against the private pcscd (two vpcd readers)",
    .enabled(
        if: ProcessInfo.processInfo.environment["CI"] == "true" || (try? PCSCContext().readers().count) == 2,
        "needs pcscd with the vpcd readers: run through scripts/with-pcscd"))
struct PCSCDeviceStringTests {
    @Test("pcsc:0, a piece of a name and the full name are one reader with one identity; a piece of both is ambiguous")
    func againstPCSCD() throws {
        let byIndex = try BenchDevice("pcsc:0")
        #expect(byIndex.identifier == "pcsc:Virtual PCD 00 00")
        #expect(byIndex.kind == .pcsc(reader: "Virtual PCD 00 00"))
        #expect(try BenchDevice("pcsc:pcd 00 01").identifier == "pcsc:Virtual PCD 00 01")
        #expect(try BenchDevice("pcsc:Virtual PCD 00 00") == byIndex)
        let both = failure { () throws(BenchDeviceError) in try BenchDevice("pcsc:Virtual PCD").identifier }
        #expect(both?.kind == .ambiguous)
        #expect(both?.candidates == ["pcsc:Virtual PCD 00 00", "pcsc:Virtual PCD 00 01"])
        let list = BenchDevice.list(statusTimeout: .milliseconds(200))
        #expect(list.pcscError == nil)
        #expect(list.pcscReaders.map(\.device) == ["pcsc:Virtual PCD 00 00", "pcsc:Virtual PCD 00 01"])
        #expect(list.pcscReaders.map(\.index) == [0, 1])
        #expect(list.simulated.contains("sim:tap-uri"))
    }
}
