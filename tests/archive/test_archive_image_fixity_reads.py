"""What an image's ``rect``/``crop`` reads and hashes to check its blob, and that no less is checked.

A crop is evaluated on the blob's octets and the blob is checked whole (every chunk against its digest). Where
the store keeps a local file (the files store), a second crop of the same unchanged file trusts the chunks the
fixity memo holds verified for it (``pdi.archive.blobs.memo``: the file's identity by ``fstat``, before the
expiry), as a PDF's or an aggregate's fragment does: it hashed the whole blob again at each request. A file
changed in place, or replaced, since is hashed again and refused. Where the store keeps none (PostgreSQL, S3),
each chunk is checked as it is read into memory or copied to the temporary file the evaluator maps: the store is
read once (it was read twice, the copy unchecked, then every chunk again to check it).
"""

from __future__ import annotations

import hashlib
import io
import os
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

import pdi.archive.blobs as blobs
from pdi.archive import Archive, Resolved
from pdi.archive.blobs import CHUNK_SIZE, FileReader, mapped
from pdi.archive.blobs.memo import FixityMemo
from pdi.archive.postgres import PostgresStore
from pdi.errors import DamagedError
from support.hashed import CountingHashlib, count_store_reads, wait_changed_ago
from support.pgcluster import TemporaryCluster
from support.stored_blobs import blob_file, flip_octet

S = "maps.library.example.us"
WIDTH, HEIGHT = 1200, 1000
_schemas = iter(range(1, 1 << 20))


def _noise_png() -> bytes:
    """An RGB PNG of noise: it does not compress, so it is about ``WIDTH * HEIGHT * 3`` octets, several chunks."""
    pixels = np.random.default_rng(11).integers(0, 256, (HEIGHT, WIDTH, 3), dtype=np.uint8)
    out = io.BytesIO()
    Image.fromarray(pixels).save(out, format="PNG", compress_level=1)
    return out.getvalue()


DATA = _noise_png()
CHUNKS = -(-len(DATA) // CHUNK_SIZE)
CROP = "#crop=(1,1),(20,20)"


def _expected_crop() -> bytes:
    """The crop's pixels, as Pillow reads them from the PNG we made (not through pdi)."""
    return Image.open(io.BytesIO(DATA)).convert("RGB").crop((1, 1, 20, 20)).tobytes()


def _pixels(answer: Resolved) -> bytes:
    return Image.open(io.BytesIO(answer.data)).convert("RGB").tobytes()


@pytest.fixture
def stored(tmp_path: Path) -> Iterator[tuple[Archive, str, Path]]:
    """A files-store archive holding ``DATA`` as a blob file, with a fixity memo, the file past the racy window."""
    archive = Archive.init(tmp_path / "archive")
    archive.add_series(S)
    name = str(archive.add(S, DATA, format="png"))
    path = blob_file(archive.location, hashlib.sha256(DATA).hexdigest())
    assert path.stat().st_size == len(DATA) and CHUNKS >= 3
    archive.fixity_memo = FixityMemo(600, racy_seconds=0.1)
    wait_changed_ago(path, 0.15)
    try:
        yield archive, name, path
    finally:
        archive.close()


@pytest.mark.parametrize("scheme", ["crop", "rect"])
def test_a_second_crop_of_an_unchanged_file_hashes_nothing_again(
    stored: tuple[Archive, str, Path], monkeypatch: pytest.MonkeyPatch, scheme: str,
) -> None:
    archive, name, _ = stored
    counter = CountingHashlib()
    monkeypatch.setattr(blobs, "hashlib", counter)
    first = archive.resolve(f"{name}#{scheme}=(1,1),(20,20)")
    assert counter.octets >= len(DATA), "the first crop checks every octet"
    counter.octets = 0
    second = archive.resolve(f"{name}#{scheme}=(1,1),(20,20)")
    assert counter.octets == 0, "every chunk was remembered verified, the file unchanged"
    assert isinstance(first, Resolved) and isinstance(second, Resolved)
    assert second.data == first.data
    if scheme == "crop":
        assert _pixels(second) == _expected_crop()
    else:
        assert second.data == DATA


def test_without_a_memo_every_crop_checks_every_octet(
    stored: tuple[Archive, str, Path], monkeypatch: pytest.MonkeyPatch,
) -> None:
    archive, name, _ = stored
    archive.fixity_memo = None
    counter = CountingHashlib()
    monkeypatch.setattr(blobs, "hashlib", counter)
    for _ in range(2):
        counter.octets = 0
        archive.resolve(name + CROP)
        assert counter.octets >= len(DATA)


def test_a_file_changed_in_place_after_a_crop_is_refused_at_the_next(stored: tuple[Archive, str, Path]) -> None:
    archive, name, path = stored
    assert _pixels(archive.resolve(name + CROP)) == _expected_crop()
    inode = path.stat().st_ino
    where = 2 * CHUNK_SIZE + 4321  # in the pixel data, far from the crop's rows: the decoder never needs it
    flip_octet(archive.location, path.name, where)
    assert path.stat().st_ino == inode, "written in place"
    with pytest.raises(DamagedError, match=r"damaged: chunk 2 \(octets 2097152 to 3145727\)"):
        archive.resolve(name + CROP)


def test_a_file_replaced_after_a_crop_is_refused_at_the_next(stored: tuple[Archive, str, Path]) -> None:
    archive, name, path = stored
    assert _pixels(archive.resolve(name + CROP)) == _expected_crop()
    where = CHUNK_SIZE + 99
    damaged = DATA[:where] + bytes([DATA[where] ^ 0x10]) + DATA[where + 1:]
    beside = path.with_name("replacement")
    beside.write_bytes(damaged)
    stat = path.stat()
    os.utime(beside, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # the same size and mtime: only inode and ctime differ
    os.replace(beside, path)
    with pytest.raises(DamagedError, match=r"damaged: chunk 1 "):
        archive.resolve(name + CROP)


def test_the_map_is_of_the_file_the_reader_checks(stored: tuple[Archive, str, Path]) -> None:
    """A blob file replaced between the reader's opening and the map's: the map holds the octets the reader's
    chunks are checked from (its own descriptor), not the file now at the path."""
    archive, name, path = stored
    with archive.open_octets(name) as opened:
        reader = opened.reader
        assert isinstance(reader, FileReader)
        beside = path.with_name("replacement")
        beside.write_bytes(b"\0" * len(DATA))
        os.replace(beside, path)
        with mapped(reader) as octets:
            assert octets[:len(DATA)] == DATA


# --- a store with no local file: PostgreSQL -------------------------------------------------------------------


@pytest.fixture
def pg(pg_cluster: TemporaryCluster) -> Iterator[tuple[Archive, str]]:
    archive = Archive.init(pg_cluster.create_schema(f"pdi_image_reads_{next(_schemas)}"))
    archive.add_series(S)
    try:
        yield archive, str(archive.add(S, DATA, format="png"))
    finally:
        archive.close()


@pytest.fixture
def store_reads(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The octets each read of a blob's chunk rows brought back from PostgreSQL, in order."""
    return count_store_reads(monkeypatch)


def _flip_part(archive: Archive, offset: int) -> None:
    """Change one octet of the blob's chunk rows behind pdi's back, as bit rot would."""
    store = archive.store
    assert isinstance(store, PostgresStore)
    (upload, n), = store._query(
        "SELECT p.upload, p.n FROM blob_parts p JOIN blobs b ON b.upload = p.upload WHERE b.sha256 = ? AND p.n = ?",
        (hashlib.sha256(DATA).hexdigest(), offset // CHUNK_SIZE),
    )
    store._query("UPDATE blob_parts SET data = set_byte(data, ?, get_byte(data, ?) # 1) WHERE upload = ? AND n = ?",
                 (offset % CHUNK_SIZE, offset % CHUNK_SIZE, upload, n))


@pytest.mark.parametrize("copied", [True, False], ids=["copied-to-a-file", "in-memory"])
def test_a_crop_reads_a_blob_without_a_file_from_the_store_once(
    pg: tuple[Archive, str], store_reads: list[int], monkeypatch: pytest.MonkeyPatch, copied: bool,
) -> None:
    archive, name = pg
    if copied:  # a blob over the in-memory bound is copied to a temporary file and mapped
        monkeypatch.setattr(blobs, "IN_MEMORY", CHUNK_SIZE)
    answer = archive.resolve(name + CROP)
    assert isinstance(answer, Resolved) and _pixels(answer) == _expected_crop()
    assert sum(store_reads) == len(DATA), "each octet read from the store once"


@pytest.mark.parametrize("copied", [True, False], ids=["copied-to-a-file", "in-memory"])
def test_a_damaged_chunk_of_a_blob_without_a_file_is_found_as_it_is_read(
    pg: tuple[Archive, str], store_reads: list[int], monkeypatch: pytest.MonkeyPatch, copied: bool,
) -> None:
    archive, name = pg
    if copied:
        monkeypatch.setattr(blobs, "IN_MEMORY", CHUNK_SIZE)
    _flip_part(archive, 2 * CHUNK_SIZE + 17)
    with pytest.raises(DamagedError, match=r"damaged: chunk 2 \(octets 2097152 to 3145727\)"):
        archive.resolve(name + CROP)
    assert sum(store_reads) <= 3 * CHUNK_SIZE, "refused at the damaged chunk, before any other was read"
