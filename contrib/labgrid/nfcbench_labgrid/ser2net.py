"""ser2net's command line for an exported PN532, set for one request-response link.

labgrid's own ``SerialPortExport`` hard-codes ser2net's arguments (labgrid/remote/exporter.py):
no ``nodelay`` on the TCP accepter, so Nagle holds back each small answer until the previous
segment is acknowledged, ``chardelay`` at its default (wait at least 1000 µs after the last
character before sending, ser2net.yaml(5)), and ``max-connections: 10``. A PN532 command is a
short frame answered by a short frame, so each of those waits lands on every command: one
READ took 48 ms through the stock export against 5.7 ms locally. Here:

- ``tcp(nodelay)``: TCP_NODELAY on the accepted socket;
- ``chardelay: false``: send what the pty gave at once;
- ``max-connections: 1``: a pty has one user (a second opener breaks the first), so a second
  client is refused instead of sharing the frames;
- ``mdns: false``: the port is announced to no one;
- the accepter binds the address given (the exporter's published address), not every
  interface, and port 0 (the kernel picks a free one; the exporter reads which from /proc,
  so no port is chosen first and raced for).
"""


def ser2net_command(ser2net_bin, path, speed, bind, port=0, protocol="rfc2217"):
    """The argv for ser2net serving ``path`` (a tty: /dev/ttyUSB0, /dev/pts/N) on ``bind``.

    ``protocol`` is ``rfc2217`` (telnet with COM-PORT-OPTION, what labgrid's clients speak)
    or ``raw`` (plain TCP: socat or ``rfc2217=false`` clients)."""
    if protocol == "rfc2217":
        accepter = f"telnet(rfc2217,mode=server),tcp(nodelay),{bind},{port}"
    elif protocol == "raw":
        accepter = f"tcp(nodelay),{bind},{port}"
    else:
        raise ValueError(f"protocol must be rfc2217 or raw, not {protocol!r}")
    if "," in path or "\n" in path:
        raise ValueError(f"a serial path with a comma or newline cannot be given to ser2net: {path!r}")
    lines = [
        "connection: &nfc",
        f"  accepter: {accepter}",
        f"  connector: serialdev(nouucplock=true),{path},{int(speed)}n81,local",
        "  options:",
        "    max-connections: 1",
        "    chardelay: false",
        "    mdns: false",
    ]
    cmd = [ser2net_bin, "-d", "-n"]
    for line in lines:
        cmd += ["-Y", line]
    return cmd
