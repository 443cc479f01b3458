#!/usr/bin/env python3
"""Decode NDEF messages with ndeflib (PyPI `ndeflib`), for cross-checking nfcbench's parser.

stdin: one message per line as hex (spaces allowed; an empty line is a 0-byte message).
stdout: one JSON object per input line:
  {"ok": true, "records": [{"tnf": 1, "type": "55", "id": "", "payload": "00..."}],
   "decoded": [{"uri": "..."} | {"text": "...", "language": "en", "encoding": "UTF-8"} | {}],
   "contentError": null | "..."}
  {"ok": false, "error": "..."}
"records" come from a structural pass (no record types known, errors='strict');
"decoded" from a second pass with ndeflib's Text and URI decoders, whose failure is
reported as "contentError" (the structure may still be fine).
Runs itself with the project's virtual environment (.venv/bin/python, made by
scripts/install-deps) whatever python3 started it. Exit status 2 when ndeflib is not installed.
"""
import json
import os
import sys

_venv = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, ".venv")
_venv_python = os.path.join(_venv, "bin", "python")
if os.path.realpath(sys.prefix) != os.path.realpath(_venv) and os.access(_venv_python, os.X_OK):
    os.execv(_venv_python, [_venv_python, os.path.abspath(__file__)] + sys.argv[1:])

try:
    import ndef
    from ndef.record import Record
except ImportError:
    sys.stderr.write("ndeflib is not installed: run scripts/install-deps (it makes .venv with ndeflib)\n")
    sys.exit(2)


def tnf_and_type(record_type):
    if record_type.startswith("urn:nfc:wkt:"):
        return 1, record_type[12:].encode("ascii")
    if record_type.startswith("urn:nfc:ext:"):
        return 4, record_type[12:].encode("ascii")
    if record_type == "":
        return 0, b""
    if record_type == "unknown":
        return 5, b""
    if record_type == "unchanged":
        return 6, b""
    tnf, typ = Record._encode_type(record_type)
    return tnf, typ


def decode(octets):
    try:
        raw = list(ndef.message_decoder(octets, errors="strict", known_types={}))
    except Exception as error:  # DecodeError, or UnicodeDecodeError on a non-ASCII TYPE
        return {"ok": False, "error": "%s: %s" % (type(error).__name__, error)}
    records = []
    for r in raw:
        tnf, typ = tnf_and_type(r.type)
        records.append({"tnf": tnf, "type": typ.hex().upper(), "id": r.name.encode("latin-1").hex().upper()
                        if isinstance(r.name, str) else bytes(r.name).hex().upper(),
                        "payload": bytes(r.data).hex().upper()})
    out = {"ok": True, "records": records, "decoded": [], "contentError": None}
    try:
        typed = list(ndef.message_decoder(octets, errors="strict"))
    except Exception as error:
        out["contentError"] = "%s: %s" % (type(error).__name__, error)
        return out
    for r in typed:
        if isinstance(r, ndef.TextRecord):
            out["decoded"].append({"text": r.text, "language": r.language, "encoding": r.encoding})
        elif isinstance(r, ndef.UriRecord):
            out["decoded"].append({"uri": r.iri})
        else:
            out["decoded"].append({})
    return out


def main():
    for line in sys.stdin:
        text = line.strip().replace(" ", "")
        try:
            octets = bytes.fromhex(text)
        except ValueError as error:
            print(json.dumps({"ok": False, "error": "bad hex: %s" % error}))
            continue
        print(json.dumps(decode(octets)))
        sys.stdout.flush()


if __name__ == "__main__":
    main()
