from nfcbench_labgrid.cli import EXIT_USAGE, main
from nfcbench_labgrid.matrix import match_places, parse_tags

import pytest


def test_device_is_ours_to_set(capsys):
    assert main(["-p", "nfc-a1", "--", "session", "--device", "pn532_uart:/dev/ttyUSB0"]) == EXIT_USAGE
    assert "must not give --device" in capsys.readouterr().err


def test_a_command_is_needed(capsys):
    assert main(["-p", "nfc-a1"]) == EXIT_USAGE
    assert main(["matrix", "--tag", "reader", "--", "session"]) == EXIT_USAGE


def test_parse_tags():
    assert parse_tags(["reader=pn532", "site=laba"]) == {"reader": "pn532", "site": "laba"}
    with pytest.raises(ValueError):
        parse_tags(["reader"])


class _Place:
    def __init__(self, tags):
        self.tags = tags


class _Session:
    places = {"nfc-a1": _Place({"reader": "pn532", "site": "laba"}),
              "nfc-b1": _Place({"reader": "pn532", "site": "labb"}),
              "nfc-a-pcsc": _Place({"reader": "pcsc", "site": "laba"})}


def test_match_places_needs_every_tag():
    assert match_places(_Session, {"reader": "pn532"}) == ["nfc-a1", "nfc-b1"]
    assert match_places(_Session, {"site": "laba"}) == ["nfc-a-pcsc", "nfc-a1"]
    assert match_places(_Session, {"name": "nfc-b1"}) == ["nfc-b1"]
    assert match_places(_Session, {"reader": "acr122u"}) == []
