"""A WARC import deposits new names in batches (pdi.interop.warc.pages): each batch whole or not at all.

A batch is one transaction (:meth:`Archive.deposit_dated`): its names and
their ``warc:`` statements together. A batch that fails leaves nothing of
itself, the batches before it stay, and importing the file again deposits
the rest; a SIGKILL mid-import leaves only whole batches.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from warc_builder import WarcBuilder, everything, parts_of

from pdi.archive import Archive
from pdi.errors import StoreError
from pdi.interop.warc import Imported, import_warc, pages

S = "web.example.us"
PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(40))


def _warc(path: Path, count: int = 7) -> Path:
    """``count`` pages (each with a style sheet and an image) and, after every other page, a lone image."""
    b = WarcBuilder()
    for n in range(count):
        base = f"http://example.org/p{n}/"
        date = f"2024-05-{1 + n % 3:02d}T10:00:00Z"
        page = f'<html><head><link rel="stylesheet" href="s.css"></head><body><img src="i.png"><p>page {n}</p>'
        b.response(base, page.encode() + b"</body></html>", "text/html; charset=utf-8", date)
        b.response(base + "s.css", b"p { color: #%06x }" % n, "text/css", date)
        b.response(base + "i.png", PNG + bytes([n]), "image/png", date)
        if n % 2:
            b.response(f"http://example.org/lone{n}.png", PNG + b"lone" + bytes([n]), "image/png", date)
    return b.save(path)


def _archive(path: Path) -> Archive:
    opened = Archive.init(path)
    opened.add_series(S)
    return opened


def _check_whole(archive: Archive, done: list[Imported]) -> None:
    """Every name deposited holds its bytes and the statements its import made with it."""
    for d in done:
        stated = archive.meta(d.name)
        assert stated["warc:date"].startswith("2024-05-0"), d.name
        assert stated["warc:payload-digest"].startswith("sha1:")
        data = archive.get(d.name).data
        if d.page:
            assert parts_of(data)[d.url][1].startswith(b"<html>")
            assert "warc:parts" in stated
        else:
            assert data.startswith(PNG)


def _failing_at(call: int, real: Callable[..., object]) -> Callable[..., object]:
    """``real``, but its ``call``-th call fails as a full disk would (a fault the real disk cannot give on demand)."""
    calls = 0

    def failing(*args: object, **kwargs: object) -> object:
        nonlocal calls
        calls += 1
        if calls == call:
            raise StoreError("the disk is full")
        return real(*args, **kwargs)

    return failing


@pytest.mark.parametrize("batch", [1, 2, 3, 64])
def test_every_batch_size_deposits_the_same_names_bytes_and_statements(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, batch: int
) -> None:
    warc = _warc(tmp_path / "a.warc.gz")
    reference = _archive(tmp_path / "reference")
    monkeypatch.setattr(pages, "BATCH_ITEMS", 1)
    expected, _ = import_warc(reference, warc, S)
    monkeypatch.setattr(pages, "BATCH_ITEMS", batch)
    archive = _archive(tmp_path / "archive")
    told: list[Imported] = []
    done, plan = import_warc(archive, warc, S, deposited=told.append)
    assert done == told == expected and not plan.skipped
    assert sum(d.page for d in done) == 7 and len(done) == 10
    _check_whole(archive, done)
    for d in done:
        assert archive.get(d.name).data == reference.get(d.name).data
        assert {k: v for k, v in archive.meta(d.name).items()} == reference.meta(d.name)
    assert archive.verify().ok


def test_a_batch_is_bounded_by_its_octets_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    warc = _warc(tmp_path / "a.warc.gz")
    archive = _archive(tmp_path / "archive")
    sizes: list[int] = []
    real = archive.deposit_dated

    def counted(series: str, items: list[object], **kwargs: object) -> object:
        sizes.append(len(items))
        return real(series, items, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(archive, "deposit_dated", counted)
    monkeypatch.setattr(pages, "BATCH_BYTES", 1)  # every item past the bound: a batch each
    done, _ = import_warc(archive, warc, S)
    assert sizes == [1] * len(done) == [1] * 10


def test_a_failed_batch_leaves_nothing_of_itself_and_the_batches_before_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    warc = _warc(tmp_path / "a.warc.gz")
    archive = _archive(tmp_path / "archive")
    monkeypatch.setattr(pages, "BATCH_ITEMS", 3)
    real = archive.store.mint_batch
    monkeypatch.setattr(archive.store, "mint_batch", _failing_at(2, real))
    told: list[Imported] = []
    with pytest.raises(StoreError, match="the disk is full"):
        import_warc(archive, warc, S, deposited=told.append)
    assert len(told) == 3  # the first batch, acknowledged; nothing of the second
    assert sorted(str(p) for p in archive.ls(series=S)) == sorted(str(d.name) for d in told)
    _check_whole(archive, told)
    report = archive.verify()
    assert report.ok and not report.unreferenced  # the failed batch's blobs went with it
    monkeypatch.setattr(archive.store, "mint_batch", real)
    before = everything(archive)
    done, _ = import_warc(archive, warc, S)
    assert [d.unchanged for d in done] == [True] * 3 + [False] * 7
    assert done[:3] == [Imported(d.name, d.page, True, d.url, d.failures) for d in told]
    _check_whole(archive, done)
    assert everything(archive) != before and archive.verify().ok


IMPORTER = """
import sys
from pdi.archive import Archive
from pdi.interop.warc import import_warc, pages
pages.BATCH_ITEMS = 2
archive = Archive.open(sys.argv[1])
def told(item):
    print(item.name, flush=True)
import_warc(archive, sys.argv[2], sys.argv[3], deposited=told)
print("finished", flush=True)
"""


def test_sigkill_mid_import_leaves_whole_batches_and_every_acknowledged_name(tmp_path: Path) -> None:
    warc = _warc(tmp_path / "a.warc.gz", count=40)
    _archive(tmp_path / "archive").close()
    # PYTHONPATH: the pdi under test (tests/conftest.py); TMPDIR: the work folder the killed import cannot remove
    env = dict(os.environ, TMPDIR=str(tmp_path))
    child = subprocess.Popen(
        [sys.executable, "-c", IMPORTER, str(tmp_path / "archive"), str(warc), S],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, text=True,
    )
    assert child.stdout is not None
    acknowledged = [child.stdout.readline().strip()]
    assert acknowledged[0].startswith("urn:pdi:"), child.stderr.read() if child.stderr else ""
    child.send_signal(signal.SIGKILL)
    out, _ = child.communicate()
    assert child.returncode == -signal.SIGKILL
    acknowledged += [line for line in out.splitlines() if line.startswith("urn:pdi:")]
    with Archive.open(tmp_path / "archive") as archive:
        there = {str(p) for p in archive.ls(series=S)}
        assert set(acknowledged) <= there
        assert len(there) % 2 == 0 or len(there) == 60  # whole batches of two (the last may be shorter)
        for name in there:  # no name without the statements made with it
            assert archive.meta(name)["warc:date"].startswith("2024-05-0")
        assert archive.verify().ok
        done, _ = import_warc(archive, warc, S)
        assert len(done) == 60 and sum(not d.unchanged for d in done) == 60 - len(there)
        _check_whole(archive, done)


@pytest.mark.parametrize("threads", [1, 3])
def test_a_batch_whose_staging_fails_leaves_no_blob(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, threads: int
) -> None:
    from pdi.archive import content, deposits

    warc = _warc(tmp_path / "a.warc.gz")
    archive = _archive(tmp_path / "archive")
    monkeypatch.setattr(deposits, "STAGING_THREADS", threads)
    # the deposits import prepare when they stage (pdi get never loads it): the fault goes where they find it
    monkeypatch.setattr(content, "prepare", _failing_at(4, content.prepare))
    before = everything(archive)
    with pytest.raises(StoreError, match="the disk is full"):
        import_warc(archive, warc, S)
    assert everything(archive) == before  # no name, no statement, no blob file
    report = archive.verify()
    assert report.ok and not report.unreferenced


def test_payloads_kept_from_the_first_pass_are_the_ones_read_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pdi.interop.warc import read_index, records, sources_for

    warc = _warc(tmp_path / "a.warc.gz")
    kept = read_index(sources_for(warc), limit=1 << 20)
    assert len(kept.kept) == len(kept.entries) == 24
    monkeypatch.setattr(records, "KEEP_TOTAL", 0)
    again = read_index(sources_for(warc), limit=1 << 20)
    assert not again.kept
    for entry in again.entries:
        assert kept.payload(entry, 1 << 20) == again.payload(entry, 1 << 20)
        assert b"".join(kept.payload_pieces(entry)) == b"".join(again.payload_pieces(entry))
    reference = _archive(tmp_path / "reference")
    expected, _ = import_warc(reference, warc, S)
    archive = _archive(tmp_path / "archive")
    monkeypatch.setattr(records, "KEEP_TOTAL", 1 << 30)
    done, _ = import_warc(archive, warc, S)
    assert done == expected
    for d in done:
        assert archive.get(d.name).data == reference.get(d.name).data


def test_only_a_blob_store_whose_staging_needs_no_catalog_stages_on_threads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pdi.archive import deposits
    from pdi.archive.blobs.files import FileBlobs

    warc = _warc(tmp_path / "a.warc.gz")
    seen: list[int] = []
    real = deposits.Deposits._stage_each

    def spy(self: deposits.Deposits, items: object, threads: int, force: bool = False) -> object:
        seen.append(threads)
        return real(self, items, threads, force)  # type: ignore[arg-type]

    monkeypatch.setattr(deposits.Deposits, "_stage_each", spy)
    import_warc(_archive(tmp_path / "files"), warc, S)
    assert seen == [deposits.STAGING_THREADS] and seen[0] > 1
    monkeypatch.delattr(FileBlobs, "parallel_staging")  # as S3's and PostgreSQL's large objects: staging rows
    seen.clear()
    done, _ = import_warc(_archive(tmp_path / "other"), warc, S)
    assert seen == [1] and len(done) == 10


def test_a_page_at_a_url_too_long_to_name_is_left_out_not_the_whole_import(tmp_path: Path) -> None:
    # a name's id is at most 8,192 octets (a name must fit a resolver's URL): a page at a longer URL (tracking
    # links of 9 KB exist) made the whole batch, and so the whole import, fail; it is listed as not imported
    from warcio.archiveiterator import ArchiveIterator

    long = "http://example.com/long?" + "q" * 9_000
    b = WarcBuilder()
    for url in ("http://example.com/ok.html", long, "http://example.com/also.html"):
        b.response(url, b"<html><body>walrus</body></html>", "text/html; charset=utf-8", "2024-05-01T10:00:00Z")
    path = b.save(tmp_path / "w.warc.gz")
    with path.open("rb") as f:  # warcio reads the three records back, the long URL whole
        assert long in [r.rec_headers.get_header("WARC-Target-URI") for r in ArchiveIterator(f)]
    archive = _archive(tmp_path / "a")
    done, plan = import_warc(archive, path, S)
    assert sorted(d.url for d in done) == ["http://example.com/also.html", "http://example.com/ok.html"]
    (said,) = plan.skipped
    assert "the id is 9,024 octets (UTF-8), more than the 8,192 a name's id may have" in said
    assert len(archive.ls()) == 2  # nothing of the long one was kept


def test_a_name_already_minted_is_said_of_its_own_item_when_one_before_it_was_left_out(tmp_path: Path) -> None:
    # the catalog numbers the items it is given, which are those not left out: with item 0 left out (an id too
    # long to name), a foreign id already minted at item 2 was said of "item 1", the item the import kept whole
    import datetime
    import io

    from pdi.archive.content import Content
    from pdi.archive.deposits import BatchItem
    from pdi.errors import ImmutabilityError

    archive = _archive(tmp_path / "a")
    day = datetime.date(2024, 5, 1)

    def item(uid: str, text: bytes) -> BatchItem:
        return BatchItem([Content(io.BytesIO(text), "text", "utf-8")], uid, day)

    archive.deposit_dated(S, [item("taken", b"first")])
    left_out: list[int] = []
    with pytest.raises(ImmutabilityError) as caught:
        archive.deposit_dated(S, [item("q" * 9_000, b"long"), item("fresh", b"fresh"), item("taken", b"again")],
                              refused=lambda index, exc: left_out.append(index))
    assert left_out == [0]
    assert caught.value.item == 2 and str(caught.value).startswith("item 2: ")
    assert [str(p) for p in archive.ls()] == [f"urn:pdi://{S}/2024/05/01/taken.text.1"]  # nothing of the failed batch was kept


def test_a_batch_naming_ids_minted_already_is_refused_at_the_first_on_either_catalog(location: str) -> None:
    # a batch's names are looked up together (issue 24): the item refused is still the first one minted already,
    # in the batch's order, on another day than the batch's too; nothing of the batch is kept
    import datetime
    import io

    from pdi.archive.content import Content
    from pdi.archive.deposits import BatchItem
    from pdi.errors import ImmutabilityError

    archive = Archive.init(location)
    archive.add_series(S)
    may, june = datetime.date(2024, 5, 1), datetime.date(2024, 6, 1)

    def item(uid: str, day: datetime.date, text: bytes) -> BatchItem:
        return BatchItem([Content(io.BytesIO(text), "text", "utf-8")], uid, day)

    archive.deposit_dated(S, [item("taken", may, b"one"), item("later", june, b"two")])
    before = [str(p) for p in archive.ls()]
    assert before == [f"urn:pdi://{S}/2024/05/01/taken.text.1", f"urn:pdi://{S}/2024/06/01/later.text.1"]
    for batch, first in (
        ([item("fresh", may, b"a"), item("taken", june, b"b"), item("later", june, b"c"), item("taken", may, b"d")], 2),
        ([item("taken", may, b"e"), item("later", june, b"f")], 0),
    ):
        with pytest.raises(ImmutabilityError) as caught:
            archive.deposit_dated(S, batch)
        assert caught.value.item == first
        assert str(caught.value).startswith(f"item {first}: ") and "is already minted" in str(caught.value)
        assert [str(p) for p in archive.ls()] == before
    done = archive.deposit_dated(S, [item("taken", june, b"g"), item("later", may, b"h")])  # other days: new names
    assert [str(d[0]) for d in done if d is not None] == [f"urn:pdi://{S}/2024/06/01/taken.text.1",
                                                          f"urn:pdi://{S}/2024/05/01/later.text.1"]
    archive.close()


@pytest.mark.parametrize("batch", [1, 2, 3, 64])
def test_a_page_captured_again_on_its_day_is_its_next_version_whatever_the_batches(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, batch: int
) -> None:
    # The same URL captured again on the same GMT day is the same document's next version (the names' day is
    # the capture's): p0 three times, p1 twice, interleaved, with new pages between them.
    b = WarcBuilder()
    order = ["p0", "p1", "p2", "p0", "p3", "p1", "p0", "p4"]
    for n, page in enumerate(order):
        date = f"2024-05-01T10:{n:02d}:00Z"
        b.response(f"http://example.org/{page}/", b"<html><body><p>%s take %d</p></body></html>" % (page.encode(), n),
                   "text/html; charset=utf-8", date)
    monkeypatch.setattr(pages, "BATCH_ITEMS", batch)
    archive = _archive(tmp_path / "archive")
    done, plan = import_warc(archive, b.save(tmp_path / "a.warc.gz"), S)
    assert not plan.skipped and not any(d.unchanged for d in done)
    assert [(d.url.rsplit("/", 2)[1], d.name.version) for d in done] == [
        ("p0", 1), ("p1", 1), ("p2", 1), ("p0", 2), ("p3", 1), ("p1", 2), ("p0", 3), ("p4", 1)]
    for n, d in enumerate(done):
        assert b"take %d<" % n in parts_of(archive.get(d.name).data)[d.url][1]


def test_an_import_asks_whether_its_new_names_are_minted_a_batch_at_a_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Each item's versions asked alone was a read transaction an item (issue 24): the names ahead are asked
    # together, and only a name found minted is asked its versions (to deposit it alone, as before).
    warc = _warc(tmp_path / "a.warc.gz")
    archive = _archive(tmp_path / "archive")
    asked: list[object] = []
    real = archive.versions

    def versions(name: object) -> list[int]:
        asked.append(name)
        return real(name)  # type: ignore[arg-type]

    monkeypatch.setattr(archive, "versions", versions)
    done, _ = import_warc(archive, warc, S)
    assert len(done) == 10 and not any(d.unchanged for d in done) and asked == []
    again, _ = import_warc(archive, warc, S)  # every name minted now: each asked, each unchanged
    assert all(d.unchanged for d in again) and {str(d.name) for d in done} <= {str(n) for n in asked}
