import Foundation
public import NFCHardware

/// What can be opened now (``BenchDevice/list(statusTimeout:)``): pcscd's readers with their
/// state and card, libnfc's devices, and the shipped scenarios of the simulator.
public struct BenchDeviceList: Sendable {
    /// One reader pcscd serves.
    public struct PCSCReader: Sendable, Hashable {
        /// `pcsc:NAME`, what ``BenchDevice/init(_:)`` takes.
        public var device: String
        /// Its place in pcscd's list (`pcsc:0`…).
        public var index: Int
        /// Its state (`SCardGetStatusChange`): name, flags, event count and the card's ATR.
        public var state: PCSCReaderState
        /// What the card's ATR says it is (PC/SC part 3 rules), when a card is present.
        public var card: TargetClassification?
    }

    /// pcscd's readers, in its order.
    public var pcscReaders: [PCSCReader]
    /// Why pcscd could not be asked (`nil` when it answered; ``/NFCHardware/PCSCError`` `noService`
    /// when it is not running).
    public var pcscError: PCSCError?
    /// What libnfc lists (`nfc_list_devices`; UART devices only with `LIBNFC_DEVICE` or a
    /// libnfc.conf entry).
    public var libnfcDevices: [String]
    /// Why libnfc could not be asked, if it could not.
    public var libnfcError: String?
    /// `sim:NAME` for every scenario shipped in `hardware/scenarios/`.
    public var simulated: [String]

    /// Every device string listed, readers first: what ``BenchDevice/init(_:)`` opens.
    public var devices: [String] { pcscReaders.map(\.device) + libnfcDevices + simulated }
}

extension BenchDevice {
    /// The readers and devices there are now. Asks pcscd for its readers' states (waiting up
    /// to `statusTimeout` for its answer) and libnfc for its devices; sends nothing to a card.
    public static func list(statusTimeout: Duration = .milliseconds(500)) -> BenchDeviceList {
        var out = BenchDeviceList(pcscReaders: [], pcscError: nil, libnfcDevices: [], libnfcError: nil, simulated: [])
        do {
            let context = try PCSCContext()
            let readers = try context.readers()
            let states: [PCSCReaderState]
            if readers.isEmpty {
                states = []
            } else if case .changed(let s) = try context.waitForStatusChange(
                readers: readers.map(PCSCReaderState.unaware), timeout: statusTimeout)
            {
                states = s
            } else {
                states = readers.map { PCSCReaderState(reader: $0, flags: []) }
            }
            for (i, s) in states.enumerated() {
                out.pcscReaders.append(
                    .init(
                        device: "pcsc:\(s.reader)", index: i, state: s,
                        card: s.hasCard ? TargetClassification.classify(atr: s.atr) : nil))
            }
        } catch {
            out.pcscError = error
        }
        do {
            out.libnfcDevices = try LibNFCContext().listDevices()
        } catch {
            out.libnfcError = "\(error)"
        }
        if let hw = BenchData.hardwareDirectory(),
            let files = try? FileManager.default.contentsOfDirectory(atPath: hw + "/scenarios")
        {
            out.simulated = files.filter { $0.hasSuffix(".json") }.map { "sim:" + $0.dropLast(5) }.sorted()
        }
        return out
    }
}
