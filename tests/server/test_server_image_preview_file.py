"""``/api/image/preview`` of an image the store keeps as a file: the libvips child reads that file, not a copy.

The preview was made from the blob's verified chunks written one by one to a temporary file for the child, even
where the store keeps the blob as a local file (the files store beside a SQLite catalog): a second copy of a map
scan written to disk for every preview made. Where there is a file, its chunks are checked (none hashed again
that the fixity memo holds verified and unchanged) and the child is given the file itself, opened anew through
``/proc/self/fd`` (as a ``crop`` cut by libvips is). What the process writes is read from the kernel's own count
(``wchar`` of ``/proc/self/io``: every octet passed to ``write`` and its kin, the reaped child's too), not from
pdi's code. A file
changed while the preview was made is checked again: nothing unverified is shown.
"""

from __future__ import annotations

import io
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

import pdi.fragments.image_streamed as streamed
import pdi.server.pages.cite as cite
from pdi._bounded import Outcome
from pdi.archive import Archive
from pdi.errors import DamagedError
from support.big_image import write_grey_tiff
from support.stored_blobs import blob_file, rewrite_blob

S = "maps.library.example.us"
WIDTH, HEIGHT = 6000, 4000  # 24 MB uncompressed: larger than any write the preview itself needs


def _written() -> int:
    """Octets this process has passed to ``write`` so far (``/proc/self/io``, every thread's)."""
    for line in Path("/proc/self/io").read_text().splitlines():
        if line.startswith("wchar:"):
            return int(line.split()[1])
    raise AssertionError("no wchar in /proc/self/io")


@pytest.fixture
def scan(tmp_path: Path) -> tuple[str, str, str, int]:
    """A SQLite archive holding the TIFF as a blob file: its location, name, SHA-256 and size."""
    tiff = tmp_path / "scan.tif"
    size = write_grey_tiff(str(tiff), WIDTH, HEIGHT)
    location = str(tmp_path / "archive")
    with Archive.init(location) as archive, tiff.open("rb") as stream:
        archive.add_series(S)
        name = str(archive.add(S, stream, format="tiff"))
        sha256 = archive.locate(name).sha256
    tiff.unlink()
    assert blob_file(location, sha256).stat().st_size == size
    return location, name, sha256, size


def test_the_child_reads_the_blob_file_and_nothing_the_size_of_the_image_is_written(
        scan: tuple[str, str, str, int], monkeypatch: pytest.MonkeyPatch) -> None:
    location, name, _, size = scan
    monkeypatch.setattr(cite, "_PREVIEWS", OrderedDict())
    with Archive.open(location) as archive:
        before = _written()
        made = cite.image_preview(archive, name)
        written = _written() - before
    assert made.body is not None and made.media_type == "image/jpeg"
    # a reaped child's writes are counted in its parent's (Linux: wait_task_zombie): the child's answer, written to
    # its output file, is all that the size of a preview is written (a copy of the blob was 24 MB more)
    assert written < len(made.body) + (64 << 10) < size // 10, (
        f"{written:,} octets written, a {len(made.body):,}-octet preview")
    with Image.open(io.BytesIO(made.body)) as preview:
        assert preview.mode == "L" and max(preview.size) == 4096 and abs(preview.size[1] - 4096 * 2 / 3) <= 1
        shown = np.asarray(preview).astype(float)
    # row y of the scan is level y mod 251: each row of the preview is the mean of the rows it shrinks
    rows = np.arange(HEIGHT) % 251
    scale = HEIGHT / shown.shape[0]
    for r in (100, 1000, 2000):
        expected = rows[int(r * scale):int((r + 1) * scale)].mean()
        assert abs(shown[r].mean() - expected) < 8, (r, shown[r].mean(), expected)


def test_a_blob_file_damaged_before_the_child_is_started_is_damage(scan: tuple[str, str, str, int],
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    location, name, sha256, _ = scan
    monkeypatch.setattr(cite, "_PREVIEWS", OrderedDict())
    path = blob_file(location, sha256)
    data = bytearray(path.read_bytes())
    data[3 * (1 << 20) + 5] ^= 1  # a pixel of chunk 3: the TIFF is still read whole, other pixels
    rewrite_blob(location, sha256, bytes(data))
    started: list[int] = []
    monkeypatch.setattr(streamed, "run_child", lambda *a, **k: started.append(1))
    with Archive.open(location) as archive, pytest.raises(DamagedError, match="chunk 3 "):
        cite.image_preview(archive, name)
    assert started == []  # checked before the child was given the file


def test_a_blob_file_changed_while_the_child_read_it_is_checked_again(scan: tuple[str, str, str, int],
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """The file is checked before the child reads it and, where it changed since (its identity by ``fstat``:
    written in place, its status-change time moved), again after: a preview of octets damaged while it was made is
    refused, not shown."""
    location, name, sha256, _ = scan
    monkeypatch.setattr(cite, "_PREVIEWS", OrderedDict())
    real: Callable[..., Outcome] = streamed.run_child

    def damaging(*args: object, **kwargs: object) -> Outcome:
        outcome = real(*args, **kwargs)
        path = blob_file(location, sha256)
        data = bytearray(path.read_bytes())
        data[5 * (1 << 20) + 9] ^= 1
        rewrite_blob(location, sha256, bytes(data))  # in place: the reader's descriptor sees it
        return outcome

    monkeypatch.setattr(streamed, "run_child", damaging)
    with Archive.open(location) as archive, pytest.raises(DamagedError, match="chunk 5 "):
        cite.image_preview(archive, name)
    assert not cite._PREVIEWS  # nothing kept
