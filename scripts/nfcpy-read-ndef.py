#!/usr/bin/env python3
"""Read one tag's NDEF message with nfcpy (PyPI `nfcpy` 1.0.x), a witness for nfcbench's reading.

Usage: nfcpy-read-ndef.py PATH   e.g. tty:nfcbench-1234:pn532 for a PN532 at /dev/nfcbench-1234
(nfcpy looks for the port's name directly in /dev: `nfcbench virtual pn532 --pty /dev/NAME`
makes that link as root and removes it when it stops).

Waits up to 10 s for a tag, reads it as nfcpy's own tag classes do, and prints one JSON object:
  {"tag": "Type2Tag 'NXP NTAG215' ID=...", "ndef": true, "octets": "D1 01 ...",
   "records": [{"tnf": 1, "type": "55", "id": "", "payload": "04..."}]}
"ndef" is false (and "octets" empty) when nfcpy finds no NDEF on the tag. For a MIFARE
Ultralight C, "authenticated" says whether nfcpy's 3DES AUTHENTICATE with the factory key
(BREAKMEIFYOUCAN!) succeeded.
Exit status 2 when nfcpy is missing, 3 when no reader opens at PATH, 4 when no tag came.
Runs itself with the project's virtual environment (.venv/bin/python, made by
scripts/install-deps) whatever python3 started it.
"""
import json
import os
import sys
import time

_venv = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, ".venv")
_venv_python = os.path.join(_venv, "bin", "python")
if os.path.realpath(sys.prefix) != os.path.realpath(_venv) and os.access(_venv_python, os.X_OK):
    os.execv(_venv_python, [_venv_python, os.path.abspath(__file__)] + sys.argv[1:])

try:
    import ndef
    import nfc
except ImportError:
    sys.stderr.write("nfcpy is not installed: run scripts/install-deps (it makes .venv with nfcpy)\n")
    sys.exit(2)


def records(octets):
    out = []
    # Structure only: TNF, type, ID and payload as they are on the tag.
    for r in ndef.message_decoder(octets, errors="relax", known_types={}):
        tnf, typ = tnf_and_type(r.type)
        out.append({"tnf": tnf, "type": typ.hex().upper(), "id": r.name.encode("latin-1").hex().upper(),
                    "payload": bytes(r.data).hex().upper()})
    return out


def tnf_and_type(record_type):
    prefixes = {"urn:nfc:wkt:": 1, "urn:nfc:ext:": 4}
    for prefix, tnf in prefixes.items():
        if record_type.startswith(prefix):
            return tnf, record_type[len(prefix):].encode("latin-1")
    if record_type == "":
        return 0, b""
    if record_type == "unknown":
        return 5, b""
    if record_type == "unchanged":
        return 6, b""
    return ndef.Record._encode_type(record_type)


def main():
    if len(sys.argv) != 2:
        sys.stderr.write(__doc__)
        return 64
    try:
        clf = nfc.ContactlessFrontend(sys.argv[1])
    except (IOError, OSError) as error:
        sys.stderr.write("no reader at %s: %s\n" % (sys.argv[1], error))
        return 3
    try:
        deadline = time.time() + 10
        tag = clf.connect(rdwr={"on-connect": lambda tag: False}, terminate=lambda: time.time() > deadline)
        if not tag:
            sys.stderr.write("no tag within 10 s\n")
            return 4
        result = {"tag": str(tag), "ndef": tag.ndef is not None, "octets": "", "records": []}
        if tag.ndef is not None:
            octets = bytes(tag.ndef.octets)
            result["octets"] = octets.hex().upper()
            result["records"] = records(octets) if octets else []
        if type(tag).__name__ == "MifareUltralightC":
            result["authenticated"] = bool(tag.authenticate(b""))
        print(json.dumps(result))
        return 0
    finally:
        clf.close()


if __name__ == "__main__":
    sys.exit(main())
