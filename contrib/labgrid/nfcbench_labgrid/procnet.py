"""Which TCP port a process listens on, read from /proc (no probe connection is made).

A probe connection would be a client: ser2net would open the serial device for it and, with
``max-connections: 1``, could refuse the real client while it closes. /proc shows the
listening socket the moment ``listen(2)`` returns, which is the event the exporter waits for.
"""

import os

_LISTEN = "0A"  # TCP_LISTEN in include/net/tcp_states.h


def socket_inodes(pid):
    """The inodes of the sockets process ``pid`` holds open (empty once it has exited)."""
    inodes = set()
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        return inodes
    for fd in fds:
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if target.startswith("socket:[") and target.endswith("]"):
            inodes.add(int(target[8:-1]))
    return inodes


def parse_listeners(text):
    """``{inode: (address_hex, port)}`` for the LISTEN rows of a /proc/net/tcp or tcp6 table."""
    out = {}
    for line in text.splitlines()[1:]:
        fields = line.split()
        if len(fields) < 10 or fields[3] != _LISTEN:
            continue
        address, _, port_hex = fields[1].rpartition(":")
        out[int(fields[9])] = (address, int(port_hex, 16))
    return out


def listening_ports(pid):
    """The TCP ports process ``pid`` listens on, in its own network namespace."""
    inodes = socket_inodes(pid)
    if not inodes:
        return set()
    ports = set()
    for table in ("tcp", "tcp6"):
        try:
            with open(f"/proc/{pid}/net/{table}") as f:
                rows = parse_listeners(f.read())
        except OSError:
            continue
        ports |= {port for inode, (_, port) in rows.items() if inode in inodes}
    return ports
