"""A batch that fails takes back every format it staged, even when taking back one of them fails.

:func:`pdi.archive.deposits._discard` stopped at the first staged blob whose discard failed: the blobs after it
stayed in the blob store (till ``pdi verify --remove-unreferenced``) and their passages' spools (memory, or a
temporary file) stayed open. Each is now discarded and closed, and each failure is a note of the batch's own
failure, which is what is raised (as :func:`pdi.archive.blobs.seam.cleaning_up_after_failure` keeps it).

The blob store is the real one (blob files beside a SQLite catalog); only the one failure it cannot give on
demand, a discard that fails, is injected.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path

import pytest

from pdi.archive import Archive, Content
from pdi.archive.blobs.files import FileBlobs, _FilePin
from pdi.archive.search import Passages
from pdi.errors import FormatCheckError

S = "courts.gov.us"


def _text(n: int) -> bytes:
    """A text of a blob file of its own (not a row of the catalog), with passages spooled past memory's few."""
    return b"".join(b"judgment %d paragraph %d of the opinion of the court\n" % (n, i) for i in range(4_000))


@pytest.fixture
def archive(tmp_path: Path) -> Iterator[Archive]:
    with Archive.init(tmp_path / "archive") as opened:
        opened.add_series(S)
        yield opened


@pytest.fixture
def spools(monkeypatch: pytest.MonkeyPatch) -> list[Passages]:
    """Every passages' spool made from now on (watched, not changed)."""
    made: list[Passages] = []
    real = Passages.__init__

    def watched(self: Passages) -> None:
        real(self)
        made.append(self)

    monkeypatch.setattr(Passages, "__init__", watched)
    return made


def _fail_discard_of(monkeypatch: pytest.MonkeyPatch, sha256: str) -> None:
    """The discard of the blob ``sha256`` fails (a disk gone read-only); every other one is the store's own."""
    real = FileBlobs._discard_created

    def failing(self: FileBlobs, pin: _FilePin) -> None:
        if pin.sha256 == sha256:
            raise OSError(f"cannot remove {sha256[:8]}: read-only file system")
        real(self, pin)

    monkeypatch.setattr(FileBlobs, "_discard_created", failing)


def _blob_files(root: Path) -> set[str]:
    return {p.name for p in (root / "blobs").rglob("*") if p.is_file() and len(p.name) == 64}


def _closed(spool: Passages) -> bool:
    return spool._held == [] and (spool._file is None or spool._file.closed)


def test_a_refused_batch_discards_every_staged_blob_when_one_discard_fails(
        archive: Archive, spools: list[Passages], monkeypatch: pytest.MonkeyPatch) -> None:
    root = Path(archive.location)
    before = _blob_files(root)
    texts = [_text(n) for n in range(3)]
    digests = [hashlib.sha256(t).hexdigest() for t in texts]
    # the last staged is discarded first (the placer of a blob staged twice last): its discard is the one failing
    _fail_discard_of(monkeypatch, digests[2])
    items = [([Content(t, "text")], None) for t in texts] + [([Content(b"not a picture\n", "png")], None)]
    with pytest.raises(FormatCheckError, match=r"^item 3: ") as raised:
        archive.deposit_batch(S, items)
    assert raised.value.__notes__ == [
        f"cleaning up after it failed also failed: cannot remove {digests[2][:8]}: read-only file system"]
    # the two after the failing one are gone; the one whose discard failed is what verify takes later
    assert _blob_files(root) - before == {digests[2]}
    assert len(spools) >= 3 and all(_closed(spool) for spool in spools)
    assert archive.ls(series=S) == []


def test_a_refused_item_whose_own_discard_fails_says_its_refusal(
        archive: Archive, spools: list[Passages], monkeypatch: pytest.MonkeyPatch) -> None:
    # an item of two formats, its second refused: the first's discard (its own, before the batch's) fails
    root = Path(archive.location)
    before = _blob_files(root)
    texts = [_text(n) for n in range(3)]
    digests = [hashlib.sha256(t).hexdigest() for t in texts]
    _fail_discard_of(monkeypatch, digests[1])
    items = [([Content(texts[0], "text")], None),
             ([Content(texts[1], "text"), Content(b"not a picture\n", "png")], None),
             ([Content(texts[2], "text")], None)]
    with pytest.raises(FormatCheckError, match=r"^item 1: ") as raised:
        archive.deposit_batch(S, items)
    assert raised.value.__notes__ == [
        f"cleaning up after it failed also failed: cannot remove {digests[1][:8]}: read-only file system"]
    assert _blob_files(root) - before == {digests[1]}
    assert len(spools) >= 2 and all(_closed(spool) for spool in spools)
    assert archive.ls(series=S) == []
