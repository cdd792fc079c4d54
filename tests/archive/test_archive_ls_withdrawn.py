"""``pdi ls`` tells a withdrawn name from a live one, asked: ``--long`` says each name's state, ``--live`` and
``--withdrawn`` keep one kind, and its plain listing stays a name a line (both stores).

The names are withdrawn as a curator does it: through the write API (``POST /api/withdraw`` under a ``curate``
token) and with ``pdi withdraw``; a whole document, one version of another, and one purged. Which names are
withdrawn is worked out from what the test withdrew, never from pdi's listing; the JSON members are those N2C
describes a tombstone with (``withdrawn``: ``at``, ``reason``, ``who``, ``purged``, docs/reference/http-api.md).
"""

from __future__ import annotations

import datetime
import json
from typing import Any

import pytest
from archive_helpers import Clock
from click.testing import CliRunner, Result
from starlette.testclient import TestClient

from pdi.archive import Archive, Content
from pdi.cli import cli
from pdi.server import create_app

S = "court.example.us"
NOW = datetime.datetime(2026, 11, 22, 14, 30, tzinfo=datetime.UTC)
DAY = f"urn:pdi://{S}/2026/11/22"


def _run(location: str, *argv: str, code: int = 0) -> Result:
    done = CliRunner().invoke(cli, [*argv, "--archive", location])
    assert done.exit_code == code, (argv, done.output, done.stderr, done.exception)
    return done


@pytest.fixture
def withdrawn(location: str) -> tuple[list[str], dict[str, tuple[str, str, bool]]]:
    """Five documents of a day, withdrawn as a curator would: every name in listing order, and each withdrawn
    one's (reason, who, purged)."""
    with Archive.init(location, clock=Clock(NOW)) as archive:
        archive.add_series(S)
        _, curator = archive.add_token("clerk", role="curate", series=[S])
        for n in range(1, 6):
            archive.add(S, f"ruling {n}\n".encode(), format="text")
        archive.add_version(f"{DAY}/2", [Content(b"ruling 2, corrected\n", "text")])
        client = TestClient(create_app(location, archive=archive))
        auth = {"Authorization": f"Bearer {curator}"}
        # the write API: a whole document (its one version), and version 1 of a document of two
        for name, reason in ((f"{DAY}/1", "sealed by order of 2026-11-20"), (f"{DAY}/2.text.1", "a draft")):
            made = client.post(f"/api/withdraw?pdi={name}", content=reason.encode(), headers=auth)
            assert made.status_code == 201, made.text
    # the command: a document's one version, its octets purged
    _run(location, "withdraw", f"{DAY}/4.text.1", "--reason", "takedown\tnotice", "--purge")
    names = [f"{DAY}/1.text.1", f"{DAY}/2.text.1", f"{DAY}/2.text.2", f"{DAY}/3.text.1", f"{DAY}/4.text.1",
             f"{DAY}/5.text.1"]
    gone = {f"{DAY}/1.text.1": ("sealed by order of 2026-11-20", "token:clerk", False),
            f"{DAY}/2.text.1": ("a draft", "token:clerk", False),
            f"{DAY}/4.text.1": ("takedown\tnotice", "", True)}
    return names, gone


def test_the_plain_listing_is_still_one_name_a_line_withdrawn_ones_too(
        location: str, withdrawn: tuple[list[str], dict[str, tuple[str, str, bool]]]) -> None:
    names, _ = withdrawn
    assert _run(location, "ls", S).stdout == "".join(f"{n}\n" for n in names)
    assert json.loads(_run(location, "ls", S, "--json").stdout) == names


@pytest.mark.parametrize("flag", ["--long", "-l"])
def test_long_says_each_names_state_after_a_tab(
        location: str, withdrawn: tuple[list[str], dict[str, tuple[str, str, bool]]], flag: str) -> None:
    names, gone = withdrawn
    listed = _run(location, "ls", S, flag).stdout
    assert listed == "".join(f"{n}\t{'withdrawn' if n in gone else 'live'}\n" for n in names)
    # the first column is the plain listing, for a script that cuts it
    assert [line.split("\t")[0] for line in listed.splitlines()] == names


def test_long_json_describes_each_tombstone_as_n2c_does(
        location: str, withdrawn: tuple[list[str], dict[str, tuple[str, str, bool]]]) -> None:
    names, gone = withdrawn
    listed: list[dict[str, Any]] = json.loads(_run(location, "ls", S, "--long", "--json").stdout)
    assert [item["name"] for item in listed] == names
    for item in listed:
        assert set(item) == {"name", "state", "withdrawn"}, item
        if item["name"] not in gone:
            assert item["state"] == "live" and item["withdrawn"] is None, item
            continue
        reason, who, purged = gone[item["name"]]
        tomb = item["withdrawn"]
        assert item["state"] == "withdrawn" and set(tomb) == {"at", "reason", "who", "purged"}, item
        assert tomb["reason"] == reason and tomb["purged"] is purged, item
        assert tomb["who"] == who or (not who and tomb["who"]), item  # the command's: the account's name
        assert tomb["at"].startswith("20") and tomb["at"].endswith("Z"), item


@pytest.mark.parametrize(("flag", "wanted"), [("--live", False), ("--withdrawn", True)])
def test_live_and_withdrawn_keep_one_kind_before_offset_and_limit(
        location: str, withdrawn: tuple[list[str], dict[str, tuple[str, str, bool]]], flag: str,
        wanted: bool) -> None:
    names, gone = withdrawn
    kept = [n for n in names if (n in gone) is wanted]
    assert _run(location, "ls", S, flag).stdout == "".join(f"{n}\n" for n in kept)
    assert json.loads(_run(location, "ls", S, flag, "--json").stdout) == kept
    # a page of that kind: --offset and --limit count the names kept, not those left out
    assert _run(location, "ls", S, flag, "--offset", "1", "--limit", "1").stdout == f"{kept[1]}\n"
    assert _run(location, "ls", S, flag, "--after", kept[0]).stdout == "".join(f"{n}\n" for n in kept[1:])
    state = "withdrawn" if wanted else "live"
    assert _run(location, "ls", f"{DAY}/*.text.1", flag, "-l").stdout == "".join(
        f"{n}\t{state}\n" for n in kept if n.endswith(".text.1"))


def test_live_and_withdrawn_together_are_refused(location: str) -> None:
    Archive.init(location).close()
    refused = _run(location, "ls", "--live", "--withdrawn", code=2)
    assert "--live" in refused.stderr and "--withdrawn" in refused.stderr, refused.stderr


def test_a_document_withdrawn_whole_after_a_version_is_withdrawn_in_every_version(location: str) -> None:
    with Archive.init(location, clock=Clock(NOW)) as archive:
        archive.add_series(S)
        archive.add(S, b"ruling\n", format="text")
        archive.add_version(f"{DAY}/1", [Content(b"ruling, corrected\n", "text")])
        archive.add_format(f"{DAY}/1.text.2", b"ruling, corrected\n", format="utf-8")
        archive.withdraw(f"{DAY}/1.text.2", "a draft")
        archive.withdraw(f"{DAY}/1", "the whole case sealed")
        archive.add(S, b"another\n", format="text")
    listed = json.loads(_run(location, "ls", S, "-l", "--json").stdout)
    assert [(i["name"], i["state"]) for i in listed] == [
        (f"{DAY}/1.text.1", "withdrawn"), (f"{DAY}/1.text.2", "withdrawn"), (f"{DAY}/1.utf-8.2", "withdrawn"),
        (f"{DAY}/2.text.1", "live")]
    # version 1 is gone with its document; version 2 went first, by its own tombstone, and says that one
    assert listed[0]["withdrawn"]["reason"] == "the whole case sealed"
    assert listed[1]["withdrawn"]["reason"] == listed[2]["withdrawn"]["reason"] == "a draft"
