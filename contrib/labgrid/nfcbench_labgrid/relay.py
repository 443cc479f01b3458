"""A stream relay for the pcscd socket: Unix ↔ TCP, TCP_NODELAY on every TCP socket.

    python -S -m nfcbench_labgrid.relay --listen tcp:HOST:0 --connect unix:/run/pcscd/pcscd.comm
    python -S -m nfcbench_labgrid.relay --listen unix:PATH --connect tcp:HOST:PORT

It prints ``listening PORT`` (TCP) or ``listening PATH`` (Unix, made 0600) once it accepts
connections, the event its starter waits for (no polling for a port or a file). Each accepted
connection gets its own connection to the target and two threads, one per direction, each a
blocking ``recv_into`` → ``sendall`` loop: one wake-up and two system calls per message
crossing. socat 1.7.4 (Debian 12) spends about fifteen on each: a ``pselect`` before the read,
one more for the target's writability and one after, and two ``recvfrom`` on its diagnostics
socket around every call. pcsc-lite sends a request as two or three writes and the answer as
two, so on the lab test's two-core machine two socat hops added about 54 µs to a SELECT at the
median, these two about 32 µs (contrib/labgrid/lab/labtest.py prints the figure).

``--standby``: start, then wait for one line ``listen`` on stdin before binding (the exporter
keeps one relay started ahead, so acquiring a place does not wait for Python to start; a
standby listens on nothing). EOF on stdin before that line: exit 0.

Nothing else: no logging per connection, no reconnection. The relay ends on SIGTERM; its
connections end with it (the exporter stops a place's relay on release, and every client
connection through it is closed then). Exit status 69 when the listening socket cannot be
made.
"""

import argparse
import os
import signal
import socket
import stat
import sys
import threading

EXIT_UNAVAILABLE = 69
BUFFER = 65536


def parse_address(text):
    """``unix:PATH`` or ``tcp:HOST:PORT`` → (family, address)."""
    kind, sep, rest = text.partition(":")
    if sep and kind == "unix" and rest:
        return socket.AF_UNIX, rest
    if sep and kind == "tcp":
        host, sep, port = rest.rpartition(":")
        if sep and host and port.isdigit():
            host = host.strip("[]")
            family = socket.AF_INET6 if ":" in host else socket.AF_INET
            return family, (host, int(port))
    raise argparse.ArgumentTypeError(f"expected unix:PATH or tcp:HOST:PORT, not {text!r}")


def _nodelay(sock):
    if sock.family in (socket.AF_INET, socket.AF_INET6):
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


def pump(src, dst):
    """Carry ``src``'s bytes to ``dst`` until ``src`` ends; then end ``dst``'s sending side."""
    buf = bytearray(BUFFER)
    view = memoryview(buf)
    try:
        while True:
            n = src.recv_into(buf)
            if not n:
                break
            dst.sendall(view[:n])
    except OSError:
        pass
    finally:
        try:
            dst.shutdown(socket.SHUT_WR)
        except OSError:
            pass


def serve(conn, target):
    """One accepted connection: connect to ``target`` and carry bytes both ways."""
    family, address = target
    out = socket.socket(family, socket.SOCK_STREAM)
    try:
        out.connect(address)
    except OSError as e:
        print(f"relay: cannot connect to {address}: {e.strerror or e}", file=sys.stderr, flush=True)
        conn.close()
        out.close()
        return
    _nodelay(conn)
    _nodelay(out)
    back = threading.Thread(target=pump, args=(out, conn), daemon=True)
    back.start()
    pump(conn, out)
    back.join()
    conn.close()
    out.close()


def listen(where):
    family, address = where
    sock = socket.socket(family, socket.SOCK_STREAM)
    if family == socket.AF_UNIX:
        try:
            if stat.S_ISSOCK(os.lstat(address).st_mode):
                os.unlink(address)
        except FileNotFoundError:
            pass
        old = os.umask(0o177)
        try:
            sock.bind(address)
        finally:
            os.umask(old)
        shown = address
    else:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        _nodelay(sock)  # accepted sockets inherit it on Linux; serve() sets it again
        sock.bind(address)
        shown = sock.getsockname()[1]
    sock.listen(64)
    return sock, shown


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m nfcbench_labgrid.relay", description=__doc__.split("\n\n")[0])
    parser.add_argument("--listen", required=True, type=parse_address, metavar="unix:PATH|tcp:HOST:PORT")
    parser.add_argument("--connect", required=True, type=parse_address, metavar="unix:PATH|tcp:HOST:PORT")
    parser.add_argument("--standby", action="store_true", help="bind only after a 'listen' line on stdin")
    args = parser.parse_args(argv)
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    signal.signal(signal.SIGHUP, lambda *_: os._exit(0))
    if args.standby:
        print("standby", flush=True)
        line = sys.stdin.readline()
        if line.strip() != "listen":
            return 0
    try:
        sock, shown = listen(args.listen)
    except OSError as e:
        print(f"relay: cannot listen on {args.listen[1]}: {e.strerror or e}", file=sys.stderr, flush=True)
        return EXIT_UNAVAILABLE
    print(f"listening {shown}", flush=True)
    while True:
        try:
            conn, _ = sock.accept()
        except InterruptedError:
            continue
        threading.Thread(target=serve, args=(conn, args.connect), daemon=True).start()


if __name__ == "__main__":
    sys.exit(main())
