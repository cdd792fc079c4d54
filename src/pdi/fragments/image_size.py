"""An image's size and frames read from its header alone, for images larger than Pillow opens.

Pillow's ``Image.open`` refuses any image whose header claims more than twice
``PIL.Image.MAX_IMAGE_PIXELS`` (about 179 million pixels), whatever is asked
of it, and has no public way to read the size without that check (the bound
is a global, never to be changed in a threaded server). A ``rect`` fragment
(and the viewer's highlight) needs no pixel, only the width and height of a
frame and the number of frames, so :func:`image_size` reads them here, by
each format's specification, from a few fixed places of the octets:

* PNG (PNG §11.2.2 IHDR; APNG §2.1 ``acTL``, the frames counted as Pillow
  counts them, :func:`pdi.fragments.image.frame_count`);
* JPEG (ITU T.81 B.1.1.3 markers, B.2.2 the frame header of any SOFn: its
  number of lines and samples per line); a JPEG holding an MPO index
  (CIPA DC-007, several images) is :class:`~pdi.errors.LimitError`: its
  frames are not read here;
* TIFF and BigTIFF (TIFF 6.0 §2 image file directories; ``ImageWidth`` 256
  and ``ImageLength`` 257 of the frame's directory), at most
  :data:`~pdi.fragments.image.MAX_TIFF_PAGES` pages;
* GIF (GIF89a §18 the logical screen, §20 each image descriptor; the canvas
  grows to hold every frame read so far, as Pillow grows it), at most
  :data:`MAX_GIF_FRAMES` frames and :data:`MAX_GIF_STEPS` steps (:func:`gif_frames`);
* WebP (the RIFF container: ``VP8X``'s canvas, else the ``VP8`` or ``VP8L``
  bitstream's size; an animation's ``ANMF`` chunks are its frames);
* BMP (the file header, then a ``BITMAPCOREHEADER``'s 16-bit or a
  ``BITMAPINFOHEADER``'s, V2 to V5's too, 32-bit width and height).

The EXIF ``Orientation`` a browser turns a JPEG or a PNG by is read there too (:func:`exif_orientation`), so that
a crop of such an image, cut by libvips, says it as a crop Pillow cuts does.

The names of the formats are Pillow's (``PNG``, ``JPEG``, ``TIFF``, ``GIF``,
``WEBP``, ``BMP``). Every read is a slice of a few octets at an offset checked
against the length; every walk along a file's segments, chunks, blocks or
directories moves forward and stops after :data:`MAX_STEPS` steps (a
:class:`~pdi.errors.LimitError`), so a stranger's file can neither hang it nor
make it read more than it steps over. A damaged or truncated header is a
:class:`~pdi.errors.ParseError` naming the octet offset where it failed; a
format not listed here is ``None``. Pure: no I/O, no pixel decoded.
"""

from __future__ import annotations

import mmap
import re
import struct
from collections.abc import Callable
from dataclasses import dataclass, field

from pdi.errors import LimitError, ParseError
from pdi.fragments.results import Readable

#: The most segments, chunks, blocks or directory entries one reading steps over: a real file has a few dozen before
#: its size, and a GIF of 250-octet sub-blocks about 4,000 a megabyte. A step is 0.4 to 2 µs of Python, so the
#: worst file (16 MB of empty JPEG segments, 32 MB of empty WebP chunks) takes a few seconds, less than Pillow
#: spent walking the same JPEG header before refusing it; a run of JPEG fill octets is one step.
MAX_STEPS = 4_000_000

_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
#: The most octets of an EXIF block read for its ``Orientation`` (:func:`exif_orientation`): a JPEG's ``APP1``
#: holds 64 KB at most; the 0th IFD, where the tag is, comes first in every camera's.
_EXIF_READ = 65_536
#: JPEG start-of-frame markers (ITU T.81 Table B.1): C0 to CF but DHT (C4), JPG (C8) and DAC (CC).
_SOF = frozenset(range(0xC0, 0xD0)) - {0xC4, 0xC8, 0xCC}
#: What a JPEG's walk steps over at once before a marker's code: fill octets (FF, T.81 B.1.1.2) and the markers
#: that have no length (TEM 01, RST0 to RST7 D0 to D7) each followed by fill octets, from an FF on. Possessive, so
#: a run is matched in time of its length (no run of FF is tried again from each of its octets).
_JPEG_SKIPPED = re.compile(rb"\xff++(?:[\x01\xd0-\xd7]\xff++)*+")
_BMP_INFO_HEADERS = frozenset({40, 52, 56, 64, 108, 124})

#: The most pages (image file directories) of a TIFF image fragments are evaluated on: Pillow counts them in time
#: of their number squared (100,000 one-pixel pages, 7.8 MB, took 42 s); 5,000 take a third of a second.
MAX_TIFF_PAGES = 5_000
#: The first four octets of a file Pillow reads as a TIFF (``TiffImagePlugin.PREFIXES``): the valid ones, the
#: two it takes anyway, and BigTIFF's.
_TIFF_PREFIXES = frozenset({b"MM\0*", b"II*\0", b"MM*\0", b"II\0*", b"MM\0+", b"II+\0"})


@dataclass(frozen=True)
class ImageSize:
    """A frame's width and height in pixels, the image's frames, and its format (Pillow's name); and the EXIF
    ``Orientation`` (1 to 8) its header says, of a JPEG (its first ``APP1`` ``Exif`` segment) or a PNG (an ``eXIf``
    chunk before its first ``IDAT``), 1 where it says none or none that can be read (:func:`exif_orientation`)."""

    format: str
    width: int
    height: int
    frames: int
    orientation: int = 1
    #: the pixels Pillow decodes to reach the frame asked for, where the walk found them (a GIF's); no part of the
    #: size, so not compared
    seek_pixels: int | None = field(default=None, compare=False)


#: The formats a browser turns by their EXIF orientation (:data:`pdi.fragments.image.ORIENTED_WHEN_SHOWN`, by the
#: names :func:`image_size` gives).
_TURNED_WHEN_SHOWN = frozenset({"JPEG", "PNG"})


@dataclass(frozen=True)
class ImageShown:
    """An image's stored size (its first frame's), its frames, its EXIF ``Orientation`` as its header says it (of a
    JPEG or PNG: :attr:`ImageSize.orientation`), and its size as a browser shows it (turned by that orientation:
    width and height swapped for 5 to 8)."""

    format: str
    width: int
    height: int
    frames: int
    orientation: int
    shown_width: int
    shown_height: int

    @classmethod
    def of(cls, size: ImageSize) -> ImageShown:
        turned = size.orientation >= 5 and size.format in _TURNED_WHEN_SHOWN
        return cls(size.format, size.width, size.height, size.frames, size.orientation,
                   size.height if turned else size.width, size.width if turned else size.height)

    def to_json(self) -> dict[str, object]:
        return {"width": self.width, "height": self.height, "frames": self.frames, "orientation": self.orientation,
                "shown": {"width": self.shown_width, "height": self.shown_height}}


def exif_orientation(block: bytes) -> int:
    """The ``Orientation`` (tag 0x0112, CIPA DC-008 §4.6.4) of the EXIF ``block`` (a TIFF header, then its
    directories: TIFF 6.0 §2) as a browser reads it, from the 0th IFD's entry of one SHORT (type 3), 1 to 8; 1
    where there is none, or the block is damaged: it is metadata beside the pixels, which are shown as stored
    then."""
    order = {b"II": "<", b"MM": ">"}.get(block[:2])
    if order is None or len(block) < 8:
        return 1
    magic, ifd = struct.unpack(order + "HI", block[2:8])
    if magic != 42 or ifd + 2 > len(block):
        return 1
    (entries,) = struct.unpack(order + "H", block[ifd:ifd + 2])
    for at in range(ifd + 2, min(ifd + 2 + 12 * entries, len(block) - 11), 12):
        tag, kind, count = struct.unpack(order + "HHI", block[at:at + 8])
        if tag == 0x0112:
            (value,) = struct.unpack(order + "H", block[at + 8:at + 10])
            return value if kind == 3 and count == 1 and 1 <= value <= 8 else 1
    return 1


def image_size(data: Readable, frame: int = 0) -> ImageSize | None:
    """The size of frame ``frame`` (0-based) of the image ``data`` and its number of frames, read from its header
    (see the module docstring); ``None`` for a format not read here. A ``frame`` past the last is answered with the
    last frame's size: the caller compares it with :attr:`ImageSize.frames`."""
    head = bytes(data[:16])
    if head.startswith(_PNG_SIGNATURE):
        return _png(data)
    if head.startswith(b"\xff\xd8"):
        return _jpeg(data)
    if head[:4] in (b"II*\0", b"MM\0*", b"II+\0", b"MM\0+"):
        return _tiff(data, frame)
    if head[:6] in (b"GIF87a", b"GIF89a"):
        return _gif(data, frame)
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return _webp(data)
    if head[:2] == b"BM":
        return _bmp(data)
    return None


def _read(data: Readable, at: int, form: str, what: str) -> tuple[int, ...]:
    """``struct.unpack`` of ``form`` at ``at``, or a :class:`ParseError` saying the file ends inside ``what``."""
    size = struct.calcsize(form)
    if at < 0 or at + size > len(data):
        raise ParseError(f"the image ends inside {what} ({len(data):,} octets)", offset=at)
    return struct.unpack(form, bytes(data[at:at + size]))


def _chunk_head(data: Readable, at: int, form: str, what: str) -> tuple[int, bytes]:
    """A chunk's header: its length and its four-octet type, in the order ``form`` gives them."""
    size = struct.calcsize(form)
    if at < 0 or at + size > len(data):
        raise ParseError(f"the image ends inside {what} ({len(data):,} octets)", offset=at)
    first, second = struct.unpack(form, bytes(data[at:at + size]))
    return (first, second) if isinstance(first, int) else (second, first)


def _positive(kind: str, width: int, height: int, at: int) -> tuple[int, int]:
    if width <= 0 or height <= 0:
        raise ParseError(f"the {kind} header claims {width}×{height} pixels: no image", offset=at)
    return width, height


class _Steps:
    """A count of the steps one reading takes, a :class:`LimitError` past :data:`MAX_STEPS`."""

    def __init__(self, kind: str) -> None:
        self.kind, self.taken = kind, 0

    def step(self, at: int) -> None:
        self.taken += 1
        if self.taken > MAX_STEPS:
            raise LimitError(f"reading the {self.kind}'s header took more than {MAX_STEPS:,} steps (at offset {at:,})")


def _png(data: Readable) -> ImageSize:
    length, kind = _chunk_head(data, 8, ">I4s", "the first chunk's header")
    if kind != b"IHDR" or length < 13:
        raise ParseError(f"a PNG's first chunk is IHDR of 13 octets, not {kind!r} of {length}", offset=8)
    width, height = _read(data, 16, ">II", "IHDR")
    _positive("PNG", width, height, 16)
    # the chunks before the first IDAT, as Pillow reads them at open: an acTL there claims the frames, a second
    # one or an impossible count leaves a still image (APNG §2.1)
    claimed: int | None = None
    seen_actl = False
    exif: bytes | None = None
    at, steps = 8, _Steps("PNG")
    while True:
        steps.step(at)
        length, kind = _chunk_head(data, at, ">I4s", "a chunk's header")
        if kind in (b"IDAT", b"IEND"):
            break
        if kind == b"acTL":
            (count,) = _read(data, at + 8, ">I", "acTL")
            claimed = None if seen_actl or count == 0 or count > 0x80000000 else count
            seen_actl = True
        elif kind == b"eXIf" and exif is None:
            exif = bytes(data[at + 8:at + 8 + min(length, _EXIF_READ)])
        at += 12 + length
    frames = min(claimed, png_frames(data, claimed)) if claimed is not None and claimed > 1 else 1
    return ImageSize("PNG", width, height, frames, exif_orientation(exif) if exif is not None else 1)


def _jpeg(data: Readable) -> ImageSize:
    size: tuple[int, int] | None = None
    exif: bytes | None = None
    at, steps, end = 2, _Steps("JPEG"), len(data)
    # octets read by index where the file holds them (a step of empty segments is some 1 µs), by _read to say where
    # it ends otherwise
    while True:
        steps.step(at)
        if at >= end or data[at] != 0xFF:
            (octet,) = _read(data, at, "B", "a marker")
            raise ParseError(f"a JPEG marker begins with FF, not {octet:02X}", offset=at)
        # fill octets (T.81 B.1.1.2) and the markers without a length (TEM, RSTn), a run of them one step
        at = _past_fill(data, at, end)
        (marker,) = _read(data, at, "B", "a marker") if at >= end else (data[at],)
        at += 1
        if marker == 0x01 or 0xD0 <= marker <= 0xD7:  # one without a length followed by no FF: not a marker next
            continue
        if marker in (0xD9, 0xDA):  # the end of the image, or its first scan: every frame header is before it
            break
        (length,) = _read(data, at, ">H", "a segment's length") if at + 2 > end else (data[at] << 8 | data[at + 1],)
        if length < 2:
            raise ParseError(f"a JPEG segment's length is {length}, less than its own two octets", offset=at)
        if marker in _SOF:
            height, width = _read(data, at + 3, ">HH", "the frame header")
            size = (width, height)
        elif marker == 0xE2 and bytes(data[at + 2:at + 6]) == b"MPF\0":
            raise LimitError("a multi-picture JPEG (MPO) larger than Pillow opens: its frames are not counted from"
                             " its header")
        elif marker == 0xE1 and exif is None and bytes(data[at + 2:at + 8]) == b"Exif\0\0":
            exif = bytes(data[at + 8:at + min(length, 8 + _EXIF_READ)])
        at += length
    if size is None:
        raise ParseError("a JPEG with no frame header (SOFn) before its first scan", offset=at)
    return ImageSize("JPEG", *_positive("JPEG", *size, at), 1, exif_orientation(exif) if exif is not None else 1)


def _past_fill(data: Readable, at: int, end: int) -> int:
    """Past the run of fill octets and markers without a length at ``at`` (an FF): by the regular expression on a
    buffer, octet by octet on octets read by slices (a regular expression reads only a buffer)."""
    if isinstance(data, (bytes, bytearray, memoryview, mmap.mmap)):
        return _JPEG_SKIPPED.match(data, at).end()  # type: ignore[union-attr]  # it matches the FF just read
    while at < end and data[at] == 0xFF:
        at += 1
    while at + 1 < end and (data[at] == 0x01 or 0xD0 <= data[at] <= 0xD7) and data[at + 1] == 0xFF:
        at += 1
        while at < end and data[at] == 0xFF:
            at += 1
    return at


def _tiff(data: Readable, frame: int) -> ImageSize:
    pages = tiff_pages(data)
    if pages > MAX_TIFF_PAGES:
        raise LimitError(f"a TIFF of {pages:,} pages or more: more than the {MAX_TIFF_PAGES:,} image fragments are"
                         " evaluated on")
    if pages == 0:
        raise ParseError("a TIFF whose first image file directory is not in the file", offset=4)
    order = "<" if bytes(data[:2]) == b"II" else ">"
    big = data[2] == 43
    count_of, entry_size, pointer = ("Q", 20, "Q") if big else ("H", 12, "I")
    (at,) = _read(data, 8 if big else 4, order + pointer, "the header")
    for _ in range(min(frame, pages - 1)):  # the chain tiff_pages walked: each directory is in the file
        (entries,) = _read(data, at, order + count_of, "a directory's count")
        (at,) = _read(data, at + struct.calcsize(order + count_of) + entries * entry_size, order + pointer,
                      "a directory's next offset")
    (entries,) = _read(data, at, order + count_of, "a directory's count")
    found: dict[int, int] = {}
    steps = _Steps("TIFF")
    first = at + struct.calcsize(order + count_of)
    for k in range(entries):
        place = first + k * entry_size
        steps.step(place)
        tag, kind, count = _read(data, place, order + ("HHQ" if big else "HHI"), "a directory entry")
        if tag not in (256, 257) or count != 1:
            continue
        value = place + (12 if big else 8)
        if kind == 3:  # SHORT
            (found[tag],) = _read(data, value, order + "H", "a directory entry")
        elif kind == 4:  # LONG
            (found[tag],) = _read(data, value, order + "I", "a directory entry")
        elif kind == 16 and big:  # LONG8
            (found[tag],) = _read(data, value, order + "Q", "a directory entry")
        if len(found) == 2:
            break
    if len(found) < 2:
        missing = " and ".join(name for tag, name in ((256, "ImageWidth"), (257, "ImageLength")) if tag not in found)
        raise ParseError(f"a TIFF directory without {missing}", offset=at)
    return ImageSize("TIFF", *_positive("TIFF", found[256], found[257], at), pages)


def _gif(data: Readable, frame: int) -> ImageSize:
    walk = gif_frames(data, frame)
    return ImageSize("GIF", *_positive("GIF", *walk.size, 6), walk.frames, seek_pixels=walk.seek_pixels)


#: The most frames of a GIF that image fragments are evaluated on. Every frame is counted before one is chosen
#: (and Pillow counts them again, some 15 µs each): a 3 MB GIF of 200,000 one-pixel frames took 3 s for its first
#: frame and 12 s for its last; a real animation has a few thousand at most.
MAX_GIF_FRAMES = 10_000
#: The most blocks, data sub-blocks and octets no block begins with that a walk along a GIF steps over. Pillow
#: reads each with a call of its own, 2 to 4 µs, and walks the file three times to seek a frame (opening it,
#: counting its frames, seeking): a GIF of 10 frames and a million one-octet comment sub-blocks between them (2
#: MB) took it 7 s, one of a million octets no block begins with 4 s. A frame's data in sub-blocks of 255 octets
#: is 4,000 steps a megabyte, so this is a GIF of some 60 MB, refused, like a hostile one, at once.
MAX_GIF_STEPS = 250_000
#: A run of octets no GIF block begins with (GIF89a §15: an extension ``!``, an image ``,``, the trailer ``;``).
_GIF_STRAY = re.compile(rb"[^\x21\x2c\x3b]+")


@dataclass(frozen=True)
class GifFrames:
    """What one walk along a GIF's blocks finds (:func:`gif_frames`)."""

    #: its frames, as Pillow counts them (an image descriptor before the trailer)
    frames: int
    #: the canvas once the frame asked for is read (the logical screen grown to hold every frame so far); past the
    #: last frame, the last frame's
    size: tuple[int, int]
    #: the pixels Pillow decodes to reach the frame asked for: each frame before it, on the canvas as it then is
    seek_pixels: int


def gif_frames(data: Readable, frame: int = 0, *, strict: bool = True) -> GifFrames:
    """The frames of the GIF ``data``, the canvas of frame ``frame`` and the pixels reaching it decodes, read from
    the blocks' headers alone (GIF89a §§17–24) in one walk, no pixel decoded: at most :data:`MAX_GIF_STEPS` steps
    and :data:`MAX_GIF_FRAMES` frames, past either a :class:`~pdi.errors.LimitError` said at once, whatever the
    file's length. A run of octets no block begins with is skipped as Pillow skips it (each octet a step of its
    walk, so a step of this one), but found at once. ``strict``: a file cut inside an image descriptor is a
    :class:`ParseError`; else the walk ends there (Pillow's own reading then says what it makes of it)."""
    width, height = _read(data, 6, "<HH", "the logical screen descriptor")
    (flags,) = _read(data, 10, "B", "the logical screen descriptor")
    at = 13 + ((3 << ((flags & 7) + 1)) if flags & 0x80 else 0)  # past the global colour table
    frames, size, pixels, steps = 0, (width, height), 0, 0
    end = len(data)

    def step(count: int, where: int) -> None:
        nonlocal steps
        steps += count
        if steps > MAX_GIF_STEPS:
            raise LimitError(f"a GIF of more than {MAX_GIF_STEPS:,} blocks, sub-blocks and stray octets (at offset"
                             f" {where:,}): image fragments are evaluated on GIFs of fewer")

    while at < end:
        step(1, at)
        block = data[at]
        if block == 0x21:  # an extension: its label, then its sub-blocks
            at = _past_gif_sub_blocks(data, at + 2, step)
        elif block == 0x2C:  # an image: its descriptor, colour table, LZW code size, data
            if at + 10 > end and not strict:
                break
            left, top, across, down, local = _read(data, at + 1, "<HHHHB", "an image descriptor")
            if frames == MAX_GIF_FRAMES:
                raise LimitError(f"a GIF of more than {MAX_GIF_FRAMES:,} frames (at offset {at:,}): image fragments"
                                 f" are evaluated on GIFs of at most {MAX_GIF_FRAMES:,}")
            if frames < frame:
                pixels += max(width, left + across) * max(height, top + down)
            width, height = max(width, left + across), max(height, top + down)
            if frames <= frame:
                size = (width, height)
            frames += 1
            at += 10 + ((3 << ((local & 7) + 1)) if local & 0x80 else 0)
            at = _past_gif_sub_blocks(data, at + 1, step)
        elif block == 0x3B:  # the trailer
            break
        else:  # octets no block begins with, skipped as Pillow skips them, one at a time: found as a run
            run = _stray_run(data, at)
            step(run - 1, at)
            at += run
    if frames == 0 and strict:
        raise ParseError("a GIF without an image descriptor", offset=at)
    return GifFrames(frames, size, pixels)


def _stray_run(data: Readable, at: int) -> int:
    """How many octets from ``at`` (one at least) no GIF block begins with, read a slice at a time."""
    run = 0
    while True:
        chunk = bytes(data[at + run:at + run + (1 << 16)])
        found = _GIF_STRAY.match(chunk)
        length = found.end() if found is not None else 0
        run += length
        if length < len(chunk) or not chunk:
            return max(run, 1)


def _past_gif_sub_blocks(data: Readable, at: int, step: Callable[[int, int], None]) -> int:
    """The offset after a run of GIF data sub-blocks (each its length, then as many octets; the last empty)."""
    end = len(data)
    while at < end:
        step(1, at)
        length = data[at]
        at += 1 + length
        if not length:
            break
    return at


def _webp(data: Readable) -> ImageSize:
    head = bytes(data[:30])
    kind = head[12:16]
    if kind == b"VP8 " and len(head) >= 30 and head[23:26] == b"\x9d\x01\x2a":  # a key frame's start code
        width, height = (v & 0x3FFF for v in _read(data, 26, "<HH", "the VP8 frame header"))
    elif kind == b"VP8L" and len(head) >= 25 and head[20] == 0x2F:
        (bits,) = _read(data, 21, "<I", "the VP8L header")
        width, height = (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    elif kind == b"VP8X" and len(head) >= 30:
        width = int.from_bytes(head[24:27], "little") + 1
        height = int.from_bytes(head[27:30], "little") + 1
    else:
        raise ParseError(f"a WebP whose first chunk is not VP8X, a VP8 key frame or VP8L ({kind!r})", offset=12)
    frames = 1
    if kind == b"VP8X" and head[20] & 0x02:  # an animation: its ANMF chunks are its frames
        frames, at, steps = 0, 12, _Steps("WebP")
        (riff_size,) = _read(data, 4, "<I", "the RIFF header")
        end = min(len(data), 8 + riff_size)
        while at + 8 <= end:
            steps.step(at)
            length, chunk = _chunk_head(data, at, "<4sI", "a chunk's header")
            frames += chunk == b"ANMF"
            at += 8 + length + (length & 1)
        if frames == 0:
            raise ParseError("an animated WebP without an ANMF chunk", offset=at)
    return ImageSize("WEBP", *_positive("WebP", width, height, 12), frames)


def _bmp(data: Readable) -> ImageSize:
    (header_size,) = _read(data, 14, "<I", "the bitmap header's size")
    if header_size == 12:  # BITMAPCOREHEADER
        width, height = _read(data, 18, "<HH", "the BITMAPCOREHEADER")
    elif header_size in _BMP_INFO_HEADERS:  # BITMAPINFOHEADER to BITMAPV5HEADER
        width, height = _read(data, 18, "<II", "the BITMAPINFOHEADER")
        if height >> 24 == 0xFF:  # a negative height, a top-down image, told by its top octet as Pillow tells it
            height = 2**32 - height
    else:
        raise ParseError(f"a BMP header of {header_size} octets: none of 12, 40, 52, 56, 64, 108 or 124", offset=14)
    return ImageSize("BMP", *_positive("BMP", width, height, 18), 1)


def png_frames(data: Readable, most: int) -> int:
    """The frames Pillow reaches in the PNG ``data``: the image of its first ``IDAT`` chunk, then one for each
    ``fcTL`` chunk after it, counted along its chunks (PNG §5.3: a length, a type, the data, a CRC) up to
    ``most`` or its ``IEND``."""
    frames, at, end, images = 1, 8, len(data), False
    while at + 8 <= end and frames < most:
        length = int.from_bytes(data[at:at + 4], "big")
        kind = bytes(data[at + 4:at + 8])
        if kind == b"IEND":
            break
        if kind == b"IDAT":
            images = True
        elif kind == b"fcTL" and images:
            frames += 1
        at += 12 + length
    return frames


def tiff_pages(data: Readable) -> int:
    """The image file directories of a TIFF (TIFF 6.0 §2; BigTIFF's eight-octet offsets too), counted along their
    chain from the header in one pass, a loop or an offset past the end ending it; at most one more than
    :data:`MAX_TIFF_PAGES` (enough to refuse it)."""
    if bytes(data[:4]) not in _TIFF_PREFIXES or len(data) < 16:
        return 0
    # as Pillow reads the header (TiffImagePlugin.ImageFileDirectory_v2): the byte order from its first two
    # octets, BigTIFF when its third is 43, the first directory's offset after it
    order = "<" if bytes(data[:2]) == b"II" else ">"
    big = data[2] == 43
    at = struct.unpack(order + ("Q" if big else "I"), bytes(data[8 if big else 4:16 if big else 8]))[0]
    count_of, entry, offset = ("Q", 20, "Q") if big else ("H", 12, "I")
    seen: set[int] = set()
    while at and at not in seen and len(seen) <= MAX_TIFF_PAGES:
        head = struct.calcsize(order + count_of)
        if at + head > len(data):
            break
        seen.add(at)
        entries = struct.unpack(order + count_of, bytes(data[at:at + head]))[0]
        following = at + head + entries * entry
        if following + struct.calcsize(order + offset) > len(data):
            break
        at = struct.unpack(order + offset, bytes(data[following:following + struct.calcsize(order + offset)]))[0]
    return len(seen)
