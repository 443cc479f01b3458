import Foundation
import NFCBenchKit

// The device string is the one argument (none: $NFCBENCH_DEVICE, as for nfcbench's --device).
let device = CommandLine.arguments.dropFirst().first
do {
    let reader = try BenchDevice.open(device)
    defer { reader.close() }
    let tag = try await reader.firstTarget(timeout: .seconds(10))
    print(tag.uid.hexString())
} catch {
    FileHandle.standardError.write(Data("ReadAnyReader: \(error)\n".utf8))
    exit(1)
}
