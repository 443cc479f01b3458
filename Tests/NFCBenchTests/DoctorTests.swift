import Foundation
import Testing

@testable import nfcbench

/// A fake `/` for `nfcbench doctor --root`: proc, sys, dev and dpkg's status file.
struct FakeBenchRoot {
    let path = "\(NSTemporaryDirectory())nfcbench-doctor-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
    let fm = FileManager.default

    func file(_ p: String, _ text: String, mode: Int = 0o644) throws {
        let full = path + p
        try fm.createDirectory(atPath: (full as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try text.write(toFile: full, atomically: false, encoding: .utf8)
        try fm.setAttributes([.posixPermissions: mode], ofItemAtPath: full)
    }

    func link(_ p: String, to target: String) throws {
        let full = path + p
        try fm.createDirectory(atPath: (full as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try fm.createSymbolicLink(atPath: full, withDestinationPath: target)
    }

    func dir(_ p: String) throws { try fm.createDirectory(atPath: path + p, withIntermediateDirectories: true) }

    static let allPackages = ["libnfc6", "libnfc-bin", "pcscd", "libpcsclite1", "pcsc-tools", "vsmartcard-vpcd"]

    func dpkg(_ installed: [String]) throws {
        try file(
            "/var/lib/dpkg/status",
            installed.map { "Package: \($0)\nStatus: install ok installed\nVersion: 1\n" }.joined(separator: "\n"))
    }

    func usb(_ name: String, vendor: String, product: String, bus: Int, dev: Int, nodeMode: Int) throws {
        try file("/sys/bus/usb/devices/\(name)/idVendor", vendor + "\n")
        try file("/sys/bus/usb/devices/\(name)/idProduct", product + "\n")
        try file("/sys/bus/usb/devices/\(name)/busnum", "\(bus)\n")
        try file("/sys/bus/usb/devices/\(name)/devnum", "\(dev)\n")
        try file(String(format: "/dev/bus/usb/%03d/%03d", bus, dev), "", mode: nodeMode)
    }

    func remove() { try? fm.removeItem(atPath: path) }
}

/// The doctor's checks over fake roots run in this process (``doctor(root:device:uid:json:environment:)``,
/// the command's own report: its lines and exit status); a hidden pcscd socket and a private
/// pcscd through the built binary, where the process and its environment are the point.
@Suite("doctor on fake /proc, /sys and /dev roots")
struct DoctorTests {
    /// `nfcbench doctor --root ROOT [--device D] [--as-uid UID] [--json]` with `environment`
    /// added to this process's, without a process: what it prints on stdout and its status.
    static func doctor(
        root: String, device: String? = nil, uid: UInt32? = 1000, json: Bool = false,
        environment extra: [String: String]
    ) async throws -> NFCBench.Result {
        let environment = ProcessInfo.processInfo.environment.merging(extra) { $1 }
        // The pcscd check connects to pcscd: off the cooperative pool.
        let (lines, status) = try await NFCBench.offPool {
            DoctorCommand.report(root: root, device: device, uid: uid ?? getuid(), json: json, environment: environment)
        }
        return NFCBench.Result(status: status, stdout: lines.map { $0 + "\n" }.joined(), stderr: "")
    }

    @Test("A healthy bench: exit 0 and every check ok")
    func healthy() async throws {
        let root = FakeBenchRoot()
        defer { root.remove() }
        try root.file("/proc/modules", "snd_hda 1 0 - Live 0x0\nusbhid 1 0 - Live 0x0\n")
        try root.dpkg(FakeBenchRoot.allPackages)
        try root.dir("/dev")
        let r = try await Self.doctor(root: root.path, environment: ["LIBNFC_DEVICE": ""])
        #expect(r.status == 0, "\(r.stdout)\(r.stderr)")
        #expect(r.stdout.contains("all is well"))
        #expect(!r.stdout.contains("FIX"))
    }

    @Test(
        "Each problem is reported with a fix line: pn533 modules, pcscd with an ACR122U, permissions, a shared tty, missing packages, a dead LIBNFC_DEVICE"
    )
    func everyProblem() async throws {
        let root = FakeBenchRoot()
        defer { root.remove() }
        try root.file(
            "/proc/modules",
            "pn533_usb 20480 0 - Live 0x0\npn533 45056 1 pn533_usb, Live 0x0\nnfc 135168 1 pn533, Live 0x0\n")
        try root.dir("/sys/bus/usb/drivers/pn533_usb/1-2:1.0")
        try root.file("/proc/311/comm", "pcscd\n")
        try root.usb("1-3", vendor: "072f", product: "2200", bus: 1, dev: 7, nodeMode: 0o600)
        try root.file("/dev/ttyUSB0", "", mode: 0o660)
        try root.link("/proc/400/fd/3", to: "/dev/ttyUSB0")
        try root.link("/proc/401/fd/5", to: "/dev/ttyUSB0")
        try root.dpkg(["libnfc6", "pcscd", "libpcsclite1"])
        let r = try await Self.doctor(root: root.path, environment: ["LIBNFC_DEVICE": "pn532_uart:/dev/ttyUSB9"])
        #expect(r.status == 1)
        let out = r.stdout
        #expect(out.contains("pn533_usb, pn533 loaded and claim USB interface(s) 1-2:1.0"), "\(out)")
        #expect(out.contains("modprobe -r pn533_usb"))
        #expect(out.contains("pcscd is running and holds the ACR122U"))
        #expect(
            out.contains("ACS ACR122U (072f:2200) at /dev/bus/usb/001/007 is not readable and writable by uid 1000"))
        #expect(out.contains("/dev/ttyUSB0 is not readable and writable by uid 1000"))
        #expect(out.contains("/dev/ttyUSB0 is open in 2 processes (400, 401)"))
        #expect(out.contains("missing package(s): libnfc-bin, pcsc-tools, vsmartcard-vpcd"))
        #expect(out.contains("sudo apt-get install libnfc-bin pcsc-tools vsmartcard-vpcd"))
        #expect(out.contains("LIBNFC_DEVICE=pn532_uart:/dev/ttyUSB9 points to a port that does not exist"))
        let problems = out.split(separator: "\n").filter { $0.hasPrefix("FIX") }.count
        let fixes = out.split(separator: "\n").filter { $0.contains("fix: ") }.count
        #expect(problems == 7)
        #expect(fixes == problems, "every problem has a fix line")
        #expect(out.contains("7 thing(s) to fix"))
    }

    @Test("--device names a port another process already holds; --json gives one object per check")
    func busyDeviceJSON() async throws {
        let root = FakeBenchRoot()
        defer { root.remove() }
        try root.file("/proc/modules", "")
        try root.dpkg(FakeBenchRoot.allPackages)
        try root.file("/dev/ttyACM0", "", mode: 0o666)
        try root.link("/proc/77/fd/4", to: "/dev/ttyACM0")
        let r = try await Self.doctor(
            root: root.path, device: "pn532_uart:/dev/ttyACM0", uid: nil, json: true, environment: ["LIBNFC_DEVICE": ""]
        )
        #expect(r.status == 1)
        let lines = r.stdout.split(separator: "\n").map(String.init)
        let objects = try lines.map { try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        #expect(objects.allSatisfy { $0?["check"] is String && $0?["message"] is String })
        let busy = objects.compactMap { $0 }.first {
            ($0["message"] as? String)?.contains("already open in process(es) 77") == true
        }
        #expect(busy?["fix"] != nil)
    }

    @Test(
        "Without /proc/modules (a kernel that lists none) the modules check passes, unless the kernel registered the pn533_usb driver"
    )
    func noModuleList() async throws {
        let root = FakeBenchRoot()
        defer { root.remove() }
        try root.dpkg(FakeBenchRoot.allPackages)
        try root.dir("/dev")
        try root.dir("/proc")
        let r = try await Self.doctor(root: root.path, environment: ["LIBNFC_DEVICE": ""])
        #expect(r.status == 0, "\(r.stdout)")
        #expect(r.stdout.contains("ok    this kernel lists no modules (no /proc/modules)"), "\(r.stdout)")
        try root.dir("/sys/bus/usb/drivers/pn533_usb/1-2:1.0")
        let builtIn = try await Self.doctor(root: root.path, environment: ["LIBNFC_DEVICE": ""])
        #expect(builtIn.status == 1)
        #expect(
            builtIn.stdout.contains(
                "FIX   kernel module(s) pn533_usb (built in) loaded and claim USB interface(s) 1-2:1.0"))
    }

    @Test(
        "pcscd is checked by connecting to it: a pcscd process whose socket is hidden is not 'running', as 'devices' says too"
    )
    func pcscdHiddenSocket() async throws {
        let root = FakeBenchRoot()
        defer { root.remove() }
        try root.file("/proc/modules", "")
        try root.file("/proc/311/comm", "pcscd\n")
        try root.dpkg(FakeBenchRoot.allPackages)
        try root.dir("/dev")
        let hidden = ["LIBNFC_DEVICE": "", "PCSCLITE_CSOCK_NAME": root.path + "/no-such-socket"]
        let r = try await NFCBench.run(["doctor", "--root", root.path, "--as-uid", "1000"], environment: hidden)
        #expect(!r.stdout.contains("pcscd running"), "\(r.stdout)")
        #expect(r.stdout.contains("pcscd does not answer"), "\(r.stdout)")
        #expect(r.stdout.contains("though a pcscd process runs (pid 311)"), "\(r.stdout)")
        let script = NFCBench.packageRoot.appendingPathComponent("scripts/with-pcscd").path
        // ok (libnfc readers need no pcscd), so the advice is a note, with the script's path.
        #expect(r.stdout.contains("ok    pcscd does not answer"), "\(r.stdout)")
        #expect(
            r.stdout.contains(
                "      note: PC/SC commands (devices, session --device pcsc:…) need a pcscd: \(script) COMMAND"),
            "\(r.stdout)")
        #expect(!r.stdout.contains("fix: PC/SC"), "\(r.stdout)")
        let devices = try await NFCBench.run(["devices"], environment: hidden)
        // devices says it on standard error, beside the readers it found
        #expect(devices.stderr.contains("pcsc: pcscd is not running"), "\(devices.stderr)")
        // A PC/SC command names the way to a private pcscd by its path, for an installed binary too.
        let measure = try await NFCBench.run(
            ["measure", "apdu", "--device", "pcsc:Virtual PCD 00 00", "--count", "1"], environment: hidden)
        #expect(measure.status == 69, "\(measure.stderr)")
        #expect(measure.stderr.contains("no PC/SC service"), "\(measure.stderr)")
        #expect(measure.stderr.contains("run the command through \(script)"), "\(measure.stderr)")
    }

    @Test("With a private pcscd, doctor says it answers and lists its readers")
    func pcscdAnswers() async throws {
        let r = try await PrivateBench.run(#""$B" doctor --root "$NFCBENCH_TRACE_DIR.root" | grep pcscd"#)
        try #require(PrivateBench.available(r), "the private pcscd bench is missing: \(r.stderr)")
        #expect(
            r.stdout.contains("pcscd answers (SCardEstablishContext) with 2 reader(s): Virtual PCD 00 00"),
            "\(r.stdout)")
    }

    static let tcpHeader =
        "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
    static func tcpLine(_ local: String, state: String = "0A", inode: Int) -> String {
        "   0: \(local) 00000000:0000 \(state) 00000000:00000000 00:00000000 00000000     0        0 \(inode) 1 0 100 0 0 10 0\n"
    }
    static let netDev = """
        Inter-|   Receive
         face |bytes    packets
            lo:  1 1 0 0 0 0 0 0 1 1 0 0 0 0 0 0
          eth0:  1 1 0 0 0 0 0 0 1 1 0 0 0 0 0 0

        """

    @Test(
        "vpcd reachable from the network: Debian's listen-mode entry and pcscd on 0.0.0.0:35963 and [::]:35964 are each a FIX naming the process"
    )
    func vpcdBeyondLoopback() async throws {
        let root = FakeBenchRoot()
        defer { root.remove() }
        try root.file("/proc/modules", "")
        try root.dpkg(FakeBenchRoot.allPackages)
        try root.dir("/dev")
        try root.file(
            "/etc/reader.conf.d/vpcd",
            "FRIENDLYNAME \"Virtual PCD\"\nDEVICENAME   /dev/null:0x8C7B\nLIBPATH      /usr/lib/pcsc/drivers/serial/libifdvpcd.so\nCHANNELID    0x8C7B\n"
        )
        try root.file(
            "/etc/reader.conf.d/libccidtwin",
            "#DEVICENAME /dev/ttyS0\n#LIBPATH /usr/lib/pcsc/drivers/serial/libccidtwin.so\n")
        try root.file(
            "/proc/net/tcp",
            Self.tcpHeader + Self.tcpLine("00000000:8C7B", inode: 4711) + Self.tcpLine("0100007F:0016", inode: 1)
                + Self.tcpLine("0100007F:8C7C", state: "01", inode: 2))
        try root.file(
            "/proc/net/tcp6", Self.tcpHeader + Self.tcpLine("00000000000000000000000000000000:8C7C", inode: 4712))
        try root.file("/proc/net/dev", Self.netDev)
        try root.file("/proc/311/comm", "pcscd\n")
        try root.link("/proc/311/fd/7", to: "socket:[4711]")
        let r = try await Self.doctor(root: root.path, environment: ["LIBNFC_DEVICE": ""])
        #expect(r.status == 1)
        let out = r.stdout
        #expect(
            out.contains(
                "FIX   vpcd port 35963 listens on 0.0.0.0 by pcscd (pid 311): any host that reaches this one can insert a card"
            ), "\(out)")
        #expect(out.contains("FIX   vpcd port 35964 listens on [0:0:0:0:0:0:0:0]"), "\(out)")
        #expect(
            out.contains(
                "FIX   /etc/reader.conf.d/vpcd puts vpcd in listen mode (DEVICENAME /dev/null:0x8C7B): pcscd listens on 0.0.0.0:35963-35964 whenever it starts"
            ), "\(out)")
        #expect(!out.contains(":22"), "other listeners are not vpcd's")
        let problems = out.split(separator: "\n").filter { $0.hasPrefix("FIX") }
        #expect(problems.count == 3, "\(out)")
        #expect(out.split(separator: "\n").filter { $0.contains("fix: ") }.count == 3)
    }

    @Test("vpcd's reversed mode on loopback, or a namespace with only lo (scripts/with-pcscd), is fine")
    func vpcdLoopback() async throws {
        let root = FakeBenchRoot()
        defer { root.remove() }
        try root.file("/proc/modules", "")
        try root.dpkg(FakeBenchRoot.allPackages)
        try root.dir("/dev")
        try root.file(
            "/etc/reader.conf.d/nfcbench-vpcd-loopback",
            try String(
                contentsOf: NFCBench.packageRoot.appendingPathComponent("hardware/pcsc-loopback/vpcd"), encoding: .utf8)
        )
        try root.file("/proc/net/tcp", Self.tcpHeader + Self.tcpLine("0100007F:8C7B", inode: 9))
        try root.file("/proc/net/dev", Self.netDev)
        let r = try await Self.doctor(root: root.path, environment: ["LIBNFC_DEVICE": ""])
        #expect(r.status == 0, "\(r.stdout)")
        #expect(
            r.stdout.contains("ok    no vpcd port listens beyond loopback; vpcd reversed mode to 127.0.0.1:35963"),
            "\(r.stdout)")

        let ns = FakeBenchRoot()
        defer { ns.remove() }
        try ns.file("/proc/modules", "")
        try ns.dpkg(FakeBenchRoot.allPackages)
        try ns.dir("/dev")
        try ns.file("/proc/net/tcp", Self.tcpHeader + Self.tcpLine("00000000:8C7B", inode: 9))
        try ns.file("/proc/net/dev", "Inter-|\n face |\n    lo: 1 1 0 0 0 0 0 0 1 1 0 0 0 0 0 0\n")
        let inside = try await Self.doctor(root: ns.path, environment: ["LIBNFC_DEVICE": ""])
        #expect(inside.status == 0, "\(inside.stdout)")
        #expect(inside.stdout.contains("in a network namespace with only lo"), "\(inside.stdout)")
    }
}
