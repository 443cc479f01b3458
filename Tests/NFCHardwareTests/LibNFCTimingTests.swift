import Foundation
import NFCBenchTestSupport
import NFCHardware
import NFCTags
import Testing
import VirtualHardware

/// Wall time of a full NTAG215 read (135 pages) through our wrapper and through
/// `nfc-mfultralight r`, both against the virtual PN532. Prints the figures; asserts the
/// data, not the speed.
extension LibNFCInProcessTests {
    @Suite(
        "libnfc NTAG215 read timing", .serialized,
        .enabled(
            if: LibNFCTestBench.enabled
                && (ProcessInfo.processInfo.environment["CI"] == "true"
                    || FileManager.default.isExecutableFile(atPath: "/usr/bin/nfc-mfultralight"))
        ))
    struct LibNFCTimingTests {
        static let runs = 3

        @Test("A full NTAG215 read: wrapper vs nfc-mfultralight r")
        func fullRead() async throws {
            // libnfc and nfc-mfultralight wait on the virtual PN532: off the cooperative pool.
            try await offPool {
                let link = LibNFCTestBench.linkPath("timing")
                let fake = try VirtualPN532.start(ptyPath: link)
                defer { fake.stop() }
                fake.present(try LibNFCTestBench.ntag215())
                let reference = LibNFCTestNTAG215.pages.flatMap { $0 }
                let context = try LibNFCContext()
                var ours: [Duration] = []
                var readOnly: [Duration] = []
                for _ in 0..<Self.runs {
                    let start = ContinuousClock.now
                    let device = try context.open("pn532_uart:\(link)")
                    try device.initiatorInit()
                    let target = try #require(try device.selectPassiveTarget())
                    let tag = try LibNFCType2Transport(device: device, target: target)
                    var image: [UInt8] = []
                    let readStart = ContinuousClock.now
                    for page in stride(from: 0, to: LibNFCTestNTAG215.pageCount, by: 4) {
                        image += try tag.read(page: UInt8(page))
                    }
                    readOnly.append(ContinuousClock.now - readStart)
                    ours.append(ContinuousClock.now - start)
                    #expect(Array(image.prefix(reference.count)) == reference)
                }
                var tool: [Duration] = []
                let dump = LibNFCTestBench.linkFolder.file("timing-\(UInt32.random(in: 0...UInt32.max)).mfd")
                defer { try? FileManager.default.removeItem(atPath: dump) }
                for _ in 0..<Self.runs {
                    let process = Process()
                    process.executableURL = URL(fileURLWithPath: "/usr/bin/nfc-mfultralight")
                    process.arguments = ["r", dump]
                    var env = ProcessInfo.processInfo.environment
                    env["LIBNFC_DEVICE"] = "pn532_uart:\(link)"
                    env["LIBNFC_AUTO_SCAN"] = "false"
                    process.environment = env
                    process.standardOutput = FileHandle.nullDevice
                    process.standardError = FileHandle.nullDevice
                    let start = ContinuousClock.now
                    try process.run()
                    process.waitUntilExit()
                    tool.append(ContinuousClock.now - start)
                    #expect(process.terminationStatus == 0)
                    let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: dump)))
                    #expect(Array(bytes.prefix(133 * 4)) == Array(reference.prefix(133 * 4)))
                }
                func ms(_ d: Duration) -> String {
                    String(
                        format: "%.1f", Double(d.components.seconds) * 1000 + Double(d.components.attoseconds) / 1e15)
                }
                print(
                    "NTAG215 full read, open included: wrapper \(ours.map(ms)) ms (34 READs alone \(readOnly.map(ms)) ms); nfc-mfultralight r \(tool.map(ms)) ms"
                )
            }
        }
    }
}
