"""labgrid's exporter with two resource classes for NFC readers.

    python -m nfcbench_labgrid.exporter -c COORDINATOR:20408 -n hostA --hostname 10.0.0.2 exporter.yaml

takes labgrid-exporter's own options. labgrid's exporter has no plugin mechanism (labgrid
issue #1205): the classes are added to ``labgrid.remote.exporter.exports``, the dict its
``add_resource`` looks classes up in, and then labgrid's own ``main()`` runs. That dict is
not a documented interface; it is the same in labgrid 25 and 26 (the version the install
step pins, ``LABGRID_VERSION``), and a test runs this exporter against that version.

``NFCSerialPort`` (params: ``port`` a tty path or a link to one, resolved at each acquire,
or ``match`` udev properties as labgrid's USBSerialPort; ``speed``, default 115200;
``protocol`` raw, the default, or rfc2217): published as a stock ``NetworkSerialPort``, so
every labgrid client sees an ordinary serial port. raw is plain TCP, which the client bridges
with socat; rfc2217 is telnet with COM-PORT-OPTION, labgrid's own serial protocol (its
console, pyserial's ``rfc2217://``), which the client bridges in Python, at about 0.15 ms more
per PN532 command on the lab test's machine. ser2net starts when the place is acquired and stops
when it is released, set for a PN532 (``ser2net.py``: no Nagle, no chardelay, one
connection), listening on the exporter's published address only.

``PCSCDaemon`` (params: ``reader`` the PC/SC reader name nfcbench is to use, ``socket``
default /run/pcscd/pcscd.comm): published as ``NetworkPCSCDaemon`` (host, port, reader).
While the place is acquired a relay listens on the published address and connects each
client to the pcscd socket; on release the relay and every connection through it are closed.
The relay is ``nfcbench-pcsc-relay`` (``shim/pcsc_relay.c``, built by scripts/install-deps
into ``build/``: a poll, a read and a send per message crossing) when it is built, else socat;
``relay: socat`` chooses socat. The socket reaches every reader of that pcscd, so map one
place to one pcscd.
"""

import logging
import os
import shutil
import signal
import subprocess
import sys
import time

import attr

from labgrid.remote import exporter as lg_exporter

from .procnet import listening_ports
from .ser2net import ser2net_command
from .wait import wait_for

START_TIMEOUT = 5.0  # seconds for ser2net or socat to listen after it is started
STOP_TIMEOUT = 2.0  # seconds after SIGTERM before SIGKILL

log = logging.getLogger("nfcbench_labgrid.exporter")

# The listeners this process started and has not stopped: stopped when the exporter ends,
# however its main() returns. A SIGKILLed exporter cannot do that, so each child also gets
# SIGTERM from the kernel when the exporter dies (util-linux setpriv --pdeathsig, which
# keeps it across its exec; a preexec_fn would be unsafe beside gRPC's threads).
_live = {}


def _pdeathsig_prefix():
    setpriv = shutil.which("setpriv")
    return [setpriv, "--pdeathsig", "TERM", "--"] if setpriv else []


class LocalTTY:
    """A tty on this host named by a path, maybe a link (a virtual PN532's ``--pty``):
    available while the path resolves to something that exists."""

    def __init__(self, port, speed=115200):
        if not port:
            raise ValueError("NFCSerialPort needs port: (a tty path) or match: (udev properties)")
        self.path = port
        self.speed = int(speed)
        self.avail = False

    @property
    def port(self):
        return os.path.realpath(self.path)

    def poll(self):
        self.avail = os.path.exists(self.port)


class LocalPCSCD:
    """A pcscd on this host, known by its socket: available while the socket exists."""

    def __init__(self, reader, socket="/run/pcscd/pcscd.comm"):
        if not reader:
            raise ValueError("PCSCDaemon needs reader: (the PC/SC reader name, as 'nfcbench devices' lists it)")
        self.reader = reader
        self.socket = socket
        self.avail = False

    def poll(self):
        self.avail = os.path.exists(self.socket)


_PKG_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RELAY_NAME = "nfcbench-pcsc-relay"


def pcsc_relay_command(relay, bind, socket_path, socat_bin=None):
    """The pcscd relay's argv: ``relay`` "auto" (nfcbench-pcsc-relay when the install step
    built it into contrib/labgrid/build/, else socat) or "socat"."""
    if relay not in ("auto", "socat"):
        raise ValueError(f"PCSCDaemon relay: {relay!r} is neither auto nor socat")
    built = os.path.join(_PKG_ROOT, "build", RELAY_NAME)
    if relay == "auto" and os.access(built, os.X_OK):
        return [built, bind, socket_path]
    socat = socat_bin or shutil.which("socat") or "/usr/bin/socat"
    return [socat, f"TCP-LISTEN:0,bind={bind},reuseaddr,fork,nodelay", f"UNIX-CONNECT:{socket_path}"]


def _start_listener(cmd, what):
    """Start ``cmd`` in a process group of its own and return (child, port) once it listens.
    The group lets stop() end socat's forked per-connection children too."""
    child = subprocess.Popen(_pdeathsig_prefix() + cmd, start_new_session=True, stdin=subprocess.DEVNULL)
    _live[child.pid] = (child, what)
    try:
        # Every millisecond: this wait runs inside the coordinator's lock (it serializes every
        # acquire in the lab), so a late look costs every place queued behind this one.
        ports = wait_for(lambda: listening_ports(child.pid), START_TIMEOUT, f"{what} listening",
                         alive=lambda: child.poll() is None, max_pause=0.001)
    except Exception:
        _stop_group(child, what)
        raise
    return child, min(ports)


def _stop_group(child, what):
    _live.pop(child.pid, None)
    try:
        os.killpg(child.pid, signal.SIGTERM)
    except ProcessLookupError:
        pass
    try:
        child.wait(STOP_TIMEOUT)
    except subprocess.TimeoutExpired:
        log.warning("%s (pid %d) still running %g s after SIGTERM: SIGKILL", what, child.pid, STOP_TIMEOUT)
        try:
            os.killpg(child.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        child.wait()
    # The leader is gone; a forked child that ignored TERM would still hold a connection.
    try:
        os.killpg(child.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


@attr.s(eq=False)
class NFCSerialPortExport(lg_exporter.ResourceExport):
    """An NFC reader's serial port (a PN532 on a UART) through a low-latency ser2net."""

    def __attrs_post_init__(self):
        super().__attrs_post_init__()
        params = dict(self.local_params)
        self.protocol = params.pop("protocol", "raw")
        self.bind = params.pop("bind", None)
        if "match" in params:
            from labgrid.resource.udev import USBSerialPort

            self.local = USBSerialPort(target=None, name=None, **params)
        else:
            self.local = LocalTTY(**params)
        self.data["cls"] = "NetworkSerialPort"
        self.child = None
        self.port = None
        self.ser2net_bin = shutil.which("ser2net") or "/usr/sbin/ser2net"

    def __del__(self):
        if getattr(self, "child", None) is not None:
            self._stop(self.start_params)

    def _get_start_params(self):
        return {"path": self.local.port}

    def _get_params(self):
        return {
            "host": self.host,
            "port": self.port,
            "speed": self.local.speed,
            "protocol": self.protocol,
            "extra": {"path": self.local.port},
        }

    def _start(self, start_params):
        assert self.child is None
        path = start_params["path"]
        cmd = ser2net_command(self.ser2net_bin, path, self.local.speed, self.bind or self.host,
                              protocol=self.protocol)
        self.logger.info("starting ser2net: %s", " ".join(cmd))
        t = time.monotonic()
        self.child, self.port = _start_listener(cmd, f"ser2net for {path}")
        self.logger.info("ser2net for %s listens on %s:%d (%.1f ms)", path, self.bind or self.host, self.port,
                         (time.monotonic() - t) * 1000)

    def _stop(self, start_params):
        child, self.child, self.port = self.child, None, None
        if child is not None:
            t = time.monotonic()
            _stop_group(child, "ser2net")
            self.logger.info("stopped ser2net for %s (%.1f ms)", (start_params or {}).get("path"),
                             (time.monotonic() - t) * 1000)


@attr.s(eq=False)
class PCSCDaemonExport(lg_exporter.ResourceExport):
    """A pcscd's client socket, relayed over TCP only while the place is held."""

    def __attrs_post_init__(self):
        super().__attrs_post_init__()
        params = dict(self.local_params)
        self.bind = params.pop("bind", None)
        self.relay = params.pop("relay", "auto")
        if self.relay not in ("auto", "socat"):
            raise ValueError(f"PCSCDaemon relay: {self.relay!r} is neither auto nor socat")
        self.local = LocalPCSCD(**params)
        self.data["cls"] = "NetworkPCSCDaemon"
        self.child = None
        self.port = None
        self.socat_bin = shutil.which("socat") or "/usr/bin/socat"

    def __del__(self):
        if getattr(self, "child", None) is not None:
            self._stop(self.start_params)

    def _get_start_params(self):
        return {"socket": self.local.socket}

    def _get_params(self):
        return {
            "host": self.host,
            "port": self.port,
            "reader": self.local.reader,
            "extra": {"socket": self.local.socket},
        }

    def _start(self, start_params):
        assert self.child is None
        bind = self.bind or self.host
        cmd = pcsc_relay_command(self.relay, bind, start_params["socket"], self.socat_bin)
        self.logger.info("starting the pcscd relay: %s", " ".join(cmd))
        t = time.monotonic()
        self.child, self.port = _start_listener(cmd, f"pcscd relay for {start_params['socket']}")
        self.logger.info("pcscd relay for %s listens on %s:%d (%.1f ms)", start_params["socket"], bind, self.port,
                         (time.monotonic() - t) * 1000)

    def _stop(self, start_params):
        child, self.child, self.port = self.child, None, None
        if child is not None:
            t = time.monotonic()
            _stop_group(child, "pcscd relay")
            self.logger.info("stopped the pcscd relay for %s (%.1f ms)", (start_params or {}).get("socket"),
                             (time.monotonic() - t) * 1000)


def register():
    """Add the NFC classes to labgrid's exporter class table (idempotent)."""
    lg_exporter.exports["NFCSerialPort"] = NFCSerialPortExport
    lg_exporter.exports["PCSCDaemon"] = PCSCDaemonExport


def stop_all():
    """Stop every ser2net and relay still running (the exporter is ending)."""
    for child, what in list(_live.values()):
        _stop_group(child, what)


def main():
    register()
    try:
        lg_exporter.main()
    finally:
        stop_all()


if __name__ == "__main__":
    sys.exit(main())
