"""Run by the lab test through labgrid's pytest plugin (--lg-env, --lg-coordinator): the
places are acquired first, as labgrid wants; NFCBenchDriver comes from the environment's
``imports:``. The expected UIDs come from the lab (the tags it put on the readers)."""

import os

import pytest


def _session(target, expected_uid):
    drv = target.get_driver("NFCBenchDriver")
    r = drv.run("session", "--first-read", "--timeout", "10", "--json")
    assert r.exit == 0, r.stderr
    assert r.summary.get("code") == 204, r.summary
    assert r.summary.get("uid", "").upper() == expected_uid.upper(), r.summary
    return drv


def test_pn532_reader(target):
    drv = _session(target, os.environ["LAB_UID_MAIN"])
    assert drv.device.startswith("pn532_uart:")


def test_pcsc_reader(env):
    target = env.get_target("pcsc")
    assert target is not None, "the environment has a pcsc target"
    drv = _session(target, os.environ["LAB_UID_PCSC"])
    assert drv.device == "pcsc:Virtual PCD 00 00"


if __name__ == "__main__":
    raise SystemExit(pytest.main([__file__]))
