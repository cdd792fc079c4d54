"""What a video's region (``rect``, ``crop``) and ffprobe's reading of a video hash to check its blob file.

ffmpeg and ffprobe read the blob file the reader opened (``/proc/self/fd/N``), every chunk checked first. Where the
archive keeps a fixity memo (``pdi serve``: ``pdi.archive.blobs.memo``), a second region or probe of the same,
unchanged file trusts the chunks the memo holds verified for it, as an image's crop does
(``test_archive_image_fixity_reads``): it hashed the whole video again at each request. A file changed in place,
or replaced by one of the same size and modification time, since is hashed again and refused before a child reads
it.

The video is made here by ffmpeg, lossless (H.264 ``-qp 0``) noise, so that it is several chunks, and the
expected region is cut by Pillow from the frame ffmpeg decodes from a file of the deposited octets, asked here in
its own form (not pdi's command).
"""

from __future__ import annotations

import hashlib
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

import pdi.archive.blobs as blobs
from pdi.archive import Archive, Resolved
from pdi.archive.blobs import CHUNK_SIZE
from pdi.archive.blobs.memo import FixityMemo
from pdi.errors import DamagedError
from support.hashed import CountingHashlib, wait_changed_ago
from support.stored_blobs import blob_file, flip_octet
from support.video_frames import first_frame_region, region_pixels

S = "oma.eop.gov.us"
WIDTH, HEIGHT = 320, 240
REGION = "#crop=(0,0),(16,16),0"


@pytest.fixture(scope="module")
def noise(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    """An MP4 of 3 s at 10 frames a second of noise, lossless: several chunks."""
    path = tmp_path_factory.mktemp("clips") / "noise.mp4"
    subprocess.run(["ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i",
                    f"nullsrc=size={WIDTH}x{HEIGHT}:rate=10:duration=3,geq=lum='random(1)*255':cb=128:cr=128",
                    "-c:v", "libx264", "-qp", "0", "-pix_fmt", "yuv420p", str(path)], check=True, timeout=120)
    data = path.read_bytes()
    assert len(data) > 3 * CHUNK_SIZE
    return data


@pytest.fixture(scope="module")
def expected(noise: bytes, tmp_path_factory: pytest.TempPathFactory) -> bytes:
    """The RGB pixels of :data:`REGION` of the first frame, decoded by ffmpeg and cut by Pillow."""
    return first_frame_region(tmp_path_factory.mktemp("frame"), noise)


def _remembering(archive: Archive, path: Path) -> None:
    archive.fixity_memo = FixityMemo(600, racy_seconds=0.1)
    wait_changed_ago(path, 0.15)


@pytest.fixture
def deposited(tmp_path: Path, noise: bytes) -> Iterator[tuple[Archive, str, Path]]:
    """A files-store archive holding the video as deposited (its fragment index made then), with a fixity memo."""
    archive = Archive.init(tmp_path / "archive")
    archive.add_series(S)
    name = str(archive.add(S, noise, format="video+mp4"))
    path = blob_file(archive.location, hashlib.sha256(noise).hexdigest())
    assert path.stat().st_size == len(noise)
    _remembering(archive, path)
    try:
        yield archive, name, path
    finally:
        archive.close()


@pytest.fixture
def imported(tmp_path: Path, noise: bytes) -> Iterator[tuple[Archive, str, Path]]:
    """A files-store archive holding the video as a bag brought it (no fragment index: ffprobe reads it when its
    facts are asked), with a fixity memo."""
    with Archive.init(str(tmp_path / "first")) as first:
        first.add_series(S)
        name = str(first.add(S, noise, format="video+mp4"))
        first.export_bag(tmp_path / "bag")
    archive = Archive.init(str(tmp_path / "archive"))
    archive.import_bag(tmp_path / "bag")
    path = blob_file(archive.location, hashlib.sha256(noise).hexdigest())
    _remembering(archive, path)
    try:
        yield archive, name, path
    finally:
        archive.close()


def _probe(archive: Archive, name: str) -> tuple[int, int, int]:
    facts = archive.video_of(archive.locate(name).record)
    assert facts is not None
    return facts.width, facts.height, facts.duration_ms


def test_a_second_region_of_an_unchanged_file_hashes_nothing_again(
    deposited: tuple[Archive, str, Path], noise: bytes, expected: bytes, monkeypatch: pytest.MonkeyPatch,
) -> None:
    archive, name, _ = deposited
    counter = CountingHashlib()
    monkeypatch.setattr(blobs, "hashlib", counter)
    first = archive.resolve(name + REGION)
    assert counter.octets >= len(noise), "the first region checks every octet"
    counter.octets = 0
    second = archive.resolve(name + REGION)
    assert counter.octets == 0, "every chunk was remembered verified, the file unchanged"
    assert isinstance(first, Resolved) and isinstance(second, Resolved)
    assert region_pixels(first) == region_pixels(second) == expected


def test_a_second_probe_of_an_unchanged_file_hashes_nothing_again(
    imported: tuple[Archive, str, Path], noise: bytes, monkeypatch: pytest.MonkeyPatch,
) -> None:
    archive, name, _ = imported
    counter = CountingHashlib()
    monkeypatch.setattr(blobs, "hashlib", counter)
    assert _probe(archive, name) == (WIDTH, HEIGHT, 3000)
    assert counter.octets >= len(noise), "the first probe checks every octet"
    counter.octets = 0
    assert _probe(archive, name) == (WIDTH, HEIGHT, 3000)
    assert counter.octets == 0, "every chunk was remembered verified, the file unchanged"


def test_without_a_memo_every_region_checks_every_octet(
    deposited: tuple[Archive, str, Path], noise: bytes, monkeypatch: pytest.MonkeyPatch,
) -> None:
    archive, name, _ = deposited
    archive.fixity_memo = None
    counter = CountingHashlib()
    monkeypatch.setattr(blobs, "hashlib", counter)
    for _ in range(2):
        counter.octets = 0
        archive.resolve(name + REGION)
        assert counter.octets >= len(noise)


def test_a_file_changed_in_place_after_a_region_is_refused_at_the_next(
    deposited: tuple[Archive, str, Path], expected: bytes, monkeypatch: pytest.MonkeyPatch,
) -> None:
    archive, name, path = deposited
    assert region_pixels(archive.resolve(name + REGION)) == expected
    inode = path.stat().st_ino
    flip_octet(archive.location, path.name, 2 * CHUNK_SIZE + 4321)
    assert path.stat().st_ino == inode, "written in place"
    counter = CountingHashlib()
    monkeypatch.setattr(blobs, "hashlib", counter)
    with pytest.raises(DamagedError, match=r"damaged: chunk 2 \(octets 2097152 to 3145727\)"):
        archive.resolve(name + REGION)
    assert counter.octets >= 3 * CHUNK_SIZE, "the changed file was hashed again, up to the damaged chunk"


def test_a_file_changed_in_place_after_a_probe_is_refused_at_the_next(imported: tuple[Archive, str, Path]) -> None:
    archive, name, path = imported
    assert _probe(archive, name) == (WIDTH, HEIGHT, 3000)
    flip_octet(archive.location, path.name, CHUNK_SIZE + 7)
    with pytest.raises(DamagedError, match=r"damaged: chunk 1 \(octets 1048576 to 2097151\)"):
        _probe(archive, name)


@pytest.mark.parametrize("read", ["region", "probe"])
def test_a_file_replaced_with_the_same_size_and_mtime_is_refused_at_the_next(
    request: pytest.FixtureRequest, noise: bytes, expected: bytes, read: str,
) -> None:
    archive, name, path = request.getfixturevalue("deposited" if read == "region" else "imported")
    again = (lambda: region_pixels(archive.resolve(name + REGION))) if read == "region" else (lambda: _probe(archive, name))
    assert again() == (expected if read == "region" else (WIDTH, HEIGHT, 3000))
    where = CHUNK_SIZE + 99
    beside = path.with_name("replacement")
    beside.write_bytes(noise[:where] + bytes([noise[where] ^ 0x10]) + noise[where + 1:])
    stat = path.stat()
    os.utime(beside, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # the same size and mtime: only inode and ctime differ
    os.replace(beside, path)
    with pytest.raises(DamagedError, match=r"damaged: chunk 1 \(octets 1048576 to 2097151\)"):
        again()
