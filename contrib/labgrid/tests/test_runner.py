"""run_on_link's supervision with stand-ins: a program that ends, one that outlives its link,
one past its deadline. None may make the run hang or pass."""

import os
import subprocess
import sys
import time

from nfcbench_labgrid.links import Endpoint, Link
from nfcbench_labgrid.runner import json_records, run_on_link, summarize

SESSION = """{"t_us":0,"event":"header","command":"session"}
{"t_us":9068,"event":"didBecomeActive","session":1}
{"t_us":118253,"event":"detected","session":1,"targets":[{"id":1,"kind":"type2","uid":"04A23B915C6E80"}]}
trace: somewhere
{"t_us":166310,"event":"didInvalidateWithError","session":1,"code":204,"reason":"readerSessionInvalidationErrorFirstNDEFTagRead"}
"""


def test_summarize_a_session():
    s = summarize(json_records(SESSION))
    assert s == {"uid": "04A23B915C6E80", "detect_ms": 109.185, "code": 204,
                 "reason": "readerSessionInvalidationErrorFirstNDEFTagRead"}


def test_summarize_a_measurement_keeps_its_figures():
    s = summarize(json_records('{"measure":"apdu","median_us":5720.0}\n'))
    assert s == {"result": {"measure": "apdu", "median_us": 5720.0}}


def _link(tmp_path, script):
    proc = subprocess.Popen([sys.executable, "-c", script], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, start_new_session=True)
    return Link(Endpoint("serial", "127.0.0.1", 1), proc, "pn532_uart:/dev/null", {}, str(tmp_path / "none"))


def _fake(tmp_path, body):
    path = tmp_path / "fake-nfcbench"
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)
    return str(path)


def test_a_run_that_ends_is_reported_with_its_device(tmp_path):
    link = _link(tmp_path, "import time; time.sleep(30)")
    try:
        r = run_on_link(_fake(tmp_path, 'echo "$@"; exit 3\n'), ["session", "--json"], link, timeout=10)
        assert r.exit == 3 and not r.ok and not r.link_lost
        assert r.stdout.strip() == "session --json --device pn532_uart:/dev/null"
    finally:
        link.stop()


def test_a_lost_link_ends_the_run_even_when_the_program_would_wait(tmp_path):
    # The link dies after 0.3 s saying why; the program would sleep 60 s: it is stopped.
    link = _link(tmp_path, "import sys, time; time.sleep(0.3); sys.stderr.write('bridge: closed\\n'); sys.exit(75)")
    try:
        start = time.monotonic()
        r = run_on_link(_fake(tmp_path, "exec sleep 60\n"), [], link, timeout=60)
        took = time.monotonic() - start
        assert r.link_lost and not r.ok
        assert "bridge: closed" in r.link_reason
        assert took < 10, took
    finally:
        link.stop()


def test_a_run_past_its_timeout_is_stopped_even_if_it_ignores_sigterm(tmp_path):
    link = _link(tmp_path, "import time; time.sleep(30)")
    try:
        start = time.monotonic()
        r = run_on_link(_fake(tmp_path, "trap '' TERM; while :; do sleep 0.1; done\n"), [], link, timeout=0.5)
        assert r.timed_out and not r.ok
        assert r.exit == -9
        assert time.monotonic() - start < 10
    finally:
        link.stop()
    assert not os.path.exists(str(tmp_path / "none"))
