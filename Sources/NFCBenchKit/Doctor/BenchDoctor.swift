import Foundation
import NFCHardware

/// One result of ``BenchDoctor``.
public struct DoctorFinding: Sendable, Equatable {
    public var check: String
    public var ok: Bool
    public var message: String
    /// What to do: the fix of a problem, or, on a finding that is ok, advice for later (no
    /// pcscd is fine for libnfc readers; PC/SC commands will need one), printed as "note:".
    /// JSON's key is `fix` either way.
    public var fix: String?

    public init(check: String, ok: Bool, message: String, fix: String? = nil) {
        self.check = check
        self.ok = ok
        self.message = message
        self.fix = fix
    }
}

/// The checks of `nfcbench doctor`, over a root folder so tests can fake `/proc`, `/sys`, `/dev`
/// and dpkg's status.
///
/// Each check returns its findings (``DoctorFinding``: the check's name, whether all is well, a
/// sentence, and what to do); ``run(device:)`` runs them all in the command's order. Nothing
/// throws: what can't be read is itself a finding. Blocking file reads: call off Swift's pool.
public struct BenchDoctor: Sendable {
    public var root: String
    public var uid: UInt32
    public var groups: Set<UInt32>
    public var environment: [String: String]
    /// What connecting to pcscd gave: its readers, or why it did not answer.
    public var pcscdAnswer: Result<[String], PCSCDAnswer> = .failure(PCSCDAnswer(reason: "not asked"))

    /// Why pcscd did not answer (the PC/SC error's text).
    public struct PCSCDAnswer: Error, Sendable {
        public var reason: String
        public init(reason: String) { self.reason = reason }
    }

    /// A doctor over `root` (`/` for this machine) for the user `uid` in `groups` (empty when
    /// not known: the permission checks then judge by `uid` alone), with the environment the
    /// `LIBNFC_*` check reads and pcscd's answer (``askPCSCD()``; "not asked" by default).
    public init(
        root: String, uid: UInt32, groups: Set<UInt32>, environment: [String: String],
        pcscdAnswer: Result<[String], PCSCDAnswer> = .failure(PCSCDAnswer(reason: "not asked"))
    ) {
        self.root = root
        self.uid = uid
        self.groups = groups
        self.environment = environment
        self.pcscdAnswer = pcscdAnswer
    }

    /// Connects to pcscd the way every PC/SC client does (`SCardEstablishContext`, then
    /// `SCardListReaders`): the socket it uses is pcsc-lite's (`$PCSCLITE_CSOCK_NAME`, else
    /// `/run/pcscd/pcscd.comm`).
    public static func askPCSCD() -> Result<[String], PCSCDAnswer> {
        do {
            return .success(try PCSCContext().readers())
        } catch {
            return .failure(PCSCDAnswer(reason: "\(error)"))
        }
    }

    /// USB readers libnfc drives (vendor:product → name).
    public static let knownReaders: [String: String] = [
        "072f:2200": "ACS ACR122U", "04cc:2533": "NXP PN533", "04e6:5591": "SCM SCL3711",
        "054c:02e1": "Sony RC-S360", "1fd3:0608": "ASK LoGO", "072f:90cc": "ACS ACR38U-CCID",
    ]
    public static let packages = ["libnfc6", "libnfc-bin", "pcscd", "libpcsclite1", "pcsc-tools", "vsmartcard-vpcd"]

    private func path(_ p: String) -> String { root == "/" ? p : root + p }
    private let fm = FileManager.default

    public func run(device: String?) -> [DoctorFinding] {
        modules() + pcscd() + permissions() + busyPorts(device: device) + packages() + libnfcEnvironment()
            + vpcdNetwork()
    }

    public func modules() -> [DoctorFinding] {
        let nfc: [String]
        if let text = try? String(contentsOfFile: path("/proc/modules"), encoding: .utf8) {
            let loaded = Set(text.split(separator: "\n").compactMap { $0.split(separator: " ").first.map(String.init) })
            nfc = ["pn533_usb", "pn533"].filter(loaded.contains)
        } else if fm.fileExists(atPath: path("/proc/modules")) {
            return [
                DoctorFinding(
                    check: "modules", ok: false, message: "cannot read /proc/modules; kernel NFC modules not checked",
                    fix: "run doctor as a user who may read /proc/modules")
            ]
        } else {
            // A kernel without loadable modules lists none; a built-in pn533_usb still
            // registers its USB driver.
            guard fm.fileExists(atPath: path("/sys/bus/usb/drivers/pn533_usb")) else {
                return [
                    DoctorFinding(
                        check: "modules", ok: true,
                        message:
                            "this kernel lists no modules (no /proc/modules) and has no pn533_usb USB driver (/sys/bus/usb/drivers)"
                    )
                ]
            }
            nfc = ["pn533_usb (built in)"]
        }
        guard !nfc.isEmpty else {
            return [DoctorFinding(check: "modules", ok: true, message: "kernel pn533 modules not loaded")]
        }
        let claimed =
            (try? fm.contentsOfDirectory(atPath: path("/sys/bus/usb/drivers/pn533_usb")))?
            .filter { $0.first?.isNumber == true } ?? []
        let what = claimed.isEmpty ? "" : " and claim USB interface(s) \(claimed.sorted().joined(separator: ", "))"
        return [
            DoctorFinding(
                check: "modules", ok: false,
                message:
                    "kernel module(s) \(nfc.joined(separator: ", ")) loaded\(what): libnfc can't open a reader the kernel NFC stack holds",
                fix:
                    "sudo modprobe -r pn533_usb pn533 nfc; to keep them off: sudo cp hardware/modprobe/nfcbench-blacklist-pn533.conf /etc/modprobe.d/"
            )
        ]
    }

    /// Processes whose `comm` is `name`.
    private func processes(named name: String) -> [String] {
        (try? fm.contentsOfDirectory(atPath: path("/proc")))?.filter { pid in
            pid.allSatisfy(\.isNumber)
                && (try? String(contentsOfFile: path("/proc/\(pid)/comm"), encoding: .utf8))?
                    .trimmingCharacters(in: .whitespacesAndNewlines) == name
        } ?? []
    }

    /// Plugged-in USB devices: (vendor:product, sysfs name, busnum, devnum).
    private func usbDevices() -> [(id: String, name: String, bus: Int, dev: Int)] {
        let base = path("/sys/bus/usb/devices")
        return ((try? fm.contentsOfDirectory(atPath: base)) ?? []).sorted().compactMap { d in
            func read(_ f: String) -> String? {
                (try? String(contentsOfFile: "\(base)/\(d)/\(f)", encoding: .utf8))?.trimmingCharacters(
                    in: .whitespacesAndNewlines)
            }
            guard let v = read("idVendor"), let p = read("idProduct") else { return nil }
            return (
                "\(v.lowercased()):\(p.lowercased())", d, Int(read("busnum") ?? "") ?? 0, Int(read("devnum") ?? "") ?? 0
            )
        }
    }

    public func pcscd() -> [DoctorFinding] {
        let processes = processes(named: "pcscd")
        let answering: Bool
        let said: String
        switch pcscdAnswer {
        case .success(let readers):
            answering = true
            said =
                "pcscd answers (SCardEstablishContext) with \(readers.count) reader(s)"
                + (readers.isEmpty ? "" : ": " + readers.joined(separator: ", "))
        case .failure(let no):
            answering = false
            said =
                processes.isEmpty
                ? "pcscd does not answer (\(no.reason)) and no pcscd process runs here"
                : "pcscd does not answer (\(no.reason)) though a pcscd process runs (pid \(processes.sorted().joined(separator: ", "))): its socket is elsewhere (another mount or network namespace) or hidden"
        }
        let acr = usbDevices().filter { $0.id == "072f:2200" }
        if (answering || !processes.isEmpty) && !acr.isEmpty {
            return [
                DoctorFinding(
                    check: "pcscd", ok: false,
                    message:
                        "pcscd is running and holds the ACR122U (072f:2200): Debian's libnfc has no PC/SC driver, so libnfc's acr122_usb can't open it",
                    fix: "use it through PC/SC (--device pcsc:…), or for libnfc: sudo systemctl stop pcscd.socket pcscd"
                )
            ]
        }
        // No pcscd is fine for libnfc readers; the PC/SC commands then need one, and say so.
        let hint =
            answering
            ? nil
            : "PC/SC commands (devices, session --device pcsc:…) need a pcscd: \(BenchData.withPCSCDHint) COMMAND runs a private one with the virtual reader, as the demo does; for a USB reader: sudo systemctl start pcscd"
        return [DoctorFinding(check: "pcscd", ok: true, message: said, fix: hint)]
    }

    private func accessible(_ p: String) -> Bool? {
        var st = stat()
        guard stat(p, &st) == 0 else { return nil }
        if uid == 0 { return true }
        let mode = st.st_mode
        if st.st_uid == uid { return mode & 0o600 == 0o600 }
        if groups.contains(st.st_gid) { return mode & 0o060 == 0o060 }
        return mode & 0o006 == 0o006
    }

    public func permissions() -> [DoctorFinding] {
        var out: [DoctorFinding] = []
        for d in usbDevices() {
            guard let name = Self.knownReaders[d.id] else { continue }
            let node = String(format: "/dev/bus/usb/%03d/%03d", d.bus, d.dev)
            switch accessible(path(node)) {
            case false?:
                out.append(
                    DoctorFinding(
                        check: "permissions", ok: false,
                        message: "\(name) (\(d.id)) at \(node) is not readable and writable by uid \(uid)",
                        fix:
                            "sudo cp hardware/udev/60-nfcbench-readers.rules /etc/udev/rules.d/ && sudo udevadm control --reload && sudo udevadm trigger (then re-plug)"
                    ))
            case true?:
                out.append(
                    DoctorFinding(check: "permissions", ok: true, message: "\(name) (\(d.id)) at \(node) is accessible")
                )
            case nil:
                out.append(
                    DoctorFinding(
                        check: "permissions", ok: false, message: "\(name) (\(d.id)) has no device node \(node)",
                        fix: "check udev is running (systemctl status systemd-udevd) and re-plug the reader"))
            }
        }
        let ttys = ((try? fm.contentsOfDirectory(atPath: path("/dev"))) ?? [])
            .filter { $0.hasPrefix("ttyUSB") || $0.hasPrefix("ttyACM") }.sorted()
        for t in ttys where accessible(path("/dev/\(t)")) == false {
            out.append(
                DoctorFinding(
                    check: "permissions", ok: false, message: "/dev/\(t) is not readable and writable by uid \(uid)",
                    fix: "sudo usermod -aG dialout $USER (then log in again), or the udev rules in hardware/udev/"))
        }
        if out.isEmpty {
            out.append(
                DoctorFinding(
                    check: "permissions", ok: true, message: "no known USB reader or serial port with wrong permissions"
                ))
        }
        return out
    }

    /// Which processes hold each tty (from `/proc/*/fd` links).
    private func ttyHolders() -> [String: Set<String>] {
        var holders: [String: Set<String>] = [:]
        for pid in ((try? fm.contentsOfDirectory(atPath: path("/proc"))) ?? []) where pid.allSatisfy(\.isNumber) {
            let fdDir = path("/proc/\(pid)/fd")
            for fd in (try? fm.contentsOfDirectory(atPath: fdDir)) ?? [] {
                guard let target = try? fm.destinationOfSymbolicLink(atPath: "\(fdDir)/\(fd)") else { continue }
                if target.hasPrefix("/dev/tty") || target.hasPrefix("/dev/pts/") {
                    holders[target, default: []].insert(pid)
                }
            }
        }
        return holders
    }

    public func busyPorts(device: String?) -> [DoctorFinding] {
        let holders = ttyHolders()
        var out: [DoctorFinding] = []
        for (tty, pids) in holders.sorted(by: { $0.key < $1.key })
        where pids.count > 1
            && (tty.hasPrefix("/dev/ttyUSB") || tty.hasPrefix("/dev/ttyACM") || tty.hasPrefix("/dev/ttyS")
                || tty.hasPrefix("/dev/ttyAMA"))
        {
            out.append(
                DoctorFinding(
                    check: "busy-port", ok: false,
                    message:
                        "\(tty) is open in \(pids.count) processes (\(pids.sorted().joined(separator: ", "))): libnfc takes no lock, their frames will mix",
                    fix: "stop all but one (ps -p \(pids.sorted().joined(separator: ",")) -o pid,comm,args)"))
        }
        if let device, device.hasPrefix("pn532_uart:") {
            var p = String(device.dropFirst("pn532_uart:".count))
            if let colon = p.lastIndex(of: ":"), p[p.index(after: colon)...].allSatisfy(\.isNumber) {
                p = String(p[..<colon])
            }
            let resolved =
                (try? fm.destinationOfSymbolicLink(atPath: path(p))).map {
                    $0.hasPrefix("/") ? $0 : (p as NSString).deletingLastPathComponent + "/" + $0
                } ?? p
            if !fm.fileExists(atPath: path(p)) {
                out.append(
                    DoctorFinding(
                        check: "busy-port", ok: false, message: "\(p) does not exist",
                        fix: "plug the reader in, or start 'nfcbench virtual pn532 --pty \(p) --tag …'"))
            } else if let pids = holders[resolved], !pids.isEmpty {
                out.append(
                    DoctorFinding(
                        check: "busy-port", ok: false,
                        message:
                            "\(p) (\(resolved)) is already open in process(es) \(pids.sorted().joined(separator: ", ")); libnfc would share it",
                        fix: "stop that process first (ps -p \(pids.sorted().joined(separator: ",")) -o pid,comm,args)")
                )
            }
        }
        if out.isEmpty {
            out.append(DoctorFinding(check: "busy-port", ok: true, message: "no serial port held by two processes"))
        }
        return out
    }

    public func packages() -> [DoctorFinding] {
        guard let status = try? String(contentsOfFile: path("/var/lib/dpkg/status"), encoding: .utf8) else {
            return [DoctorFinding(check: "packages", ok: true, message: "no dpkg status file; packages not checked")]
        }
        var installed = Set<String>()
        for stanza in status.components(separatedBy: "\n\n") {
            var name: String?
            var ok = false
            for line in stanza.split(separator: "\n") {
                if line.hasPrefix("Package: ") { name = String(line.dropFirst(9)) }
                if line.hasPrefix("Status: ") && line.hasSuffix(" installed") && line.contains("install ok") {
                    ok = true
                }
            }
            if let name, ok { installed.insert(name) }
        }
        let missing = Self.packages.filter { !installed.contains($0) }
        if missing.isEmpty {
            return [
                DoctorFinding(
                    check: "packages", ok: true, message: "packages installed: \(Self.packages.joined(separator: ", "))"
                )
            ]
        }
        return [
            DoctorFinding(
                check: "packages", ok: false, message: "missing package(s): \(missing.joined(separator: ", "))",
                fix: "sudo apt-get install \(missing.joined(separator: " "))")
        ]
    }

    public func libnfcEnvironment() -> [DoctorFinding] {
        let vars = environment.filter { $0.key.hasPrefix("LIBNFC_") }.sorted { $0.key < $1.key }
        var out: [DoctorFinding] = []
        if let d = environment["LIBNFC_DEVICE"], !d.isEmpty {
            let parts = d.split(separator: ":", maxSplits: 1).map(String.init)
            if parts.count == 2, parts[0].hasPrefix("pn532_uart"),
                !fm.fileExists(atPath: path(parts[1].split(separator: ":").first.map(String.init) ?? ""))
            {
                out.append(
                    DoctorFinding(
                        check: "environment", ok: false,
                        message:
                            "LIBNFC_DEVICE=\(d) points to a port that does not exist (it replaces /etc/nfc/libnfc.conf's devices)",
                        fix: "unset LIBNFC_DEVICE, or point it at a live port"))
            }
        }
        if environment["LIBNFC_INTRUSIVE_SCAN"] == "true" {
            out.append(
                DoctorFinding(
                    check: "environment", ok: true,
                    message:
                        "LIBNFC_INTRUSIVE_SCAN=true: libnfc probes every serial port it finds (may disturb other serial devices)"
                ))
        }
        if out.isEmpty || out.allSatisfy(\.ok) {
            out.append(
                DoctorFinding(
                    check: "environment", ok: true,
                    message: vars.isEmpty
                        ? "no LIBNFC_* variables set"
                        : "LIBNFC_* set: " + vars.map { "\($0.key)=\($0.value)" }.joined(separator: " ")))
        }
        return out
    }

    // MARK: vpcd and the network

    /// A vpcd reader entry of a reader.conf.d file: its `DEVICENAME` and first slot's port.
    public struct VPCDEntry: Equatable, Sendable {
        public var file: String
        public var deviceName: String
        /// Slot 0's TCP port (slot 1 is the next one: Debian's driver has 2 slots).
        public var port: UInt16
        /// `nil` in listen mode (`/dev/null:PORT`, or no port: vpcd binds INADDR_ANY);
        /// the host vpcd connects to in reversed mode.
        public var host: String?
    }

    /// vpcd entries in `/etc/reader.conf.d` (vsmartcard ifd-vpcd.c `IFDHCreateChannelByName`:
    /// `/dev/null:PORT` or no colon is listen mode, `HOST:PORT` reversed mode; the port is
    /// read as `strtoul(…, 0)` does: `0x` hex, a leading `0` octal).
    public func vpcdEntries() -> [VPCDEntry] {
        let dir = path("/etc/reader.conf.d")
        var out: [VPCDEntry] = []
        for name in ((try? fm.contentsOfDirectory(atPath: dir)) ?? []).sorted() {
            guard let text = try? String(contentsOfFile: dir + "/" + name, encoding: .utf8) else { continue }
            var device: String?
            var library: String?
            for raw in text.split(whereSeparator: \.isNewline) {
                let line = raw.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false)[0]
                let words = line.split(whereSeparator: \.isWhitespace)
                guard words.count >= 2 else { continue }
                let value = words[1...].joined(separator: " ")
                if words[0] == "DEVICENAME" { device = value }
                if words[0] == "LIBPATH" { library = value }
                guard let d = device, let l = library else { continue }
                if l.contains("vpcd") {
                    let parts = d.split(separator: ":", maxSplits: 1).map(String.init)
                    let port = parts.count == 2 ? Self.strtoul(parts[1]) : 35963
                    let host = parts.count == 2 && parts[0] != "/dev/null" ? parts[0] : nil
                    out.append(
                        VPCDEntry(file: "/etc/reader.conf.d/\(name)", deviceName: d, port: port ?? 35963, host: host))
                }
                device = nil
                library = nil
            }
        }
        return out
    }

    public static func strtoul(_ s: String) -> UInt16? {
        let t = s.trimmingCharacters(in: .whitespaces).lowercased()
        if t.hasPrefix("0x") { return UInt16(t.dropFirst(2), radix: 16) }
        if t.count > 1 && t.hasPrefix("0") { return UInt16(t.dropFirst(), radix: 8) }
        return UInt16(t)
    }

    /// TCP listeners of `/proc/net/tcp` and `tcp6`: local address (as text), port, socket inode.
    public func tcpListeners() -> [(address: String, loopback: Bool, port: UInt16, inode: String)] {
        var out: [(String, Bool, UInt16, String)] = []
        for file in ["/proc/net/tcp", "/proc/net/tcp6"] {
            guard let text = try? String(contentsOfFile: path(file), encoding: .utf8) else { continue }
            for line in text.split(separator: "\n").dropFirst() {
                let f = line.split(whereSeparator: \.isWhitespace)
                guard f.count > 9, f[3] == "0A" else { continue }  // 0A: TCP_LISTEN
                let local = f[1].split(separator: ":")
                guard local.count == 2, let port = UInt16(local[1], radix: 16) else { continue }
                // The kernel prints each 32-bit word of the address as a native integer: its
                // bytes in memory are the address in network order.
                var bytes: [UInt8] = []
                var hex = Substring(local[0])
                while hex.count >= 8, let word = UInt32(hex.prefix(8), radix: 16) {
                    bytes += withUnsafeBytes(of: word) { Array($0) }
                    hex = hex.dropFirst(8)
                }
                let text: String
                let loopback: Bool
                if bytes.count == 4 {
                    text = bytes.map(String.init).joined(separator: ".")
                    loopback = bytes[0] == 127
                } else if bytes.count == 16 {
                    let mapped = bytes[0..<10].allSatisfy { $0 == 0 } && bytes[10] == 0xFF && bytes[11] == 0xFF
                    loopback = bytes == [UInt8](repeating: 0, count: 15) + [1] || (mapped && bytes[12] == 127)
                    text =
                        "["
                        + stride(from: 0, to: 16, by: 2).map {
                            String(UInt16(bytes[$0]) << 8 | UInt16(bytes[$0 + 1]), radix: 16)
                        }
                        .joined(separator: ":") + "]"
                } else {
                    continue
                }
                out.append((text, loopback, port, String(f[9])))
            }
        }
        return out
    }

    /// Which process holds socket `inode` (from `/proc/*/fd` links), as "comm (pid N)".
    private func socketOwner(_ inode: String) -> String? {
        for pid in ((try? fm.contentsOfDirectory(atPath: path("/proc"))) ?? []).sorted()
        where pid.allSatisfy(\.isNumber) {
            let fdDir = path("/proc/\(pid)/fd")
            for fd in (try? fm.contentsOfDirectory(atPath: fdDir)) ?? []
            where (try? fm.destinationOfSymbolicLink(atPath: "\(fdDir)/\(fd)")) == "socket:[\(inode)]" {
                let comm = (try? String(contentsOfFile: path("/proc/\(pid)/comm"), encoding: .utf8))?
                    .trimmingCharacters(in: .whitespacesAndNewlines)
                return "\(comm ?? "process") (pid \(pid))"
            }
        }
        return nil
    }

    /// Interfaces of this network namespace other than `lo` (`/proc/net/dev`); nil when unreadable.
    private func nonLoopbackInterfaces() -> [String]? {
        guard let text = try? String(contentsOfFile: path("/proc/net/dev"), encoding: .utf8) else { return nil }
        return text.split(separator: "\n").dropFirst(2).compactMap { line in
            line.split(separator: ":").first.map { $0.trimmingCharacters(in: .whitespaces) }
        }.filter { $0 != "lo" }
    }

    /// vpcd reachable from the network: a vpcd port listening beyond loopback (any host that
    /// reaches this one could insert a card into pcscd's readers), or a listen-mode entry that
    /// will open one when pcscd starts.
    public func vpcdNetwork() -> [DoctorFinding] {
        let entries = vpcdEntries()
        var ports: Set<UInt16> = [35963, 35964]
        for e in entries where e.host == nil { ports.formUnion([e.port, e.port &+ 1]) }
        var out: [DoctorFinding] = []
        let onlyLoopbackHere = nonLoopbackInterfaces()?.isEmpty == true
        for l in tcpListeners() where ports.contains(l.port) && !l.loopback {
            let who = socketOwner(l.inode).map { " by \($0)" } ?? ""
            if onlyLoopbackHere {
                out.append(
                    DoctorFinding(
                        check: "vpcd-network", ok: true,
                        message:
                            "vpcd port \(l.port) listens on \(l.address)\(who), in a network namespace with only lo (scripts/with-pcscd's): not reachable from the network"
                    ))
                continue
            }
            out.append(
                DoctorFinding(
                    check: "vpcd-network", ok: false,
                    message:
                        "vpcd port \(l.port) listens on \(l.address)\(who): any host that reaches this one can insert a card into pcscd's readers",
                    fix:
                        "keep vpcd out of the shared pcscd (scripts/install-deps diverts Debian's /etc/reader.conf.d/vpcd; then sudo systemctl restart pcscd), or use its reversed mode: scripts/install-deps --shared-vpcd"
                ))
        }
        for e in entries where e.host == nil {
            out.append(
                DoctorFinding(
                    check: "vpcd-network", ok: false,
                    message:
                        "\(e.file) puts vpcd in listen mode (DEVICENAME \(e.deviceName)): pcscd listens on 0.0.0.0:\(e.port)-\(e.port &+ 1) whenever it starts",
                    fix:
                        "scripts/install-deps (diverts Debian's entry: sudo dpkg-divert --local --rename --divert /etc/reader.conf.vpcd.disabled-by-nfcbench --add \(e.file)), or reversed mode bound to loopback: hardware/pcsc-loopback/vpcd"
                ))
        }
        if out.isEmpty {
            let loopbackEntries = entries.filter { $0.host != nil }
            out.append(
                DoctorFinding(
                    check: "vpcd-network", ok: true,
                    message: "no vpcd port listens beyond loopback"
                        + (loopbackEntries.isEmpty
                            ? ""
                            : "; vpcd reversed mode to \(loopbackEntries.map { "\($0.host ?? ""):\($0.port)" }.joined(separator: ", "))")
                ))
        }
        return out
    }
}
