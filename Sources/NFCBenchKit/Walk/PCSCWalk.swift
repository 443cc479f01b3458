import Foundation
public import HCEEvents
import NFCHardware
import NFCTrace
public import VirtualHardware

/// `walk --device pcsc:READER`: the phone model as a virtual card on vpcd, each ISO-DEP
/// reader profile played by a PC/SC client (`PCSCContext`, `SCardConnect`,
/// `SCardTransmit`) through the real pcscd. Everything blocking runs on one thread of its
/// own; the stand-in app's task runs on the cooperative pool.
public struct PCSCWalk: Sendable {
    public var reader: String
    public var port: UInt16
    public var profiles: [ReaderProfile]
    public var app: ContactlessPhone.DefaultApp
    public var express: [ContactlessPhone.ExpressCredential]
    public var gap: Duration
    public var json: Bool
    public var traceOptions: BenchTraces.Options
    /// The phone's UIDs (random per emulation, `--uid-seed` to repeat them).
    public var uid: HCEPhoneIdentity.UIDChoice
    /// How long pcscd may take to report an insertion or a removal (its presence poll is ≈ 0.4 s).
    public var pcscdNoticeLimit: Duration = .seconds(5)

    /// A walk of `profiles` through pcscd's `reader`, the phone card on vpcd's `port`; the
    /// rest as the properties say.
    public init(
        reader: String, port: UInt16, profiles: [ReaderProfile], app: ContactlessPhone.DefaultApp,
        express: [ContactlessPhone.ExpressCredential], gap: Duration, json: Bool, traceOptions: BenchTraces.Options,
        uid: HCEPhoneIdentity.UIDChoice, pcscdNoticeLimit: Duration = .seconds(5)
    ) {
        self.reader = reader
        self.port = port
        self.profiles = profiles
        self.app = app
        self.express = express
        self.gap = gap
        self.json = json
        self.traceOptions = traceOptions
        self.uid = uid
        self.pcscdNoticeLimit = pcscdNoticeLimit
    }

    public func run() async throws(BenchError) -> Int32 {
        let context: PCSCContext
        do { context = try PCSCContext() } catch {
            throw .unavailable("no pcscd (\(error)); start it, or run under scripts/with-pcscd")
        }
        let readers: [String]
        do { readers = try context.readers() } catch { throw .unavailable("pcscd lists no readers: \(error)") }
        guard readers.contains(reader) else {
            throw .unavailable(
                "pcscd has no reader '\(reader)' (readers: \(readers.isEmpty ? "none" : readers.joined(separator: ", ")))"
            )
        }
        // The reader's lock before a byte reaches it: a session holding it refuses the walk.
        let lease = try takeReader("pcsc:" + reader)
        defer { lease.release() }
        var options = traceOptions
        options.json = json
        let trace = try BenchTraces.open(
            command: "walk", device: "pcsc:\(reader)", model: HCELive.model(app: app, uid: uid),
            setup: ["vpcd_port": .int(Int64(port)), "profiles": .array(profiles.map { .string($0.name) })],
            options: options)
        defer { trace.close() }
        if !json {
            BenchOutput.err(
                "walking \(Figures.count(profiles.count, "profile")) through pcscd, reader '\(reader)', vpcd port \(port). Trace: \(trace.path ?? "none")"
            )
            BenchOutput.out(HCELive.textHeader)
        }
        let phone = HCELive.makePhone(
            app: app, uid: uid, trace: trace, json: json, expressCredentials: express)
        var configuration = VirtualCard.Configuration(port: port)
        configuration.retryInterval = .milliseconds(20)
        let card = HCEPhoneCard(phone: phone, configuration: configuration)

        let failure: String? = await HCELive.onThread { self.walk(context: context, card: card, phone: phone) }
        var summary = HCELive.summary(
            phone.events.map(HCELive.record),
            extra: ["reader_device": .string(reader), "completed": .bool(failure == nil)])
        summary.time = trace.elapsedMicroseconds
        let written = trace.emit(summary)
        if !json { BenchOutput.out(HCELive.summaryText(written)) }
        if let failure { throw .unavailable(failure) }
        return 0
    }

    /// Plays every profile; returns why the walk had to stop, or nil.
    private func walk(context: PCSCContext, card: HCEPhoneCard, phone: HCELivePhone) -> String? {
        for (i, profile) in profiles.enumerated() {
            if i > 0 { sleep(gap) }
            phone.setReader(profile.name)
            guard profile.reachesISODEP else {
                phone.note(
                    .bench, "notShowable",
                    detail:
                        "\(profile.technology.rawValue) reader that never reaches ISO-DEP: PC/SC shows only cards a contactless reader activates; not played, not faked"
                )
                continue
            }
            if let problem = play(profile, context: context, card: card, phone: phone) { return problem }
        }
        return nil
    }

    private func play(_ profile: ReaderProfile, context: PCSCContext, card: HCEPhoneCard, phone: HCELivePhone)
        -> String?
    {
        card.enterField(reader: profile.name, technology: profile.technology, ecp: profile.ecp)
        // The field on is the vpcdConnected line; the profile's times count from it.
        let connectLimit = phone.elapsed + pcscdNoticeLimit
        while !card.isConnected && phone.elapsed < connectLimit { sleep(.milliseconds(1)) }
        guard let fieldOn = phone.events.last(where: { $0.event == "vpcdConnected" && $0.reader == profile.name })?.time
        else {
            card.leaveField()
            return "the phone card could not connect to vpcd on port \(port) (is it the port of '\(reader)'?)"
        }
        guard let state = waitFor(context, until: { $0.hasCard }) else {
            card.leaveField()
            return "pcscd never reported the phone card in '\(reader)' (is vpcd's port \(port) this reader's?)"
        }
        phone.note(
            .pcsc, "pcscCardPresent", response: state.atr,
            detail: "pcscd saw the card \(ms(phone.elapsed - fieldOn)) ms after field on (event #\(state.eventCount))")
        var stopped = false
        var connection: PCSCCard?
        do {
            let c = try context.connect(reader: reader, shareMode: .shared, protocols: [.t0, .t1])
            connection = c
            phone.note(.pcsc, "pcscConnect", detail: "SCardConnect, protocol \(c.activeProtocol)")
        } catch {
            phone.note(.pcsc, "error", detail: "SCardConnect: \(error)")
        }
        if let connection {
            for step in profile.steps {
                let due = fieldOn + step.offset
                let now = phone.elapsed
                if due > now { sleep(due - now) }
                let sent = phone.elapsed
                let response: [UInt8]?
                do {
                    response = try connection.transmit(step.apdu)
                    phone.note(
                        .pcsc, "pcscTransmit", command: step.apdu, response: response,
                        detail: "round trip \((phone.elapsed - sent).wholeMicroseconds) µs"
                            + (due < sent ? ", \(ms(sent - due)) ms after its profile time" : ""))
                } catch {
                    response = nil
                    phone.note(.pcsc, "error", command: step.apdu, detail: "SCardTransmit: \(error)")
                }
                if step.stopOnFailure && !step.accepts(response) {
                    phone.note(
                        .bench, "stopped",
                        detail:
                            "'\(step.note ?? step.apdu.hexString())' failed and the profile stops on failure: field off now"
                    )
                    stopped = true
                    break
                }
            }
            do {
                try connection.disconnect(.leave)
                phone.note(.pcsc, "pcscDisconnect", detail: "SCardDisconnect(SCARD_LEAVE_CARD)")
            } catch {
                phone.note(.pcsc, "error", detail: "SCardDisconnect: \(error)")
            }
        }
        let off = fieldOn + profile.fieldOffOffset
        let now = phone.elapsed
        if !stopped && off > now { sleep(off - now) }
        card.leaveField()
        // Let pcscd see the removal, so the next field is a new insertion.
        if waitFor(context, until: { !$0.flags.contains(.present) }) == nil {
            return "pcscd did not report the phone card's removal from '\(reader)'"
        }
        return nil
    }

    /// Waits (blocking) for `reader`'s state to satisfy `done`, at most ``pcscdNoticeLimit``.
    private func waitFor(_ context: PCSCContext, until done: (PCSCReaderState) -> Bool) -> PCSCReaderState? {
        let limit = ContinuousClock.now + pcscdNoticeLimit
        var known = PCSCReaderState.unaware(reader)
        while ContinuousClock.now < limit {
            guard let change = try? context.waitForStatusChange(readers: [known], timeout: .milliseconds(100)) else {
                return nil
            }
            if case .changed(let states) = change, let s = states.first { known = s }
            if !known.flags.isEmpty, done(known) { return known }
        }
        return nil
    }

    private func sleep(_ d: Duration) {
        guard d > .zero else { return }
        Thread.sleep(forTimeInterval: Double(d.wholeMicroseconds) / 1e6)
    }

    private func ms(_ d: Duration) -> String { String(format: "%.1f", Double(d.wholeMicroseconds) / 1000) }
}
