"""The bridge against a stand-in for ser2net on loopback: ser2net's opening negotiation,
0xFF escaping both ways, and the exit it makes when the server goes (a released place); a
bridge started ahead of its place (the matrix starts it while it reserves and acquires)."""

import os
import select
import socket
import subprocess
import sys
import threading
import time

import pytest

from nfcbench_labgrid.bridge import EXIT_REMOTE_CLOSED, EXIT_UNAVAILABLE
from nfcbench_labgrid.links import Endpoint, LinkError, PendingBridge, open_link

SER2NET_OPENING = bytes.fromhex("fffb03fffd03fffb01fffe01fffd00fffb00fffd2c")


def _recv_until(conn, n, timeout=5.0):
    deadline = time.monotonic() + timeout
    buf = b""
    while len(buf) < n:
        left = deadline - time.monotonic()
        assert left > 0, f"got {buf.hex()} of {n} bytes"
        r, _, _ = select.select([conn], [], [], left)
        if r:
            chunk = conn.recv(4096)
            assert chunk, "closed"
            buf += chunk
    return buf


def _read_fd(fd, n, timeout=5.0):
    deadline = time.monotonic() + timeout
    buf = b""
    while len(buf) < n:
        left = deadline - time.monotonic()
        assert left > 0, f"got {buf.hex()} of {n} bytes"
        r, _, _ = select.select([fd], [], [], left)
        if r:
            buf += os.read(fd, 4096)
    return buf


@pytest.fixture
def server():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(1)
    yield s
    s.close()


def test_frames_cross_both_ways_with_ff_escaped(server, tmp_path):
    ep = Endpoint("serial", "127.0.0.1", server.getsockname()[1])
    import threading

    accepted = {}

    def accept():
        conn, _ = server.accept()
        conn.sendall(SER2NET_OPENING)
        accepted["conn"] = conn
        accepted["answer"] = _recv_until(conn, 18)  # 6 answers of 3 bytes

    t = threading.Thread(target=accept)
    t.start()
    link = open_link(ep, str(tmp_path), "r1")
    try:
        t.join(5)
        conn = accepted["conn"]
        assert link.device == f"pn532_uart:{tmp_path}/r1.pty"
        fd = os.open(str(tmp_path / "r1.pty"), os.O_RDWR | os.O_NOCTTY)
        frame = bytes.fromhex("0000ff02fed4022a00")
        os.write(fd, frame)
        assert _recv_until(conn, len(frame) + 1) == frame.replace(b"\xff", b"\xff\xff")
        answer = bytes.fromhex("0000ff00ff00")  # the ACK frame: two 0xFF
        conn.sendall(answer.replace(b"\xff", b"\xff\xff"))
        assert _read_fd(fd, len(answer)) == answer
        # The server goes away (ser2net stopped on release): the bridge ends, 75, saying why.
        conn.close()
        assert link.proc.wait(5) == EXIT_REMOTE_CLOSED
        assert "closed the connection" in link.stderr_text()
        assert not os.path.lexists(str(tmp_path / "r1.pty"))
        os.close(fd)
    finally:
        link.stop()


def test_a_port_that_does_not_answer_is_a_link_error(tmp_path):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # nothing listens there now
    with pytest.raises(LinkError, match="cannot connect"):
        open_link(Endpoint("serial", "127.0.0.1", port), str(tmp_path), "r2")


def test_raw_tcp_server_is_not_taken_for_telnet(server):
    # A server that never negotiates: the bridge gives up at its deadline with 69, not hangs.
    p = subprocess.Popen([sys.executable, "-m", "nfcbench_labgrid.bridge", "--connect",
                          f"127.0.0.1:{server.getsockname()[1]}", "--pty", "/nonexistent/x"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         env=dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(__file__))))
    conn, _ = server.accept()
    try:
        assert p.wait(15) == EXIT_UNAVAILABLE
        assert b"binary telnet" in p.stderr.read()
    finally:
        conn.close()
        p.stdout.close()
        p.stderr.close()


def test_raw_link_carries_bytes_as_they_are_and_ends_with_the_server(server, tmp_path):
    import threading

    ep = Endpoint("serial", "127.0.0.1", server.getsockname()[1], protocol="raw")
    accepted = {}
    t = threading.Thread(target=lambda: accepted.update(conn=server.accept()[0]))
    t.start()
    link = open_link(ep, str(tmp_path), "r3")
    try:
        t.join(5)
        conn = accepted["conn"]
        path = str(tmp_path / "r3.pty")
        frame = bytes.fromhex("0000ff02fed4022a00")
        for _ in range(2):  # opened, used and closed twice: the link outlives its users
            fd = os.open(path, os.O_RDWR | os.O_NOCTTY)
            import tty

            tty.setraw(fd)
            os.write(fd, frame)
            assert _recv_until(conn, len(frame)) == frame  # no telnet escaping on raw
            conn.sendall(bytes.fromhex("0000ff00ff00"))
            assert _read_fd(fd, 6) == bytes.fromhex("0000ff00ff00")
            os.close(fd)
        assert not link.ended()
        conn.close()
        assert link.proc.wait(5) is not None
    finally:
        link.stop()
    assert not os.path.lexists(str(tmp_path / "r3.pty"))
    assert all(h.poll() is not None for h in link.helpers)
    assert link.fds == []  # the slave this process held open is closed


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


def test_a_raw_port_that_does_not_answer_is_a_link_error_with_socats_reason(tmp_path):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # nothing listens there now
    with pytest.raises(LinkError, match="Connection refused"):
        open_link(Endpoint("serial", "127.0.0.1", port, protocol="raw"), str(tmp_path), "r4")
    assert not os.path.lexists(str(tmp_path / "r4.pty"))
