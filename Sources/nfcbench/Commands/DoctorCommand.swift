import Foundation
import NFCBenchKit

/// `nfcbench doctor`: checks a bench and says what to fix.
///
/// Reads everything below a root folder (`/` by default; `$NFCBENCH_DOCTOR_ROOT` or the
/// hidden `--root DIR` for tests, holding `proc/`, `sys/`, `dev/`, `var/lib/dpkg/status`).
enum DoctorCommand {
    static let command = Command(
        path: ["doctor"],
        abstract:
            "Check the bench (kernel modules, pcscd, permissions, busy ports, packages, LIBNFC_*) and say what to fix",
        options: [
            DeviceOptions.device(
                required: false, environment: false,
                help: "also check this device's port (a tty held, a reader missing)"),
            OutputOptions.json("one JSON object per check"),
            OptionSpec(
                "root", value: "DIR", help: "read proc/, sys/, dev/ and var/lib/dpkg/status below DIR (for tests)",
                default: .text("/"), environment: "NFCBENCH_DOCTOR_ROOT", completion: .directory),
            OptionSpec(
                "as-uid", .int(0...Int(UInt32.max)), value: "UID", help: "check permissions as this user (for tests)"),
        ],
        discussion: """
            Checks, each with a fix line when something is wrong:
              - the kernel's pn533/pn533_usb modules (/proc/modules, where the kernel lists modules;
                else the pn533_usb driver in /sys/bus/usb/drivers) and readers they claim: libnfc
                can't open a reader the kernel NFC stack holds
              - pcscd, by connecting to it (SCardEstablishContext, as every PC/SC client does: a socket
                file or a process alone is not a pcscd that answers), and pcscd with an ACR122U
                plugged in: Debian's libnfc has no PC/SC driver, so libnfc's acr122_usb can't have it
                while pcscd does
              - permissions on /dev/bus/usb nodes of known readers and on /dev/ttyUSB*/ttyACM*
              - a tty held by two processes (libnfc takes no lock), or the --device port already in use
              - missing Debian packages (libnfc6, libnfc-bin, pcscd, libpcsclite1, pcsc-tools, vsmartcard-vpcd)
              - LIBNFC_* environment variables, and a LIBNFC_DEVICE that points nowhere
              - vpcd reachable from the network: a port of a vpcd reader (35963, 35964 and those
                /etc/reader.conf.d names) listening beyond loopback, and reader.conf.d entries in
                vpcd's listen mode, which binds 0.0.0.0 whenever pcscd starts
            Exit 0 when all is well, 1 when something needs fixing.
            """,
        run: { o in
            let uid = o.int("as-uid").map { UInt32($0) } ?? getuid()
            let (lines, status) = report(
                root: o.string("root")!, device: o.string("device"), uid: uid, json: o.flag("json"),
                environment: ProcessInfo.processInfo.environment)
            for line in lines { Output.out(line) }
            return status
        })

    /// What `doctor` prints (its lines) and its exit status, for the checks over `root` as `uid`
    /// in `environment`: callable without a process.
    static func report(root: String, device: String?, uid: UInt32, json: Bool, environment: [String: String])
        -> (lines: [String], status: Int32)
    {
        let doctor = BenchDoctor(
            root: root, uid: uid, groups: uid == getuid() ? currentGroups() : [],
            environment: environment, pcscdAnswer: BenchDoctor.askPCSCD())
        let findings = doctor.run(device: device)
        var lines: [String] = []
        for f in findings {
            if json {
                var line = "{\"check\":\"\(f.check)\",\"ok\":\(f.ok),\"message\":\(quote(f.message))"
                if let fix = f.fix { line += ",\"fix\":\(quote(fix))" }
                lines.append(line + "}")
            } else {
                lines.append((f.ok ? "ok    " : "FIX   ") + f.message)
                // Beside "ok" the advice is a note (nothing is wrong for what the bench
                // does now); beside "FIX" it is the fix.
                if let fix = f.fix { lines.append("      \(f.ok ? "note" : "fix"): \(fix)") }
            }
        }
        let problems = findings.filter { !$0.ok }.count
        if !json { lines.append(problems == 0 ? "all is well" : "\(problems) thing(s) to fix") }
        return (lines, problems == 0 ? 0 : 1)
    }

    static func currentGroups() -> Set<UInt32> {
        var list = [gid_t](repeating: 0, count: 256)
        let n = getgroups(Int32(list.count), &list)
        return Set(list.prefix(max(0, Int(n)))).union([getgid()])
    }

    static func quote(_ s: String) -> String {
        var o = "\""
        for u in s.unicodeScalars {
            switch u {
            case "\"": o += "\\\""
            case "\\": o += "\\\\"
            case _ where u.value < 0x20: o += String(format: "\\u%04x", u.value)
            default: o.unicodeScalars.append(u)
            }
        }
        return o + "\""
    }
}
