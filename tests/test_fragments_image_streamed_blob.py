"""``crop`` of a stored image whose blob is larger than the libvips child's address space: memory-bounded.

The libvips child (``pdi.fragments.image_child``) reads the image from its standard input, a file, by ``read``
(libvips' descriptor source: nothing of the file is mapped into the child), so a blob larger than its
``RLIMIT_AS`` does not count against it. What did grow with the blob (measured 2026-11-29: a crop of a 625 MB
TIFF, the resolving process's peak resident set 637 MiB, its child's 61 MiB) was the resolving process: it
copied the whole memory map of the blob into a temporary file for the child, touching every page of it (and
writing the blob's size to disk again). The image here is an uncompressed grey TIFF (``write_grey_tiff``: row
``y`` of level ``y mod 251``, worked out, not decoded), larger than the child's memory limit, which the resolving
process lowers to make the case cheap.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import mmap
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from pdi.archive import Archive, reading
from pdi.archive.blobs import ChunkedReader
from pdi.fragments.image_streamed import crop_streamed
from pdi.fragments.results import MappedFile
from peak_memory import run_with_peak
from support.big_image import write_grey_tiff
from support.stored_blobs import blob_file

S = "maps.library.example.us"
SIDE = 27_000  # 729 million pixels, one octet each: a blob of 695 MiB
#: The libvips child's address space in the resolving process: less than the blob. Not much less: the child's own
#: address space peaks between 180 and 460 MiB from one run to the next, whatever the image (libvips' and glib's
#: threads, malloc's arenas for them; measured 2026-11-29, VmPeak), and a thread it cannot start fails the crop.
CHILD_MIB = 640
#: The most either process may hold at its peak: a Python with Pillow and pdi, or libvips' few rows.
MOST_KIB = 160 * 1024

_RESOLVE = (
    "import sys\n"
    "from pdi.archive import Archive\n"
    "from pdi.fragments import image_streamed\n"
    f"image_streamed.LIMITS = image_streamed.StreamedLimits(memory={CHILD_MIB} << 20)\n"
    "run = image_streamed.run_child\n"
    "peaks = []\n"
    "def counted(*args, **kwargs):\n"
    "    outcome = run(*args, **kwargs)\n"
    "    peaks.append(outcome.peak_kib)\n"
    "    return outcome\n"
    "image_streamed.run_child = counted\n"
    "with Archive.open(sys.argv[1]) as archive:\n"
    "    cut = archive.resolve(sys.argv[2])\n"
    "    open(sys.argv[3], 'wb').write(cut.data)\n"
    "print(*peaks)\n"
)


def test_a_crop_of_a_blob_larger_than_the_childs_memory_takes_neither_process_its_size(tmp_path: Path) -> None:
    tiff = tmp_path / "map.tif"
    size = write_grey_tiff(str(tiff), SIDE, SIDE)
    assert size > CHILD_MIB << 20
    location = str(tmp_path / "archive")
    with Archive.init(location) as archive, tiff.open("rb") as stream:
        archive.add_series(S)
        name = str(archive.add(S, stream, format="tiff"))
    tiff.unlink()
    answer = tmp_path / "cut.png"
    x1, y1, x2, y2 = SIDE - 30, SIDE - 20, SIDE, SIDE  # the foot: every strip above it is read through
    status, peak, out = run_with_peak(
        [sys.executable, "-c", _RESOLVE, location, f"{name}#crop=({x1},{y1}),({x2},{y2})", str(answer)],
        stdout=subprocess.PIPE, timeout=120)
    assert status == 0
    (child,) = (int(v) for v in out.split())
    with Image.open(io.BytesIO(answer.read_bytes())) as cut:
        assert (cut.format, cut.mode, cut.size) == ("PNG", "L", (x2 - x1, y2 - y1))
        pixels = np.asarray(cut)
    assert (pixels == (np.arange(y1, y2) % 251)[:, None]).all()
    assert 0 < child < MOST_KIB, f"the libvips child: {child // 1024} MiB"
    assert peak < MOST_KIB, f"the resolving process: {peak // 1024} MiB, of a {size >> 20} MiB blob"


def test_a_map_of_an_unlinked_file_is_read_by_the_child_from_its_own_start(tmp_path: Path) -> None:
    """The map of a store's temporary copy (an unlinked file, its offset at its end once written): the child opens
    the file anew, so the crop is that of the same octets given as bytes, and the copy's offset is not moved."""
    tiff = tmp_path / "small.tif"
    write_grey_tiff(str(tiff), 7000, 6000)  # 42 million pixels: past a Pillow crop, cut by libvips
    data = tiff.read_bytes()
    with tempfile.TemporaryFile() as spool:
        spool.write(data)
        spool.flush()
        with MappedFile.of(spool.fileno()) as mapped:
            cut = crop_streamed(mapped, (10, 5990, 20, 6000))
        assert spool.tell() == len(data)
    assert cut == crop_streamed(data, (10, 5990, 20, 6000))
    with Image.open(io.BytesIO(cut)) as image:
        assert (np.asarray(image) == (np.arange(5990, 6000) % 251)[:, None]).all()


def test_a_blob_file_replaced_after_it_is_opened_is_cropped_from_the_file_verified(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The reader opens the blob's file; another file is then renamed to its path (a repair's copy, or anyone's)
    before the octets are mapped. The crop (libvips, in its child) and the check of the chunks it came from read
    the same file, the one opened first: the crop is of the octets deposited, not the replacement's, which the
    check never read (rows 0 to 9 of the replacement are 0xEE where the deposit's row y is y mod 251)."""
    tiff = tmp_path / "plan.tif"
    width = 7000
    write_grey_tiff(str(tiff), width, 6000)  # 42 million pixels: past a Pillow crop, cut by libvips
    deposited = tiff.read_bytes()
    location = tmp_path / "archive"
    with Archive.init(str(location)) as archive, tiff.open("rb") as stream:
        archive.add_series(S)
        name = str(archive.add(S, stream, format="tiff"))
    path = blob_file(location, hashlib.sha256(deposited).hexdigest())
    replacement = tmp_path / "replacement.tif"
    replacement.write_bytes(deposited[:8] + b"\xee" * (10 * width) + deposited[8 + 10 * width:])
    real = reading.mapped
    replaced = []

    @contextlib.contextmanager
    def replaced_then_mapped(reader: ChunkedReader) -> Iterator[bytes | mmap.mmap]:
        os.replace(replacement, path)  # between the reader's open and the map
        replaced.append(path)
        with real(reader) as octets:
            yield octets

    monkeypatch.setattr(reading, "mapped", replaced_then_mapped)
    with Archive.open(str(location)) as archive:
        cut = archive.resolve(f"{name}#crop=(0,0),(10,10)").data
    assert replaced == [path] and path.read_bytes()[8] == 0xEE
    with Image.open(io.BytesIO(cut)) as image:
        assert image.size == (10, 10)
        assert (np.asarray(image) == np.arange(10)[:, None]).all()
