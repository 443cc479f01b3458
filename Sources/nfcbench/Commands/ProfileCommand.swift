import FoundationEssentials
import HCEEvents
import NFCFiles
import NFCTags
import NFCTrace

/// `nfcbench profile import`: a Proxmark3 trace → a reader profile (JSON).
enum ProfileCommand {
    static let command = Command(
        path: ["profile", "import"],
        abstract: "Turn a Proxmark3 .trace into a reader profile for 'nfcbench walk'",
        options: [
            OptionSpec("name", value: "NAME", help: "profile name (default: the trace's file name without extension)"),
            OptionSpec("category", value: "C", help: "category (default: imported)"),
            OptionSpec(
                "out", value: "FILE",
                help: "write the profile there (default, or -: standard output); refused when it is TRACE"),
        ],
        positionals: [
            PositionalSpec(
                name: "TRACE",
                help: "a Proxmark3 .trace file (ISO 14443 A or B, or FeliCa; sniff or reader log); - for standard input"
            )
        ],
        discussion: """
            Reader→card frames are kept; ISO 14443-4 I-blocks are unwrapped into APDUs (PCB,
            CID, NAD, chaining); each step's expect_sw is the status word the card answered;
            times are µs from the first frame (carrier periods / 13.56 MHz). RATS, ATS and an
            Apple ECP frame are noted. The technology is what the frames show: type A (REQA,
            WUPA, RATS), type B (REQB/WUPB, ATQB, ATTRIB; CRC_B) or FeliCa (Polling); a trace
            with none of them is refused (exit 65). An answer that is not an ISO 7816-4
            response (a native command's status byte, a MAC at the end) gets no expect_sw:
            the raw answer is kept in the step's note. Format: hardware/readers/FORMAT.md.
            """,
        run: { o in
            let name = o.string("name")
            let out = o.string("out")
            let category = o.string("category")
            let path = o.positional(0)!
            let target = try out.map { p throws(CLIError) in try Outputs.plan(p, option: "--out") }
            if let out {
                try Outputs.refuseSameFiles(
                    outputs: [NamedFile("--out \(out)", out)], inputs: [NamedFile("the trace \(path)", path)])
            }
            let data: Data
            do throws(DataFileError) { data = try DataFile.read(path) } catch { throw CLIError(error) }
            let trace: ProxmarkTrace
            do { trace = try ProxmarkTrace(bytes: [UInt8](data)) } catch {
                throw CLIError.data("\(path): \(error)")
            }
            let base = path == "-" ? "standard input" : FilePath.lastComponent(of: path)
            let stem = path == "-" ? "imported" : FilePath.stem(of: base)
            let report: ProxmarkProfileImporter.Report
            do {
                report = try ProxmarkProfileImporter.profile(
                    from: trace, name: name ?? stem,
                    source: "Proxmark3 trace \(base), imported by 'nfcbench profile import'")
            } catch {
                throw CLIError.data("\(path): \(error)")
            }
            var profile = report.profile
            if let category { profile.category = category }
            if report.rawAnswers > 0 {
                Output.err(
                    "warning: \(report.rawAnswers) answer(s) are not ISO 7816-4 responses (native commands): "
                        + "no expect_sw for them, the raw answer is in the step's note")
            }
            if report.damagedFrames > 0 {
                Output.err("warning: \(report.damagedFrames) damaged frame(s) (bad CRC or too short) were skipped")
            }
            if profile.steps.isEmpty && profile.reachesISODEP {
                throw CLIError.data(
                    "\(path): the reader reached ISO-DEP but no APDU survived the import "
                        + "(\(report.damagedFrames) damaged frame(s)); is this a Proxmark3 ISO 14443-A trace?")
            }
            let text = profile.jsonText()
            if let out, let target, target.destination != .descriptor(1) {
                do throws(FileError) { try target.write(Array(text.utf8)) } catch {
                    throw CLIError(FileError(error.kind, path: error.path, "can't write the profile: \(error.reason)"))
                }
                Output.err(
                    "\(out): \(report.profile.steps.count) APDU(s), ISO-DEP \(report.profile.reachesISODEP ? "yes" : "no")\(report.profile.ecp != nil ? ", ECP" : "")"
                )
            } else {
                Output.raw(text)
            }
            return 0
        })
}
