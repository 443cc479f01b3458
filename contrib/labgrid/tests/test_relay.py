"""The pcscd relay (relay.py) between stand-ins for pcscd and its client on loopback: pcsc-lite's
split writes cross both hops whole and in order, the client's socket is 0600, a standby listens
on nothing until told, the exporter's PCSCDaemon opens the port on acquire and closes it (and
every connection through it) on release; and the RFC 2217 bridge started ahead of its place."""

import os
import socket
import stat
import subprocess
import sys
import threading
import time

import pytest

from nfcbench_labgrid import relay
from nfcbench_labgrid.links import Endpoint, PendingBridge, open_link

PKG_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ENV = dict(os.environ, PYTHONPATH=PKG_ROOT)


def _recv_exactly(sock, n, timeout=5.0):
    sock.settimeout(timeout)
    buf = b""
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        assert chunk, f"closed after {buf.hex()}"
        buf += chunk
    return buf


def _start(args):
    p = subprocess.Popen([sys.executable, "-S", "-m", "nfcbench_labgrid.relay"] + args, stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=ENV, start_new_session=True)
    return p


def _line(p, prefix, timeout=10.0):
    import selectors

    deadline = time.monotonic() + timeout
    with selectors.DefaultSelector() as sel:
        sel.register(p.stdout, selectors.EVENT_READ)
        while True:
            assert sel.select(max(0.0, deadline - time.monotonic())), f"no {prefix!r} line in {timeout} s"
            line = p.stdout.readline().decode()
            assert line, f"exited ({p.wait()}): {p.stderr.read().decode()}"
            if line.startswith(prefix):
                return line[len(prefix):].strip()


def _stop(p):
    p.terminate()
    p.wait(5)
    for s in (p.stdin, p.stdout, p.stderr):
        s.close()


class FakePCSCD:
    """A Unix socket answering each 8+32+13-byte request (header, struct, APDU: pcsc-lite's
    three writes) with 32 then 2 bytes (its two), written separately."""

    def __init__(self, path):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.bind(path)
        self.sock.listen(4)
        self.conns = []
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.conns.append(conn)
            threading.Thread(target=self._answer, args=(conn,), daemon=True).start()

    def _answer(self, conn):
        try:
            while True:
                req = _recv_exactly(conn, 8 + 32 + 13, timeout=30)
                conn.sendall(req[8:40])
                conn.sendall(b"\x90" + req[-1:])
        except (AssertionError, OSError):
            conn.close()

    def close(self):
        self.sock.close()


def test_split_writes_cross_two_hops_whole(tmp_path):
    pcscd = FakePCSCD(str(tmp_path / "pcscd.comm"))
    exporter = _start(["--listen", "tcp:127.0.0.1:0", "--connect", f"unix:{tmp_path}/pcscd.comm"])
    client = None
    try:
        port = int(_line(exporter, "listening "))
        client_path = str(tmp_path / "client.comm")
        client = _start(["--listen", f"unix:{client_path}", "--connect", f"tcp:127.0.0.1:{port}"])
        assert _line(client, "listening ") == client_path
        assert stat.S_IMODE(os.stat(client_path).st_mode) == 0o600
        c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        c.connect(client_path)
        for i in range(50):
            struct = bytes([i]) * 32
            c.sendall(b"H" * 8)
            c.sendall(struct)
            c.sendall(bytes(12) + bytes([i]))
            assert _recv_exactly(c, 34) == struct + b"\x90" + bytes([i])
        c.close()
    finally:
        for p in (client, exporter):
            if p is not None:
                _stop(p)
        pcscd.close()


def test_listening_tcp_socket_has_nodelay():
    sock, port = relay.listen(relay.parse_address("tcp:127.0.0.1:0"))
    try:
        assert port > 0
        assert sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) == 1
    finally:
        sock.close()


def test_addresses_are_checked():
    assert relay.parse_address("unix:/run/pcscd/pcscd.comm") == (socket.AF_UNIX, "/run/pcscd/pcscd.comm")
    assert relay.parse_address("tcp:10.0.0.2:0") == (socket.AF_INET, ("10.0.0.2", 0))
    for bad in ("10.0.0.2:80", "tcp:host", "unix:", "udp:1.2.3.4:5"):
        with pytest.raises(Exception):
            relay.parse_address(bad)


def test_standby_listens_on_nothing_until_told(tmp_path):
    p = _start(["--standby", "--listen", f"unix:{tmp_path}/s.comm", "--connect", "unix:/nonexistent"])
    try:
        _line(p, "standby")
        assert not os.path.exists(tmp_path / "s.comm")
        p.stdin.write(b"listen\n")
        p.stdin.flush()
        assert _line(p, "listening ") == str(tmp_path / "s.comm")
    finally:
        _stop(p)
    q = _start(["--standby", "--listen", "tcp:127.0.0.1:0", "--connect", "unix:/nonexistent"])
    _line(q, "standby")
    q.stdin.close()  # EOF before 'listen': it ends, having listened on nothing
    assert q.wait(5) == 0
    q.stdout.close()
    q.stderr.close()


def test_pcscdaemon_export_opens_on_acquire_and_closes_on_release(tmp_path):
    from nfcbench_labgrid.exporter import PCSCDaemonExport, _live

    pcscd = FakePCSCD(str(tmp_path / "pcscd.comm"))
    config = {"avail": False, "cls": "PCSCDaemon",
              "params": {"reader": "Virtual PCD 00 00", "socket": str(tmp_path / "pcscd.comm")}}
    export = PCSCDaemonExport(config, host="127.0.0.1", proxy="localhost", proxy_required=False)
    try:
        standby = export.standby
        assert standby is not None and standby.poll() is None
        export.start()
        port = export.port
        assert export.child is standby and export.standby is None
        c = socket.create_connection(("127.0.0.1", port), timeout=5)
        c.sendall(b"H" * 8 + bytes(32) + bytes(13))
        assert len(_recv_exactly(c, 34)) == 34
        export.stop()
        assert standby.poll() is not None  # the relay is gone, and with it the connection
        c.settimeout(5)
        assert c.recv(1) == b""
        c.close()
        with pytest.raises(OSError):
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
        assert export.standby is not None and export.standby.poll() is None  # the next one, ready
    finally:
        if export.child is not None:
            export.stop()
        if export.standby is not None:
            from nfcbench_labgrid.exporter import _stop_group

            _stop_group(export.standby, "standby")
        pcscd.close()
    assert not [c for c, _ in _live.values() if c.poll() is None]


SER2NET_OPENING = bytes.fromhex("fffb03fffd03fffb01fffe01fffd00fffb00fffd2c")


def test_a_bridge_started_ahead_connects_when_given_its_endpoint(tmp_path):
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    pending = PendingBridge(str(tmp_path), "r1")
    accepted = {}

    def accept():
        conn, _ = server.accept()
        conn.sendall(SER2NET_OPENING)
        accepted["conn"] = conn

    t = threading.Thread(target=accept)
    t.start()
    try:
        link = open_link(Endpoint("serial", "127.0.0.1", server.getsockname()[1]), str(tmp_path), "r1",
                         pending=pending)
        try:
            t.join(5)
            assert link.device == f"pn532_uart:{tmp_path}/r1.pty"
            assert os.path.islink(tmp_path / "r1.pty")
        finally:
            link.stop()
        assert not os.path.lexists(tmp_path / "r1.pty")
    finally:
        if "conn" in accepted:
            accepted["conn"].close()
        server.close()


def test_a_bridge_started_ahead_and_never_used_ends(tmp_path):
    pending = PendingBridge(str(tmp_path), "r2")
    proc = pending.proc
    pending.cancel()
    assert proc.poll() is not None
    assert not os.path.lexists(tmp_path / "r2.pty")
