"""Crops and previews of images too large for Pillow, decoded by libvips in a bounded child process.

Pillow decodes a whole frame to cut it, and opens no image of more than
twice its ``MAX_IMAGE_PIXELS`` (about 179 million pixels): an archive's map
and newspaper scans hold 200 to 500 million. libvips (through ``pyvips``)
decodes PNG, JPEG and TIFF as a stream, a few rows at a time, with
``access="sequential"``: cutting a region reads the file from its top to the
region's last row, and a preview shrinks the rows as they are read, so the
memory it takes is a few rows of the image and the answer, whatever the image's
size. Pillow stays the reader of every ordinary image
(:mod:`pdi.fragments.image`); this module is used for a single-frame PNG,
JPEG or TIFF larger than a Pillow crop decodes
(:data:`~pdi.fragments.image.MAX_CROP_PIXELS`):

* :func:`crop_streamed`: the pixels of a region, as PNG, the same pixels
  Pillow gives for the same region (its ``crop`` through
  :func:`pdi.fragments.image._png`): 8- and 16-bit grey, grey and alpha,
  RGB, RGBA; 16-bit colour is cut to its high octet, as Pillow reads it.
  Two differences of form, not of colour: a palette image's crop is RGB(A)
  (libvips expands the palette as it reads), a one-bit image's 8-bit grey
  of 0 and 255. CMYK, LAB and samples of 32 bits are refused here (Pillow
  would recompute or refuse them too);
* :func:`preview`: the image shrunk to at most :data:`PREVIEW_SIDE` pixels
  on its longer side (JPEG, or PNG where it has alpha), what the viewer
  shows in place of an image too large for a browser.

The work runs in ``python -m pdi.fragments.image_child`` under :data:`LIMITS`
(:mod:`pdi._bounded`: a wall-clock deadline, an address-space limit, a bound
on the answer). The child reads the image from a file on its standard input,
by ``read`` (libvips' descriptor source maps nothing of it), so the file's
size does not count against its address space: a stored blob's map
(:class:`~pdi.fragments.results.MappedFile`) is given as its own file, never
copied through the map (which made the resolving process as large as the
blob). An image whose header claims more than
:data:`MAX_STREAMED_PIXELS` is refused before anything is decoded, and one
whose decoding passes a limit (an interlaced PNG or a progressive JPEG,
which libpng and libjpeg hold whole; an IDAT that inflates without end) is
:class:`~pdi.errors.LimitError` naming the limit. libvips is told to use no
operation cache, one worker thread, and none of its loaders marked untrusted;
the format is chosen here, from the file's signature, and only PNG, JPEG and
TIFF loaders are ever called.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass

from pdi._bounded import ChildLimit, ChildLimits, Outcome, run_child
from pdi.errors import LimitError
from pdi.fragments.results import Buffer, MappedFile

__all__ = ["CHILD", "LIMITS", "MAX_STREAMED_PIXELS", "PREVIEW_SIDE", "StreamedLimits", "crop_streamed", "preview",
           "run_streamed", "streamed_format"]

#: The most pixels an image may claim for libvips to decode it: a billion (a 40,000×25,000 map scan; about 15 s
#: to read through here). A file of a few octets may claim 10^10: it is refused from its header.
MAX_STREAMED_PIXELS = 1_000_000_000
#: The longer side, in pixels, of a preview (:func:`preview`): sharp on a 4K screen, some 2 MB as JPEG.
PREVIEW_SIDE = 4096
#: The module the libvips child runs (``python -m``).
CHILD = "pdi.fragments.image_child"


@dataclass(frozen=True)
class StreamedLimits:
    """What libvips may take to cut or shrink one image: it runs in a child process (:mod:`pdi._bounded`), killed
    past :attr:`seconds`, with at most :attr:`memory` octets of address space (``RLIMIT_AS``) and :attr:`output`
    octets of answer. Past any of them the work is a :class:`~pdi.errors.LimitError` naming the limit."""

    seconds: float = 60.0
    memory: int = 1536 << 20
    output: int = 256 << 20


#: The limits the libvips children run under (a program may set another :class:`StreamedLimits` here).
LIMITS = StreamedLimits()


def streamed_format(data: Buffer) -> str | None:
    """``"PNG"``, ``"JPEG"`` or ``"TIFF"`` (Pillow's names) by the file's signature, or None for any other format:
    the only ones handed to libvips."""
    head = bytes(data[:8])
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return "PNG"
    if head.startswith(b"\xff\xd8\xff"):
        return "JPEG"
    if head[:4] in (b"II*\x00", b"MM\x00*", b"II+\x00", b"MM\x00+"):  # TIFF and BigTIFF
        return "TIFF"
    return None


def crop_streamed(data: Buffer, box: tuple[int, int, int, int], *, name: str = "the image") -> bytes:
    """The pixels ``x1 ≤ x < x2``, ``y1 ≤ y < y2`` (``box``, inside the image) of frame 0 of the PNG, JPEG or TIFF
    ``data``, as a PNG image (see the module docstring)."""
    fmt = _format(data, name)
    x1, y1, x2, y2 = box
    return run_streamed("crop", data, [fmt, str(x1), str(y1), str(x2 - x1), str(y2 - y1)], name=name).data


def preview(data: Buffer | Iterator[bytes], side: int = PREVIEW_SIDE, *, name: str = "the image",
            orientation: int = 1) -> tuple[bytes, str]:
    """Frame 0 of the PNG, JPEG or TIFF ``data`` shrunk to at most ``side`` pixels on its longer side (never
    enlarged), and its media type: ``image/jpeg``, or ``image/png`` where the image has alpha; turned as EXIF
    ``orientation`` says (2 to 8: what a browser shows of a JPEG or PNG saying it,
    :data:`pdi.fragments.image.ORIENTED_WHEN_SHOWN`), and saying none itself. ``data`` may be its octets in pieces
    (a stored blob's verified chunks): they are written to the child's file one by one, never held together."""
    if isinstance(data, Iterator):
        first = next(data, b"")
        fmt = _format(first, name)
        data = itertools.chain([first], data)
    else:
        fmt = _format(data, name)
    answer = run_streamed("preview", data, [fmt, str(side), str(orientation)], name=name).data
    return answer, "image/png" if answer.startswith(b"\x89PNG") else "image/jpeg"


def run_streamed(work: str, data: Buffer | Iterator[bytes], args: list[str], *, name: str = "the image") -> Outcome:
    """What :data:`CHILD` answers for ``work`` (``crop`` or ``preview``) on ``data`` (given on its standard input, a
    file: a :class:`~pdi.fragments.results.MappedFile`'s own, else a copy of the octets, or of their pieces in
    turn) under :data:`LIMITS`, with its peak resident set; a limit passed is a :class:`~pdi.errors.LimitError`."""
    limits = ChildLimits(seconds=LIMITS.seconds, memory=LIMITS.memory, output=LIMITS.output)
    with _given(data) as given:
        try:
            return run_child(CHILD, [work, *args], limits, stdin=given)
        except ChildLimit as limit:
            raise LimitError(f"libvips {limit.detail} to {'cut' if work == 'crop' else 'shrink'} {name}"
                             f" (the limit pdi.fragments.image_streamed.LIMITS.{limit.kind})") from None


@contextlib.contextmanager
def _given(data: Buffer | Iterator[bytes]) -> Iterator[int]:
    """A descriptor of a file holding ``data``, open for reading at its start, for the child's standard input.

    A :class:`~pdi.fragments.results.MappedFile` (a stored blob's map) is its own file, opened anew (its own
    offset, which the child moves): nothing is copied, and no page of the map is touched here (a copy written
    through the map made the resolving process as large as the blob: 637 MiB for a 625 MB TIFF). Other octets,
    or their pieces in turn, are written to a temporary file."""
    if isinstance(data, MappedFile):
        try:
            descriptor = os.open(f"/proc/self/fd/{data.descriptor}", os.O_RDONLY | os.O_CLOEXEC)
        except OSError:  # no /proc: copied, as any other buffer
            pass
        else:
            try:
                yield descriptor
            finally:
                os.close(descriptor)
            return
    with tempfile.TemporaryFile(prefix="pdi-image-") as given:
        if isinstance(data, Iterator):
            for piece in data:
                given.write(piece)
        else:
            given.write(data)
        given.flush()
        os.lseek(given.fileno(), 0, os.SEEK_SET)
        yield given.fileno()


def _format(data: Buffer, name: str) -> str:
    from pdi.errors import UnsupportedError

    fmt = streamed_format(data)
    if fmt is None:
        raise UnsupportedError(f"{name}: only a PNG, JPEG or TIFF image is read by streaming")
    return fmt
