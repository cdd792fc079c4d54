"""The child process libvips runs in for pdi (``python -m pdi.fragments.image_child LIMITS WORK FORMAT ARG…``).

:func:`pdi.fragments.image_streamed.crop_streamed` and
:func:`~pdi.fragments.image_streamed.preview` run it under
:data:`pdi.fragments.image_streamed.LIMITS` (:mod:`pdi._bounded`). It reads
the image (``PNG``, ``JPEG`` or ``TIFF``, chosen by the parent from its
signature) from its standard input, a file, by ``read`` (never mapped: a file
larger than the child's address space is read as any other), a few rows at
a time, and writes one answer to its standard output:

* ``crop FORMAT X Y WIDTH HEIGHT``: that region of frame 0, as PNG;
* ``preview FORMAT SIDE [ORIENTATION]``: frame 0 shrunk to at most SIDE pixels a side, as
  JPEG (PNG where it has alpha), turned as EXIF ``ORIENTATION`` (2 to 8) says, as a browser turns
  the image itself (:func:`turned`), and saying no orientation of its own.
"""

from __future__ import annotations

import os
from typing import Any

from pdi._bounded import child_main

#: The quality of a preview's JPEG (libjpeg's scale): what a screen shows without visible blocks.
PREVIEW_QUALITY = 85


def work(args: list[str]) -> bytes:
    """The answer to ``args`` (``WORK FORMAT ARG…``) for the image on standard input."""
    os.environ["VIPS_CONCURRENCY"] = "1"  # read by libvips when it starts, at its import below
    os.environ.setdefault("VIPS_WARNING", "0")
    from pdi.errors import LimitError, UnsupportedError
    from pdi.fragments.image_streamed import MAX_STREAMED_PIXELS

    pyvips = _pyvips()

    pyvips.block_untrusted_set(True)
    pyvips.cache_set_max(0)
    what, fmt, rest = args[0], args[1], args[2:]
    loader = {"PNG": pyvips.Image.pngload_source, "JPEG": pyvips.Image.jpegload_source,
              "TIFF": pyvips.Image.tiffload_source}[fmt]
    source = pyvips.Source.new_from_descriptor(0)
    try:
        image: Any = loader(source, access="sequential", fail=True)  # the header only, so far
        pixels = image.width * image.height
        if pixels > MAX_STREAMED_PIXELS:
            raise LimitError(f"a {image.width}×{image.height} {fmt}: its header claims {pixels:,} pixels, more than"
                             f" the {MAX_STREAMED_PIXELS:,} pdi decodes (pdi.fragments.image_streamed"
                             ".MAX_STREAMED_PIXELS)")
        if what == "crop":
            x, y, width, height = (int(v) for v in rest)
            return _cut(pyvips, _pillow_samples(image, fmt), x, y, width, height)
        if what == "preview":
            side = int(rest[0])
            if max(image.width, image.height) > side:
                image = image.resize(side / max(image.width, image.height), kernel="linear") \
                    if fmt != "JPEG" else _shrunk_jpeg(pyvips, image, side)
            image = turned(_eight_bits(image), int(rest[1]) if len(rest) > 1 else 1)
            if image.hasalpha():
                return bytes(image.pngsave_buffer(compression=6))
            return bytes(image.jpegsave_buffer(Q=PREVIEW_QUALITY, strip=True))
    except pyvips.Error as exc:
        raise UnsupportedError(f"cannot read this {fmt} image: {_said(exc)}") from None
    raise ValueError(f"no such work: {what!r}")


def turned(image: Any, orientation: int) -> Any:
    """``image`` (a preview: a few thousand pixels a side) turned as EXIF ``orientation`` says, as Pillow's
    ``ImageOps.exif_transpose`` turns it (CIPA DC-008 §4.6.4: 6 is a quarter turn clockwise, 5 and 7 those
    mirrored); 1 or any other value: as it is. Read into memory first: libvips turns no image read in sequence."""
    if not 2 <= orientation <= 8:
        return image
    image = image.copy_memory()
    turn = {3: "d180", 5: "d90", 6: "d90", 7: "d90", 8: "d270"}.get(orientation)
    if turn is not None:
        image = image.rot(turn)
    if orientation in (2, 5):
        image = image.fliphor()
    elif orientation in (4, 7):
        image = image.flipver()
    return image


def _pyvips() -> Any:
    """pyvips, with libvips loaded; where either is not installed, an :class:`~pdi.errors.UnsupportedError` saying
    which and how to install it (not the import's traceback: found in review, 2026-11-29)."""
    from pdi.errors import UnsupportedError

    needed = "images larger than Pillow decodes are cut and shrunk by libvips"
    try:
        import pyvips
    except ImportError as exc:
        raise UnsupportedError(f"{needed}, through pyvips, which is not installed ({exc}): pip install pyvips, one of"
                               " pdi's dependencies") from None
    except Exception as exc:  # ABI mode: OSError where cffi finds no libvips.so.42, Exception where it will not start
        raise UnsupportedError(f"{needed}, which is not installed or will not start on this machine (Debian: apt-get"
                               f" install libvips42; scripts/bootstrap installs it): {_said(exc)}") from None
    return pyvips


#: The rows read at a time while cutting (each a strip of the region's width).
STRIP = 64


def _cut(pyvips: Any, image: Any, x: int, y: int, width: int, height: int) -> bytes:
    """The region as PNG, its rows read from the image's first row on, strip by strip, those above the region
    let go as they are read. Not ``image.crop``: libvips 8.14's sequential reading keeps every row it skips to
    reach a region's first (a region at the foot of a 250-million-pixel scan held all of its 250 MB)."""
    region = pyvips.Region.new(image)
    size = image.bands * (2 if image.format == "ushort" else 1)
    parts, row = [], 0
    while row < y + height:
        rows = min(STRIP, y + height - row)
        strip = region.fetch(x, row, width, rows)
        if row + rows > y:
            parts.append(strip[(max(row, y) - row) * width * size:])
        row += rows
    cut = pyvips.Image.new_from_memory(b"".join(parts), width, height, image.bands, image.format)
    return bytes(cut.copy(interpretation=image.interpretation).pngsave_buffer(compression=6))


def _shrunk_jpeg(pyvips: Any, image: Any, side: int) -> Any:
    """A JPEG shrunk to ``side``: decoded at 1/2, 1/4 or 1/8 of its size where that is still larger (libjpeg's
    shrink-on-load: an eighth of the work), then resized."""
    shrink = 1
    while shrink < 8 and max(image.width, image.height) // (shrink * 2) >= side:
        shrink *= 2
    if shrink > 1:
        os.lseek(0, 0, os.SEEK_SET)
        image = pyvips.Image.jpegload_source(pyvips.Source.new_from_descriptor(0), access="sequential", fail=True,
                                             shrink=shrink)
    return image.resize(side / max(image.width, image.height), kernel="linear") \
        if max(image.width, image.height) > side else image


def _pillow_samples(image: Any, fmt: str) -> Any:
    """``image`` (a region) with the samples Pillow reads from the same file: 8 bits a sample, or 16 for grey
    alone (Pillow's ``I;16``); colour of 16 bits cut to its high octet, as Pillow's PNG and TIFF readers do."""
    from pdi.errors import UnsupportedError

    interpretation = image.interpretation
    if interpretation not in ("b-w", "grey16", "srgb", "rgb16", "multiband") or image.bands > 4 \
            or (interpretation == "multiband" and image.bands not in (1, 2)):
        raise UnsupportedError(f"crop of a {fmt} of {image.bands} bands in {interpretation}: only grey, grey and"
                               " alpha, RGB and RGBA are cut losslessly past Pillow's limit")
    if image.format == "ushort" and image.bands == 1:
        return image.copy(interpretation="grey16")
    return _eight_bits(image).copy(interpretation="b-w" if image.bands <= 2 else "srgb")


def _eight_bits(image: Any) -> Any:
    """``image`` with 8-bit samples: 16-bit ones cut to their high octet; any other kind refused."""
    from pdi.errors import UnsupportedError

    if image.format == "uchar":
        return image
    if image.format == "ushort":
        return (image >> 8).cast("uchar")
    raise UnsupportedError(f"an image of {image.format} samples: PNG holds at most 16 bits a sample, and a crop"
                           " is never lossy; use rect, or byte ranges")


def _said(error: Exception) -> str:
    """What libvips said, on one line, bounded."""
    text = " ".join(str(getattr(error, "detail", "") or error).split())
    return text[:300]


if __name__ == "__main__":
    child_main(work)
