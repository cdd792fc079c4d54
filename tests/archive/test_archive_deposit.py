"""Minting, depositing, versions, resolving, listing, assertions: each against both stores."""

from __future__ import annotations

import datetime
import hashlib

import pytest
from archive_helpers import GIF, PNG, Clock, snapshot

from pdi.archive import Archive, Content, Generic, GenericVersion, Resolved
from pdi.errors import (
    ImmutabilityError,
    NotFoundError,
    ParseError,
    PDIError,
    UnsupportedError,
)
from pdi.identifier import PDI

S = "oma.eop.gov.us"


# --- series ---------------------------------------------------------------------------


def test_series_register_and_delegate(archive: Archive) -> None:
    archive.add_series("press.oma.eop.gov.us")
    archive.add_series("Wire.OMA.eop.gov.us", parent="oma.eop.gov.us")
    by_name = {s.name: s for s in archive.series()}
    assert by_name["press.oma.eop.gov.us"].parent == "oma.eop.gov.us"
    assert by_name["wire.oma.eop.gov.us"].parent == "oma.eop.gov.us"
    assert by_name["oma.eop.gov.us"].parent is None


@pytest.mark.parametrize(
    ("name", "rule"),
    [
        ("oma.eop.gov", "iso-country"),  # 'gov' is no ISO 3166 code (PDI-GRAMMAR §2.3)
        ("oma.eop.gov.xx", "iso-country"),
        ("us", "document-series"),
        ("oma..us", "component"),
        ("oma_x.us", "component"),
    ],
)
def test_series_refused(archive: Archive, name: str, rule: str) -> None:
    with pytest.raises(ParseError) as caught:
        archive.add_series(name)
    assert caught.value.rule == rule


def test_series_twice_and_bad_parent(archive: Archive) -> None:
    with pytest.raises(ImmutabilityError):
        archive.add_series(S)
    with pytest.raises(NotFoundError):
        archive.add_series("a.b.fr", parent="b.fr")
    with pytest.raises(ParseError):
        archive.add_series("a.b.fr", parent=S)


# --- minting ------------------------------------------------------------------------------


def test_daily_serials_start_at_one_per_series_per_day(archive: Archive, clock: Clock) -> None:
    archive.add_series("whitehouse.gov.us")
    names = [str(archive.add(S, GIF + b"%d" % i, format="gif")) for i in range(3)]
    assert names == [
        "urn:pdi://oma.eop.gov.us/2026/11/22/1.gif.1",
        "urn:pdi://oma.eop.gov.us/2026/11/22/2.gif.1",
        "urn:pdi://oma.eop.gov.us/2026/11/22/3.gif.1",
    ]
    assert str(archive.add("whitehouse.gov.us", GIF, format="gif")) == (
        "urn:pdi://whitehouse.gov.us/2026/11/22/1.gif.1"
    )
    clock.now = datetime.datetime(2026, 11, 23, 0, 0, 1, tzinfo=datetime.UTC)
    assert str(archive.add(S, GIF + b"next day", format="gif")) == (
        "urn:pdi://oma.eop.gov.us/2026/11/23/1.gif.1"
    )


def test_minting_date_is_the_gmt_day(archive: Archive, clock: Clock) -> None:
    # 20:30 on 22 November in New York (UTC-5) is 01:30 GMT on the 23rd.
    new_york = datetime.timezone(datetime.timedelta(hours=-5))
    clock.now = datetime.datetime(2026, 11, 22, 20, 30, tzinfo=new_york)
    assert str(archive.add(S, PNG, format="png")).startswith(
        "urn:pdi://oma.eop.gov.us/2026/11/23/1."
    )


def test_a_deposit_reads_the_clock_once(location: str) -> None:
    # The minting day and the deposit's time are one instant: a deposit made as
    # a GMT day ends is named and stamped on the same day.
    ticks = iter(
        datetime.datetime(2026, 11, 22, 23, 59, 59, 999999 - i, tzinfo=datetime.UTC)
        if i < 2
        else datetime.datetime(2026, 11, 23, 0, 0, 0, i, tzinfo=datetime.UTC)
        for i in range(100)
    )
    with Archive.init(location, clock=lambda: next(ticks)) as archive:
        archive.add_series(S)  # one tick: the next one is the last of the 22nd
        pdi = archive.add(S, b"GIF89a", format="gif")
        assert str(pdi) == "urn:pdi://oma.eop.gov.us/2026/11/22/1.gif.1"
        assert archive.get(pdi).record.created_at == "2026-11-22T23:59:59.999998Z"


def test_foreign_id_is_escaped_and_round_trips(archive: Archive) -> None:
    pdi = archive.add(S, b"<html></html>", format="html", foreign_id="http://www.whitehouse.gov/")
    # PDI-GRAMMAR §1: reserved characters (here '.' and '/') inside the id are %-escaped.
    assert str(pdi) == (
        "urn:pdi://oma.eop.gov.us/2026/11/22/http:%2F%2Fwww%2Ewhitehouse%2Egov%2F.html.1"
    )
    assert pdi.unique_id == "http://www.whitehouse.gov/"
    got = archive.get("pdi://oma.eop.gov.us/2026/11/22/http%3a%2f%2fwww%2ewhitehouse%2egov%2f.html.1")
    assert got.data == b"<html></html>"
    with pytest.raises(ImmutabilityError):
        archive.add(S, b"again", format="html", foreign_id="http://www.whitehouse.gov/")


@pytest.mark.parametrize("mnemonic", ["007", "0"])
def test_digit_ids_that_are_not_serials_are_foreign_ids(archive: Archive, mnemonic: str) -> None:
    # Daily serials start at 1 and have no leading zero (PDI-GRAMMAR §2.5), so
    # "007" and "0" can never be one: they are ordinary foreign ids.
    pdi = archive.add(S, b"GIF89a", format="gif", foreign_id=mnemonic)
    assert str(pdi) == f"urn:pdi://oma.eop.gov.us/2026/11/22/{mnemonic}.gif.1"
    assert pdi.serial is None and pdi.unique_id == mnemonic
    assert archive.get(f"urn:pdi://oma.eop.gov.us/2026/11/22/{mnemonic}.gif.1").data == b"GIF89a"
    assert str(archive.add(S, b"GIF87a", format="gif")) == (
        "urn:pdi://oma.eop.gov.us/2026/11/22/1.gif.1"
    )


def test_an_escaped_digit_id_is_not_the_serial(archive: Archive) -> None:
    # "%31" decodes to "1" but is not a daily serial (an all-digit id whose first
    # digit is escaped is never read back as one): it names the foreign id "1",
    # which the archive refuses to mint, so it names nothing here, not serial 1.
    archive.add(S, b"serial one", format="text")
    escaped = "urn:pdi://oma.eop.gov.us/2026/11/22/%31.text.1"
    for call in (archive.get, archive.history, archive.versions, archive.formats):
        with pytest.raises(NotFoundError):
            call(escaped)
    with pytest.raises(NotFoundError):
        archive.annotate(escaped, "title", "x")
    assert archive.ls("urn:pdi://oma.eop.gov.us/2026/11/22/%31") == []


@pytest.mark.parametrize("bad", ["", "42", "*"])
def test_foreign_id_refused(archive: Archive, bad: str) -> None:
    with pytest.raises(ParseError):
        archive.add(S, GIF, format="gif", foreign_id=bad)


def test_unknown_series_refused(archive: Archive) -> None:
    before = snapshot(archive)
    with pytest.raises(NotFoundError):
        archive.add("nobody.fr", GIF, format="gif")
    assert snapshot(archive) == before


def test_unknown_format_refused(archive: Archive) -> None:
    with pytest.raises(UnsupportedError):
        archive.add(S, b"x", format="no-such-format")


# --- text -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("original", "canonical"),
    [
        (b"one\ntwo\n", b"one\r\ntwo\r\n"),
        (b"one\rtwo\r", b"one\r\ntwo\r\n"),
        (b"one\r\ntwo", b"one\r\ntwo"),
        (b"one\ntwo\r\n", b"one\r\ntwo\r\n"),
        (b"one\r\ntwo\rthree\n", b"one\r\ntwo\r\nthree\r\n"),
        (b"no line end", b"no line end"),
    ],
)
def test_text_is_stored_exactly_and_fragments_count_its_crlf_canonical_form(
    archive: Archive, original: bytes, canonical: bytes
) -> None:
    pdi = archive.add(S, original, format="text")
    got = archive.get(pdi)
    # the deposited octets come back, and their SHA-256 is the fixity of record
    assert got.data == original
    assert got.sha256 == hashlib.sha256(original).hexdigest()
    assert (got.media_type, got.charset, got.record.stored) == ("text/plain", "utf-8", "exact")
    # char positions count the CRLF-canonical form (draft lines 551-559), derived from them
    assert archive.get(f"{pdi}#char=0,{len(canonical) + 5}").data == canonical
    assert archive.get(f"{pdi}#char=3,5").data == canonical[3:5]
    # byte counts the deposited octets
    assert archive.get(f"{pdi}#byte=3,5").data == original[3:5]


def test_text_charsets(archive: Archive) -> None:
    latin = "café\n".encode("latin-1")
    pdi = archive.add(S, latin, format="text", charset="ISO-8859-1")
    got = archive.get(pdi)
    assert got.data == latin
    assert archive.get(f"{pdi}#char=0,6").data == "café\r\n".encode("latin-1")
    assert got.charset == "iso-8859-1"
    # a label Python knows is stored under the IANA name of the same charset, as HTTP needs it
    for label, name in (("latin-1", "iso-8859-1"), ("Latin1", "iso-8859-1"), ("cp1252", "windows-1252"), ("sjis", "shift_jis")):
        assert archive.get(archive.add(S, b"plain\n", format="text", charset=label)).charset == name
    # UTF-16 big-endian with a BOM: detected and kept exactly; positions count after the BOM.
    utf16 = "\ufeffa\nb".encode("utf-16-be")
    pdi = archive.add(S, utf16, format="text")
    got = archive.get(pdi)
    assert got.data == utf16
    assert got.charset == "utf-16"
    assert archive.get(f"{pdi}#char=0,10").data == "a\r\nb".encode("utf-16-be")
    # The format token utf-8 implies the charset (draft line 586).
    got = archive.get(archive.add(S, "ü\n".encode(), format="utf-8"))
    assert (got.data, got.charset, got.media_type) == ("ü\n".encode(), "utf-8", "text/plain")


def test_wrong_or_unknown_charset_refused(archive: Archive) -> None:
    before = snapshot(archive)
    with pytest.raises(ParseError) as caught:
        archive.add(S, b"caf\xe9\n", format="text")  # latin-1, not UTF-8, undeclared
    assert caught.value.offset == 3
    with pytest.raises(ParseError):
        archive.add(S, b"caf\xe9\n", format="text", charset="utf-8")
    with pytest.raises(UnsupportedError):
        archive.add(S, b"x", format="text", charset="no-such-charset")
    with pytest.raises(UnsupportedError):
        archive.add(S, b"x", format="utf-8", charset="latin-1")
    with pytest.raises(UnsupportedError):
        archive.add(S, b"GIF89a", format="gif", charset="utf-8")
    assert snapshot(archive) == before


# --- versions and immutability ----------------------------------------------------------------


def test_versions_cover_every_format(archive: Archive) -> None:
    v1 = archive.deposit(S, [Content(b"<p>a</p>", "html"), Content(b"a", "text")])
    assert [str(p) for p in v1] == [
        "urn:pdi://oma.eop.gov.us/2026/11/22/1.html.1",
        "urn:pdi://oma.eop.gov.us/2026/11/22/1.text.1",
    ]
    v2 = archive.add_version(v1[0], [Content(b"<p>b</p>", "html"), Content(b"b", "text")])
    assert [str(p) for p in v2] == [
        "urn:pdi://oma.eop.gov.us/2026/11/22/1.html.2",
        "urn:pdi://oma.eop.gov.us/2026/11/22/1.text.2",
    ]
    assert archive.versions("urn:pdi://oma.eop.gov.us/2026/11/22/1") == [1, 2]
    assert archive.get("urn:pdi://oma.eop.gov.us/2026/11/22/1.html.1").data == b"<p>a</p>"
    # An omitted version is version 1 (draft); the latest version only on request.
    assert archive.get("urn:pdi://oma.eop.gov.us/2026/11/22/1.text").data == b"a"
    assert archive.get("urn:pdi://oma.eop.gov.us/2026/11/22/1.text", latest=True).data == b"b"
    with pytest.raises(NotFoundError):
        archive.get("urn:pdi://oma.eop.gov.us/2026/11/22/1.text.3")
    with pytest.raises(NotFoundError):
        archive.get("urn:pdi://oma.eop.gov.us/2026/11/22/1.gif.1")


def test_versions_and_formats_are_of_whole_documents(archive: Archive) -> None:
    # A fragment or citation names a passage, not a document: depositing a
    # version or a format "of" one is bad input, refused with nothing changed.
    pdi = archive.add(S, b"hello world\n", format="text")
    before = snapshot(archive)
    for name in (
        f"{pdi}#char=0,5",
        f"{pdi}@3=urn:pdi://oma.eop.gov.us/2026/11/22/1.text.1#char=0,5",
        "urn:pdi://oma.eop.gov.us/2026/11/22/*",
    ):
        with pytest.raises(UnsupportedError):
            archive.add_version(name, [Content(b"new\n", "text")])
        with pytest.raises(UnsupportedError):
            archive.add_format(name, b"<p>hello world</p>", format="html")
    assert snapshot(archive) == before


def test_add_format_to_existing_version(archive: Archive) -> None:
    (html,) = archive.deposit(S, [Content(b"<p>a</p>", "html")])
    text = archive.add_format(html, b"a", format="text")
    assert str(text) == "urn:pdi://oma.eop.gov.us/2026/11/22/1.text.1"
    assert archive.get(text).data == b"a"
    # The same bytes again change nothing and are no error.
    assert archive.add_format(html, b"a", format="text") == text


def test_a_format_is_added_to_a_version_named_never_to_one_left_unsaid(archive: Archive) -> None:
    # found by a probe (2026-11-30): a generic name took the format into version 1, not the newest, unsaid
    first = archive.add(S, b"first\n", format="text")
    generic = str(first).rsplit(".", 2)[0]
    archive.add_version(generic, [Content(b"second\n", "text")])
    before = snapshot(archive)
    with pytest.raises(ParseError) as refused:
        archive.add_format(generic, b"<p>second</p>", format="html")
    assert str(refused.value).startswith(f"{generic} names no version") and "has versions 1, 2" in str(refused.value)
    assert snapshot(archive) == before
    assert str(archive.add_format(generic + ".text.2", b"<p>second</p>", format="html")) == generic + ".html.2"


def test_overwrite_refused_and_nothing_changes(archive: Archive) -> None:
    pdi = archive.add(S, b"original", format="text")
    before = snapshot(archive)
    with pytest.raises(ImmutabilityError):
        archive.add_format(pdi, b"changed", format="text")
    with pytest.raises(ImmutabilityError):
        archive.deposit(S, [Content(b"a", "text"), Content(b"b", "text")])
    assert snapshot(archive) == before
    assert archive.get(pdi).data == b"original"


def test_generic_pdi_lists_every_version_with_its_formats_and_deposit_time(archive: Archive, clock: Clock) -> None:
    archive.deposit(S, [Content(b"<p>a</p>", "html"), Content(b"a", "text")])  # 2026-11-22 14:30 UTC
    generic = "urn:pdi://oma.eop.gov.us/2026/11/22/1"
    clock.now = datetime.datetime(2026, 11, 23, 9, 5, 7, 250_000, tzinfo=datetime.UTC)
    archive.add_version(generic, [Content(b"b", "text")])
    clock.now = datetime.datetime(2026, 11, 24, 0, 0, tzinfo=datetime.UTC)
    archive.add_format(f"{generic}.text.1", b"a", format="octet-stream")  # a format added to version 1 later
    result = archive.resolve("pdi://oma.eop.gov.us/2026/11/22/1")
    assert isinstance(result, Generic)
    assert str(result.pdi) == generic
    assert result.versions == (
        GenericVersion(1, "2026-11-22T14:30:00.000000Z", tuple(
            PDI.parse(f"{generic}.{token}.1") for token in ("html", "octet-stream", "text")
        )),
        GenericVersion(2, "2026-11-23T09:05:07.250000Z", (PDI.parse(f"{generic}.text.2"),)),
    )
    assert [str(p) for p in result.names] == [
        f"{generic}.html.1", f"{generic}.octet-stream.1", f"{generic}.text.1", f"{generic}.text.2"
    ]
    newest = archive.resolve(generic, latest=True)
    assert isinstance(newest, Generic) and newest.versions == result.versions[1:]
    assert archive.locate(generic) == result  # from the catalog alone, the same answer
    with pytest.raises(UnsupportedError, match="is generic"):
        archive.get("pdi://oma.eop.gov.us/2026/11/22/1")
    # a name with a format and no version is version 1 (the draft), whatever came later
    assert archive.get(f"{generic}.text").data == b"a"
    assert archive.get(f"{generic}.text", latest=True).data == b"b"
    with pytest.raises(NotFoundError):
        archive.resolve("urn:pdi://oma.eop.gov.us/2026/11/22/2")


def test_resolve_errors(archive: Archive) -> None:
    with pytest.raises(ParseError):
        archive.get("pdi://oma.eop.gov/1997/09/01.html.1")  # no unique id (PDI-GRAMMAR §2.8)
    with pytest.raises(NotFoundError):
        archive.get("urn:pdi://oma.eop.gov.us/2026/11/22/9.text.1")
    with pytest.raises(UnsupportedError):
        archive.get("urn:pdi://oma.eop.gov.us/2026/*/*/1.text.1")
    resolved = archive.resolve(archive.add(S, PNG, format="png"))
    assert isinstance(resolved, Resolved)
    assert resolved.media_type == "image/png"
    assert resolved.charset is None


# --- listing ------------------------------------------------------------------------------


def _fill(archive: Archive, clock: Clock) -> None:
    for day in (21, 22):
        clock.now = datetime.datetime(2026, 11, day, 12, tzinfo=datetime.UTC)
        for i in range(3):
            archive.add(S, GIF + b"%d-%d" % (day, i), format="gif")
    archive.add(S, GIF + b"foreign", format="gif", foreign_id="a-mnemonic")
    clock.now = datetime.datetime(2026, 12, 1, 12, tzinfo=datetime.UTC)
    archive.add(S, GIF + b"december", format="gif")


def test_list_in_date_then_serial_order(archive: Archive, clock: Clock) -> None:
    _fill(archive, clock)
    assert [str(p).removeprefix("urn:pdi://oma.eop.gov.us/") for p in archive.ls(series=S)] == [
        "2026/11/21/1.gif.1",
        "2026/11/21/2.gif.1",
        "2026/11/21/3.gif.1",
        "2026/11/22/1.gif.1",
        "2026/11/22/2.gif.1",
        "2026/11/22/3.gif.1",
        "2026/11/22/a-mnemonic.gif.1",
        "2026/12/01/1.gif.1",
    ]


def test_list_by_date_pattern_and_pages(archive: Archive, clock: Clock) -> None:
    _fill(archive, clock)

    def short(names: list[object]) -> list[str]:
        return [str(p).removeprefix("urn:pdi://oma.eop.gov.us/") for p in names]

    assert short(archive.ls("urn:pdi://oma.eop.gov.us/2026/11/*/*")) == [
        "2026/11/21/1.gif.1", "2026/11/21/2.gif.1", "2026/11/21/3.gif.1",
        "2026/11/22/1.gif.1", "2026/11/22/2.gif.1", "2026/11/22/3.gif.1",
        "2026/11/22/a-mnemonic.gif.1",
    ]
    assert short(archive.ls("urn:pdi://oma.eop.gov.us/2026/11/22/2.*.*")) == ["2026/11/22/2.gif.1"]
    assert short(archive.ls("urn:pdi://oma.eop.gov.us/*/*/*/1.gif.1")) == [
        "2026/11/21/1.gif.1", "2026/11/22/1.gif.1", "2026/12/01/1.gif.1",
    ]
    assert short(archive.ls(series=S, year=2026, month=12)) == ["2026/12/01/1.gif.1"]
    assert short(archive.ls(series=S, day=21, limit=2)) == ["2026/11/21/1.gif.1", "2026/11/21/2.gif.1"]
    assert short(archive.ls(series=S, limit=2, offset=5)) == [
        "2026/11/22/3.gif.1", "2026/11/22/a-mnemonic.gif.1",
    ]
    assert short(archive.ls(series=S, offset=7)) == ["2026/12/01/1.gif.1"]
    # a series with no names lists nothing; a series nobody registered is an error, not an empty list
    for pattern, series in (("urn:pdi://other.fr/*/*/*/*", None), (None, "Other.FR")):
        with pytest.raises(NotFoundError, match=r"series other\.fr is not registered"):
            archive.ls(pattern, series=series)
    archive.add_series("other.fr")
    assert archive.ls("urn:pdi://other.fr/*/*/*/*") == []
    assert archive.ls(series="other.fr") == []


# --- assertions ------------------------------------------------------------------------------


def test_assertions_are_append_only_with_history(archive: Archive, clock: Clock) -> None:
    pdi = archive.add(S, b"hello world\n", format="text")
    archive.annotate(pdi, "title", "Draft", who="ann")
    clock.now = datetime.datetime(2026, 11, 22, 15, tzinfo=datetime.UTC)
    archive.annotate(pdi, "title", "Final", who="bob")
    archive.annotate(pdi, "dcterms:creator", "White House", who="bob")
    fragment = f"{pdi}#char=0,5"
    archive.annotate(fragment, "x-note", "the greeting", who="ann")
    assert archive.meta(pdi) == {"title": "Final", "dcterms:creator": "White House"}
    history = archive.history(pdi)
    assert [(h.key, h.value, h.who, h.at) for h in history] == [
        ("title", "Draft", "ann", "2026-11-22T14:30:00.000000Z"),
        ("title", "Final", "bob", "2026-11-22T15:00:00.000000Z"),
        ("dcterms:creator", "White House", "bob", "2026-11-22T15:00:00.000000Z"),
    ]
    assert archive.meta(fragment) == {"x-note": "the greeting"}
    with pytest.raises(NotFoundError):
        archive.annotate("urn:pdi://oma.eop.gov.us/2026/11/22/7.text.1", "title", "x")
    with pytest.raises(ParseError):
        archive.annotate(pdi, "bad key", "x")


def test_statements_about_what_is_not_archived_are_an_error(archive: Archive) -> None:
    # Reading statements about a name the archive does not hold is bad input, as
    # writing them is: one clear error, not an empty answer.
    pdi = archive.add(S, b"hello world\n", format="text")
    for missing in (
        "urn:pdi://oma.eop.gov.us/2026/11/22/7.text.1",
        f"{pdi.without_fragment()}".replace(".text.1", ".text.2"),
        f"{pdi}".replace(".text.", ".html."),
    ):
        with pytest.raises(NotFoundError):
            archive.history(missing)
        with pytest.raises(NotFoundError):
            archive.meta(missing)
    with pytest.raises(UnsupportedError):
        archive.history("urn:pdi://oma.eop.gov.us/2026/*/*/*")
    assert archive.history(pdi) == [] and archive.meta(f"{pdi}#char=0,5") == {}


# --- opening ------------------------------------------------------------------------------


def test_open_missing_archive(tmp_path: object) -> None:
    with pytest.raises(NotFoundError):
        Archive.open(f"{tmp_path}/nothing-here")


def test_init_twice_keeps_everything(location: str, clock: Clock) -> None:
    with Archive.init(location, clock=clock) as first:
        first.add_series(S)
        pdi = first.add(S, GIF + b"kept", format="gif")
    with Archive.init(location, clock=clock) as second:
        assert second.get(pdi).data == GIF + b"kept"


def test_errors_are_pdi_errors(archive: Archive) -> None:
    for call in (
        lambda: archive.get(""),
        lambda: archive.get("urn:pdi:"),
        lambda: archive.ls("garbage"),
        lambda: archive.add(S, b"", format=""),
        lambda: archive.annotate("x", "title", "y"),
    ):
        with pytest.raises(PDIError):
            call()


def test_a_new_deposits_names_are_the_names_its_records_have(archive: Archive) -> None:
    """The names a fresh mint answers with (built, not read back) are what the catalog's records name."""
    from pdi.archive.naming import record_name

    deposits = [
        archive.deposit(S, [Content(b"plain text\n", "text"), Content(b"<p>page</p>", "html")]),
        archive.deposit(S, [Content(b"with an id\n", "text")], foreign_id="http://www.example.org/a b?c=d#e"),
        archive.deposit(S, [Content(b"one more\n", "text")]),
    ]
    recorded = {str(record_name(r)) for r in archive.store.iter_representations()}
    for deposit in deposits:
        assert not deposit.unchanged
        for name in deposit:
            assert str(name) in recorded
            assert archive.get(name).data  # and it resolves
    assert len(recorded) == sum(len(d) for d in deposits)


def test_a_batch_that_may_answer_unchanged_answers_each_item_as_deposit_answers_it(archive: Archive) -> None:
    """``deposit_batch(..., unchanged=True)`` (what ``pdi add FILE.mbox`` asks): an item whose foreign id was minted
    today is answered by :meth:`Archive.deposit`'s own rule, in the batch's transaction: its latest version holding
    exactly its formats, bytes and charset is the answer, ``unchanged``; anything else under that id refuses the
    whole batch, naming the item, and nothing is minted. Without it, or with ``force``, a minted id refuses."""
    kept = archive.deposit(S, [Content(b"kept\n", "text")], foreign_id="kept")
    before = snapshot(archive)
    alone = archive.deposit(S, [Content(b"kept\n", "text")], foreign_id="kept")
    assert alone.unchanged and alone.names == kept.names
    assert archive.deposit_batch(S, [([Content(b"kept\n", "text")], "kept")], unchanged=True) == [alone]
    assert snapshot(archive) == before  # every item held: nothing written
    for other in ([Content(b"other\n", "text")], [Content(b"kept\n", "text", "iso-8859-1")],
                  [Content(b"kept\n", "text"), Content(b"<p>kept</p>", "html")]):
        with pytest.raises(ImmutabilityError, match="already minted"):  # as the deposit alone is refused
            archive.deposit(S, other, foreign_id="kept")
        with pytest.raises(ImmutabilityError, match="already minted") as refused:
            archive.deposit_batch(S, [([Content(b"new\n", "text")], "new"), (other, "kept")], unchanged=True)
        assert refused.value.item == 1
        assert snapshot(archive) == before
    for asked in ({}, {"unchanged": True, "force": True}):
        with pytest.raises(ImmutabilityError, match="already minted"):
            archive.deposit_batch(S, [([Content(b"kept\n", "text")], "kept")], **asked)  # type: ignore[arg-type]
    both = archive.deposit_batch(S, [([Content(b"new\n", "text")], "new"), ([Content(b"kept\n", "text")], "kept")],
                                 unchanged=True)
    assert both[1] == alone and not both[0].unchanged
    assert archive.get(both[0][0]).data == b"new\n"  # the octets kept as given (PDI-GRAMMAR §3, what is stored)
    assert archive.versions(kept[0]) == [1]
