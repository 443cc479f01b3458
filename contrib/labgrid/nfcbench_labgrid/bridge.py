"""A remote serial port as a local pty: what libnfc's pn532_uart driver can open.

    python -m nfcbench_labgrid.bridge --connect HOST:PORT --pty PATH [--raw]

(``--connect -``: the first line of stdin is HOST:PORT; the bridge can be started before the
address is known, and EOF instead ends it with status 0.)

connects to ser2net (telnet RFC 2217, or plain TCP with ``--raw``), makes a pty, links PATH
to it and prints ``ready PATH /dev/pts/N`` once the link can be used. One thread, one
``select``: bytes from the pty go out at once (TCP_NODELAY, 0xFF doubled for telnet), bytes
from the network are unescaped and written to the pty. Nothing listens: the bridge is a
TCP client, and the pty is this host's only.

Exit status: 0 after SIGTERM, SIGINT or SIGHUP (link removed); 69 when the server cannot be
reached or does not negotiate binary telnet within the deadline; 75 (EX_TEMPFAIL) when the
server closes the connection while the bridge runs: the exporter stopped ser2net, which it
does when the place is released. The pty is closed then, so a program on it gets an I/O error
at once instead of waiting on a port that will never answer.
"""

import argparse
import errno
import os
import select
import signal
import socket
import sys
import time
import tty

from .telnet import TelnetClient, escape

EXIT_UNAVAILABLE = 69
EXIT_REMOTE_CLOSED = 75
NEGOTIATION_TIMEOUT = 5.0


class RemoteClosed(Exception):
    pass


class _Stop(Exception):
    pass


def _stop(signum, frame):
    raise _Stop()


def _split_address(text):
    if text == "-":
        return None
    host, sep, port = text.rpartition(":")
    if not sep or not port.isdigit():
        raise argparse.ArgumentTypeError(f"expected HOST:PORT, not {text!r}")
    return host.strip("[]"), int(port)


def _write_all(fd, data):
    view = memoryview(data)
    while view:
        try:
            n = os.write(fd, view)
        except InterruptedError:
            continue
        view = view[n:]


def negotiate(sock, codec, timeout=NEGOTIATION_TIMEOUT):
    """Answer the server's telnet options until BINARY is agreed both ways; return any data
    that came with the negotiation (to go to the pty first)."""
    deadline = time.monotonic() + timeout
    pending = bytearray()
    while not codec.binary:
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("the server did not negotiate binary telnet (RFC 2217) in time: "
                               "a raw TCP port? then use protocol: raw")
        ready, _, _ = select.select([sock], [], [], left)
        if not ready:
            continue
        chunk = sock.recv(65536)
        if not chunk:
            raise RemoteClosed("the server closed the connection during telnet negotiation")
        data, reply = codec.feed(chunk)
        if reply:
            sock.sendall(reply)
        pending += data
    return bytes(pending)


def pump(sock, master, codec):
    """Carry bytes both ways until the server closes (RemoteClosed) or a signal stops us."""
    while True:
        ready, _, _ = select.select([master, sock], [], [])
        if master in ready:
            try:
                data = os.read(master, 65536)
            except OSError as e:
                if e.errno != errno.EIO:  # EIO: no slave open; ours stays open, so not expected
                    raise
                data = b""
            if data:
                sock.sendall(escape(data) if codec else data)
        if sock in ready:
            try:
                chunk = sock.recv(65536)
            except ConnectionResetError:
                chunk = b""
            if not chunk:
                raise RemoteClosed("the server closed the connection")
            if codec:
                data, reply = codec.feed(chunk)
                if reply:
                    sock.sendall(reply)
            else:
                data = chunk
            if data:
                _write_all(master, data)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m nfcbench_labgrid.bridge", description=__doc__.split("\n\n")[0])
    parser.add_argument("--connect", required=True, type=_split_address, metavar="HOST:PORT",
                        help="the server; - reads it from stdin's first line")
    parser.add_argument("--pty", required=True, metavar="PATH", help="the link to make to the pty")
    parser.add_argument("--raw", action="store_true", help="plain TCP (ser2net's raw accepter), not telnet")
    args = parser.parse_args(argv)
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, _stop)
    if args.connect is None:
        # Started ahead (links.PendingBridge): the address comes on stdin once the place is
        # acquired; EOF first means it never was.
        try:
            line = sys.stdin.readline().strip()
        except _Stop:
            return 0
        if not line:
            return 0
        try:
            args.connect = _split_address(line)
        except argparse.ArgumentTypeError as e:
            print(f"bridge: {e}", file=sys.stderr)
            return EXIT_UNAVAILABLE
    host, port = args.connect
    where = f"{host}:{port}"
    linked = False
    try:
        try:
            sock = socket.create_connection((host, port), timeout=NEGOTIATION_TIMEOUT)
        except OSError as e:
            print(f"bridge: cannot connect to {where}: {e.strerror or e}", file=sys.stderr)
            return EXIT_UNAVAILABLE
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.settimeout(None)
        codec = None if args.raw else TelnetClient()
        try:
            early = negotiate(sock, codec) if codec else b""
        except (TimeoutError, RemoteClosed) as e:
            print(f"bridge: {where}: {e}", file=sys.stderr)
            return EXIT_UNAVAILABLE
        master, slave = os.openpty()
        # Raw at once: with the pty's default echo on, what the server sends before the
        # program opens the pty would be echoed back to the server as commands.
        tty.setraw(slave)
        os.symlink(os.ttyname(slave), args.pty)
        linked = True
        print(f"ready {args.pty} {os.ttyname(slave)}", flush=True)
        if early:
            _write_all(master, early)
        try:
            pump(sock, master, codec)
        except RemoteClosed as e:
            print(f"bridge: {where}: {e} (the exporter stopped ser2net: the place was released, "
                  "or the exporter ended)", file=sys.stderr, flush=True)
            return EXIT_REMOTE_CLOSED
        except OSError as e:
            print(f"bridge: {where}: {e}", file=sys.stderr, flush=True)
            return EXIT_REMOTE_CLOSED
    except _Stop:
        return 0
    finally:
        if linked:
            try:
                os.unlink(args.pty)
            except FileNotFoundError:
                pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
