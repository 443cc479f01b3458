import Foundation
import Testing

/// Nothing this project installs or starts listens beyond loopback (README "Threat model").
///
/// Each case runs a real pcscd in fresh mount, network and PID namespaces (`unshare -m -n -p`,
/// as root: CI is root) with a tmpfs on /run/pcscd, then lists every TCP listener with `ss`:
/// in a fresh network namespace every listener is one the case started. When the case's
/// shell ends, the kernel ends every process of its PID namespace (pcscd, the card).
@Suite(
    "No listener beyond loopback: the system pcscd after the install step, vpcd's reversed mode",
    .serialized, .enabled(if: geteuid() == 0 || ProcessInfo.processInfo.environment["CI"] == "true"))
struct NoListenerTests {
    static let isCI = ProcessInfo.processInfo.environment["CI"] == "true"

    /// Starts pcscd (`conf`: a reader.conf.d folder; nil: pcscd's default, /etc/reader.conf.d,
    /// as the system pcscd reads it), runs `then`, prints `listeners:` and each TCP listener's
    /// local address, stops pcscd. Exit 69 when the namespace or pcscd can't be had.
    static func run(conf: String?, before: String = "", then: String = "", folder: TestFolder) async throws
        -> NFCBench.Result
    {
        let script = """
            set -u
            export PATH="$PATH:/usr/sbin:/sbin"
            mount --make-rprivate / 2>/dev/null
            if [ -d /run/pcscd ]; then mount -t tmpfs -o mode=0755 tmpfs /run/pcscd || exit 69
            else mount -t tmpfs -o mode=0755 tmpfs /run && mkdir -p /run/pcscd || exit 69; fi
            ip link set lo up || exit 69
            \(before)
            if [ -n "$CONF" ]; then pcscd -f -c "$CONF" >"$F/pcscd.log" 2>&1 &
            else pcscd -f >"$F/pcscd.log" 2>&1 &
            fi
            for _ in $(seq 100); do [ -S /run/pcscd/pcscd.comm ] && break; sleep 0.05; done
            [ -S /run/pcscd/pcscd.comm ] || { echo "pcscd did not come up"; cat "$F/pcscd.log"; exit 69; }
            \(then)
            echo listeners:
            ss -ltnH | awk '{print $4}'
            """
        return try await NFCBench.offPool {
            try NFCBench.runBlockingExecutable(
                "/usr/bin/unshare",
                ["-m", "-n", "-p", "--fork", "--kill-child", "--mount-proc", "--", "/bin/bash", "-c", script],
                environment: [
                    "CONF": conf ?? "", "F": folder.path, "B": NFCBench.binary.path,
                    "NFCBENCH_TRACE_DIR": folder.file("traces"), "NFCBENCH_LOCK_DIR": folder.file("locks"),
                ], timeout: .seconds(60))
        }
    }

    /// The local addresses after `listeners:`.
    static func listeners(_ r: NFCBench.Result) -> [String] {
        Array(r.stdoutLines.drop { $0 != "listeners:" }.dropFirst())
    }

    static func isLoopback(_ address: String) -> Bool {
        address.hasPrefix("127.") || address.hasPrefix("[::1]:") || address.hasPrefix("[::ffff:127.")
    }

    /// Fails under CI, skips elsewhere, when the namespace or pcscd can't be had.
    /// Goes on when the run had its bench; exit 69 (unshare or pcscd missing) ends the test:
    /// a failure under CI, a skip with its reason otherwise (``BenchPart/missing(_:)``).
    static func require(_ r: NFCBench.Result) throws {
        if r.status == 69 { try BenchPart.missing("unshare or pcscd is missing: \(r.stdout)\(r.stderr)") }
    }

    @Test(
        "Control: Debian's own vpcd entry (listen mode) makes pcscd listen on 0.0.0.0:35963 and :35964 — what the install step keeps away"
    )
    func debianEntryListensEverywhere() async throws {
        let folder = try TestFolder("listen")
        defer { folder.remove() }
        let conf = folder.file("reader.conf.d")
        try FileManager.default.createDirectory(atPath: conf, withIntermediateDirectories: false)
        try """
        FRIENDLYNAME "Virtual PCD"
        DEVICENAME   /dev/null:0x8C7B
        LIBPATH      /usr/lib/pcsc/drivers/serial/libifdvpcd.so
        CHANNELID    0x8C7B

        """.write(toFile: conf + "/vpcd", atomically: false, encoding: .utf8)
        let r = try await Self.run(conf: conf, folder: folder)
        try Self.require(r)
        let open = Self.listeners(r)
        #expect(open.contains("0.0.0.0:35963") && open.contains("0.0.0.0:35964"), "\(r.stdout)\(r.stderr)")
    }

    @Test(
        "After the install step the system pcscd (its /etc/reader.conf.d) opens no port beyond loopback, and doctor agrees"
    )
    func systemPCSCDAfterInstall() async throws {
        let folder = try TestFolder("sys")
        defer { folder.remove() }
        let r = try await Self.run(
            conf: nil, then: #""$B" doctor --json | grep '"check":"vpcd-network"'"#, folder: folder)
        try Self.require(r)
        let beyond = Self.listeners(r).filter { !Self.isLoopback($0) }
        #expect(beyond.isEmpty, "listeners beyond loopback: \(beyond)\n\(r.stdout)\(r.stderr)")
        let doctor = r.stdoutLines.filter { $0.contains(#""check":"vpcd-network""#) }
        #expect(!doctor.isEmpty && doctor.allSatisfy { $0.contains(#""ok":true"#) }, "\(doctor)")
        #expect(
            !FileManager.default.fileExists(atPath: "/etc/reader.conf.d/vpcd"),
            "scripts/install-deps diverts Debian's vpcd entry out of /etc/reader.conf.d")
    }

    @Test(
        "Control: Debian 12's vpcd in reversed mode (hardware/pcsc-loopback) aborts pcscd when a slot has no card — why --shared-vpcd refuses there"
    )
    func reversedModeAbortsPCSCDOnDebianVPCD() async throws {
        guard Self.vpcdVersion.hasPrefix("3.3+dfsg") else {
            try Test.cancel("vsmartcard-vpcd \(Self.vpcdVersion) is not Debian 12's 3.3+dfsg")
        }
        let folder = try TestFolder("reversed")
        defer { folder.remove() }
        let conf = NFCBench.packageRoot.appendingPathComponent("hardware/pcsc-loopback").path
        // pcscd may die before or after its socket appears; either way it is gone a moment later.
        let r = try await Self.run(
            conf: conf, then: #"sleep 1; pgrep -x pcscd >/dev/null && echo "pcscd alive" || echo "pcscd gone""#,
            folder: folder)
        let log = (try? String(contentsOfFile: folder.file("pcscd.log"), encoding: .utf8)) ?? ""
        if r.status == 69 && !log.contains("FD_SETSIZE") { try Self.require(r) }
        #expect(
            log.contains("bit out of range 0 - FD_SETSIZE on fd_set"),
            "vpcd's reversed mode no longer aborts pcscd: scripts/install-deps --shared-vpcd may allow it: \(log)")
        #expect(!r.stdout.contains("pcscd alive"), "\(r.stdout)")
    }

    @Test("scripts/install-deps --shared-vpcd refuses on Debian 12's vpcd, names the fix and changes nothing")
    func sharedVPCDRefused() async throws {
        guard Self.vpcdVersion.hasPrefix("3.3+dfsg") else {
            try Test.cancel("vsmartcard-vpcd \(Self.vpcdVersion) is not Debian 12's 3.3+dfsg")
        }
        let script = NFCBench.packageRoot.appendingPathComponent("scripts/install-deps").path
        let r = try await NFCBench.offPool {
            try NFCBench.runBlockingExecutable(
                "/bin/bash", [script, "--shared-vpcd"], environment: ["NFCBENCH_VPCD_REVERSED_OK": ""],
                timeout: .seconds(30))
        }
        #expect(r.status == 69, "\(r.stdout)\(r.stderr)")
        #expect(r.stderr.contains("76543ea") && r.stderr.contains("Nothing was changed"), "\(r.stderr)")
        #expect(!FileManager.default.fileExists(atPath: "/etc/reader.conf.d/nfcbench-vpcd-loopback"))
    }

    @Test("virtual card --reversed, the card for a vpcd in reversed mode, listens on 127.0.0.1 only")
    func reversedCardListensOnLoopback() async throws {
        let folder = try TestFolder("reversed-card")
        defer { folder.remove() }
        let empty = folder.file("reader.conf.d")
        try FileManager.default.createDirectory(atPath: empty, withIntermediateDirectories: false)
        let r = try await Self.run(
            conf: empty,
            then: """
                "$B" virtual card --reversed --tag t4t-uri --quiet >"$F/card.out" 2>&1 &
                for _ in $(seq 100); do ss -ltnH | grep -q ':35963 ' && break; sleep 0.05; done
                """, folder: folder)
        try Self.require(r)
        let card = (try? String(contentsOfFile: folder.file("card.out"), encoding: .utf8)) ?? ""
        #expect(Self.listeners(r) == ["127.0.0.1:35963"], "\(r.stdout)\(r.stderr)\n\(card)")
    }

    /// The installed vsmartcard-vpcd's Debian version, read from dpkg's status file ("" when
    /// it is not installed).
    static let vpcdVersion: String = {
        guard let status = try? String(contentsOfFile: "/var/lib/dpkg/status", encoding: .utf8) else { return "" }
        for stanza in status.components(separatedBy: "\n\n") where stanza.hasPrefix("Package: vsmartcard-vpcd\n") {
            let lines = stanza.split(separator: "\n")
            guard lines.contains("Status: install ok installed"),
                let version = lines.first(where: { $0.hasPrefix("Version: ") })
            else { return "" }
            return String(version.dropFirst("Version: ".count))
        }
        return ""
    }()
}
