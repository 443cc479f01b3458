import pytest

from nfcbench_labgrid.ser2net import ser2net_command


def _yaml(cmd):
    return [cmd[i + 1] for i, a in enumerate(cmd) if a == "-Y"]


def test_low_latency_options_and_one_connection():
    cmd = ser2net_command("/usr/sbin/ser2net", "/dev/pts/3", 115200, "10.0.0.2")
    assert cmd[:3] == ["/usr/sbin/ser2net", "-d", "-n"]
    y = _yaml(cmd)
    assert "  accepter: telnet(rfc2217,mode=server),tcp(nodelay),10.0.0.2,0" in y
    assert "  connector: serialdev(nouucplock=true),/dev/pts/3,115200n81,local" in y
    assert "    max-connections: 1" in y
    assert "    chardelay: false" in y
    assert "    mdns: false" in y


def test_raw_protocol():
    y = _yaml(ser2net_command("ser2net", "/dev/ttyUSB0", 115200, "127.0.0.1", port=4000, protocol="raw"))
    assert "  accepter: tcp(nodelay),127.0.0.1,4000" in y


def test_refuses_what_ser2net_would_misread():
    with pytest.raises(ValueError):
        ser2net_command("ser2net", "/dev/pts/1,x", 115200, "10.0.0.2")
    with pytest.raises(ValueError):
        ser2net_command("ser2net", "/dev/pts/1", 115200, "10.0.0.2", protocol="telnet")
