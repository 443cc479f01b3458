from nfcbench_labgrid.telnet import BINARY, COM_PORT_OPTION, DO, DONT, ECHO, IAC, SB, SE, SGA, WILL, WONT, TelnetClient, escape

# What ser2net 4.3's telnet(rfc2217) accepter sends on connect (labgrid reference, section 1).
SER2NET_OPENING = bytes.fromhex("fffb03fffd03fffb01fffe01fffd00fffb00fffd2c")


def test_escape_doubles_every_ff():
    assert escape(b"\x00\x00\xff\x02\xfe\xff") == b"\x00\x00\xff\xff\x02\xfe\xff\xff"


def test_ser2net_opening_is_answered_and_binary_agreed():
    c = TelnetClient()
    data, reply = c.feed(SER2NET_OPENING)
    assert data == b""
    assert c.binary
    # One answer per request, none for DONT ECHO (we never offered to echo).
    assert reply == bytes([IAC, DO, SGA, IAC, WILL, SGA, IAC, DO, ECHO, IAC, WILL, BINARY, IAC, DO, BINARY,
                           IAC, WILL, COM_PORT_OPTION])


def test_not_binary_until_both_directions():
    c = TelnetClient()
    c.feed(bytes([IAC, DO, BINARY]))
    assert not c.binary
    c.feed(bytes([IAC, WILL, BINARY]))
    assert c.binary


def test_repeated_request_is_not_answered_again():
    c = TelnetClient()
    c.feed(SER2NET_OPENING)
    assert c.feed(SER2NET_OPENING) == (b"", b"")


def test_unknown_options_refused_once():
    c = TelnetClient()
    _, r1 = c.feed(bytes([IAC, DO, 24, IAC, WILL, 31]))
    assert r1 == bytes([IAC, WONT, 24, IAC, DONT, 31])
    _, r2 = c.feed(bytes([IAC, DO, 24]))
    assert r2 == b""


def test_pn532_frame_with_ff_survives_any_split():
    frame = bytes.fromhex("0000ff02fed5032a00")  # preamble 00 00 FF: the byte telnet escapes
    wire = escape(frame)
    for cut in range(len(wire) + 1):
        c = TelnetClient()
        a, _ = c.feed(wire[:cut])
        b, _ = c.feed(wire[cut:])
        assert a + b == frame, cut


def test_subnegotiation_is_dropped_even_with_escaped_ff_inside():
    c = TelnetClient()
    sb = bytes([IAC, SB, COM_PORT_OPTION, 107, 0xFF, 0xFF, 0x10, IAC, SE])  # NOTIFY-MODEMSTATE
    data, reply = c.feed(b"\x01" + sb + b"\x02")
    assert data == b"\x01\x02"
    assert reply == b""


def test_two_byte_commands_are_skipped():
    c = TelnetClient()
    assert c.feed(bytes([0x41, IAC, 241, 0x42]))[0] == b"AB"  # NOP


def test_server_withdrawing_an_option_is_acknowledged():
    c = TelnetClient()
    c.feed(SER2NET_OPENING)
    _, reply = c.feed(bytes([IAC, WONT, BINARY, IAC, DONT, BINARY]))
    assert reply == bytes([IAC, DONT, BINARY, IAC, WONT, BINARY])
    assert not c.binary


def test_fast_path_agrees_with_the_state_machine():
    import random

    rnd = random.Random(7)
    for _ in range(2000):
        chunks = [bytes(rnd.choice([0x00, 0xFF, 0xFF, 0x55, DO, WILL, SB, SE, BINARY]) for _ in range(rnd.randrange(8)))
                  for _ in range(3)]
        fast, slow = TelnetClient(), TelnetClient()
        got_fast = [fast.feed(c) for c in chunks]
        got_slow = []
        for c in chunks:  # one byte at a time never takes the fast path for an IAC
            d, r = b"", b""
            for b in c:
                x, y = slow.feed(bytes([b]))
                d, r = d + x, r + y
            got_slow.append((d, r))
        assert got_fast == got_slow, chunks
