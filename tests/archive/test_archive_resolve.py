"""Resolving fragments, fixity audits, schema migrations, BagIt moves: each against both stores."""

from __future__ import annotations

import hashlib
import os
import time
from pathlib import Path

import pytest
from archive_helpers import GIF, PNG, Clock, snapshot

from pdi.archive import Archive, Content
from pdi.archive.blobs.inline import INLINE_LIMIT
from pdi.archive.catalog.opening import is_postgres_url
from pdi.archive.postgres import PostgresStore
from pdi.archive.sqlite import SQLiteStore
from pdi.archive.store import SCHEMA_VERSION
from pdi.errors import (
    ImmutabilityError,
    IntegrityError,
    LimitError,
    NotFoundError,
    OlderSchemaError,
    StoreError,
    UnsupportedError,
)
from support.pgcluster import TemporaryCluster
from support.stored_blobs import blob_file, damage

S = "oma.eop.gov.us"
DATA = Path(__file__).resolve().parents[1] / "data"
TEXT = b"Hello, world.\nSecond line here.\nThird.\n"
# Counted CRLF-canonical: "Hello, world.\r\n" (15 characters: CR and LF count one each,
# draft lines 551-588), "Second line here.\r\n" (19), "Third.\r\n" (8): 42 in all.


# --- fragments ----------------------------------------------------------------------------


def test_char_fragment_counts_crlf_canonical_text(archive: Archive) -> None:
    pdi = archive.add(S, TEXT, format="text")
    assert archive.get(f"{pdi}#char=7,12").data == b"world"
    assert archive.get(f"{pdi}#7,12").data == b"world"  # char is text's default scheme
    assert archive.get(f"{pdi}#char=15,21").data == b"Second"
    assert archive.get(f"{pdi}#char=12,16").data == b".\r\nS"
    whole = archive.get(f"{pdi}#char=0,42")
    assert whole.data == TEXT.replace(b"\n", b"\r\n")
    assert whole.fragment is not None and not whole.fragment.clamped


def test_char_fragment_past_the_end_is_clamped(archive: Archive) -> None:
    pdi = archive.add(S, TEXT, format="text")
    result = archive.get(f"{pdi}#char=40,100")
    assert result.data == b"\r\n"
    assert result.fragment is not None and result.fragment.clamped


def test_line_fragment(archive: Archive) -> None:
    pdi = archive.add(S, TEXT, format="text")
    # RFC 5147 line positions: line=1,2 runs from the start of the second line
    # to the start of the third, its line ending included (PDI-GRAMMAR §3).
    assert archive.get(f"{pdi}#line=1,2").data == b"Second line here.\r\n"
    assert archive.get(f"{pdi}#line=0,1").data == b"Hello, world.\r\n"
    assert archive.get(f"{pdi}#line=2,3").data == b"Third.\r\n"


def test_fragment_in_a_multibyte_charset(archive: Archive) -> None:
    pdi = archive.add(S, "naïve café\n".encode(), format="text")
    # Characters, not bytes: n a ï v e ␠ c a f é → [6, 10) is "café".
    assert archive.get(f"{pdi}#char=6,10").data == "café".encode()
    latin = archive.add(S, "naïve café\n".encode("latin-1"), format="text", charset="latin-1")
    assert archive.get(f"{latin}#char=6,10").data == "café".encode("latin-1")


def test_byte_fragment_of_any_format_is_an_octet_range_of_the_stored_bytes(archive: Archive) -> None:
    png = PNG + bytes(range(32))
    pdi = archive.add(S, png, format="png")
    assert archive.get(f"{pdi}#byte=1,4").data == b"PNG"
    text = archive.add(S, TEXT, format="text")
    # Octets as deposited: "Hello, world.\n" is octets 0-13, its "." octet 12, so
    # 12-16 is ".", LF and the "Se" of the second line (char counts CRLF-canonical).
    assert archive.get(f"{text}#byte=12,16").data == b".\nSe"
    assert archive.get(f"{text}#char=12,16").data == b".\r\nS"
    past = archive.get(f"{pdi}#byte=40,99")
    assert past.data == png[40:] and past.fragment is not None and past.fragment.clamped


def test_image_and_audio_fragments_resolve_through_the_archive(archive: Archive) -> None:
    import io
    import wave

    from PIL import Image

    picture = Image.new("RGB", (40, 40))
    picture.putdata([(x, y, 0) for y in range(40) for x in range(40)])
    out = io.BytesIO()
    picture.save(out, format="PNG")
    png = archive.add(S, out.getvalue(), format="png")
    # the image default scheme is rect: the whole stored image, and the region
    whole = archive.get(f"{png}#(5,10),(25,30)")
    assert whole.data == out.getvalue() and whole.media_type == "image/png"
    assert whole.fragment is not None and whole.fragment.region is not None
    assert (whole.fragment.region.x1, whole.fragment.region.y2) == (5, 30)
    cut = archive.get(f"{png}#crop=(5,10),(25,30)")
    assert str(cut.pdi).endswith(".png.1#crop=(5,10),(25,30)")
    assert Image.open(io.BytesIO(cut.data)).getpixel((0, 0)) == (5, 10, 0)

    sound = io.BytesIO()
    with wave.open(sound, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(1)
        w.setframerate(100)
        w.writeframes(bytes(range(250)))
    wav = archive.add(S, sound.getvalue(), format="wav")
    second = archive.get(f"{wav}#1,2")  # sec, the audio default
    assert second.media_type == "audio/wav"
    with wave.open(io.BytesIO(second.data)) as w:
        assert w.readframes(w.getnframes()) == bytes(range(100, 200))
    tail = archive.get(f"{wav}#msec=2400,9000")
    assert tail.fragment is not None and tail.fragment.clamped


def test_element_fragments_resolve_through_the_archive(archive: Archive) -> None:
    page = archive.add(S, b"<html><body>\n<p id=a>one<p>two\n</body></html>\n", format="html")
    # stored CRLF-canonical (text/html is text): <html>=0, <body>=1, the two p are 2 and 3
    assert archive.get(f"{page}#elt=2,3").data == b"<p id=a>one<p>two\r\n"
    assert archive.get(f"{page}#name=a,a").data == b"<p id=a>one"
    feed = archive.add(S, b"<feed><entry/><entry>x</entry></feed>", format="xml")
    assert archive.get(f"{feed}#elt=2,2").data == b"<entry>x</entry>"


def test_a_citation_resolves_both_ends_and_checks_the_quotation(archive: Archive) -> None:
    source = archive.add(S, TEXT, format="text")  # "Hello, world.\r\nSecond line here.\r\n…"
    # the citing page quotes "Second line" (chars 15-26 of the source) at its char 9:
    # "<p>Quote Second line</p>": "<p>Quote " is 9 characters
    page = archive.add(S, b"<p>Quote Second line</p>\n", format="html")
    ok = archive.cite(f"{page}@9={source}#char=15,26")
    assert ok.check.status == "ok" and ok.check.quote == "Second line"
    assert ok.citing.pdi == page and ok.cited is not None and ok.cited.data == b"Second line"
    moved = archive.cite(f"{page}@8={source}#char=15,26")
    assert moved.check.status == "mismatch" and moved.check.found == " Second lin"
    # across a line ending: the quotation "world.\r\nSecond" is 14 characters, CR and LF one each
    letter = archive.add(S, b"He wrote: world.\nSecond.", format="text")
    assert archive.cite(f"{letter}@10={source}#char=7,21").check.status == "ok"
    past = archive.cite(f"{letter}@20={source}#char=7,21")
    assert past.check.status == "mismatch" and "ends 9 characters before" in past.check.detail
    elsewhere = archive.cite(f"{page}@9=urn:pdi://other.gov.us/2026/11/22/1.text.1#char=0,3")
    assert elsewhere.check.status == "unchecked" and elsewhere.cited is None
    # a name of a series minted here that is not here is a mistyped name, said so (exit 4), not left unchecked
    with pytest.raises(NotFoundError):
        archive.cite(f"{page}@9={str(source).replace('/1.text.1', '/99.text.1')}#char=0,3")
    picture = archive.add(S, b"GIF89a", format="gif")
    assert archive.cite(f"{picture}@(1,2)={source}#char=0,5").check.status == "unchecked"
    with pytest.raises(UnsupportedError, match="pdi cite"):
        archive.get(f"{page}@9={source}#char=15,26")


def test_a_quotation_that_begins_or_ends_inside_a_crlf_stands_where_it_is(archive: Archive) -> None:
    # CR and LF are one character each (PDI-GRAMMAR.md §3): "Hello, world." is chars 0-12, CR 13, LF 14
    source = archive.add(S, TEXT, format="text")
    assert archive.get(f"{source}#char=14,20").data == b"\nSecon"
    begins = archive.cite(f"{source}@14={source}#char=14,20")  # the document quoting itself, from its LF
    assert (begins.check.status, begins.check.quote, begins.check.found) == ("ok", "\nSecon", "\nSecon")
    ends = archive.cite(f"{source}@12={source}#char=12,14")  # ".", then the CR alone
    assert (ends.check.status, ends.check.quote) == ("ok", ".\r")
    assert archive.cite(f"{source}@13={source}#char=12,14").check.status == "mismatch"
    # a byte range is the stored octets as they are (LF here): made CRLF-canonical to be compared
    letter = archive.add(S, b"He wrote: Hello, world.\r\nSecond", format="text")
    assert archive.get(f"{source}#byte=0,20").data == b"Hello, world.\nSecond"
    assert archive.cite(f"{letter}@10={source}#byte=0,20").check.status == "ok"


def test_a_quotation_of_nothing_or_past_the_citing_end_does_not_stand(archive: Archive) -> None:
    source = archive.add(S, TEXT, format="text")
    letter = archive.add(S, b"He wrote: world.\nSecond.", format="text")  # 25 characters, CRLF-canonical
    # the cited passage lies wholly past the source's end: it quotes nothing, as pdi get says (exit 9)
    nothing = archive.cite(f"{letter}@10={source}#line=50,60")
    assert nothing.check.status == "mismatch" and "selects nothing" in nothing.check.detail
    # said once, of the cited name, as pdi get says it: not "selects nothing: … it selects nothing"
    assert nothing.check.detail == f"the cited {source}#line=50,60 lies wholly past the end: it selects nothing"
    # a position past the citing document's end: the quotation does not stand there
    beyond = archive.cite(f"{letter}@99={source}#char=7,21")
    assert beyond.check.status == "mismatch"
    assert "ends at char=25, before the quotation's position char=99" in beyond.check.detail, beyond.check.detail
    # an empty quotation quotes nothing: it stands nowhere, at the very end, inside or past the end alike
    for position in (25, 3, 99):
        empty = archive.cite(f"{letter}@{position}={source}#char=5,5")
        assert empty.check.status == "mismatch", position
        assert empty.check.detail == (f"the cited passage {source}#char=5,5 is empty: it quotes no text, so none can"
                                      " stand at the position")


def test_an_e_mail_or_a_pdf_cites_at_the_positions_its_own_char_counts(archive: Archive) -> None:
    """An e-mail's char= counts on its body's text (docs/email.md §2), a PDF's on its text layer
    (docs/pdf-text-layer.md): a citation's position in either counts as their #char= does, not in the stored
    octets (where an e-mail's header fields come first)."""
    import email
    import email.policy

    source = archive.add(S, b"The court ruled today that the appeal is dismissed.\n", format="text")
    message = (b"From: Clerk <clerk@court.example.org>\r\nTo: Records <records@court.example.org>\r\n"
               b"Subject: Ruling\r\nMessage-ID: <r1@court.example.org>\r\nDate: Thu, 26 Nov 2026 09:00:00 +0000\r\n"
               b"Content-Type: text/plain; charset=utf-8\r\n\r\n"
               b"Dear all,\r\nthe clerk writes: The court ruled today that the appeal is dismissed.\r\n")
    mail = archive.add(S, message, format="rfc822")
    # the body's text as the standard library reads it (get_body, get_content), CRLF-canonical
    body = email.message_from_bytes(message, policy=email.policy.default)
    text = body.get_body(("plain",)).get_content().replace("\r\n", "\n").replace("\n", "\r\n")  # type: ignore[union-attr]
    at = text.index("The court")
    assert archive.cite(f"{mail}@{at}={source}#char=0,25").check.status == "ok"
    raw = message.index(b"The court")  # the octets' offset, past the header fields: not where char= counts
    assert archive.cite(f"{mail}@{raw}={source}#char=0,25").check.status == "mismatch"
    # a PDF: its text layer's positions, as #char= of the PDF selects them
    pdf = archive.add(S, (DATA / "pdf" / "paragraph_and_link.pdf").read_bytes(), format="pdf")
    layer = archive.get(f"{pdf}#char=0,100000").data.decode("utf-8")
    words = layer.split()[2]
    quoted = archive.add(S, f"It says {words} there.\n".encode(), format="text")
    place = layer.index(words)
    assert archive.cite(f"{pdf}@{place}={quoted}#char=8,{8 + len(words)}").check.status == "ok"
    assert archive.cite(f"{pdf}@{place + 1}={quoted}#char=8,{8 + len(words)}").check.status == "mismatch"
    # a browser's text fragment finds its words in the same text, and names them as #char= counts there
    from urllib.parse import quote

    from pdi.interop.aliases import native_names

    assert str(native_names(archive, f"{pdf}#:~:text={quote(words)}").native) == (
        f"{pdf}#char={place},{place + len(words)}")
    phrase = "the appeal is dismissed"
    assert str(native_names(archive, f"{mail}#:~:text={quote(phrase)}").native) == (
        f"{mail}#char={text.index(phrase)},{text.index(phrase) + len(phrase)}")


def test_fragment_name_is_the_full_name(archive: Archive) -> None:
    pdi = archive.add(S, TEXT, format="text")
    result = archive.get("pdi://OMA.eop.gov.us/2026/11/22/1.TEXT.1#CHAR=7,12")
    assert str(result.pdi) == f"{pdi}#char=7,12"


# --- fixity ----------------------------------------------------------------------------------


def _damage(archive: Archive, sha: str, how: str) -> None:
    damage(archive, sha, how)  # wherever the octets are: a small blob's catalog row, a file, PostgreSQL's rows


def test_verify_clean_then_reports_altered_and_missing(archive: Archive) -> None:
    a = archive.add(S, PNG + b"first", format="png")
    b = archive.add(S, PNG + b"second", format="png")
    # an APNG is a PNG (libmagic calls both image/png): same bytes, one blob, two names
    archive.add_format(b, PNG + b"second", format="apng")
    report = archive.verify()
    assert report.ok
    assert (report.checked_blobs, report.checked_representations) == (2, 3)
    sha_a = hashlib.sha256(PNG + b"first").hexdigest()
    sha_b = hashlib.sha256(PNG + b"second").hexdigest()
    _damage(archive, sha_a, "alter")
    _damage(archive, sha_b, "delete")
    report = archive.verify()
    assert not report.ok
    problems = {(p.kind, p.sha256): p.names for p in report.problems}
    assert problems == {
        ("altered", sha_a): (str(a),),
        ("missing", sha_b): (str(b).replace(".png.", ".apng."), str(b)),
    }
    with pytest.raises(IntegrityError):
        archive.get(a)


def test_remove_unreferenced_takes_only_old_blobs_no_name_holds(tmp_path: Path, clock: Clock) -> None:
    archive = Archive.init(tmp_path / "archive", clock=clock)
    archive.add_series(S)
    kept = archive.add(S, PNG + b"named", format="png")
    store = archive.store
    assert isinstance(store, SQLiteStore)
    hour_ago = time.time() - 7200

    def orphan(content: bytes, old: bool) -> str:  # what a deposit killed after staging its blob leaves
        sha = hashlib.sha256(content).hexdigest()
        path = store.blobs.blob_path(sha)
        path.parent.mkdir(exist_ok=True)
        path.write_bytes(content)
        # the file's times from the clock the remover reads, not the file system's
        stamp = hour_ago if old else time.time()
        os.utime(path, (stamp, stamp))
        return sha

    old, fresh, reused = orphan(b"old", True), orphan(b"fresh", False), orphan(GIF + b"reused", True)
    (store.root / "tmp" / "dead.1.2").write_bytes(b"half")
    os.utime(store.root / "tmp" / "dead.1.2", (hour_ago, hour_ago))
    # a blob file a name holds, however old, stays (a small blob is a catalog row: the larger one is a file)
    large = PNG + b"named and large" * (INLINE_LIMIT // 8)
    kept_large = archive.add(S, large, format="png")
    os.utime(blob_file(store.root, hashlib.sha256(large).hexdigest()), (hour_ago, hour_ago))
    # a new deposit of bytes an old orphan file already holds: it is in use again
    archive.add(S, GIF + b"reused", format="gif")
    assert archive.verify().unreferenced == sorted([old, fresh])
    assert archive.remove_unreferenced(older_than=3600) == [old, "tmp/dead.1.2"]
    assert archive.verify().unreferenced == [fresh] and archive.verify().ok
    assert archive.get(kept).data == PNG + b"named" and reused not in archive.verify().unreferenced
    assert archive.get(kept_large).data == large
    with pytest.raises(LimitError):
        archive.remove_unreferenced(older_than=-1)


# --- migrations --------------------------------------------------------------------------------


def _store(location: str, create: bool) -> SQLiteStore | PostgresStore:
    if is_postgres_url(location):
        return PostgresStore(location)
    return SQLiteStore(location, create=create)


def test_schema_is_migrated_forward_by_init_alone(location: str, clock: Clock) -> None:
    old = _store(location, True)
    assert old.migrate(1) == 1
    assert old.schema_version() == 1
    old.close()
    # opening refuses it, before anything is written: only pdi init (Archive.init) migrates
    for opened in (lambda: Archive.open(location, clock=clock), lambda: Archive.init(location, migrate=False)):
        with pytest.raises(OlderSchemaError, match=rf"has schema version 1, older than this pdi's \({SCHEMA_VERSION}\)"):
            opened()
    again = _store(location, False)
    assert again.schema_version() == 1
    again.close()
    with Archive.init(location, clock=clock) as archive:
        assert archive.store.schema_version() == SCHEMA_VERSION == 27
        archive.add_series(S)
        pdi = archive.add(S, PNG + b"after migration", format="png")
        assert archive.get(pdi).data == PNG + b"after migration"


def test_newer_schema_is_refused(location: str) -> None:
    Archive.init(location).close()
    store = _store(location, False)
    store._query("INSERT INTO schema_migrations (version, applied_at) VALUES (99, 'future')")
    store.close()
    with pytest.raises(StoreError, match="newer"):
        Archive.open(location)


# --- BagIt ---------------------------------------------------------------------------------------


def _populate(archive: Archive, clock: Clock) -> None:
    archive.add_series("press.oma.eop.gov.us")
    one = archive.deposit(S, [Content(b"<p>one</p>", "html"), Content(b"one\n", "text")])
    archive.add_version(one[0], [Content(b"<p>one v2</p>", "html"), Content(b"one v2\n", "text")])
    archive.add(S, b"GIF89a", format="gif", foreign_id="doi:10.1000/182")
    text = archive.add("press.oma.eop.gov.us", "Grüße\r\n".encode("latin-1"), format="text",
                       charset="latin-1")
    archive.annotate(one[0], "title", "One", who="ann")
    archive.annotate(one[0], "title", "One, corrected", who="bob")
    archive.annotate(f"{text}#char=0,5", "x-note", "greeting", who="ann")


def _everything(archive: Archive) -> object:
    names = archive.ls(series=S) + archive.ls(series="press.oma.eop.gov.us")
    return (
        [(s.name, s.parent) for s in archive.series()],
        [(str(p), archive.get(p).data, archive.get(p).record.line_ending) for p in names],
        [(a.subject, a.key, a.value, a.who, a.at) for a in archive.store.assertions()],
    )


@pytest.fixture
def other_location(location: str, tmp_path: Path, pg_cluster: TemporaryCluster) -> str:
    """A location of the other kind of store than ``location``."""
    if is_postgres_url(location):
        return str(tmp_path / "moved")
    return pg_cluster.create_schema(f"moved_{tmp_path.name[-20:].replace('-', '_')}")


def test_export_import_moves_every_name_and_byte(
    archive: Archive, clock: Clock, tmp_path: Path, other_location: str
) -> None:
    _populate(archive, clock)
    bag = tmp_path / "bag"
    assert archive.export_bag(bag) == 6
    assert (bag / "bagit.txt").read_text() == (
        "BagIt-Version: 1.0\nTag-File-Character-Encoding: UTF-8\n"
    )
    with Archive.init(other_location, clock=clock) as moved:
        assert moved.import_bag(bag) == 6
        assert _everything(moved) == _everything(archive)
        assert moved.verify().ok
        # Minting continues after the imported serials, gap-free.
        assert str(moved.add(S, PNG + b"new", format="png")).endswith("/2026/11/22/2.png.1")
        # Importing again adds nothing and is no error.
        assert moved.import_bag(bag) == 0


def test_export_import_keeps_all_digit_foreign_ids(
    archive: Archive, tmp_path: Path, clock: Clock
) -> None:
    # "007" and "0" are foreign ids, not daily serials (PDI-GRAMMAR §2.5): they
    # move like any other name.
    names = [
        str(archive.add(S, b"GIF89a", format="gif", foreign_id="007")),
        str(archive.add(S, b"GIF87a", format="gif", foreign_id="0")),
        str(archive.add(S, b"GIF87a", format="gif")),
    ]
    assert names == [
        "urn:pdi://oma.eop.gov.us/2026/11/22/007.gif.1",
        "urn:pdi://oma.eop.gov.us/2026/11/22/0.gif.1",
        "urn:pdi://oma.eop.gov.us/2026/11/22/1.gif.1",
    ]
    archive.export_bag(tmp_path / "bag")
    with Archive.init(tmp_path / "moved", clock=clock) as moved:
        assert moved.import_bag(tmp_path / "bag") == 3
        assert sorted(str(p) for p in moved.ls(series=S)) == sorted(names)
        assert moved.get(names[0]).data == b"GIF89a"


def test_export_one_series(archive: Archive, clock: Clock, tmp_path: Path) -> None:
    _populate(archive, clock)
    assert archive.export_bag(tmp_path / "press", series="press.oma.eop.gov.us") == 1
    target = Archive.init(tmp_path / "target", clock=clock)
    assert target.import_bag(tmp_path / "press") == 1
    assert [s.name for s in target.series()] == ["oma.eop.gov.us", "press.oma.eop.gov.us"]
    assert target.ls(series=S) == []
    assert len(target.ls(series="press.oma.eop.gov.us")) == 1
    with pytest.raises(ImmutabilityError):
        archive.export_bag(tmp_path / "press")  # never overwrites


def test_import_conflict_changes_nothing(
    archive: Archive, clock: Clock, tmp_path: Path, other_location: str
) -> None:
    _populate(archive, clock)
    archive.export_bag(tmp_path / "bag")
    with Archive.init(other_location, clock=clock) as target:
        target.add_series(S)
        target.add(S, b"<p>something else</p>", format="html")  # takes 1.html.1
        before = snapshot(target)
        with pytest.raises(ImmutabilityError):
            target.import_bag(tmp_path / "bag")
        assert snapshot(target) == before


@pytest.mark.parametrize("damage", ["alter", "remove", "add"])
def test_damaged_bag_is_refused(
    archive: Archive, clock: Clock, tmp_path: Path, damage: str
) -> None:
    _populate(archive, clock)
    bag = tmp_path / "bag"
    archive.export_bag(bag)
    victim = next((bag / "data" / "objects").iterdir())
    if damage == "alter":
        victim.write_bytes(b"changed")
    elif damage == "remove":
        victim.unlink()
    else:
        (bag / "data" / "stray.txt").write_bytes(b"not in the manifest")
    target = Archive.init(tmp_path / "target", clock=clock)
    before = snapshot(target)
    with pytest.raises(IntegrityError):
        target.import_bag(bag)
    assert snapshot(target) == before
    with pytest.raises(NotFoundError):
        target.import_bag(tmp_path / "no-bag-here")


def test_object_changed_during_import_changes_nothing(
    archive: Archive, clock: Clock, tmp_path: Path, other_location: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The import reads objects one at a time after validating the bag; each is hashed again as it is read."""
    _populate(archive, clock)
    bag = tmp_path / "bag"
    archive.export_bag(bag)
    objects = sorted((bag / "data" / "objects").iterdir())
    assert len(objects) >= 2
    with Archive.init(other_location, clock=clock) as target:
        before = snapshot(target)
        store = type(target.store)
        real_import = store.import_all

        def import_after_tampering(self: object, *args: object, **options: object) -> int:
            objects[-1].write_bytes(b"changed after the bag was validated")  # validate_bag saw it intact
            return real_import(self, *args, **options)  # type: ignore[arg-type]

        monkeypatch.setattr(store, "import_all", import_after_tampering)
        with pytest.raises(IntegrityError, match="changed during the import"):
            target.import_bag(bag)
        assert snapshot(target) == before
        if not is_postgres_url(other_location):  # no temporary file left behind either
            assert list((Path(other_location) / "tmp").iterdir()) == []
