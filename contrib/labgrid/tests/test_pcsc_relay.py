"""The pcscd relay's C parts, built from contrib/labgrid/shim/ with gcc into a temporary folder
(what scripts/install-deps builds into contrib/labgrid/build/): the LD_PRELOAD shim that turns
libpcsclite's connect() to PCSCLITE_CSOCK_NAME into a TCP connection to the relay, and the
exporter's relay from TCP to a Unix socket. A Python child stands in for libpcsclite (CPython's
socket calls are libc's connect/send/recv, which the shim wraps); a Unix echo server stands in
for pcscd."""

import os
import shutil
import signal
import socket
import subprocess
import sys
import threading

import pytest

from nfcbench_labgrid import exporter, links
from nfcbench_labgrid.links import Endpoint, open_link
from nfcbench_labgrid.procnet import listening_ports
from nfcbench_labgrid.wait import wait_for

SHIM_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "shim")


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    gcc = shutil.which("gcc")
    if gcc is None:
        pytest.skip("gcc not found (scripts/install-deps installs it): the shim and the relay cannot be built")
    out = tmp_path_factory.mktemp("build")
    shim = str(out / links.SHIM_NAME)
    relay = str(out / exporter.RELAY_NAME)
    flags = ["-O2", "-Wall", "-Wextra", "-Werror"]
    subprocess.run([gcc, *flags, "-o", shim, os.path.join(SHIM_DIR, "pcsc_tcp.c"), "-shared", "-fPIC", "-ldl"],
                   check=True)
    subprocess.run([gcc, *flags, "-o", relay, os.path.join(SHIM_DIR, "pcsc_relay.c")], check=True)
    return {"shim": shim, "relay": relay}


class Server(threading.Thread):
    """One connection accepted; ``chunks`` what each recv() got; answers ``reply`` after
    ``expect`` bytes, then, with ``echo``, echoes everything until the peer closes."""

    def __init__(self, sock, expect=0, reply=b"", echo=False):
        super().__init__(daemon=True)
        self.sock, self.expect, self.reply, self.echo = sock, expect, reply, echo
        self.chunks = []
        self.peer_family = None
        self.start()

    def run(self):
        conn, _ = self.sock.accept()
        self.peer_family = conn.family
        with conn:
            got = 0
            while True:
                data = conn.recv(65536)
                if not data:
                    return
                self.chunks.append(data)
                got += len(data)
                if self.echo:
                    conn.sendall(data)
                elif got >= self.expect:
                    conn.sendall(self.reply)
                    return


def _tcp_listener():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(1)
    s.settimeout(10)
    return s


def _unix_listener(path):
    s = socket.socket(socket.AF_UNIX)
    s.bind(path)
    s.listen(1)
    s.settimeout(10)
    return s


CLIENT = """
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
for piece in sys.argv[2:]:
    s.send(piece.encode())
print(s.recv(100).decode(), flush=True)
"""


def _client(path, pieces, env):
    r = subprocess.run([sys.executable, "-S", "-c", CLIENT, path, *pieces], env=env, capture_output=True,
                       timeout=20)
    assert r.returncode == 0, r.stderr.decode()
    return r.stdout.decode().strip()


def test_the_shim_turns_a_connect_to_the_pcscd_socket_into_tcp_and_sends_a_request_as_one_segment(built, tmp_path):
    tcp = _tcp_listener()
    server = Server(tcp, expect=6, reply=b"answer")
    path = str(tmp_path / "pcscd.comm")  # libpcsclite stats it: the link's socat socket in real use
    env = dict(os.environ, LD_PRELOAD=built["shim"], PCSCLITE_CSOCK_NAME=path,
               NFCBENCH_PCSC_TCP=f"127.0.0.1:{tcp.getsockname()[1]}")
    assert _client(path, ["hd", "st", "ap"], env) == "answer"
    server.join(10)
    assert server.peer_family == socket.AF_INET
    # Three send()s, pushed when the client waits for its answer: one segment, one recv.
    assert server.chunks == [b"hdstap"]
    tcp.close()


def test_without_coalescing_the_shim_still_connects_over_tcp(built, tmp_path):
    tcp = _tcp_listener()
    server = Server(tcp, expect=6, reply=b"answer")
    path = str(tmp_path / "pcscd.comm")
    env = dict(os.environ, LD_PRELOAD=built["shim"], PCSCLITE_CSOCK_NAME=path,
               NFCBENCH_PCSC_TCP=f"127.0.0.1:{tcp.getsockname()[1]}", NFCBENCH_PCSC_TCP_COALESCE="0")
    assert _client(path, ["hd", "st", "ap"], env) == "answer"
    server.join(10)
    assert b"".join(server.chunks) == b"hdstap"
    tcp.close()


def test_the_shim_leaves_every_other_unix_connect_alone(built, tmp_path):
    other = str(tmp_path / "other.sock")
    unix = _unix_listener(other)
    server = Server(unix, expect=2, reply=b"unix")
    env = dict(os.environ, LD_PRELOAD=built["shim"], PCSCLITE_CSOCK_NAME=str(tmp_path / "pcscd.comm"),
               NFCBENCH_PCSC_TCP="127.0.0.1:9")
    assert _client(other, ["hi"], env) == "unix"
    server.join(10)
    assert server.peer_family == socket.AF_UNIX
    unix.close()


def test_a_relay_that_does_not_answer_fails_the_connect(built, tmp_path):
    tcp = _tcp_listener()
    port = tcp.getsockname()[1]
    tcp.close()  # nothing listens there now
    path = str(tmp_path / "pcscd.comm")
    env = dict(os.environ, LD_PRELOAD=built["shim"], PCSCLITE_CSOCK_NAME=path, NFCBENCH_PCSC_TCP=f"127.0.0.1:{port}")
    r = subprocess.run([sys.executable, "-S", "-c", CLIENT, path, "x"], env=env, capture_output=True, timeout=20)
    assert r.returncode != 0
    assert b"ConnectionRefusedError" in r.stderr


def _start_relay(relay, sock_path):
    proc = subprocess.Popen([relay, "127.0.0.1", sock_path], start_new_session=True, stderr=subprocess.PIPE)
    ports = wait_for(lambda: listening_ports(proc.pid), 10, "the relay listening", alive=lambda: proc.poll() is None)
    return proc, min(ports)


def test_the_relay_carries_bytes_both_ways_and_its_group_ends_every_connection(built, tmp_path):
    pcscd = str(tmp_path / "pcscd.comm")
    unix = _unix_listener(pcscd)
    Server(unix, echo=True)
    proc, port = _start_relay(built["relay"], pcscd)
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=10) as c:
            c.sendall(b"\x00" * 8 + b"select")
            got = b""
            while len(got) < 14:
                got += c.recv(100)
            assert got == b"\x00" * 8 + b"select"
            os.killpg(proc.pid, signal.SIGTERM)  # what the exporter does on release
            proc.wait(5)
            assert c.recv(100) == b""  # the connection's child is gone with the group
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        proc.stderr.close()
        unix.close()


def test_a_connection_ends_when_the_relay_itself_is_killed(built, tmp_path):
    pcscd = str(tmp_path / "pcscd.comm")
    unix = _unix_listener(pcscd)
    Server(unix, echo=True)
    proc, port = _start_relay(built["relay"], pcscd)
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=10) as c:
            c.sendall(b"ping")
            assert c.recv(100) == b"ping"
            proc.kill()  # only the relay, not its group: its connection's child goes too
            proc.wait(5)
            assert c.recv(100) == b""
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait()
        proc.stderr.close()
        unix.close()


def test_shim_and_relay_together_reach_the_unix_socket_behind_the_relay(built, tmp_path):
    pcscd = str(tmp_path / "pcscd.comm")
    unix = _unix_listener(pcscd)
    server = Server(unix, expect=6, reply=b"answer")
    proc, port = _start_relay(built["relay"], pcscd)
    try:
        placeholder = str(tmp_path / "link.comm")
        env = dict(os.environ, LD_PRELOAD=built["shim"], PCSCLITE_CSOCK_NAME=placeholder,
                   NFCBENCH_PCSC_TCP=f"127.0.0.1:{port}")
        assert _client(placeholder, ["hd", "st", "ap"], env) == "answer"
        server.join(10)
        assert server.chunks == [b"hdstap"]
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        proc.stderr.close()
        unix.close()


def test_the_relay_refuses_an_address_it_cannot_listen_on(built, tmp_path):
    r = subprocess.run([built["relay"], "192.0.2.1", str(tmp_path / "x")], capture_output=True, timeout=10)
    assert r.returncode == 69
    assert b"listen on 192.0.2.1" in r.stderr


def test_a_pcsc_link_preloads_the_shim_when_it_is_built(built, tmp_path, monkeypatch):
    monkeypatch.setenv("NFCBENCH_LG_PCSC_SHIM", built["shim"])
    monkeypatch.setenv("LD_PRELOAD", "libother.so")
    ep = Endpoint("pcsc", "10.77.1.2", 40001, "pcscd", reader="Virtual PCD 00 00", identity="10.77.1.2/run/x")
    with open_link(ep, str(tmp_path), "reader") as link:
        assert link.relay == "shim"
        assert link.env["LD_PRELOAD"] == f"{built['shim']} libother.so"
        assert link.env["NFCBENCH_PCSC_TCP"] == "10.77.1.2:40001"
        assert link.env["PCSCLITE_CSOCK_NAME"] == link.path
        assert link.device == "pcsc:Virtual PCD 00 00"


def test_without_the_shim_a_pcsc_link_is_the_socat_relay(tmp_path, monkeypatch):
    monkeypatch.setenv("NFCBENCH_LG_PCSC_SHIM", "off")
    ep = Endpoint("pcsc", "fd00::2", 40001, "pcscd", reader="R")
    with open_link(ep, str(tmp_path), "reader") as link:
        assert link.relay == "socat"
        assert "LD_PRELOAD" not in link.env and "NFCBENCH_PCSC_TCP" not in link.env
    assert links._host_port("fd00::2", 40001) == "[fd00::2]:40001"


def test_the_exporter_relay_is_the_built_one_unless_socat_is_asked_for(tmp_path, monkeypatch):
    monkeypatch.setattr(exporter, "_PKG_ROOT", str(tmp_path))
    socat = exporter.pcsc_relay_command("auto", "10.0.0.2", "/run/pcscd/pcscd.comm", "/usr/bin/socat")
    assert socat == ["/usr/bin/socat", "TCP-LISTEN:0,bind=10.0.0.2,reuseaddr,fork,nodelay",
                     "UNIX-CONNECT:/run/pcscd/pcscd.comm"]
    (tmp_path / "build").mkdir()
    relay = tmp_path / "build" / exporter.RELAY_NAME
    relay.write_text("#!/bin/sh\n")
    relay.chmod(0o755)
    assert exporter.pcsc_relay_command("auto", "10.0.0.2", "/s", "/usr/bin/socat") == [str(relay), "10.0.0.2", "/s"]
    assert exporter.pcsc_relay_command("socat", "10.0.0.2", "/s", "/usr/bin/socat")[0] == "/usr/bin/socat"
    with pytest.raises(ValueError):
        exporter.pcsc_relay_command("splice", "10.0.0.2", "/s")
