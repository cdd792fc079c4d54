"""The octets an EARLIER withdrawn version holds, deposited again after a later version in service (both stores, CLI).

A withdrawal takes a version out of service for good (docs/reference/write-api.md); the octets a withdrawn
latest version holds were refused already (CHANGELOG). With another version deposited after it, the withdrawn one
is no longer the latest: the same octets deposited again became the next version and served the withdrawn content
again, silently. They are refused now (exit 5, ``409``), naming the withdrawn version, when and why it was withdrawn,
whichever of the document's versions holds them, its octets purged or not (the catalog keeps each representation's
SHA-256, FIPS 180-4, whatever was purged); a forced version deposits them (the depositor decides, knowingly).
"""

from __future__ import annotations

import datetime
import hashlib
from pathlib import Path

import pytest
from archive_helpers import Clock, snapshot
from click.testing import CliRunner

from pdi.archive import Archive, Content
from pdi.cli import cli
from pdi.errors import ImmutabilityError

S = "oma.eop.gov.us"
HELD = b"sealed by order\n"
WITHDRAWN_AT = "2026-11-22T15:30:00.000000Z"


def _withdrawn_then_another(archive: Archive, clock: Clock, *, purge: bool = False, later: int = 1) -> str:
    """``HELD`` as version 1 of ``case-12``, withdrawn at ``WITHDRAWN_AT`` (``purge``: its octets purged), and
    ``later`` versions of other octets after it, in service: version 1's name."""
    name = str(archive.add(S, HELD, format="text", foreign_id="case-12"))
    clock.now = datetime.datetime(2026, 11, 22, 15, 30, tzinfo=datetime.UTC)
    archive.withdraw(name, "sealed by the court", purge=purge)
    for n in range(later):
        clock.now += datetime.timedelta(minutes=5)
        archive.add_version(name.rsplit(".", 2)[0], [Content(f"edition {n + 2}\n".encode(), "text")])
    clock.now += datetime.timedelta(minutes=5)
    return name


@pytest.mark.parametrize("purge", [False, True], ids=["kept", "purged"])
def test_the_octets_of_an_earlier_withdrawn_version_are_refused_naming_it(
        archive: Archive, clock: Clock, purge: bool) -> None:
    name = _withdrawn_then_another(archive, clock, purge=purge, later=3)
    generic = name.rsplit(".", 2)[0]
    before = snapshot(archive)
    with pytest.raises(ImmutabilityError) as refused:
        archive.add_version(generic, [Content(HELD, "text")])
    message = str(refused.value)
    assert name in message and WITHDRAWN_AT in message and "sealed by the court" in message, message
    assert "nothing was deposited" in message and ("purged" in message) == purge, message
    assert refused.value.forceable
    assert snapshot(archive) == before and archive.versions(generic) == [1, 2, 3, 4]
    # the depositor decides, knowingly: a forced version holds them
    forced = archive.add_version(generic, [Content(HELD, "text")], force=True)
    assert str(forced[0]) == f"{generic}.text.5" and archive.get(forced[0]).data == HELD


def test_one_format_of_a_new_version_holding_a_withdrawn_versions_octets_is_enough_to_refuse_it(
        archive: Archive, clock: Clock) -> None:
    # the other format is new, but the withdrawn octets would be served again under the new version's name
    name = _withdrawn_then_another(archive, clock)
    generic = name.rsplit(".", 2)[0]
    before = snapshot(archive)
    with pytest.raises(ImmutabilityError) as refused:
        archive.add_version(generic, [Content(HELD, "text"), Content(b"<p>new</p>", "html")])
    assert name in str(refused.value) and "sealed by the court" in str(refused.value), str(refused.value)
    assert snapshot(archive) == before


def test_other_octets_and_octets_of_a_version_in_service_are_deposited_as_before(
        archive: Archive, clock: Clock) -> None:
    name = _withdrawn_then_another(archive, clock)
    generic = name.rsplit(".", 2)[0]
    # the octets of version 2 (in service, not the latest any more) again: the next version, as always
    archive.add_version(generic, [Content(b"a third edition\n", "text")])
    again = archive.add_version(generic, [Content(b"edition 2\n", "text")])
    assert str(again[0]) == f"{generic}.text.4" and not again.unchanged


def test_the_same_octets_in_another_document_are_not_refused(archive: Archive, clock: Clock) -> None:
    # a withdrawal is of one document's version: another document may hold the same octets (its own decision)
    _withdrawn_then_another(archive, clock)
    other = archive.add(S, b"first\n", format="text", foreign_id="case-13")
    done = archive.add_version(str(other).rsplit(".", 2)[0], [Content(HELD, "text")])
    assert archive.get(done[0]).data == HELD


def test_pdi_version_refuses_them_with_its_force_hint(tmp_path: Path) -> None:
    location = str(tmp_path / "archive")
    clock = Clock(datetime.datetime(2026, 11, 22, 14, 30, tzinfo=datetime.UTC))
    with Archive.init(location, clock=clock) as made:
        made.add_series(S)
        name = _withdrawn_then_another(made, clock)
    held = tmp_path / "held.txt"
    held.write_bytes(HELD)
    generic = name.rsplit(".", 2)[0]
    done = CliRunner().invoke(cli, ["version", generic, str(held), "--archive", location])
    assert done.exit_code == 5 and done.stdout == "", (done.exit_code, done.stdout, done.stderr)
    assert name in done.stderr and "sealed by the court" in done.stderr, done.stderr
    assert done.stderr.rstrip().endswith("(--force deposits them as a new version)"), done.stderr
    forced = CliRunner().invoke(cli, ["version", generic, str(held), "--force", "--archive", location])
    assert (forced.exit_code, forced.stdout) == (0, f"{generic}.text.3\n"), forced.output
    # its SHA-256 (FIPS 180-4, by hashlib) is what the catalog compared
    assert archive_sha(location, f"{generic}.text.3") == hashlib.sha256(HELD).hexdigest()


def archive_sha(location: str, name: str) -> str:
    with Archive.open(location) as opened:
        return opened.get(name).sha256


def test_withdrawn_earlier_alike_answers_what_it_could_not_compare(archive: Archive, clock: Clock) -> None:
    # versions 1..23 of a text, then one in service: 1..21 withdrawn and purged (nothing kept to compare), 22 and 23
    # withdrawn with their octets kept. The purged ones are answered, the last 20 (a look-up each) and a count of
    # the older, newest first; the kept ones are compared (none alike here), nothing past the bound
    generic = str(archive.add(S, b"edition 1\n", format="text", foreign_id="case-13")).rsplit(".", 2)[0]
    for n in range(2, 25):
        archive.add_version(generic, [Content(f"edition {n}\n".encode(), "text")])
    for n in range(1, 24):
        archive.withdraw(f"{generic}.text.{n}", f"withdrawn {n}", purge=n <= 21)
    seen: list[bytes] = []
    answer = archive.withdrawn_earlier_alike(f"{generic}.text.24", lambda kept: bool(seen.append(kept)),
                                             held="these octets", them="them")
    assert seen == [b"edition 23\n", b"edition 22\n"]
    assert [t.version for t in answer.purged] == list(range(21, 1, -1))
    assert [t.reason for t in answer.purged[:2]] == ["withdrawn 21", "withdrawn 20"]
    assert all(t.purged for t in answer.purged)
    assert (answer.more_purged, answer.beyond) == (1, ())
    # asked for a format no purged version has: none named
    other = archive.withdrawn_earlier_alike(f"{generic}.utf-8.24", lambda kept: False, held="x", them="y")
    assert (other.purged, other.more_purged) == ((), 1)
