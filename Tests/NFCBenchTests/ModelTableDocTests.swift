import Foundation
import HCEEvents
import NFCBenchTestSupport
import ReaderSession
import Testing
import VirtualHardware

/// `docs/model.md` is generated from the models' own parameter lists; a parameter added to
/// a model without a fact (or a fact changed without the docs) fails here.
@Suite("docs/model.md: every model number and rule, generated")
struct ModelTableDocTests {
    static let path = TestPaths.packageRoot.appendingPathComponent("docs/model.md").path

    /// The file's contents from the models' defaults.
    static var generated: String {
        var out = """
            # The model's numbers and rules

            Generated from `ReaderSystemModel`, `ThermalModel.Parameters`, `BackgroundTagReading` and `HCEParameters` at
            their defaults (`NFCBENCH_WRITE_DOCS=1 swift test --filter ModelTableDocTests` rewrites
            it). Each row says its label — **documented** (an Apple header, page or symbol),
            **reported** (a public field report or trace, linked) or **assumed** (ours) — the source,
            and what that source actually covers, so a value that is sourced can be told from one
            that is stretched. `nfcbench session --help` prints the reader rows for a run's own
            settings; every trace header carries them in its `model` object.

            ## Reader sessions (Core NFC)


            """
        out += ReaderSystemModel().facts(thermal: ThermalModel.Parameters()).markdownTable
        out += """

            ## Background tag reading (no reader session)

            The phone reading NDEF tags by itself and handing a universal link's message to the app
            (`NSUserActivity.ndefMessagePayload`); conformance scenarios turn it on with
            `background_reading` (`hardware/conformance/FORMAT.md`).


            """
        out += BackgroundTagReading().facts.markdownTable
        out += """

            ## The default contactless app (iOS HCE, `walk` and `emulate`)

            At the walk's defaults (`HCEParameters.walkDefaults`); `HCEParameters()`, the library's
            and the live phone's (`emulate`, `walk --device`), has 0 for the two latencies the walk
            assumes.

            | parameter | value | label | source |
            |---|---|---|---|

            """
        for f in HCEParameters.walkDefaults.facts + HCEPhoneIdentity.facts {
            out +=
                "| `\(f.key)` | \(f.value) | \(f.source) | \(f.reference.split(separator: "|").joined(separator: "\\|")) |\n"
        }
        return out
    }

    @Test("docs/model.md is what the models generate; every reader-model parameter has a fact")
    func inStep() throws {
        let text = Self.generated
        if ProcessInfo.processInfo.environment["NFCBENCH_WRITE_DOCS"] == "1" {
            try Data(text.utf8).write(to: URL(fileURLWithPath: Self.path))
        }
        let onDisk = try String(contentsOfFile: Self.path, encoding: .utf8)
        #expect(
            onDisk == text,
            "docs/model.md is out of step with the models: NFCBENCH_WRITE_DOCS=1 swift test --filter ModelTableDocTests"
        )
        let keys = Set(ReaderSystemModel().facts.map(\.key))
        for child in Mirror(reflecting: ReaderSystemModel()).children {
            guard let name = child.label else { continue }
            let named = ReaderSystemModel.factKeysByProperty[name] ?? []
            #expect(!named.isEmpty, "ReaderSystemModel.\(name) has no row")
            for k in named { #expect(keys.contains(k), "\(name): \(k)") }
        }
        let backgroundKeys = Set(BackgroundTagReading().facts.map(\.key))
        for child in Mirror(reflecting: BackgroundTagReading()).children {
            guard let name = child.label else { continue }
            let named = BackgroundTagReading.factKeysByProperty[name] ?? []
            #expect(!named.isEmpty, "BackgroundTagReading.\(name) has no row")
            for k in named { #expect(backgroundKeys.contains(k), "\(name): \(k)") }
        }
        let hceKeys = Set(HCEParameters().facts.map(\.key))
        for child in Mirror(reflecting: HCEParameters()).children {
            guard let name = child.label else { continue }
            let named = HCEParameters.factKeysByProperty[name] ?? []
            #expect(!named.isEmpty, "HCEParameters.\(name) has no row")
            for k in named { #expect(hceKeys.contains(k), "\(name): \(k)") }
        }
        let identityKeys = Set(HCEPhoneIdentity.facts.map(\.key))
        for child in Mirror(reflecting: HCEPhoneIdentity()).children {
            guard let name = child.label else { continue }
            #expect(identityKeys.contains("phone_" + name), "HCEPhoneIdentity.\(name) has no row")
        }
    }
}
