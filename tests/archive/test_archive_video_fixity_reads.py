"""What ffmpeg and ffprobe read of a stored video is what was checked, and a store with no local file is read once.

A region of a video's frame (``rect``, ``crop``) is cut by ffmpeg, and a video with no fragment index (brought in
by a bag) is read by ffprobe when a fragment needs its facts: both read a file. Where the store keeps the blob as a
file, the child reads the file the reader opened and checked (``/proc/self/fd/N`` of the reader's descriptor), not
the blob's path opened again: a file renamed over that path meanwhile (a repair's copy, or anyone's) was read
unchecked. Where the store keeps none (PostgreSQL, S3), the child reads a temporary copy, each chunk checked as it
is copied: the store was read twice (every chunk checked, then copied again). A region of a video with no fragment
index, which ffprobe reads first, opened the blob twice, and read a store with no local file twice, one for each.

The videos are made here by ffmpeg, lossless (H.264 ``-qp 0``) so that their octets are many chunks: the one
deposited is noise, the one put in its place a plain red, and the expected region is cut by Pillow from the
frame ffmpeg decodes from a file of the deposited octets, asked here in its own form (not pdi's command).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import pdi.archive.video as video
from pdi.archive import Archive
from pdi.archive.blobs import CHUNK_SIZE
from pdi.archive.postgres import PostgresStore
from pdi.errors import DamagedError
from support.hashed import count_store_reads
from support.pgcluster import TemporaryCluster
from support.stored_blobs import blob_file
from support.video_frames import first_frame_region, region_pixels

S = "oma.eop.gov.us"
WIDTH, HEIGHT = 320, 240
REGION = "#crop=(0,0),(16,16),0"
_schemas = iter(range(1, 1 << 20))


def _make(path: Path, source: str) -> bytes:
    """An MP4 of 3 s at 10 frames a second of ffmpeg's ``lavfi`` ``source``, lossless."""
    subprocess.run(["ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", source, "-c:v", "libx264", "-qp", "0",
                    "-pix_fmt", "yuv420p", str(path)], check=True, timeout=120)
    return path.read_bytes()


@pytest.fixture(scope="module")
def clips(tmp_path_factory: pytest.TempPathFactory) -> tuple[bytes, bytes, bytes]:
    """The video deposited (noise), one of the same size put in its place (red), and a smaller one (160×120)."""
    where = tmp_path_factory.mktemp("clips")
    noise = _make(where / "noise.mp4", f"nullsrc=size={WIDTH}x{HEIGHT}:rate=10:duration=3,"
                                       "geq=lum='random(1)*255':cb=128:cr=128")
    red = _make(where / "red.mp4", f"color=c=red:size={WIDTH}x{HEIGHT}:rate=10:duration=3")
    small = _make(where / "small.mp4", "color=c=blue:size=160x120:rate=10:duration=2")
    assert len(noise) > 3 * CHUNK_SIZE  # several chunks, and a file (never a catalog's small row)
    return noise, red, small


def _renamed_first(monkeypatch: pytest.MonkeyPatch, what: str, replacement: Path, path: Path) -> list[Path]:
    """``pdi.archive.video.WHAT`` (``frame_region`` or ``probe``) preceded by ``replacement`` renamed to ``path``:
    after the reader opened and checked the blob's file, before the child reads it."""
    real = getattr(video, what)
    renamed: list[Path] = []

    def renamed_then(*args: Any, **kwargs: Any) -> Any:
        os.replace(replacement, path)
        renamed.append(path)
        return real(*args, **kwargs)

    monkeypatch.setattr(video, what, renamed_then)
    return renamed


# --- a store with a local file: the blob's file replaced after it is opened ------------------------------------


def test_a_region_of_a_video_whose_file_is_replaced_after_it_is_opened_is_of_the_octets_deposited(
    tmp_path: Path, clips: tuple[bytes, bytes, bytes], monkeypatch: pytest.MonkeyPatch,
) -> None:
    noise, red, _ = clips
    expected = first_frame_region(tmp_path, noise)
    assert expected != first_frame_region(tmp_path, red)  # the replacement's region would show
    location = tmp_path / "archive"
    with Archive.init(str(location)) as archive:
        archive.add_series(S)
        name = str(archive.add(S, noise, format="video+mp4"))
    path = blob_file(location, hashlib.sha256(noise).hexdigest())
    replacement = tmp_path / "replacement.mp4"
    replacement.write_bytes(red)
    renamed = _renamed_first(monkeypatch, "frame_region", replacement, path)
    with Archive.open(str(location)) as archive:
        answer = archive.resolve(name + REGION)
    assert renamed == [path] and path.read_bytes() == red
    assert region_pixels(answer) == expected


def test_a_video_whose_file_is_replaced_after_it_is_opened_is_probed_as_deposited(
    tmp_path: Path, clips: tuple[bytes, bytes, bytes], monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A video brought in by a bag has no fragment index: ffprobe reads it when its facts are asked. The file put
    in its place is 160×120 and lasts 2 s; the one deposited, 320×240 and 3 s."""
    noise, _, small = clips
    with Archive.init(str(tmp_path / "first")) as first:
        first.add_series(S)
        name = str(first.add(S, noise, format="video+mp4"))
        first.export_bag(tmp_path / "bag")
    location = tmp_path / "archive"
    with Archive.init(str(location)) as archive:
        archive.import_bag(tmp_path / "bag")
        record = archive.locate(name).record
    path = blob_file(location, hashlib.sha256(noise).hexdigest())
    replacement = tmp_path / "replacement.mp4"
    replacement.write_bytes(small)
    renamed = _renamed_first(monkeypatch, "probe", replacement, path)
    with Archive.open(str(location)) as archive:
        facts = archive.video_of(record)
    assert renamed == [path] and path.read_bytes() == small
    assert facts is not None and (facts.width, facts.height, facts.duration_ms) == (WIDTH, HEIGHT, 3000)


# --- a store with no local file: PostgreSQL ---------------------------------------------------------------------


@pytest.fixture
def store_reads(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The octets each read of a blob's chunk rows brought back from PostgreSQL, in order."""
    return count_store_reads(monkeypatch)


@contextlib.contextmanager
def _on_postgresql(cluster: TemporaryCluster) -> Iterator[Archive]:
    archive = Archive.init(cluster.create_schema(f"pdi_video_reads_{next(_schemas)}"))
    try:
        yield archive
    finally:
        archive.close()


def _flip_part(archive: Archive, data: bytes, offset: int) -> None:
    """Change one octet of the blob's chunk rows behind pdi's back, as bit rot would."""
    store = archive.store
    assert isinstance(store, PostgresStore)
    (upload, n), = store._query(
        "SELECT p.upload, p.n FROM blob_parts p JOIN blobs b ON b.upload = p.upload WHERE b.sha256 = ? AND p.n = ?",
        (hashlib.sha256(data).hexdigest(), offset // CHUNK_SIZE),
    )
    store._query("UPDATE blob_parts SET data = set_byte(data, ?, get_byte(data, ?) # 1) WHERE upload = ? AND n = ?",
                 (offset % CHUNK_SIZE, offset % CHUNK_SIZE, upload, n))


def test_a_region_of_a_video_without_a_file_reads_the_store_once(
    tmp_path: Path, pg_cluster: TemporaryCluster, clips: tuple[bytes, bytes, bytes], store_reads: list[int],
) -> None:
    noise, _, _ = clips
    with _on_postgresql(pg_cluster) as archive:
        archive.add_series(S)
        name = str(archive.add(S, noise, format="video+mp4"))
        del store_reads[:]
        answer = archive.resolve(name + REGION)
        assert region_pixels(answer) == first_frame_region(tmp_path, noise)
        assert sum(store_reads) == len(noise), "each octet read from the store once"
        _flip_part(archive, noise, 2 * CHUNK_SIZE + 17)
        with pytest.raises(DamagedError, match=r"damaged: chunk 2 \(octets 2097152 to 3145727\)"):
            archive.resolve(name + REGION)


def test_a_video_without_a_file_or_an_index_is_probed_from_one_read_of_the_store(
    tmp_path: Path, pg_cluster: TemporaryCluster, clips: tuple[bytes, bytes, bytes], store_reads: list[int],
) -> None:
    noise, _, _ = clips
    with Archive.init(str(tmp_path / "first")) as first:
        first.add_series(S)
        name = str(first.add(S, noise, format="video+mp4"))
        first.export_bag(tmp_path / "bag")
    with _on_postgresql(pg_cluster) as archive:
        archive.import_bag(tmp_path / "bag")
        record = archive.locate(name).record
        del store_reads[:]
        facts = archive.video_of(record)
        assert facts is not None and (facts.width, facts.height, facts.duration_ms) == (WIDTH, HEIGHT, 3000)
        assert sum(store_reads) == len(noise), "each octet read from the store once"
        _flip_part(archive, noise, 17)
        with pytest.raises(DamagedError, match=r"damaged: chunk 0 \(octets 0 to 1048575\)"):
            archive.video_of(record)


# --- a video with no fragment index: its region opens and reads the blob once ------------------------------------


def _imported(tmp_path: Path, noise: bytes, into: Archive) -> str:
    """The video brought into ``into`` by a bag (no fragment index): its name."""
    with Archive.init(str(tmp_path / "first")) as first:
        first.add_series(S)
        name = str(first.add(S, noise, format="video+mp4"))
        first.export_bag(tmp_path / "bag")
    into.import_bag(tmp_path / "bag")
    return name


def test_a_region_of_a_video_without_an_index_opens_its_file_once(
    tmp_path: Path, clips: tuple[bytes, bytes, bytes], monkeypatch: pytest.MonkeyPatch,
) -> None:
    """ffprobe reads the facts the region needs, ffmpeg cuts it: both from the file the reader opened and checked
    (it was opened, and checked, once for each)."""
    noise, _, _ = clips
    with Archive.init(str(tmp_path / "archive")) as archive:
        name = _imported(tmp_path, noise, archive)
        path = blob_file(archive.location, hashlib.sha256(noise).hexdigest())
        real = os.open
        opened: list[str] = []

        def counting(file: Any, *args: Any, **kwargs: Any) -> int:
            if os.fspath(file) == str(path):
                opened.append(str(file))
            return real(file, *args, **kwargs)

        monkeypatch.setattr(os, "open", counting)
        answer = archive.resolve(name + REGION)
        monkeypatch.undo()
        assert region_pixels(answer) == first_frame_region(tmp_path, noise)
    assert opened == [str(path)]


def test_a_region_of_a_video_without_a_file_or_an_index_reads_the_store_once(
    tmp_path: Path, pg_cluster: TemporaryCluster, clips: tuple[bytes, bytes, bytes], store_reads: list[int],
) -> None:
    noise, _, _ = clips
    with _on_postgresql(pg_cluster) as archive:
        name = _imported(tmp_path, noise, archive)
        del store_reads[:]
        answer = archive.resolve(name + REGION)
        assert sum(store_reads) == len(noise), "each octet read from the store once"
        assert region_pixels(answer) == first_frame_region(tmp_path, noise)
        _flip_part(archive, noise, CHUNK_SIZE + 17)
        with pytest.raises(DamagedError, match=r"damaged: chunk 1 \(octets 1048576 to 2097151\)"):
            archive.resolve(name + REGION)
