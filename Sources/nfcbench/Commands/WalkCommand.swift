import Foundation
import HCEEvents
import NFCTags
import ReaderSession

/// `nfcbench walk`: reader profiles played against the phone model, in virtual time.
enum WalkCommand {
    static let command = Command(
        path: ["walk"],
        abstract: "Walk a phone past reader profiles: who wakes the default app, who it could serve",
        usage: "walk [--profiles LIST|DIR] [--app-prefixes AID,...] [--policy stay|step-aside:N] [--express ECP,...] [--gap SECONDS] [--json]",
        help: """
        OPTIONS:
          --profiles LIST|DIR   profile names or files, comma-separated, or a folder of
                                *.json (default: every profile in hardware/readers/)
          --app-prefixes AID,…  the default app's select-identifier-prefixes: full AIDs,
                                RIDs or prefixes of 5..16 bytes, hex (default: none)
          --policy P            stay: the app stays up until field off (default);
                                step-aside:300ms: it steps aside 300 ms after a wake that
                                brought it no APDU
          --express ECP,…       ECP frames (hex, no CRC) of express credentials in Wallet;
                                a reader polling with one of them wins over the default app
          --gap SECONDS         virtual time between two readers (default 2)
          --json                JSON Lines: one object per event, then a summary object

        Virtual time only: no hardware, no real waiting. The stand-in app creates a
        CardSession on each wake, starts emulation and answers every APDU with 90 00.
        """,
        run: { args in
            let profilesArg = try args.option("profiles")
            let prefixesArg = try args.option("app-prefixes")
            let policyArg = try args.option("policy") ?? "stay"
            let expressArg = try args.option("express")
            let gap = try args.seconds("gap") ?? .seconds(2)
            let json = args.flag("json")
            try args.finish()

            guard let policy = AppPolicy(policyArg) else {
                throw CLIError.usage("--policy takes 'stay' or 'step-aside:N' (e.g. step-aside:300ms), not '\(policyArg)'")
            }
            var prefixes: [SelectIdentifierPrefix] = []
            for word in (prefixesArg ?? "").split(separator: ",") where !word.isEmpty {
                do { prefixes.append(try SelectIdentifierPrefix(hex: String(word))) } catch {
                    throw CLIError.usage("--app-prefixes: \(error)")
                }
            }
            var express: [ContactlessPhone.ExpressCredential] = []
            for (i, word) in (expressArg ?? "").split(separator: ",").enumerated() {
                guard let b = [UInt8](hex: word), b.first == 0x6A, b.count >= 2 else {
                    throw CLIError.usage("--express: '\(word)' is not an ECP frame (hex starting 6A)")
                }
                express.append(.init(name: "express\(i + 1)", ecpFrame: b))
            }
            let profiles = try loadProfiles(profilesArg)
            let walk = ReaderWalk(
                profiles: profiles, app: .init(name: "app", selectIdentifierPrefixes: prefixes),
                policy: policy, expressCredentials: express, gap: gap)
            let result = await walk.run()
            if json {
                for e in result.events { Output.out(jsonLine(e).serialized) }
                Output.out(summaryJSON(result.summary, walk: walk).serialized)
            } else {
                Output.out(timeline(result, walk: walk))
            }
            return 0
        })

    static func loadProfiles(_ arg: String?) throws(CLIError) -> [ReaderProfile] {
        let fm = FileManager.default
        var files: [String] = []
        func addDirectory(_ dir: String) throws(CLIError) {
            guard let names = try? fm.contentsOfDirectory(atPath: dir) else {
                throw .data("can't list '\(dir)'")
            }
            let json = names.filter { $0.hasSuffix(".json") }.sorted()
            guard !json.isEmpty else { throw .data("no *.json profiles in '\(dir)'") }
            files += json.map { dir + "/" + $0 }
        }
        if let arg {
            for word in arg.split(separator: ",").map(String.init) where !word.isEmpty {
                var isDir: ObjCBool = false
                if fm.fileExists(atPath: word, isDirectory: &isDir), isDir.boolValue {
                    try addDirectory(word)
                } else {
                    files.append(try DataLocation.require(word, in: "readers"))
                }
            }
        } else {
            guard let hw = DataLocation.hardwareDirectory() else {
                throw .data("no hardware/readers folder found (set NFCBENCH_DATA or use --profiles)")
            }
            try addDirectory(hw + "/readers")
        }
        var profiles: [ReaderProfile] = []
        for f in files {
            guard let data = fm.contents(atPath: f) else { throw .data("can't read '\(f)'") }
            do { profiles.append(try ReaderProfile(json: data, file: URL(fileURLWithPath: f).lastPathComponent)) } catch {
                throw .data(error.description)
            }
        }
        return profiles
    }

    static func jsonLine(_ e: WalkEvent) -> JSONObject {
        var o: JSONObject = ["t_us": .int(e.time.wholeMicroseconds), "reader": .string(e.reader), "event": .string(e.event)]
        if let c = e.command { o["apdu"] = .string(c.hexString()) }
        if e.event == "apdu" {
            o["response"] = e.response.map { .string($0.hexString()) } ?? .null
            o["answered_by"] = e.answeredBy.map { .string($0.rawValue) } ?? .null
        }
        if let d = e.detail {
            let key = switch e.event {
            case "sessionInvalidated": "reason"
            case "stopEmulation": "status"
            case "fieldOn": "technology"
            default: "detail"
            }
            o[key] = .string(d)
        }
        return o
    }

    static func summaryJSON(_ s: WalkSummary, walk: ReaderWalk) -> JSONObject {
        let p = walk.parameters
        return [
            "event": "summary",
            "readers": .int(Int64(s.readers.count)),
            "wakes": .int(Int64(s.wakes)),
            "servable_wakes": .int(Int64(s.servableWakes)),
            "useless_wakes": .int(Int64(s.uselessWakes)),
            "up_for_nothing_us": .int(s.upForNothing.wholeMicroseconds),
            "policy": .string(walk.policy.description),
            "app_prefixes": .array(walk.app.selectIdentifierPrefixes.map { .string($0.description) }),
            "parameters": .object([
                "maximum_session_duration_us": .int(p.maximumSessionDuration.wholeMicroseconds),
                "maximum_duration_cool_down_us": .int(p.maximumDurationCoolDown.wholeMicroseconds),
                "frame_waiting_time_us": .int(p.frameWaitingTime.wholeMicroseconds),
                "wake_latency_us": .int(p.wakeLatency.wholeMicroseconds),
            ]),
            "per_reader": .array(s.readers.map { r in
                .object([
                    "reader": .string(r.name), "woke": .bool(r.woke), "served": .bool(r.served),
                    "apdus_to_app": .int(Int64(r.apdusToApp)), "apdus_by_system": .int(Int64(r.apdusBySystem)),
                    "up_for_nothing_us": .int(r.upForNothing.wholeMicroseconds),
                ])
            }),
        ]
    }

    static func ms(_ d: Duration) -> String {
        let us = d.wholeMicroseconds
        return String(format: "%.3f", Double(us) / 1000)
    }

    static func timeline(_ r: ReaderWalk.Result, walk: ReaderWalk) -> String {
        let readerWidth = max(8, (r.events.map(\.reader.count).max() ?? 0) + 2)
        func pad(_ s: String, _ n: Int) -> String { s.count >= n ? s + " " : s + String(repeating: " ", count: n - s.count) }
        func lpad(_ s: String, _ n: Int) -> String { s.count >= n ? s : String(repeating: " ", count: n - s.count) + s }
        var out = lpad("t (ms)", 12) + "  " + pad("reader", readerWidth) + pad("event", 20) + "detail\n"
        var lastReader: String?
        for e in r.events {
            if let l = lastReader, l != e.reader { out += "\n" }
            lastReader = e.reader
            var detail = e.detail ?? ""
            switch e.event {
            case "apdu":
                let resp = e.response.map { $0.hexString(separator: " ") } ?? "(no answer)"
                detail = (e.command?.hexString(separator: " ") ?? "") + " → " + resp
                    + "  [" + (e.answeredBy?.rawValue ?? "reader timeout") + "]"
            case "received": detail = e.command?.hexString(separator: " ") ?? ""
            case "nfcEvent": detail = "default app woken (scene nfcEvent)"
            default: break
            }
            out += lpad(ms(e.time), 12) + "  " + pad(e.reader, readerWidth) + pad(e.event, 20) + detail + "\n"
        }
        let s = r.summary
        out += "\nSUMMARY (policy \(walk.policy), app prefixes: \(walk.app.selectIdentifierPrefixes.map(\.description).joined(separator: ",").nonEmpty ?? "none"))\n"
        for x in s.readers {
            out += "  " + pad(x.name, readerWidth) + (x.woke ? "woke  " : "quiet ")
                + (x.served ? "served (\(x.apdusToApp) APDU to app)" : "useless, up \(ms(x.upForNothing)) ms for nothing") + "\n"
        }
        out += "  readers \(s.readers.count), wakes \(s.wakes), wakes the app could serve \(s.servableWakes), useless wakes \(s.uselessWakes), app up for nothing \(ms(s.upForNothing)) ms\n"
        return out
    }
}

extension String {
    fileprivate var nonEmpty: String? { isEmpty ? nil : self }
}
