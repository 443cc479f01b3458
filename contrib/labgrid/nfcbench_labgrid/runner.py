"""Run one nfcbench command on a link, and say what it showed.

The run ends when nfcbench ends, or when the link does (the exporter closed the reader's
port: the place was released while in use). Then nfcbench gets ``GRACE`` seconds to fail on
its own (its pty is closed, its pcscd connection gone), then SIGTERM, then SIGKILL: nothing
waits on a reader that is gone. A run past its ``timeout`` is stopped the same way.
"""

import json
import os
import selectors
import signal
import subprocess
import time
from dataclasses import dataclass, field

from .bridge import EXIT_REMOTE_CLOSED

import threading

GRACE = 2.0  # seconds nfcbench has to end by itself once its link is gone
TERM_GRACE = 3.0  # seconds between SIGTERM and SIGKILL

# nfcbench's exit status for a session: 0 for 204 (and Done after reads), 10 + (code - 200)
# for the other Core NFC endings (Sources/nfcbench/Session/SessionRunner.swift).
RELEASED = "released"


# The nfcbench processes running now (each in a session of its own, so a terminal's Ctrl-C
# does not reach them): nfcbench-lg forwards its SIGINT and SIGTERM to them, so a stopped
# matrix ends its sessions as the user's Done would and still releases its places.
_running = set()
_running_lock = threading.Lock()


def forward_signal(sig):
    """Send ``sig`` to every nfcbench process running; return how many got it."""
    with _running_lock:
        procs = list(_running)
    for proc in procs:
        _signal_group(proc, sig)
    return len(procs)


@dataclass
class RunResult:
    argv: list
    exit: int  # nfcbench's exit status; negative: the signal that ended it
    stdout: str
    stderr: str
    seconds: float
    link_lost: bool = False  # the link ended while nfcbench ran
    link_reason: str = ""
    timed_out: bool = False
    records: list = field(default_factory=list)  # stdout's JSON objects, in order

    @property
    def ok(self):
        return self.exit == 0 and not self.link_lost and not self.timed_out


def json_records(text):
    """The JSON objects among ``text``'s lines (nfcbench --json prints one per line)."""
    out = []
    for line in text.splitlines():
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            value = json.loads(line)
        except ValueError:
            continue
        if isinstance(value, dict):
            out.append(value)
    return out


def summarize(records):
    """What a reader's line reports from nfcbench's JSON: the session's ending code and
    reason, the first detected UID, the time from didBecomeActive to detection, and, for
    other commands (measure …), their last record."""
    out = {}
    active_us = None
    for r in records:
        event = r.get("event")
        if event == "didBecomeActive" and active_us is None:
            active_us = r.get("t_us")
        elif event == "detected" and "uid" not in out:
            targets = r.get("targets") or []
            if targets and targets[0].get("uid"):
                out["uid"] = targets[0]["uid"]
            if active_us is not None and r.get("t_us") is not None:
                out["detect_ms"] = round((r["t_us"] - active_us) / 1000.0, 3)
        elif event == "didInvalidateWithError":
            out["code"] = r.get("code")
            out["reason"] = r.get("reason")
    if records and "event" not in records[-1]:
        out["result"] = records[-1]
    return out


def run_on_link(nfcbench, args, link, env=None, timeout=120.0, on_output=None):
    """Run ``nfcbench ARGS --device LINK`` and return a RunResult. ``on_output(stream,
    chunk)`` sees nfcbench's output as it comes (stream 1 or 2), for a caller that passes it
    through."""
    argv = [nfcbench] + list(args) + ["--device", link.device]
    child_env = dict(os.environ if env is None else env)
    child_env.update(link.env)
    start = time.monotonic()
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env=child_env, start_new_session=True)
    with _running_lock:
        _running.add(proc)
    out, err = bytearray(), bytearray()
    sel = selectors.DefaultSelector()
    sel.register(proc.stdout, selectors.EVENT_READ, (1, out))
    sel.register(proc.stderr, selectors.EVENT_READ, (2, err))
    link_stream = link.proc.stderr if link.proc.stderr is not None else None
    link_watch = link_stream is not None and link.proc.poll() is None
    if link_watch:
        # The link's stderr reaches EOF when the link process ends: the event to react to.
        sel.register(link_stream, selectors.EVENT_READ, None)
    deadline = start + timeout
    link_lost = False
    link_text = bytearray()
    timed_out = False
    stop_at = None  # when nfcbench is to be stopped (link gone or past the deadline)
    signalled = None
    open_streams = 2
    try:
        while open_streams or proc.poll() is None:
            now = time.monotonic()
            if stop_at is None and now >= deadline:
                timed_out = True
                stop_at = now
            if stop_at is not None and now >= stop_at:
                if signalled is None:
                    signalled = (signal.SIGTERM, now)
                    _signal_group(proc, signal.SIGTERM)
                elif signalled[0] == signal.SIGTERM and now >= signalled[1] + TERM_GRACE:
                    signalled = (signal.SIGKILL, now)
                    _signal_group(proc, signal.SIGKILL)
            wake = [deadline if stop_at is None else stop_at]
            if signalled is not None:
                wake.append(signalled[1] + TERM_GRACE)
            left = max(0.0, min(wake) - time.monotonic())
            if not open_streams:
                try:
                    proc.wait(left if signalled is None or signalled[0] != signal.SIGKILL else None)
                except subprocess.TimeoutExpired:
                    pass
                continue
            for key, _ in sel.select(left if left > 0 else 0.001):
                chunk = os.read(key.fileobj.fileno(), 65536)
                if key.data is None:  # the link's stderr
                    if chunk:
                        link_text += chunk
                        continue
                    sel.unregister(key.fileobj)
                    link.proc.wait()
                    link_lost = True
                    if stop_at is None:
                        stop_at = time.monotonic() + GRACE
                    continue
                stream, buf = key.data
                if chunk:
                    buf += chunk
                    if on_output is not None:
                        on_output(stream, chunk)
                else:
                    sel.unregister(key.fileobj)
                    open_streams -= 1
        proc.wait()
    finally:
        sel.close()
        if proc.poll() is None:
            _signal_group(proc, signal.SIGKILL)
            proc.wait()
        with _running_lock:
            _running.discard(proc)
        proc.stdout.close()
        proc.stderr.close()
    seconds = time.monotonic() - start
    # What the link said is its reason only when it ended (socat's relay logs a broken
    # connection and goes on listening).
    reason = link_text.decode(errors="replace").strip() if link_lost and getattr(link, "says_why", True) else ""
    if link_lost and not reason:
        reason = "the exporter closed the reader's port"
        if link.proc.returncode not in (0, EXIT_REMOTE_CLOSED):
            reason += f" (the bridge exited {link.proc.returncode})"
    result = RunResult(argv, proc.returncode, out.decode(errors="replace"), err.decode(errors="replace"),
                       seconds, link_lost, reason, timed_out)
    result.records = json_records(result.stdout)
    return result


def _signal_group(proc, sig):
    try:
        os.killpg(proc.pid, sig)
    except ProcessLookupError:
        pass
