"""`pdi capture URL --series S` of a URL whose capture of the day was withdrawn (pdi.capture.deposit).

docs/reference/write-api.md: a withdrawal takes a version, or a whole document, out of service for good, and
its name resolves to its tombstone. docs/explanation/name.md: other bytes are the document's next version (as
``pdi version`` deposits them); the bytes a withdrawn latest version holds are refused naming that version and its
withdrawal (exit 5), never answered ``unchanged`` with its name.
"""

from __future__ import annotations

import datetime
import email
import email.policy
from pathlib import Path

import pytest
from click.testing import CliRunner
from one_page import Handler, rewrapped

from pdi.archive import Archive
from pdi.capture import capture
from pdi.capture.deposit import deposit_capture
from pdi.cli import cli
from pdi.errors import ImmutabilityError
from pdi.identifier import PDI

S = "web.example.us"


def _run(*args: str) -> tuple[int, str, str]:
    done = CliRunner().invoke(cli, list(args))
    return done.exit_code, done.stdout, done.stderr


def test_a_capture_after_its_version_was_withdrawn_is_the_next_version_unless_it_holds_the_same_bytes(
    server: str, tmp_path: Path, one_gmt_day: datetime.datetime
) -> None:
    archive = ["--archive", str(tmp_path / "archive")]
    assert _run("init", *archive)[0] == 0 and _run("series", "add", S, *archive)[0] == 0
    url = f"{server}/page.html"
    capture = ["capture", url, "--allow-private", "--series", S, *archive]
    name = PDI.build(series=S, date=one_gmt_day.date(), foreign_id=url, format="related", version=1)
    Handler.body = b"<p>first edition</p>"
    assert _run(*capture)[:2] == (0, f"{name}\n")
    assert _run("withdraw", str(name), "--reason", "libel, by order", *archive)[0] == 0
    # the page changed: its next version, which resolves, beside the tombstone of the first
    Handler.body = b"<p>corrected edition</p>"
    status, out, err = _run(*capture)
    assert (status, out) == (0, f"{name.with_version(2)}\n"), err
    status, out, err = _run("get", str(name.with_version(2)), *archive)
    assert status == 0 and "<p>corrected edition</p>" in out, err
    assert _run("get", str(name), *archive)[0] == 11
    # the page as the withdrawn version 2 holds it: refused, naming it and its withdrawal, nothing stored
    assert _run("withdraw", str(name.with_version(2)), "--reason", "still libel", *archive)[0] == 0
    status, out, err = _run(*capture)
    assert status == 5 and out == "", (status, out, err)
    assert str(name.with_version(2)) in err and "withdrawn" in err and "still libel" in err, err
    # the hint is pdi capture's own (its --force, as its unchanged note says it), not another command's
    assert err.rstrip().endswith("(--force deposits it as a new version)") and "pdi version" not in err, err
    assert _run("ls", str(name).rsplit(".", 2)[0], *archive)[1].count("related.") == 2
    status, out, err = _run(*capture, "--force")
    assert (status, out) == (0, f"{name.with_version(3)}\n"), err
    status, out, err = _run("get", str(name.with_version(3)), *archive)
    assert status == 0 and "<p>corrected edition</p>" in out, err


def test_a_capture_of_a_url_whose_document_of_the_day_was_withdrawn_whole_is_refused_naming_it(
    server: str, tmp_path: Path, one_gmt_day: datetime.datetime
) -> None:
    archive = ["--archive", str(tmp_path / "archive")]
    assert _run("init", *archive)[0] == 0 and _run("series", "add", S, *archive)[0] == 0
    url = f"{server}/page.html"
    capture = ["capture", url, "--allow-private", "--series", S, *archive]
    generic = str(PDI.build(series=S, date=one_gmt_day.date(), foreign_id=url, format="related")).rsplit(".", 2)[0]
    Handler.body = b"<p>first edition</p>"
    assert _run(*capture)[0] == 0
    assert _run("withdraw", generic, "--reason", "the whole page, by order", *archive)[0] == 0
    Handler.body = b"<p>corrected edition</p>"
    status, out, err = _run(*capture)
    # exit 11 (docs/reference/exit-codes.md: gone, a withdrawn name resolves to its tombstone)
    assert status == 11 and out == "", (status, out, err)
    assert (f"{generic}:" in err or f"{generic} " in err) and "withdrawn" in err and "the whole page, by order" in err, err
    assert _run("ls", generic, *archive)[1].count("related.") == 1


def _parts(mhtml: bytes) -> list[tuple[str | None, str, bytes]]:
    """Each part's Content-Location, type and decoded octets, read by Python's own e-mail parser."""
    message = email.message_from_bytes(mhtml, policy=email.policy.default)
    return [(p["Content-Location"], p.get_content_type(), p.get_payload(decode=True)) for p in message.iter_parts()]


def _capture(url: str) -> bytes:
    return capture(url, allow_private=True).mhtml


@pytest.mark.parametrize("purge", [False, True])
def test_the_same_page_in_another_wrapper_after_its_version_was_withdrawn_is_refused_while_its_octets_are_kept(
    server: str, location: str, one_gmt_day: datetime.datetime, purge: bool
) -> None:
    url = f"{server}/page.html"
    Handler.body = b"<p>first edition</p>"
    first = _capture(url)
    with Archive.init(location) as archive:
        archive.add_series(S)
        (name,) = deposit_capture(archive, S, url, first)
        archive.withdraw(name, "libel, by order", purge=purge)
        again = rewrapped(_capture(url), b"Tue, 01 Oct 2024 10:00:00 +0000")
        assert again != first and _parts(again) == _parts(first)  # the same page, in other octets
        warned: list[str] = []
        if purge:
            # its octets are gone: nothing to compare this capture with, so it is the next version, with a warning
            deposit = deposit_capture(archive, S, url, again, warn=warned.append)
            assert deposit.names == (name.with_version(2),) and not deposit.unchanged
            assert len(warned) == 1 and str(name) in warned[0] and "purged" in warned[0], warned
            assert "could not be compared" in warned[0], warned
            return
        with pytest.raises(ImmutabilityError) as refused:
            deposit_capture(archive, S, url, again, warn=warned.append)
        said = str(refused.value)
        assert str(name) in said and "withdrawn" in said and "libel, by order" in said, said
        assert refused.value.forceable  # pdi capture --force deposits it all the same
        assert archive.versions(name) == [1] and warned == []
        # the page changed: the next version, as before
        Handler.body = b"<p>corrected edition</p>"
        assert deposit_capture(archive, S, url, _capture(url)).names == (name.with_version(2),)
        assert archive.get(name.with_version(2)).data.count(b"corrected edition") == 1


@pytest.mark.parametrize("purge", [False, True])
def test_cli_capture_of_a_page_whose_withdrawn_version_holds_it_in_another_wrapper_is_refused(
    server: str, tmp_path: Path, one_gmt_day: datetime.datetime, purge: bool
) -> None:
    # pdi's own writer is deterministic (no date, a boundary from the parts); a version written otherwise (by
    # Chromium's own snapshot, by the library from another file, by an earlier pdi's writer) is the same page
    location = str(tmp_path / "archive")
    archive = ["--archive", location]
    url = f"{server}/page.html"
    Handler.body = b"<p>first edition</p>"
    with Archive.init(location) as opened:
        opened.add_series(S)
        (name,) = deposit_capture(opened, S, url, rewrapped(_capture(url), b"Tue, 01 Oct 2024 10:00:00 +0000"))
    assert _run("withdraw", str(name), "--reason", "libel, by order", *archive, *(["--purge"] if purge else []))[0] == 0
    status, out, err = _run("capture", url, "--allow-private", "--series", S, *archive)
    if purge:  # nothing left to compare with: the next version, and a warning that says so
        assert (status, out) == (0, f"{name.with_version(2)}\n"), err
        (warning,) = err.splitlines()
        assert warning.startswith(f"warning: {name} was withdrawn") and "could not be compared" in warning, err
        return
    assert status == 5 and out == "", (status, out, err)
    assert str(name) in err and "withdrawn" in err and "libel, by order" in err, err
    assert err.rstrip().endswith("(--force deposits it as a new version)"), err
    assert _run("ls", str(name).rsplit(".", 2)[0], *archive)[1].count("related.") == 1
