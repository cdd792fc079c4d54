"""Private series and embargoes, in the archive (issue 15; pdi.archive.access), on both catalogs.

The reader is set as the resolver sets it for a request
(``pdi.archive.access.current_reader``); the owner (no reader) is never
restricted. The embargo lifts by the archive's clock (the test's ``Clock``),
never by sleeping. Expected answers follow the rules the issue states:
403 where a name exists but is not the reader's, 404 (the same as a name
never minted) where even existence is private.
"""

from __future__ import annotations

import datetime
import json
from collections.abc import Callable
from pathlib import Path

import pytest
from archive_helpers import Clock
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pdi.archive import Archive, Content
from pdi.archive.access import Reader, parse_until, reading_as
from pdi.archive.store import DocumentKey
from pdi.errors import AccessError, ImmutabilityError, NotFoundError, ParseError

S = "oma.eop.gov.us"
SEALED = "court.example.us"


def _cli(location: str) -> Callable[..., tuple[str, str]]:
    """``run(*argv, code=0)``: ``pdi *argv --archive location`` by click's runner, its exit status asserted; its
    standard output and error."""
    from click.testing import CliRunner

    from pdi.cli import cli

    runner = CliRunner()

    def run(*argv: str, code: int = 0) -> tuple[str, str]:
        result = runner.invoke(cli, [*argv, "--archive", location])
        assert result.exit_code == code, (argv, result.output)
        return result.stdout, result.stderr

    return run
SUB = "family.court.example.us"


def _token_reader(archive: Archive, name: str, series: list[str], role: str = "read") -> Reader:
    record, _ = archive.add_token(name, role=role, series=series)
    return Reader(record)


def test_a_private_series_is_403_a_hidden_one_404_and_a_token_reads_both(archive: Archive) -> None:
    archive.add_series(SEALED)
    archive.add_series(SUB)
    public = archive.add(S, b"public\n", format="text")
    sealed = archive.add(SEALED, b"sealed\n", format="text")
    family = archive.add(SUB, b"family matter\n", format="text")
    archive.set_series_access(SEALED, "private")
    clerk = _token_reader(archive, "clerk", [SEALED])
    other = _token_reader(archive, "other", [S])
    with reading_as(Reader()):
        assert archive.get(public).data == b"public\n"
        with pytest.raises(AccessError, match="private"):
            archive.get(sealed)
        with pytest.raises(AccessError):  # the subseries is as private as its parent
            archive.get(family)
        with pytest.raises(AccessError):
            archive.meta(sealed)
        with pytest.raises(AccessError):
            archive.locate(str(sealed).rsplit(".", 2)[0])
        assert [str(n) for n in archive.ls()] == [str(public)]
        assert [c.series for c in archive.series_counts()] == [S]
        with pytest.raises(AccessError):
            archive.ls(series=SEALED)
    with reading_as(other), pytest.raises(AccessError):  # a token for another series is no better than none
        archive.get(sealed)
    with reading_as(clerk):  # the weakest role reads its series and their subseries
        assert archive.get(sealed).data == b"sealed\n"
        assert archive.get(family).data == b"family matter\n"
        assert sorted(map(str, archive.ls())) == sorted(map(str, (public, sealed, family)))
    # hidden: the same not-found as a name never minted
    archive.set_series_access(SEALED, "hidden")
    never = str(sealed).replace(f"/{sealed.unique_id}.", "/999.")
    with reading_as(Reader()):
        with pytest.raises(NotFoundError) as hidden:
            archive.get(sealed)
        with pytest.raises(NotFoundError) as missing:
            archive.get(never)
        assert str(hidden.value) == str(missing.value).replace("/999.", f"/{sealed.unique_id}.")
        with pytest.raises(NotFoundError, match="is not registered"):
            archive.ls(series=SEALED)
        assert SEALED not in [s.name for s in archive.series()]
    # the owner (the command line) is never restricted
    assert archive.get(family).data == b"family matter\n"
    assert archive.series_access() == {S: "public", SEALED: "hidden", SUB: "hidden"}
    assert [(e.action, e.subject, e.detail) for e in archive.audit() if e.action == "series-access"] == [
        ("series-access", SEALED, "private"), ("series-access", SEALED, "hidden")
    ]


def test_a_subseries_registered_before_its_series_is_as_private_as_that_series(archive: Archive) -> None:
    """draft-mallery-urn-pdi-00 §2.2: "A subseries is delegated by adding a name component to the left of
    <document-series>", so family.court.example.us is a subseries of court.example.us whichever was registered
    first, as a token of court.example.us reads it. Registered first, it had no parent recorded, and making
    court.example.us hidden left it public: its names, listed and read by anyone. Found by a security review,
    2026-11-27."""
    archive.add_series(SUB)  # before court.example.us: no parent recorded
    family = archive.add(SUB, b"family matter\n", format="text")
    archive.add_series(SEALED)
    archive.set_series_access(SEALED, "hidden")
    clerk = _token_reader(archive, "clerk", [SEALED])
    assert archive.series_access() == {S: "public", SEALED: "hidden", SUB: "hidden"}
    with reading_as(Reader()):
        with pytest.raises(NotFoundError):
            archive.get(family)
        assert list(archive.ls()) == []
        assert SUB not in [s.name for s in archive.series()]
    with reading_as(clerk):  # the token's scope has always covered it
        assert archive.get(family).data == b"family matter\n"
    archive.set_series_access(SEALED, "private")
    with reading_as(Reader()), pytest.raises(AccessError, match="private"):
        archive.get(family)


def test_an_embargo_lifts_by_itself_at_its_date(archive: Archive, clock: Clock) -> None:
    first = archive.add(S, b"judgment, embargoed\n", format="text", embargo_until="2026-12-01")
    generic = str(first).rsplit(".", 2)[0]
    second = archive.add_version(generic, [Content(b"judgment, public summary\n", "text")])[0]
    clerk = _token_reader(archive, "clerk", [S])
    with reading_as(Reader()):
        with pytest.raises(AccessError, match=r"embargoed until 2026-12-01T00:00:00\.000000Z"):
            archive.get(first)
        assert archive.get(second).data == b"judgment, public summary\n"  # the embargo was version 1's
        # named, it exists (403); listed, it is not (issue 22: a list teaches nothing of what is embargoed)
        assert str(first) not in map(str, archive.ls()) and str(second) in map(str, archive.ls())
    with reading_as(clerk):
        assert archive.get(first).data == b"judgment, embargoed\n"
    clock.now = datetime.datetime(2026, 11, 30, 23, 59, 59, tzinfo=datetime.UTC)
    with reading_as(Reader()), pytest.raises(AccessError):
        archive.get(first)
    clock.now = datetime.datetime(2026, 12, 1, tzinfo=datetime.UTC)
    with reading_as(Reader()):
        assert archive.get(first).data == b"judgment, embargoed\n"


def test_a_whole_document_embargoed_later_and_lifted_early(archive: Archive) -> None:
    name = archive.add(S, b"minutes\n", format="text")
    generic = str(name).rsplit(".", 2)[0]
    archive.add_version(generic, [Content(b"minutes, amended\n", "text")])
    set_ = archive.embargo(generic, "2027-06-30T12:00:00+02:00")
    assert (set_.before, set_.after, set_.in_force, set_.held) == (None, "2027-06-30T10:00:00.000000Z",
                                                                   "2027-06-30T10:00:00.000000Z", ())
    with reading_as(Reader()):
        for version in (1, 2):
            with pytest.raises(AccessError, match="embargoed until 2027-06-30T10:00:00"):
                archive.get(f"{generic}.text.{version}")
        with pytest.raises(AccessError):
            archive.document(generic)
    lifted = archive.embargo(generic, None)
    assert (lifted.before, lifted.after, lifted.in_force, lifted.changed) == (
        "2027-06-30T10:00:00.000000Z", None, None, True)
    with reading_as(Reader()):
        assert archive.get(f"{generic}.text.2").data == b"minutes, amended\n"
    assert [e.detail for e in archive.audit() if e.action == "embargo"] == [
        "the document until 2027-06-30T10:00:00.000000Z", "the document: lifted (was until 2027-06-30T10:00:00.000000Z)"
    ]


def test_search_leaves_out_what_the_reader_may_not_read(archive: Archive) -> None:
    archive.add_series(SEALED)
    archive.add(S, b"the quokka of the public record\n", format="text")
    sealed = archive.add(SEALED, b"the quokka of the sealed record\n", format="text")
    embargoed = archive.add(S, b"the quokka of the embargoed record\n", format="text", embargo_until="2030-01-01")
    archive.set_series_access(SEALED, "private")
    clerk = _token_reader(archive, "clerk", [SEALED, S])
    with reading_as(Reader()):
        hits = archive.search("quokka").hits
        assert [h.snippet.count("public") for h in hits] == [1]
    with reading_as(clerk):
        names = sorted(str(h.record.unique_id) for h in archive.search("quokka").hits)
        assert names == sorted([sealed.unique_id, embargoed.unique_id, "1"])  # type: ignore[list-item]
    assert len(archive.search("quokka").hits) == 3  # the owner sees all


def test_the_settings_travel_in_a_bag(archive: Archive, tmp_path: Path, clock: Clock) -> None:
    archive.add_series(SEALED)
    archive.add(SEALED, b"sealed\n", format="text")
    embargoed = archive.add(S, b"embargoed\n", format="text", embargo_until="2030-01-01")
    archive.set_series_access(SEALED, "hidden")
    archive.export_bag(tmp_path / "bag")
    catalog = json.loads((tmp_path / "bag" / "data" / "catalog.json").read_text(encoding="utf-8"))
    assert {s["name"]: s["access"] for s in catalog["series"]} == {S: "public", SEALED: "hidden"}
    assert catalog["embargoes"] == [{"series": S, "day": "2026-11-22", "unique_id": embargoed.unique_id,
                                     "version": 1, "until": "2030-01-01T00:00:00.000000Z"}]
    with Archive.init(tmp_path / "copy", clock=clock) as copy:
        copy.import_bag(tmp_path / "bag")
        assert copy.series_access() == {S: "public", SEALED: "hidden"}
        with reading_as(Reader()), pytest.raises(AccessError, match="embargoed until 2030"):
            copy.get(embargoed)


def test_a_change_of_access_travels_in_a_bag_and_dates_the_document_in_the_copy(
        archive: Archive, tmp_path: Path, clock: Clock) -> None:
    """An embargo set on a document readers were shown makes it a deleted record from then on in a harvest (OAI-PMH
    §2.5.1), and a lift early dates it then (§2.7.1). An export that left those moments behind made a copy whose
    harvesters never saw the one let go and never re-harvested the other (found in review, 2026-11-30)."""
    shown = archive.add(S, b"shown, then sealed\n", format="text")
    waiting = archive.add(S, b"sealed, then shown\n", format="text", embargo_until="2099-01-01")
    clock.now += datetime.timedelta(days=2, seconds=5)
    archive.embargo(shown, "2099-01-01")
    changed = clock.now
    clock.now += datetime.timedelta(hours=1)
    archive.embargo(waiting, None)
    lifted = clock.now
    archive.export_bag(tmp_path / "bag")
    catalog = json.loads((tmp_path / "bag" / "data" / "catalog.json").read_text(encoding="utf-8"))
    stamp = "%Y-%m-%dT%H:%M:%S.%fZ"
    assert sorted((c["unique_id"], c["at"]) for c in catalog["access_changes"]) == sorted([
        (shown.unique_id, changed.strftime(stamp)), (waiting.unique_id, lifted.strftime(stamp))])
    with Archive.init(tmp_path / "copy", clock=clock) as copy:
        copy.import_bag(tmp_path / "bag")
        with reading_as(Reader()):
            seen = {c.generic.pdi.unique_id: (c.changed_at, c.withdrawn_at) for c in copy.changes()}
        assert seen == {shown.unique_id: (changed.strftime(stamp), changed.strftime(stamp)),
                        waiting.unique_id: (lifted.strftime(stamp), None)}


def test_what_is_refused(archive: Archive) -> None:
    with pytest.raises(ParseError, match="public, private, hidden"):
        archive.set_series_access(S, "secret")
    with pytest.raises(NotFoundError):
        archive.set_series_access("nowhere.example.us", "private")
    with pytest.raises(ParseError, match="time zone"):
        parse_until("2027-01-01T09:00:00")
    with pytest.raises(ParseError, match="embargo ends"):
        archive.add(S, b"x\n", format="text", embargo_until="next tuesday")
    assert archive.ls() == []  # the refused deposit left nothing
    from pdi.archive.tokens import Writer

    record, _ = archive.add_token("intake", role="deposit", series=[S])
    with pytest.raises(AccessError, match="needs curate"):
        archive.deposit(S, [Content(b"x\n", "text")], embargo_until="2030-01-01", writer=Writer(record))


def test_a_lift_of_a_document_whose_deposit_embargoed_its_version_lifts_nothing_and_fails(tmp_path: Path) -> None:
    """The trial's case: pdi add --embargo-until embargoes the version deposited; pdi embargo GENERIC --lift then
    lifts nothing. It exits 5 naming the version's embargo and the name that lifts it, audits nothing, and the
    resolver still answers 403 with the version's date; lifting the version by that name is what lifts it."""
    from click.testing import CliRunner
    from starlette.testclient import TestClient

    from pdi.cli import cli
    from pdi.server import create_app

    location = str(tmp_path / "archive")
    runner = CliRunner()
    assert runner.invoke(cli, ["init", "--archive", location]).exit_code == 0
    assert runner.invoke(cli, ["series", "add", S, "--archive", location]).exit_code == 0
    (tmp_path / "s2.txt").write_bytes(b"sealed ruling\n")
    added = runner.invoke(cli, ["add", str(tmp_path / "s2.txt"), "-s", S, "--embargo-until", "2037-06-01",
                                "--archive", location])
    assert added.exit_code == 0, added.output
    name = added.stdout.strip()
    generic = name.removesuffix(".text.1")
    assert generic != name
    lift = runner.invoke(cli, ["embargo", generic, "--lift", "--archive", location])
    assert (lift.exit_code, lift.stdout) == (5, "")
    assert "embargo lifted" not in lift.stderr
    assert lift.stderr == (
        f"pdi: immutability conflict: {generic}: nothing lifted: the document has no embargo of its own; the version"
        f" {name} keeps its own embargo until 2037-06-01T00:00:00.000000Z (lift it by that name)\n")
    with Archive.open(location) as archive:
        assert [e.action for e in archive.audit()] == ["deposit"]
        client = TestClient(create_app(location, archive=archive))
        answer = client.get(f"/uri-res/N2R?{name}")
        assert answer.status_code == 403 and "embargoed until 2037-06-01" in answer.json()["detail"]
        answer = client.get(f"/uri-res/N2R?{generic}")
        assert answer.status_code == 403 and "every version is embargoed" in answer.json()["detail"]
    lift = runner.invoke(cli, ["embargo", name, "--lift", "--archive", location])
    assert (lift.exit_code, lift.stdout) == (0, f"{name}: embargo until 2037-06-01T00:00:00.000000Z lifted\n")
    with Archive.open(location) as archive:
        client = TestClient(create_app(location, archive=archive))
        assert client.get(f"/uri-res/N2R?{name}").content == b"sealed ruling\n"
        assert client.get(f"/uri-res/N2R?{generic}").status_code == 300  # its versions listed, none refused
    # nothing embargoed left: a lift changes nothing, and says it reads as any other name
    lift = runner.invoke(cli, ["embargo", generic, "--lift", "--archive", location])
    assert (lift.exit_code, lift.stdout) == (
        0, f"{generic}: no embargo to lift: it reads as any other name (nothing changed)\n")


def test_an_embargo_is_shortened_only_with_shorten_and_each_change_is_audited_with_both_dates(tmp_path: Path) -> None:
    """The trial's second case: pdi embargo VERSION --until an earlier date than the version's embargo in force is
    refused (exit 5) naming both dates, and changes nothing; with --shorten it is done; a later date needs no word.
    Each change's audit entry names the date before and after."""
    location = str(tmp_path / "archive")
    run = _cli(location)

    run("init")
    run("series", "add", S)
    (tmp_path / "s2.txt").write_bytes(b"sealed ruling\n")
    name = run("add", str(tmp_path / "s2.txt"), "-s", S, "--embargo-until", "2037-06-01")[0].strip()
    june, december = "2037-06-01T00:00:00.000000Z", "2036-12-03T00:00:00.000000Z"
    assert run("embargo", name, "--until", "2036-12-03", code=5) == ("", (
        f"pdi: immutability conflict: {name}: its embargo until {june} would end earlier, at {december}: an embargo"
        " is shortened only when that is asked for (pdi embargo --shorten; shorten=true on POST /api/embargo)\n"))
    # a moment already past is as much a shortening
    assert run("embargo", name, "--until", "2001-01-01", code=5)[1].startswith(
        f"pdi: immutability conflict: {name}: its embargo until {june} would end earlier, at 2001-01-01")
    with Archive.open(location) as archive:
        record = archive.get(name).record
        key = DocumentKey(record.series, record.day, record.unique_id)
        assert archive.store.embargo(key, 1) == june
        assert [e.action for e in archive.audit()] == ["deposit"]
    assert run("embargo", name, "--until", "2036-12-03", "--shorten") == (
        f"{name}: embargoed until {december} (was until {june})\n", "")
    assert run("embargo", name, "--until", "2038-01-01") == (
        f"{name}: embargoed until 2038-01-01T00:00:00.000000Z (was until {december})\n", "")
    assert "--shorten goes with --until DATE" in run("embargo", name, "--lift", "--shorten", code=2)[1]
    assert run("embargo", name, "--lift") == (f"{name}: embargo until 2038-01-01T00:00:00.000000Z lifted\n", "")
    with Archive.open(location) as archive:
        assert [e.detail for e in archive.audit() if e.action == "embargo"] == [
            f"version 1 until {december} (was until {june})",
            f"version 1 until 2038-01-01T00:00:00.000000Z (was until {december})",
            "version 1: lifted (was until 2038-01-01T00:00:00.000000Z)",
        ]
        assert archive.store.embargo(key, 1) is None


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=st.lists(st.tuples(st.sampled_from([None, "2001-01-01", "2030-01-01", "2031-06-01", "2032-01-01"]),
                                st.booleans(), st.booleans()), min_size=1, max_size=8))
def test_an_embargo_set_again_is_refused_exactly_when_it_would_end_an_embargo_in_force_earlier(
    tmp_path_factory: pytest.TempPathFactory, steps: list[tuple[str | None, bool, bool]]
) -> None:
    """Any sequence of embargoes of a version or its document (a date, one past, or a lift), each with or without
    shorten: one is refused exactly when it is a date earlier than the same name's own embargo in force, or a lift
    of nothing in force while the other embargo holds the name; a refusal changes nothing, and each change is
    audited naming the embargo before it. The expected state is kept here by that rule alone."""
    clock = Clock(datetime.datetime(2026, 12, 2, tzinfo=datetime.UTC))
    now = "2026-12-02T00:00:00.000000Z"
    with Archive.init(str(tmp_path_factory.mktemp("shorten")), clock=clock) as archive:
        archive.add_series(S)
        name = str(archive.add(S, b"ruling\n", format="text"))
        generic = name.rsplit(".", 2)[0]
        own: dict[str, str | None] = {name: None, generic: None}
        audited = 0
        for until, of_version, shorten in steps:
            target, other = (name, generic) if of_version else (generic, name)
            moment = None if until is None else parse_until(until)
            before, held = own[target], own[other]
            in_force = before is not None and before > now
            refused = (moment is not None and in_force and not shorten and moment < before) or (
                moment is None and not in_force and held is not None and held > now)
            if refused:
                with pytest.raises(ImmutabilityError):
                    archive.embargo(target, until, shorten=shorten)
            else:
                change = archive.embargo(target, until, shorten=shorten)
                assert (change.before, change.after) == (before, moment)
                own[target] = moment
                audited += before != moment
            details = [e.detail for e in archive.audit() if e.action == "embargo"]
            assert len(details) == audited
            if not refused and before != moment:
                assert details[-1].endswith("" if before is None else f" (was until {before})")
        record = archive.get(name).record
        key = DocumentKey(record.series, record.day, record.unique_id)
        assert archive.store.embargoes_of([key]) == {
            (key, version): until for version, until in ((1, own[name]), (None, own[generic])) if until is not None}


def test_the_commands(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from pdi.cli import cli

    location = str(tmp_path / "archive")
    runner = CliRunner()

    def run(*argv: str, code: int = 0) -> str:
        result = runner.invoke(cli, [*argv, "--archive", location])
        assert result.exit_code == code, (argv, result.output)
        return result.output

    run("init")
    run("series", "add", SEALED)
    assert run("series", "access", SEALED, "hidden") == f"series {SEALED}: hidden\n"
    assert run("series", "ls") == f"{SEALED}\thidden\n"
    assert "Invalid value" in run("series", "access", SEALED, "secret", code=2)
    doc = tmp_path / "ruling.txt"
    doc.write_bytes(b"ruling\n")
    name = run("add", str(doc), "-s", SEALED, "--embargo-until", "2030-01-01").strip()
    assert run("get", name) == "ruling\n"  # the owner reads what no anonymous reader may
    assert run("embargo", name, "--until", "2031-02-03") == (
        f"{name}: embargoed until 2031-02-03T00:00:00.000000Z (was until 2030-01-01T00:00:00.000000Z)\n")
    assert run("embargo", name, "--lift") == f"{name}: embargo until 2031-02-03T00:00:00.000000Z lifted\n"
    # a version's own embargo set, then its document's: a lift of the version lifts its own alone, and says that
    # the document's still covers it (the resolver answers 403)
    generic = name.rsplit(".", 2)[0]
    assert run("embargo", generic, "--until", "2031-02-03") == f"{generic}: embargoed until 2031-02-03T00:00:00.000000Z\n"
    assert run("embargo", name, "--until", "2030-06-01") == (
        f"{name}: its own embargo set until 2030-06-01T00:00:00.000000Z\n"
        f"{name}: but its document's embargo until 2031-02-03T00:00:00.000000Z still covers it"
        f" (pdi embargo {generic} --lift ends that)\n")
    assert run("embargo", name, "--lift") == (
        f"{name}: its own embargo until 2030-06-01T00:00:00.000000Z lifted\n"
        f"{name}: but its document's embargo until 2031-02-03T00:00:00.000000Z still covers it"
        f" (pdi embargo {generic} --lift ends that)\n")
    with Archive.open(location) as archive:  # what the resolver asks before it answers a reader without a token
        record = archive.get(name).record
        key = DocumentKey(record.series, record.day, record.unique_id)
        assert archive.store.embargo(key, 1) == "2031-02-03T00:00:00.000000Z"
    # lifted again: it has no embargo of its own left, so nothing is lifted, and the command fails saying what holds it
    refused = runner.invoke(cli, ["embargo", name, "--lift", "--archive", location])
    assert refused.exit_code == 5 and refused.stdout == ""
    assert refused.stderr == (
        f"pdi: immutability conflict: {name}: nothing lifted: version 1 has no embargo of its own; its document's"
        f" embargo until 2031-02-03T00:00:00.000000Z still covers it (lift it by the generic name {generic})\n")
    assert run("embargo", name, "--until", "2030-06-01").startswith(f"{name}: its own embargo set until 2030-06-01")
    assert run("embargo", generic, "--lift") == (
        f"{generic}: its own embargo until 2031-02-03T00:00:00.000000Z lifted\n"
        f"{generic}: but the version {name} keeps its own embargo until 2030-06-01T00:00:00.000000Z"
        f" (pdi embargo {name} --lift ends that)\n")
    # the document's lifted again, while the version keeps its own: nothing lifted, said so
    refused = runner.invoke(cli, ["embargo", generic, "--lift", "--archive", location])
    assert refused.exit_code == 5 and refused.stdout == ""
    assert refused.stderr == (
        f"pdi: immutability conflict: {generic}: nothing lifted: the document has no embargo of its own; the version"
        f" {name} keeps its own embargo until 2030-06-01T00:00:00.000000Z (lift it by that name)\n")
    # an embargo until a moment already past embargoes nothing (the archive's clock is today's): said so, and
    # what still holds the version with it
    assert run("embargo", generic, "--until", "2001-01-01") == (
        f"{generic}: an embargo until 2001-01-01T00:00:00.000000Z is over already\n"
        f"{generic}: but the version {name} keeps its own embargo until 2030-06-01T00:00:00.000000Z"
        f" (pdi embargo {name} --lift ends that)\n")
    assert run("embargo", name, "--until", "2030-06-01") == (
        f"{name}: embargoed until 2030-06-01T00:00:00.000000Z already (nothing changed)\n")
    assert "give --until DATE or --lift" in run("embargo", name, code=2)
    with Archive.open(location) as archive:
        record = archive.get(name).record
        # the version's own embargo stays (the document's is over): the later of the two in force
        assert archive.store.embargo(DocumentKey(record.series, record.day, record.unique_id), 1) == (
            "2030-06-01T00:00:00.000000Z")
        # each change audited; the lifts refused and the embargo set as it was changed nothing and are not
        assert [e.action for e in archive.audit()] == ["series-access", "deposit", *["embargo"] * 8]


def test_a_deposit_embargoed_until_a_moment_past_is_said_to_read_as_any_other(
    tmp_path: Path, one_gmt_day: datetime.datetime
) -> None:
    # found following the write-over-HTTP how-to (2026-12-01): its `pdi add ruling.txt … --embargo-until 2026-12-01`,
    # typed on that day, embargoed nothing (an embargo ends at its date's start, GMT) and said nothing, where
    # `pdi embargo … --until` says of a moment past that it is over already. The archive's clock is at noon GMT today.
    from click.testing import CliRunner

    from pdi.cli import cli

    location = str(tmp_path / "archive")
    runner = CliRunner()
    today = one_gmt_day.date()
    tomorrow = today + datetime.timedelta(days=1)

    def run(*argv: str) -> tuple[str, str]:
        result = runner.invoke(cli, [*argv, "--archive", location])
        assert result.exit_code == 0, (argv, result.output)
        return result.stdout, result.stderr

    run("init")
    run("series", "add", SEALED)
    for n in (1, 2, 3):
        (tmp_path / f"r{n}.txt").write_bytes(b"ruling %d\n" % n)
    over = f"{today.isoformat()}T00:00:00.000000Z"
    said = ("warning: an embargo until {} is over already: what was deposited reads as any other name"
            " (pdi embargo NAME --until DATE embargoes it)\n")
    name, warned = run("add", str(tmp_path / "r1.txt"), "-s", SEALED, "--embargo-until", today.isoformat())
    assert warned == said.format(over)
    with Archive.open(location) as archive:
        assert archive.embargo_in_force(name.strip()) is None  # as said: nothing embargoed
    # a new version embargoed until a time past, given with its zone (09:00 at +02:00 is 07:00 GMT, before noon)
    generic = name.strip().rsplit(".", 2)[0]
    _, warned = run("version", generic, str(tmp_path / "r2.txt"), "--embargo-until", f"{today.isoformat()}T09:00:00+02:00")
    assert warned == said.format(f"{today.isoformat()}T07:00:00.000000Z")
    # an embargo still to come is said nothing of, and is in force
    name, warned = run("add", str(tmp_path / "r3.txt"), "-s", SEALED, "--embargo-until", tomorrow.isoformat())
    assert warned == ""
    with Archive.open(location) as archive:
        assert archive.embargo_in_force(name.strip()) == f"{tomorrow.isoformat()}T00:00:00.000000Z"


def test_a_deposit_answered_unchanged_under_embargo_until_is_refused_unless_the_embargo_holds(
    tmp_path: Path, one_gmt_day: datetime.datetime
) -> None:
    # found by a reviewer: `pdi add --id Case_9 --embargo-until 2100-01-01` of bytes deposited already exited 0
    # saying only "unchanged", the document still public; and under an embargo until 2099, --embargo-until of a
    # day past warned "what was deposited reads as any other name", where it answered 403 until 2099
    location = str(tmp_path / "archive")
    run = _cli(location)
    yesterday = (one_gmt_day.date() - datetime.timedelta(days=1)).isoformat()

    run("init")
    run("series", "add", SEALED)
    doc = tmp_path / "case9.txt"
    doc.write_bytes(b"case 9\n")
    name = run("add", str(doc), "-s", SEALED, "--id", "Case_9")[0].strip()
    unset = "no embargo was set: version 1 already holds these bytes, so nothing was deposited"
    out, err = run("add", str(doc), "-s", SEALED, "--id", "Case_9", "--embargo-until", "2100-01-01", code=5)
    assert out == ""
    assert (f"{name}: {unset}, and it reads as any other name: pdi embargo {name} --until 2100-01-01 embargoes it"
            in " ".join(err.split()))
    with Archive.open(location) as archive:
        assert archive.embargo_in_force(name) is None  # as said: not embargoed
    generic = name.rsplit(".", 2)[0]
    _, err = run("version", generic, str(doc), "--embargo-until", "2100-01-01", code=5)
    assert f"{name}: {unset}, and it reads as any other name" in " ".join(err.split())
    # the way it names sets it; then a date it covers is said of, exit 0, and one later is refused again
    run("embargo", name, "--until", "2099-01-01")
    held = "2099-01-01T00:00:00.000000Z"
    for asked in (yesterday, "2050-01-01"):
        out, err = run("add", str(doc), "-s", SEALED, "--id", "Case_9", "--embargo-until", asked)
        assert out.strip() == name
        assert f"note: {unset}; {name} is embargoed until {held} already\n" in err
        assert "over already" not in err and "any other name" not in err
    _, err = run("add", str(doc), "-s", SEALED, "--id", "Case_9", "--embargo-until", "2100-01-01", code=5)
    assert f"{name}: {unset}, and it is embargoed only until {held}" in " ".join(err.split())
    with Archive.open(location) as archive:
        assert archive.embargo_in_force(name) == held
    # a new version of a document embargoed until 2099 (its document's), given a day past: that embargo is said
    run("embargo", generic, "--until", "2099-01-01")
    (tmp_path / "amended.txt").write_bytes(b"case 9, amended\n")
    out, err = run("version", generic, str(tmp_path / "amended.txt"), "--embargo-until", yesterday)
    assert err == (f"warning: an embargo until {yesterday}T00:00:00.000000Z is over already: it set nothing, and"
                   f" {out.strip()} is embargoed until {held} all the same\n")


def test_an_mbox_whose_messages_were_deposited_before_under_embargo_until_exits_5_after_the_names(
    tmp_path: Path, one_gmt_day: datetime.datetime
) -> None:
    # an mbox's batch is written whole, so its messages minted now are embargoed and printed; one answered
    # unchanged (deposited before, no embargo) only warned and the command exited 0: a script believed all sealed
    location = str(tmp_path / "archive")
    run = _cli(location)

    def message(number: int) -> bytes:
        return (f"From a@example.org Mon Nov 30 10:00:00 2026\nFrom: a@example.org\nMessage-ID: <m{number}@example.org>"
                f"\nSubject: {number}\n\nbody {number}\n\n").encode()

    run("init")
    run("series", "add", SEALED)
    (tmp_path / "one.mbox").write_bytes(message(1))
    first = run("add", str(tmp_path / "one.mbox"), "-s", SEALED)[0].split()
    assert len(first) == 1
    (tmp_path / "two.mbox").write_bytes(message(1) + message(2))
    out, err = run("add", str(tmp_path / "two.mbox"), "-s", SEALED, "--embargo-until", "2100-01-01", code=5)
    names = out.split()
    assert len(names) == 2 and names[0] == first[0]
    said = " ".join(err.split())
    assert f"warning: {first[0]}: no embargo was set" in said
    assert ("two.mbox: 1 of its 2 messages were deposited before and are not embargoed until 2100-01-01"
            f" ({first[0]}: each said above)") in said
    with Archive.open(location) as archive:
        assert archive.embargo_in_force(first[0]) is None  # as said: the first message is not sealed
        assert archive.embargo_in_force(names[1]) == "2100-01-01T00:00:00.000000Z"  # the one minted now is
    # every message embargoed until then already: no refusal, exit 0
    run("embargo", first[0], "--until", "2100-01-01")
    out, err = run("add", str(tmp_path / "two.mbox"), "-s", SEALED, "--embargo-until", "2100-01-01")
    assert out.split() == names
    assert "exit" not in err and "not embargoed" not in err


@given(
    st.datetimes(datetime.datetime(1970, 1, 2), datetime.datetime(2999, 12, 30)),
    st.integers(-14 * 60, 14 * 60),
)
def test_parse_until_reads_any_iso_time_with_a_zone_as_its_gmt_instant(moment: datetime.datetime, minutes: int) -> None:
    zone = datetime.timezone(datetime.timedelta(minutes=minutes))
    aware = moment.replace(tzinfo=zone)
    expected = aware.astimezone(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    assert parse_until(aware.isoformat()) == expected
    assert parse_until(moment.date().isoformat()) == f"{moment.date().isoformat()}T00:00:00.000000Z"
    with pytest.raises(ParseError):
        parse_until(moment.isoformat())  # no zone: refused, never guessed


def test_the_days_listing_leaves_out_an_embargoed_document_and_its_title(archive: Archive, clock: Clock) -> None:
    public = archive.add(S, b"public\n", format="text")
    embargoed = archive.add(S, b"embargoed\n", format="text", embargo_until="2027-01-01")
    for name, title in ((public, "An open report"), (embargoed, "A sealed judgment")):
        archive.annotate(str(name).rsplit(".", 2)[0], "title", title)
    day = clock.now.date()
    with reading_as(Reader()):
        page = archive.day_documents(S, day)
        # issue 22: the embargoed document is not listed at all (its only version is embargoed)
        assert [str(d.pdi) for d in page.documents] == [str(public).rsplit(".", 2)[0]]
        assert list(page.titles.values()) == ["An open report"]
        assert [c.documents for c in archive.day_counts(S)] == [1]
    with reading_as(_token_reader(archive, "clerk", [S])):
        assert sorted(archive.day_documents(S, day).titles.values()) == ["A sealed judgment", "An open report"]
    clock.now = datetime.datetime(2027, 1, 1, tzinfo=datetime.UTC)
    with reading_as(Reader()):
        assert sorted(archive.day_documents(S, day).titles.values()) == ["A sealed judgment", "An open report"]
