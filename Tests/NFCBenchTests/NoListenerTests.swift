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
    static func available(_ r: NFCBench.Result) -> Bool {
        guard r.status == 69 else { return true }
        if isCI {
            Issue.record("unshare or pcscd is missing: \(r.stdout)\(r.stderr)")
        } else {
            print("skipped: unshare or pcscd is missing: \(r.stdout)\(r.stderr)")
        }
        return false
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
        guard Self.available(r) else { return }
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
        guard Self.available(r) else { return }
        let beyond = Self.listeners(r).filter { !Self.isLoopback($0) }
        #expect(beyond.isEmpty, "listeners beyond loopback: \(beyond)\n\(r.stdout)\(r.stderr)")
        let doctor = r.stdoutLines.filter { $0.contains(#""check":"vpcd-network""#) }
        #expect(!doctor.isEmpty && doctor.allSatisfy { $0.contains(#""ok":true"#) }, "\(doctor)")
        #expect(
            !FileManager.default.fileExists(atPath: "/etc/reader.conf.d/vpcd"),
            "scripts/install-deps diverts Debian's vpcd entry out of /etc/reader.conf.d")
    }

    @Test(
        "A vpcd reader in a shared pcscd, reversed mode (hardware/pcsc-loopback): the card listens on 127.0.0.1 only and a session reads it"
    )
    func reversedModeOnLoopback() async throws {
        let folder = try TestFolder("reversed")
        defer { folder.remove() }
        let conf = NFCBench.packageRoot.appendingPathComponent("hardware/pcsc-loopback").path
        // As 'scripts/install-deps --shared-vpcd' leaves it: the loopback entry is the system's
        // reader.conf.d (bound over /etc/reader.conf.d in this mount namespace only).
        let r = try await Self.run(
            conf: nil,
            // The card listens before pcscd starts: this vpcd connects once, at pcscd's start, and
            // aborts pcscd (FD_SET on a failed socket) when nothing listens then. --wait: it stays
            // until vpcd connects, however loaded the machine.
            before: """
                mount --bind "\(conf)" /etc/reader.conf.d || exit 69
                "$B" virtual card --reversed --wait --tag t4t-uri --quiet >"$F/card.out" 2>&1 &
                card=$!
                for _ in $(seq 100); do ss -ltnH | grep -qF 127.0.0.1:35963 && break; sleep 0.05; done
                """,
            then: """
                for _ in $(seq 100); do "$B" devices --json 2>/dev/null | grep -qF '["present"]' && break; sleep 0.1; done
                "$B" session --device "pcsc:Virtual PCD 00 00" --first-read --timeout 10 >"$F/session.out" 2>&1
                echo "session exit $?"
                kill -INT $card; wait $card
                # The demo on a shared pcscd finds the reversed entry and listens for vpcd itself.
                env -u NFCBENCH_PCSCD "$B" demo --bench shared-pcscd --timeout 1 >"$F/demo.out" 2>&1 &
                demo=$!
                for _ in $(seq 100); do grep -q "session 2" "$F/demo.out" 2>/dev/null && break; sleep 0.1; done
                echo listeners-during-demo:
                ss -ltnH | awk '{print $4}'
                wait $demo
                echo "demo exit $?"
                """, folder: folder)
        guard Self.available(r) else { return }
        #expect(r.stdout.contains("session exit 0"), "\(r.stdout)\(r.stderr)")
        let session = (try? String(contentsOfFile: folder.file("session.out"), encoding: .utf8)) ?? ""
        #expect(session.contains("https://"), "\(session)")
        let demo = (try? String(contentsOfFile: folder.file("demo.out"), encoding: .utf8)) ?? ""
        #expect(r.stdout.contains("demo exit 0"), "\(demo)")
        #expect(demo.contains("bench: the running pcscd's vpcd reader"), "\(demo)")
        let during = r.stdoutLines.drop { $0 != "listeners-during-demo:" }.dropFirst().prefix {
            !$0.hasPrefix("demo exit")
        }
        #expect(Array(during) == ["127.0.0.1:35963"], "the demo's card listens on loopback only: \(during)")
        let open = Self.listeners(r).filter { !Self.isLoopback($0) }
        #expect(open.isEmpty, "nothing listens beyond loopback after the demo: \(open)")
    }
}
