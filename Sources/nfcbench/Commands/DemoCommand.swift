import Foundation
import NFCBenchKit
import NFCFiles
import NFCHardware
import NFCTags
import NFCTrace
import ReaderSession
import Synchronization
import VirtualHardware

/// `nfcbench demo`: the main job on the virtual bench, with no hardware.
///
/// The demo presents its own card and reads it: on a private pcscd (through
/// `scripts/with-pcscd`: own mount and network namespace, the project's vpcd reader, so no one
/// else's card can be on it) when it may, else on the virtual PN532 on a pseudo-terminal
/// (libnfc, no daemon); a running pcscd, which other people's cards share, only when asked
/// (`--bench shared-pcscd`). Its card must be in the field (vpcd polled it) before the
/// sessions begin, and every UID the sessions detect must be the presented one: anything
/// else is an error that says what was read. Then three sessions, the way an app runs them:
/// a first read (decoded NDEF, 204), a session cut by a short timeout (201), and a second
/// session refused while another is active (203). Every line printed is rendered from a trace
/// record; the trace's path is printed last.
///
/// Signals (README "Signals"): the session running ends as `session` ends it (SIGINT: Done,
/// 200; SIGTERM, SIGHUP: 202; SIGTSTP: 202), then the demo stops there and exits with that
/// ending's status (10 for Done, 12 for 202). With a private pcscd the demo runs twice: this
/// process starts `with-pcscd` (in its own process group, with default signal masks) running
/// the demo inside, forwards every signal to it, and the inner demo ends when this one is gone
/// (its standard input is a pipe this process holds); pcscd dies with the inner demo.
enum DemoCommand {
    static let command = Command(
        path: ["demo"],
        abstract: "The main job on the virtual bench: a first read (204), a timeout (201), a busy reader (203)",
        options: [
            OptionSpec(
                "tag", value: "NAME",
                help: "the tag to present (hardware/tags/; default t4t-uri on PC/SC,\nntag215-uri on the PN532)"),
            OptionSpec(
                "bench", .choice(["auto", "pcscd", "pn532", "shared-pcscd"]), value: "B",
                help: """
                    auto: a private pcscd of the demo's own (scripts/with-pcscd),
                    else the virtual PN532; pcscd / pn532 force one; shared-pcscd uses a
                    running pcscd's "Virtual PCD 00 00" (vpcd port 35963), which others share
                    """, default: .text("auto")),
            OptionSpec(
                "timeout", .duration(bare: .seconds, moreThanZero: false),
                help: "the short time limit of the second session", default: .duration(.seconds(2))),
            OutputOptions.json("print the trace's records as JSON Lines instead of text"),
        ] + Traces.Options.table(redact: false),
        discussion: """
            Needs, for the PC/SC bench: pcscd and vsmartcard-vpcd (and unshare, ip for a
            private pcscd); for the PN532 bench: libnfc6. './bench demo' installs them.
            The demo reads only its own card: a card that is not in the field within 3 s (vpcd's
            port held by another card) or a UID other than the presented one is an error (69, 1).
            Ctrl-C ends the running session with Done (200) and stops the demo (exit 10);
            SIGTERM or SIGHUP end it with 202 (exit 12). See README "Signals".
            Exit status: 0 when the three sessions end with 204, 201 and 203 as expected.
            """,
        validate: { o throws(CLIError) in _ = try Traces.Options(o) },
        run: { o in
            let tag = o.string("tag")
            let benchChoice = o.string("bench")!
            let shortLimit = o.duration("timeout")!
            let json = o.flag("json")
            var traceOptions = try Traces.Options(o)
            traceOptions.json = json
            let env = ProcessInfo.processInfo.environment
            let inner = env[PrivatePCSCD.innerMarker] == "private-pcscd"
            if inner { PrivatePCSCD.endWhenParentIsGone() }

            // The first signal stops the demo after the session it ends (or before the next one).
            let stopper = DemoStop()
            let signals = Signals.handle { sig in stopper.received(sig) }
            defer { signals.cancel() }

            // 1. A private pcscd: re-run this command inside scripts/with-pcscd.
            var noPrivate: String? = nil
            if !inner, benchChoice == "auto" || benchChoice == "pcscd" {
                switch try await PrivatePCSCD.runUnderPrivatePCSCD() {
                case .ran(let status): return status
                case .unavailable(let why):
                    if benchChoice == "pcscd" { throw CLIError.unavailable("no private pcscd for the demo: \(why)") }
                    noPrivate = why
                }
            }
            // 2. Present the demo's own card on the bench.
            let bench = try await presentCard(
                tag: tag, vpcd: inner || benchChoice == "shared-pcscd", shared: benchChoice == "shared-pcscd",
                noPrivate: noPrivate)
            defer { bench.stop() }
            // The demo sets its own limits and switches the thermal model off; the header says why.
            var demoOptions = SessionRunner.Options()
            demoOptions.thermal = false
            demoOptions.timeLimit = .seconds(20)
            demoOptions.thermalOffReason = DemoCommand.thermalOffReason
            var demoModel = SessionRunner.headerModel(demoOptions)
            demoModel["short_time_limit_s"] = .double(BenchCommand.seconds(shortLimit))
            let trace = try Traces.open(
                command: "demo", device: bench.device, model: demoModel, options: traceOptions,
                inputs: tag.flatMap { DataLocation.resolve($0, in: "tags") }.map { [NamedFile("--tag \($0)", $0)] }
                    ?? [])
            defer { trace.close() }
            let say: @Sendable (String) -> Void = { text in
                let o = TraceRecord(.demo, at: trace.elapsedMicroseconds, ["message": .string(text)])
                trace.emit(o)
                if !json, let line = TraceLines.render(o) { Output.out(line) }
            }
            for line in bench.lines { say(line) }
            // Ends the demo early: a signal, or a card that is not the demo's.
            func finish(_ status: Int32) -> Int32 {
                trace.close()
                if !json, let path = trace.path { Output.out("trace: \(path)") }
                return status
            }
            func stoppedBySignal() -> Int32? {
                guard let sig = stopper.signal else { return nil }
                say("stopped by \(Signals.name(sig)) (README \"Signals\")")
                return finish(DemoStop.exitStatus(for: sig))
            }
            func foreignCard(_ runner: SessionRunner) -> Int32? {
                guard let other = foreignUID(presented: bench.uid, detected: runner.detectedUIDs) else { return nil }
                say(DemoCommand.foreignCardMessage(presented: bench.name, uid: bench.uid, read: other))
                return finish(1)
            }

            let backend = try DeviceFactory.backend(bench.device)
            var options = SessionRunner.Options()
            options.json = json
            options.thermal = false
            options.thermalOffReason = DemoCommand.thermalOffReason
            say("time limits: the demo's own (20 s, and a short one); " + DemoCommand.thermalOffReason)
            if let status = stoppedBySignal() { return status }

            // 3. A first read: the decoded NDEF, then 204.
            say("session 1: NFCNDEFReaderSession(invalidateAfterFirstRead: true) - hold the tag")
            options.firstRead = true
            options.timeLimit = .seconds(20)
            let firstRunner = SessionRunner(backend: backend, options: options, trace: trace)
            let first = await firstRunner.run()
            if let status = foreignCard(firstRunner) ?? stoppedBySignal() { return status }

            // 4. A session cut by a short time limit: 201.
            say(
                "session 2: the same session type without first-read and a \(String(format: "%.1f", BenchCommand.seconds(shortLimit))) s time limit"
            )
            options.firstRead = false
            options.timeLimit = shortLimit
            options.sessionNumberOffset = 1
            let secondRunner = SessionRunner(backend: backend, options: options, trace: trace)
            let second = await secondRunner.run()
            if let status = foreignCard(secondRunner) ?? stoppedBySignal() { return status }

            // 5. Busy: a session is active; a second one on the same reader is refused (203).
            say("session 3: a session is active; a second session on the same reader begins")
            options.timeLimit = .seconds(20)
            options.sessionNumberOffset = 2
            let holder = SessionRunner(backend: backend, options: options, trace: trace)
            async let held = holder.run()
            // Session 4 begins once session 3 is active and its didBecomeActive is written, so
            // the output shows them in that order.
            for _ in 0..<400
            where (holder.system.activeSessionCount == 0 || !holder.hasShownActive) && stopper.signal == nil {
                try? await Task.sleep(for: .milliseconds(5))
            }
            options.sessionNumberOffset = 3
            let busy = await SessionRunner(backend: backend, options: options, trace: trace).run()
            if stopper.signal == nil {
                say("the user taps Done on the first sheet")
                holder.system.userTappedDone()
            }
            let done = await held
            if let status = foreignCard(holder) ?? stoppedBySignal() { return status }

            let ok =
                first.code == .readerSessionInvalidationErrorFirstNDEFTagRead
                && second.code == .readerSessionInvalidationErrorSessionTimeout
                && busy.code == .readerSessionInvalidationErrorSystemIsBusy
            say(
                "endings: \(first.code.rawValue), \(second.code.rawValue), \(busy.code.rawValue) (and \(done.code.rawValue) for the held session)"
                    + (ok ? " - as expected" : " - expected 204, 201, 203"))
            return finish(ok ? 0 : 1)
        })

    /// The first UID among `detected` that is not the presented card's, if any.
    static func foreignUID(presented: [UInt8], detected: [[UInt8]]) -> [UInt8]? {
        detected.first { $0 != presented }
    }

    /// The error when a session read a card that is not the one the demo presented.
    static func foreignCardMessage(presented name: String, uid: [UInt8], read other: [UInt8]) -> String {
        "error: the demo presented \(name) (UID \(uid.hexString(separator: " "))) but read a card with UID \(other.hexString(separator: " ")): another card is on this reader, so the demo stops (its card must be the only one: use the private bench, --bench pcscd or pn532)"
    }

    /// The demo's own card, presented on a bench.
    struct Bench: Sendable {
        var name: String
        var uid: [UInt8]
        var device: String
        var lines: [String]
        var stop: @Sendable () -> Void
    }

    /// Presents the tag: as a vpcd card (the private pcscd, or a shared one) once it is in the
    /// field, or on the virtual PN532.
    static func presentCard(tag: String?, vpcd: Bool, shared: Bool, noPrivate: String?) async throws(CLIError)
        -> Bench
    {
        if vpcd {
            guard PrivatePCSCD.vpcdReaderAvailable() else {
                throw .unavailable(
                    shared
                        ? "no running pcscd with a 'Virtual PCD 00 00' reader: install pcscd and vsmartcard-vpcd, or use --bench pcscd (a private one) or pn532"
                        : "the private pcscd has no 'Virtual PCD 00 00' reader (hardware/pcsc)")
            }
            let name = tag ?? "t4t-uri"
            let (_, file, personality) = try loadVirtualCard(name)
            // A shared pcscd's vpcd reader may be in reversed mode (hardware/pcsc-loopback):
            // then vpcd connects to the card, which listens on 127.0.0.1.
            var configuration = VirtualCard.Configuration(port: 35963)
            configuration.reversed =
                shared
                && BenchDoctor(root: "/", uid: getuid(), groups: [], environment: [:]).vpcdEntries()
                    .contains { $0.host?.hasPrefix("127.") == true }
            let card = VirtualCard(personality: personality, configuration: configuration)
            card.start()
            do {
                try await CardLink.awaitInField(
                    card, otherSlot: "run the demo on its own private pcscd (without --bench shared-pcscd)")
            } catch {
                card.stop()
                throw error
            }
            return Bench(
                name: name, uid: file.identifier, device: "pcsc:Virtual PCD 00 00",
                lines: [
                    shared
                        ? "bench: the running pcscd's vpcd reader 'Virtual PCD 00 00' (shared: --bench shared-pcscd)"
                        : "bench: a private pcscd (own mount and network namespace) with the vpcd reader 'Virtual PCD 00 00'",
                    "presenting \(name) (UID \(file.identifier.hexString(separator: " "))) as a virtual card on vpcd (TCP 35963)",
                ], stop: { card.stop() })
        }
        let name = tag ?? "ntag215-uri"
        let (file, _) = try loadPN532Card(name)
        let device: String
        let stop: @Sendable () -> Void
        do {
            (device, stop) = try LibNFCDevices.startVirtualBench(tag: name)
        } catch let e as CLIError {
            throw e
        } catch {
            throw .unavailable(
                """
                no virtual bench can be had here: \(error)
                PC/SC bench: needs pcscd and vsmartcard-vpcd (plus unshare and ip for a private pcscd)
                PN532 bench: needs libnfc6 and a pseudo-terminal; './bench demo' installs what is missing
                """)
        }
        return Bench(
            name: name, uid: file.identifier, device: device,
            lines: [
                noPrivate.map {
                    "bench: no private pcscd (\($0)); the virtual PN532 on a pseudo-terminal, through libnfc's pn532_uart driver"
                } ?? "bench: the virtual PN532 on a pseudo-terminal, through libnfc's pn532_uart driver (no daemon)",
                "presenting \(name) (UID \(file.identifier.hexString(separator: " "))) on \(device)",
            ], stop: stop)
    }

    /// Why the demo's limits are not the thermal model's (said on screen and in the trace header).
    static let thermalOffReason =
        "the thermal model is off so that its heat does not shorten the three sessions; Core NFC's own limit is 60 s"

}

/// The first signal the demo received (it stops after the session that signal ended).
final class DemoStop: Sendable {
    private let first = Mutex<Int32?>(nil)
    var signal: Int32? { first.withLock { $0 } }
    func received(_ sig: Int32) { first.withLock { if $0 == nil { $0 = sig } } }

    /// The status of the ending the signal gives a session: 10 for Done (SIGINT), 12 for 202.
    static func exitStatus(for sig: Int32) -> Int32 {
        SessionRunner.Ending(
            code: sig == SIGINT
                ? .readerSessionInvalidationErrorUserCanceled
                : .readerSessionInvalidationErrorSessionTerminatedUnexpectedly,
            reads: 0
        ).exitStatus
    }
}
