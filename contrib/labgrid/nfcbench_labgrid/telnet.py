"""The client side of a telnet RFC 2217 connection, as far as a PN532 needs it.

labgrid's exporter starts ser2net with a ``telnet(rfc2217,mode=server)`` accepter, so the
bytes on the wire are telnet (RFC 854): every 0xFF of a PN532 frame (its ``00 00 FF``
preamble) is sent as ``FF FF``, and the server opens with option negotiation
(``WILL SGA, DO SGA, WILL ECHO, DONT ECHO, DO BINARY, WILL BINARY, DO COM-PORT-OPTION``).
Raw socat reads those escapes as data, which is why libnfc then fails with ``Unable to read
ACK``. This codec is pure: bytes in, (data, replies) out; the bridge owns the socket.

Policy (the options pyserial's ``rfc2217`` client asks for, which ser2net is known to serve):
BINARY both ways (RFC 856: without it a CR would be sent as CR NUL), SGA both ways (RFC 858),
the server's ECHO accepted (ser2net does not echo serial data), COM-PORT-OPTION (RFC 2217)
both ways. The port's speed stays what the exporter configured: no SET-BAUDRATE is sent,
and the server's subnegotiations (NOTIFY-LINESTATE, NOTIFY-MODEMSTATE) are read and dropped.
"""

IAC = 255
DONT = 254
DO = 253
WONT = 252
WILL = 251
SB = 250
SE = 240

BINARY = 0
ECHO = 1
SGA = 3
COM_PORT_OPTION = 44

# Options we agree to do ourselves (answer DO with WILL) and to let the server do (answer
# WILL with DO). Every other option is refused (WONT / DONT).
_WE_DO = frozenset({BINARY, SGA, COM_PORT_OPTION})
_THEY_DO = frozenset({BINARY, SGA, ECHO, COM_PORT_OPTION})


def escape(data):
    """Data bytes as telnet sends them: each 0xFF doubled (RFC 854, "IAC IAC")."""
    return bytes(data).replace(b"\xff", b"\xff\xff")


class TelnetClient:
    """Incremental decoder: ``feed(chunk)`` returns ``(data, reply)``.

    ``data`` is the serial data in the chunk, unescaped; ``reply`` the negotiation bytes to
    send back (empty when there is nothing to say). A sequence split across chunks is kept
    until the rest arrives. ``binary`` is true once BINARY is agreed in both directions:
    before that a bridge must not send data (a CR could be turned into CR NUL).
    """

    _DATA, _IAC, _OPT, _SB, _SB_IAC = range(5)

    def __init__(self):
        self._state = self._DATA
        self._verb = None
        self.us = set()  # options we perform (we sent WILL)
        self.them = set()  # options the server performs (we sent DO)
        self.refused = set()  # (verb, option) pairs we already refused, to answer once

    @property
    def binary(self):
        """True once the server has asked for BINARY both ways (DO and WILL) and we agreed.
        ser2net opens every connection with that request; the client never asks first."""
        return BINARY in self.us and BINARY in self.them

    def _answer(self, verb, opt, reply):
        if verb == DO:
            if opt in _WE_DO:
                if opt not in self.us:
                    self.us.add(opt)
                    reply += bytes((IAC, WILL, opt))
            elif (DO, opt) not in self.refused:
                self.refused.add((DO, opt))
                reply += bytes((IAC, WONT, opt))
        elif verb == DONT:
            if opt in self.us:
                self.us.discard(opt)
                reply += bytes((IAC, WONT, opt))
        elif verb == WILL:
            if opt in _THEY_DO:
                if opt not in self.them:
                    self.them.add(opt)
                    reply += bytes((IAC, DO, opt))
            elif (WILL, opt) not in self.refused:
                self.refused.add((WILL, opt))
                reply += bytes((IAC, DONT, opt))
        elif verb == WONT:
            if opt in self.them:
                self.them.discard(opt)
                reply += bytes((IAC, DONT, opt))

    def feed(self, chunk):
        # Fast path, the common case: plain data whose 0xFF bytes all come doubled. Pairs are
        # taken left to right, as the state machine below takes them.
        if self._state == self._DATA and IAC not in chunk.replace(b"\xff\xff", b""):
            return bytes(chunk).replace(b"\xff\xff", b"\xff"), b""
        data = bytearray()
        reply = bytearray()
        for b in chunk:
            state = self._state
            if state == self._DATA:
                if b == IAC:
                    self._state = self._IAC
                else:
                    data.append(b)
            elif state == self._IAC:
                if b == IAC:
                    data.append(IAC)
                    self._state = self._DATA
                elif b in (DO, DONT, WILL, WONT):
                    self._verb = b
                    self._state = self._OPT
                elif b == SB:
                    self._state = self._SB
                else:  # NOP, DM, GA and the other two-byte commands: nothing to do
                    self._state = self._DATA
            elif state == self._OPT:
                self._answer(self._verb, b, reply)
                self._state = self._DATA
            elif state == self._SB:
                if b == IAC:
                    self._state = self._SB_IAC
            elif state == self._SB_IAC:
                # IAC SE ends the subnegotiation; IAC IAC is an escaped 0xFF inside it.
                self._state = self._DATA if b == SE else self._SB
        return bytes(data), bytes(reply)
