public import HCEEvents
import NFCTags

/// A card-emulation (target mode) link such as libnfc's `nfc_target_init` /
/// `nfc_target_receive_bytes` / `nfc_target_send_bytes` on a PN53x. Every call blocks.
/// The `nfcbench` executable makes `LibNFCDevice` one; tests use in-memory links.
public protocol HCETargetLink: Sendable {
    /// Becomes an ISO/IEC 14443-4 A card with these activation data and waits until a
    /// reader activates it (PN53x TgInitAsTarget). `ats` without TL. Returns the
    /// initiator's first frame (may be empty).
    func hceTargetInit(uid: [UInt8], atqa: [UInt8], sak: UInt8, ats: [UInt8]) throws -> [UInt8]
    /// The reader's next C-APDU (TgGetData); `nil` when the reader released the card
    /// (libnfc `NFC_ETGRELEASED`, PN53x status `29`).
    func hceTargetReceive() throws -> [UInt8]?
    /// Sends an R-APDU (TgSetData).
    func hceTargetSend(_ response: [UInt8]) throws
}

/// How one target-mode run ended.
public enum HCETargetOutcome: Sendable, Equatable {
    /// The reader released the card (it left, or finished).
    case released(apdus: Int)
    /// The link failed (or was aborted, e.g. by SIGINT through `nfc_abort_command`).
    case failed(apdus: Int, error: String)
}

/// The phone model behind a target-mode link: one reader, from activation to release.
///
/// What libnfc shows of the field is the **activation**: `nfc_target_init` returns once a
/// reader has done anticollision and RATS (libnfc has no field-detect call). So the first
/// event is logged as `activation` (source `libnfc`), and the model's field on, wake and
/// ISO-DEP activation are placed at that same instant (the field came earlier, unseen).
/// Each C-APDU is logged (`targetReceive`), answered as ``HCELivePhone/exchange(_:)`` says
/// and logged (`targetSend`); an app that misses the frame waiting time gets no answer
/// sent (the reader times out). Release (or a failure) is field off.
public enum HCETargetEmulator {
    /// Serves one reader through `link`; blocks until it releases or the link fails.
    public static func serveOneReader(
        _ link: some HCETargetLink, phone: HCELivePhone,
        reader: String? = nil
    ) -> HCETargetOutcome {
        let id = phone.identity
        phone.setReader(reader)
        let first: [UInt8]
        do {
            first = try link.hceTargetInit(uid: id.uid, atqa: id.atqa, sak: id.sak, ats: id.atsWithoutLength)
        } catch {
            phone.note(.libnfc, "error", detail: "nfc_target_init: \(error)")
            return .failed(apdus: 0, error: "\(error)")
        }
        phone.note(
            .libnfc, "activation", command: first.isEmpty ? nil : first,
            detail:
                "nfc_target_init returned: reader activated the phone (UID \(id.uid.hexString()), ATS \(id.ats.hexString())); field not visible to libnfc"
        )
        phone.fieldOn(.iso14443A)
        phone.activateISODEP()
        var count = 0
        var outcome: HCETargetOutcome
        while true {
            let command: [UInt8]?
            do { command = try link.hceTargetReceive() } catch {
                phone.note(.libnfc, "error", detail: "nfc_target_receive_bytes: \(error)")
                outcome = .failed(apdus: count, error: "\(error)")
                break
            }
            guard let command else {
                phone.note(.libnfc, "released", detail: "reader released the target (NFC_ETGRELEASED)")
                outcome = .released(apdus: count)
                break
            }
            count += 1
            phone.note(.libnfc, "targetReceive", command: command)
            switch phone.exchange(command) {
            case .answered(_, let response):
                do { try link.hceTargetSend(response) } catch {
                    phone.note(.libnfc, "error", detail: "nfc_target_send_bytes: \(error)")
                    outcome = .failed(apdus: count, error: "\(error)")
                    phone.fieldOff()
                    return outcome
                }
                phone.note(.libnfc, "targetSend", response: response)
            case .timedOut:
                phone.note(.libnfc, "targetSend", detail: "nothing sent: the app missed the frame waiting time")
            case .notActivated:
                phone.note(.libnfc, "targetSend", detail: "nothing sent: no ISO-DEP link in the model")
            }
        }
        phone.fieldOff()
        return outcome
    }
}

extension PN532ReaderScript {
    /// The virtual PN532's external reader playing `profile`'s C-APDUs in order (RATS from
    /// the profile, else `E0 80`). Timing, ECP and `stop_on_failure` have no place in a
    /// PN532 script: every step is sent. `expectedResponses[i]` (when given) is the exact
    /// R-APDU step i must get; the profile's status-word patterns can't be expressed.
    /// Returns nil for a profile that never reaches ISO-DEP (nothing to send).
    public init?(profile: ReaderProfile, expectedResponses: [[UInt8]?] = []) {
        guard profile.reachesISODEP, profile.technology == .iso14443A else { return nil }
        let steps = profile.steps.enumerated().map { i, step in
            Step(command: step.apdu, expectedResponse: i < expectedResponses.count ? expectedResponses[i] : nil)
        }
        self.init(rats: profile.rats ?? [0xE0, 0x80], steps: steps)
    }
}
