import os
import socket

from nfcbench_labgrid.procnet import listening_ports, parse_listeners

TABLE = """  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0201A8C0:A3D7 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 41234 1 0000000000000000 100 0 0 10 0
   1: 0100007F:4FB8 0100007F:9C41 01 00000000:00000000 00:00000000 00000000     0        0 41299 1 0000000000000000 20 4 30 10 -1
"""


def test_parse_listeners_keeps_listen_rows_only():
    assert parse_listeners(TABLE) == {41234: ("0201A8C0", 0xA3D7)}


def test_listening_ports_of_this_process():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen()
    try:
        assert s.getsockname()[1] in listening_ports(os.getpid())
    finally:
        s.close()
    assert listening_ports(2**22 + 12345) == set()  # no such process
