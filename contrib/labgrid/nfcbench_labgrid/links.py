"""What a remote reader looks like to nfcbench on this host: an endpoint and a link.

An endpoint is what the coordinator publishes for a held place (host and port of ser2net or
of the pcscd relay); a link is the local end nfcbench opens: a pty behind the RFC 2217
bridge (``pn532_uart:PATH``) or a Unix socket behind a socat relay (``PCSCLITE_CSOCK_NAME``
with ``pcsc:READER``). Links listen on nothing: the pty is a file, the relay's socket is a
Unix socket 0600 in the run's private folder. Each link is one child process, stopped by its
PID (and its process group).

A pcsc link also preloads the pcscd shim when it is built (``shim/pcsc_tcp.c``, built by
scripts/install-deps into ``build/``): libpcsclite's connect() to the link's socket then
becomes a TCP connection straight to the exporter's relay, one process hop fewer per message.
The socat relay still runs behind the socket, for a program the preload cannot reach (a
statically linked one) and for libpcsclite's check that the socket exists.
"""

import os
import re
import shutil
import signal
import subprocess
import sys
from dataclasses import dataclass

from .wait import wait_for

LINK_TIMEOUT = 10.0  # seconds for a link to be usable (connect, negotiate, pty or socket)
STOP_TIMEOUT = 2.0


class LinkError(Exception):
    """The link could not be made (the exporter's port does not answer, the relay failed)."""


@dataclass(frozen=True)
class Endpoint:
    """A remote reader: ``kind`` serial (a PN532 through ser2net) or pcsc (a pcscd relay)."""

    kind: str
    host: str
    port: int
    resource: str = ""
    speed: int = 115200
    protocol: str = "rfc2217"
    reader: str = ""
    identity: str = ""  # what names the remote device for nfcbench's reader lock

    @staticmethod
    def from_params(cls, params, resource="", host_port=None):
        """From a published resource (its class name and params). ``host_port`` replaces the
        published address (labgrid's proxymanager, for an exporter in isolated mode)."""
        host, port = host_port or (params.get("host"), params.get("port"))
        if not host or not port:
            raise LinkError(f"{resource or cls} publishes no host and port: is the place acquired?")
        extra = params.get("extra") or {}
        if cls == "NetworkSerialPort":
            return Endpoint("serial", host, int(port), resource, int(params.get("speed") or 115200),
                            params.get("protocol") or "rfc2217", identity=str(extra.get("path", "")))
        if cls == "NetworkPCSCDaemon":
            reader = params.get("reader") or ""
            if not reader:
                raise LinkError(f"{resource}: the PCSCDaemon export names no reader")
            socket_path = str(extra.get("socket", ""))
            return Endpoint("pcsc", host, int(port), resource, reader=reader,
                            identity=f"{params.get('host')}{socket_path}")
        raise LinkError(f"{resource}: {cls} is not a reader class (NetworkSerialPort, NetworkPCSCDaemon)")


def _safe(name):
    return re.sub(r"[^A-Za-z0-9_.-]", "_", name) or "reader"


class Link:
    """A started link. ``device`` is nfcbench's --device, ``env`` what its process needs."""

    def __init__(self, endpoint, proc, device, env, path):
        self.endpoint = endpoint
        self.proc = proc
        self.device = device
        self.env = env
        self.path = path
        self.helpers = []  # processes that serve the link beside proc (stopped with it)
        self.fds = []  # descriptors this process holds for the link (closed with it)
        self.says_why = True  # proc's stderr explains its end (our bridge); socat's is a log
        self.relay = ""  # pcsc: "shim" (libpcsclite connects to the exporter) or "socat" (through proc)

    @property
    def pid(self):
        return self.proc.pid

    def ended(self):
        return self.proc.poll() is not None

    def stderr_text(self):
        """What the link process said on stderr (only once it has ended)."""
        if self.proc.stderr is None or not self.ended():
            return ""
        try:
            return self.proc.stderr.read().decode(errors="replace").strip()
        except (OSError, ValueError):
            return ""

    def stop(self):
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            try:
                self.proc.wait(STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        try:  # socat's forked children, if any outlived their parent
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        for helper in self.helpers:
            if helper.poll() is None:
                helper.kill()
            helper.wait()
        for fd in self.fds:
            try:
                os.close(fd)
            except OSError:
                pass
        self.fds = []
        for stream in (self.proc.stdout, self.proc.stderr):
            if stream is not None:
                stream.close()
        try:
            os.unlink(self.path)
        except FileNotFoundError:
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()


def _bridge_env():
    env = dict(os.environ)
    env["PYTHONPATH"] = _PKG_ROOT + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


_PKG_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class PendingBridge:
    """An RFC 2217 bridge started before its place is acquired: Python's start-up (0.1-0.3 s
    on a loaded two-core machine, the largest part of an RFC 2217 link's set-up) overlaps the
    reservation and the acquire; the bridge waits for its HOST:PORT on stdin and connects
    nowhere before. ``cancel()`` when the place is never had."""

    def __init__(self, folder, name):
        self.path = os.path.join(folder, f"{_safe(name)}.pty")
        cmd = [sys.executable, "-S", "-m", "nfcbench_labgrid.bridge", "--connect", "-", "--pty", self.path]
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     start_new_session=True, env=_bridge_env())

    def take(self, endpoint):
        """Give the bridge its endpoint; the Popen, now the link's."""
        proc, self.proc = self.proc, None
        try:
            proc.stdin.write(f"{endpoint.host}:{endpoint.port}\n".encode())
            proc.stdin.close()
        except (BrokenPipeError, OSError):
            pass  # it has exited; its stderr says why
        return proc

    def cancel(self):
        proc, self.proc = self.proc, None
        if proc is not None:
            Link(None, proc, "", {}, self.path).stop()
            if proc.stdin is not None:
                proc.stdin.close()


def open_link(endpoint, folder, name, timeout=LINK_TIMEOUT, pending=None):
    """Start the local end for ``endpoint`` in ``folder`` (private to this run) and return
    the Link once nfcbench can open it; raise LinkError saying why not. ``pending``: a
    PendingBridge started for it (RFC 2217 only; any other endpoint cancels it)."""
    if pending is not None and not (endpoint.kind == "serial" and endpoint.protocol == "rfc2217"):
        pending.cancel()
        pending = None
    if endpoint.kind == "serial":
        return _open_serial(endpoint, folder, name, timeout, pending)
    if endpoint.kind == "pcsc":
        return _open_pcsc(endpoint, folder, name, timeout)
    raise LinkError(f"unknown endpoint kind {endpoint.kind}")


def _open_serial(endpoint, folder, name, timeout, pending=None):
    if endpoint.protocol == "raw":
        return _open_raw_serial(endpoint, folder, name, timeout)
    path = os.path.join(folder, f"{_safe(name)}.pty")
    if pending is not None and pending.path == path:
        proc = pending.take(endpoint)
    else:
        if pending is not None:
            pending.cancel()
        # -S: no site (the venv's .pth files and the editable install's finder, about half of
        # the start-up); the bridge needs only the standard library and this package.
        cmd = [sys.executable, "-S", "-m", "nfcbench_labgrid.bridge", "--connect",
               f"{endpoint.host}:{endpoint.port}", "--pty", path]
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                start_new_session=True, env=_bridge_env())
    link = Link(endpoint, proc, f"pn532_uart:{path}", {}, path)
    try:
        line = _read_ready_line(proc, timeout)
    except Exception:
        link.stop()
        raise
    if not line.startswith("ready "):
        err = link.stderr_text() if link.ended() else ""
        link.stop()
        raise LinkError(f"bridge to {endpoint.host}:{endpoint.port}: {err or line or 'no ready line'}")
    return link


def _open_raw_serial(endpoint, folder, name, timeout):
    """Plain TCP (ser2net's raw accepter, NFCSerialPort's default): socat carries the bytes as
    they are, in C. socat connects first and only then makes the pty; with ``-d -d`` it logs
    ``starting data transfer loop`` once both ends are up, the event waited for (read from its
    stderr, not a poll for the pty). It ends when the server closes. A pty's master reads EIO
    whenever no one has the slave open, and socat ends on that, so this process holds the
    slave open (O_NOCTTY: it never becomes anyone's terminal) for the link's life: nfcbench
    may open and close the device more than once."""
    path = os.path.join(folder, f"{_safe(name)}.pty")
    socat = shutil.which("socat") or "/usr/bin/socat"
    cmd = [socat, "-d", "-d", f"TCP:{endpoint.host}:{endpoint.port},nodelay", f"PTY,link={path},raw,echo=0"]
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            start_new_session=True)
    link = Link(endpoint, proc, f"pn532_uart:{path}", {}, path)
    link.says_why = False
    try:
        up, text = _read_stderr_until(proc, "starting data transfer loop", timeout)
        if not up:
            raise LinkError(_socat_error(text) or f"socat exited {proc.returncode}")
        link.fds.append(os.open(path, os.O_RDWR | os.O_NOCTTY | os.O_NONBLOCK))
    except LinkError as e:
        link.stop()
        raise LinkError(f"bridge to {endpoint.host}:{endpoint.port}: {e}") from None
    except Exception as e:
        err = link.stderr_text()
        link.stop()
        raise LinkError(f"bridge to {endpoint.host}:{endpoint.port}: {_socat_error(err) or e}") from None
    return link


def _socat_error(text):
    """socat's error lines (E), without its notices (N) and their timestamps."""
    lines = [x.split(" E ", 1)[1] for x in text.splitlines() if " E " in x]
    return "; ".join(lines) or text.strip()


def _read_stderr_until(proc, needle, timeout):
    """(True, what ``proc`` wrote on stderr up to ``needle``), or (False, all it wrote) when
    stderr ended first (the process exited); LinkError past ``timeout``."""
    import selectors
    import time

    sel = selectors.DefaultSelector()
    sel.register(proc.stderr, selectors.EVENT_READ)
    buf = b""
    want = needle.encode()
    deadline = time.monotonic() + timeout
    try:
        while want not in buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise LinkError(f"not up within {timeout:g} s")
            if not sel.select(left):
                continue
            chunk = os.read(proc.stderr.fileno(), 4096)
            if not chunk:
                proc.wait()
                return False, buf.decode(errors="replace")
            buf += chunk
    finally:
        sel.close()
    return True, buf.decode(errors="replace")


def _read_ready_line(proc, timeout):
    """The bridge's first stdout line, waited for with a deadline (it prints it once the pty
    is linked, or exits with a reason on stderr)."""
    import selectors

    sel = selectors.DefaultSelector()
    sel.register(proc.stdout, selectors.EVENT_READ)
    buf = b""
    try:
        import time

        deadline = time.monotonic() + timeout
        while b"\n" not in buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise LinkError(f"the bridge did not come up within {timeout:g} s")
            if not sel.select(left):
                continue
            chunk = os.read(proc.stdout.fileno(), 4096)
            if not chunk:
                proc.wait()
                break
            buf += chunk
    finally:
        sel.close()
    return buf.split(b"\n", 1)[0].decode(errors="replace")


SHIM_NAME = "libnfcbench_pcsc_tcp.so"


def pcsc_shim():
    """The pcscd shim to preload, or None: NFCBENCH_LG_PCSC_SHIM names it ("off" or empty:
    none, the socat relay only); by default contrib/labgrid/build/, where the install step
    builds it, when it is there."""
    chosen = os.environ.get("NFCBENCH_LG_PCSC_SHIM")
    if chosen is not None:
        return chosen if chosen not in ("", "off", "0") and os.path.isfile(chosen) else None
    path = os.path.join(_PKG_ROOT, "build", SHIM_NAME)
    return path if os.path.isfile(path) else None


def _host_port(host, port):
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def _open_pcsc(endpoint, folder, name, timeout):
    path = os.path.join(folder, f"{_safe(name)}.pcscd.comm")
    socat = shutil.which("socat") or "/usr/bin/socat"
    cmd = [socat, f"UNIX-LISTEN:{path},fork,mode=600,unlink-early",
           f"TCP:{endpoint.host}:{endpoint.port},nodelay"]
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            start_new_session=True)
    # nfcbench's reader lock is keyed by the reader name and NFCBENCH_PCSC_INSTANCE: two
    # remote pcscds both serving "Virtual PCD 00 00" are two readers, not one.
    env = {"PCSCLITE_CSOCK_NAME": path, "NFCBENCH_PCSC_INSTANCE": f"labgrid-{_safe(endpoint.identity)}"}
    shim = pcsc_shim()
    if shim:
        preload = os.environ.get("LD_PRELOAD", "").strip()
        env["LD_PRELOAD"] = f"{shim} {preload}" if preload else shim
        env["NFCBENCH_PCSC_TCP"] = _host_port(endpoint.host, endpoint.port)
    link = Link(endpoint, proc, f"pcsc:{endpoint.reader}", env, path)
    link.relay = "shim" if shim else "socat"
    try:
        wait_for(lambda: _is_socket(path), timeout, "the pcscd relay's socket", alive=lambda: proc.poll() is None)
    except Exception as e:
        err = link.stderr_text()
        link.stop()
        raise LinkError(f"pcscd relay to {endpoint.host}:{endpoint.port}: {err or e}") from None
    return link


def _is_socket(path):
    import stat

    try:
        return stat.S_ISSOCK(os.stat(path).st_mode)
    except FileNotFoundError:
        return False


def port_open(host, port, timeout=1.0):
    """Whether something still accepts connections at host:port (after a run failed: a
    closed port means the exporter stopped serving the place)."""
    import socket

    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False
