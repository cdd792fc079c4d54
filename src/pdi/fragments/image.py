"""Image fragments: ``rect`` and ``crop`` (draft lines 676–723; PDI-GRAMMAR.md §3).

``#rect=(x1,y1),(x2,y2)[,frame]`` (the scheme name may be omitted on an
image: ``rect`` is the default) selects the pixels ``x1 ≤ x < x2``,
``y1 ≤ y < y2`` of frame ``frame`` (0-based, default 0), with the origin in
the upper left corner and one unit per pixel: ``#(5,10),(25,30)`` is the
maximal rectangle containing (5,10), (24,10), (24,29) and (5,29) (line 708).

* ``rect`` returns the stored image unchanged, with the region in
  :attr:`~pdi.fragments.FragmentResult.region`: a viewer shows it
  highlighted in the whole image (PDI-GRAMMAR.md's reading).
* ``crop`` (PDI-GRAMMAR.md's decision; the draft does not define it)
  returns the cut-out pixels as a PNG image (``image/png``): lossless
  whatever the stored format, so cutting a JPEG does not compress it again,
  and the same bytes every time for the same Pillow and zlib. Modes PNG
  cannot hold are converted: to the same samples in another mode where one
  exists (16-bit little-endian grey, premultiplied alpha), else to RGB
  (RGBA where there is an alpha channel or a transparent colour) for CMYK,
  YCbCr, LAB and the like, which is the one case where colours are
  recomputed. An ICC profile is kept when the mode is; 32-bit integer or
  float images cannot be cut without loss and are refused.

A corner past the right or bottom edge is taken as the edge and the result
says ``clamped`` (as text positions past the end are); a ``rect`` that starts
at or past the right (or bottom) edge and reaches further holds no pixel and
says ``past_end`` too. A frame the image does
not have is :class:`~pdi.errors.NotFoundError`; a ``crop`` with no pixels
(zero width or height) is :class:`~pdi.errors.UnsupportedError`, since there
is no empty image to return. Images are read with Pillow (PNG, GIF, JPEG,
TIFF, WebP, BMP …); a format it cannot read is
:class:`~pdi.errors.UnsupportedError`. Damage Pillow reads past (an EXIF
block that runs past its end, a tag it skips) is no error: a region is of the
pixels it read, and its warnings stay here (:func:`pillow_reading`). Pillow opens no image whose header
claims more than twice its ``MAX_IMAGE_PIXELS`` (about 179 million pixels,
a map scan of 250 million), and has no public way to read its size without
that check (the bound is a global, never changed in a threaded server):
``rect`` of such an image reads its size and frames from the header alone,
:func:`pdi.fragments.image_size.image_size` (PNG, JPEG, TIFF, GIF, WebP,
BMP; a damaged header is :class:`~pdi.errors.UnsupportedError` naming the
offset). Pillow decodes a whole frame to cut it (its JPEG ``draft`` reduces
the scale, which a lossless cut cannot, and it has no public way to decode a
region of a tiled TIFF): a ``crop`` of a frame of more than
:data:`MAX_CROP_PIXELS`, whether Pillow opens it or not, is cut by libvips,
streaming, in a bounded child (:mod:`pdi.fragments.image_streamed`: the
first frame of a PNG, JPEG or TIFF, a region of at most
:data:`MAX_CROP_PIXELS`, the same pixels Pillow gives); of any other such
frame it is :class:`~pdi.errors.LimitError` saying so, as is any fragment of
another format or an MPO larger than Pillow opens. So is a frame of a GIF, APNG, WebP or
FLI whose reaching decodes more than :data:`MAX_SEEK_PIXELS` (Pillow
composes each frame on the ones before it, so frame N costs N canvases),
any fragment of a TIFF of more than :data:`MAX_TIFF_PAGES` pages, and a
crop of a JPEG of more than :data:`MAX_JPEG_SCANS` scans.
Pure but for that child: no other I/O.
"""

from __future__ import annotations

import contextlib
import io
import re
import struct
import warnings
import zlib
from collections.abc import Iterator, Sequence
from typing import IO, Any, cast

from pdi._wording import plural
from pdi.errors import LimitError, NotFoundError, ParseError, PDIError, UnsupportedError
from pdi.fragments.image_size import MAX_TIFF_PAGES as MAX_TIFF_PAGES
from pdi.fragments.image_size import gif_frames, png_frames
from pdi.fragments.image_size import tiff_pages as tiff_pages
from pdi.fragments.results import Buffer, BufferFile, FragmentResult, Readable, Region

#: The most pixels a Pillow crop decodes (a frame of 40 million pixels is about 160 MB in RGBA), and the most a crop
#: answers: a larger frame (a decompression bomb, a 420 KB PNG of 12,000×12,000 pixels, or a map scan) is never
#: decoded whole here; libvips cuts it streaming, in a bounded child (:mod:`pdi.fragments.image_streamed`).
MAX_CROP_PIXELS = 40_000_000

#: Formats whose frames Pillow composes one upon another (GIF, APNG, WebP, FLI): seeking frame N decodes every
#: frame before it onto the whole canvas, whose size every frame has.
_COMPOSED = frozenset({"GIF", "PNG", "WEBP", "FLI"})
#: The most pixels seeking a frame of such a format may decode: its number times the canvas's pixels (about a
#: second). A 69 KB GIF holds 3,000 one-pixel frames on a canvas of 64 million pixels: minutes for its last.
MAX_SEEK_PIXELS = 160_000_000

#: The most scans (start-of-scan markers, counted along the markers of the JPEG, or of an MPO's every image) a
#: JPEG may have to be cut: a progressive JPEG has ten or so; libjpeg visits every block of the frame once a scan.
MAX_JPEG_SCANS = 200

#: What Pillow raises on a damaged file: its own OSError and SyntaxError, and whatever its decoders and frame
#: counting stumble on (a GIF cut inside a frame: IndexError, struct.error; TypeError; a TIFF page whose
#: Compression no table holds: KeyError, found by an attack; a DDS of a pixel format or a BLP of a compression
#: its plugin does not implement: NotImplementedError, raised from Image.open itself, found by fuzzing).
DAMAGED = (OSError, ValueError, SyntaxError, TypeError, EOFError, IndexError, KeyError, NotImplementedError,
           struct.error, zlib.error)

#: Image modes a PNG file holds as they are (Pillow's PNG writer).
_PNG_MODES = frozenset({"1", "L", "LA", "I;16", "I;16B", "P", "RGB", "RGBA"})
#: Modes PNG cannot hold but can hold without loss in another mode.
_LOSSLESS = {"I;16L": "I;16", "I;16N": "I;16", "PA": "RGBA", "RGBX": "RGB", "RGBa": "RGBA", "La": "LA"}


def _rectangle(scheme: str, positions: Sequence[object]) -> tuple[int, int, int, int, int]:
    """``x1, y1, x2, y2, frame`` from the parsed positions, checked (callers may build them by hand)."""

    def offset(value: object) -> bool:
        return isinstance(value, int) and not isinstance(value, bool) and value >= 0

    corners = positions[:2]
    if (
        len(positions) not in (2, 3)
        or not all(isinstance(c, tuple) and len(c) == 2 and all(offset(v) for v in c) for c in corners)
        or (len(positions) == 3 and not offset(positions[2]))
    ):
        raise ParseError(
            f"{scheme}= is two corners (x1,y1),(x2,y2) of non-negative pixels and an"
            f" optional frame, not {tuple(positions)!r}",
            rule="2-dim-coordinate",
        )
    numbers = [int(v) for corner in corners for v in corner]  # type: ignore[attr-defined]  # checked above: pairs
    x1, y1, x2, y2 = numbers
    frame = int(positions[2]) if len(positions) == 3 else 0  # type: ignore[call-overload]  # checked: an offset
    if x2 < x1 or y2 < y1:
        raise ParseError(
            f"{scheme} fragment ends before it starts: ({x1},{y1}),({x2},{y2}) (end < start)",
            rule="2-dim-coordinate",
        )
    return x1, y1, x2, y2, frame


def rectangle(scheme: str, positions: Sequence[object]) -> tuple[int, int, int, int, int]:
    """``x1, y1, x2, y2, frame`` of a ``rect`` or ``crop`` fragment's positions, checked (a :class:`ParseError` if not)."""
    return _rectangle(scheme, positions)


#: The formats whose EXIF ``Orientation`` (CIPA DC-008 tag 0x0112) a browser applies when it shows the image
#: (CSS Images 3 ``image-orientation: from-image``, the initial value): Chromium turns a JPEG (an MPO is one to it)
#: and a PNG whose ``eXIf`` chunk says so, and shows a WebP's pixels as stored, whatever its ``EXIF`` chunk says
#: (measured, Chromium 14x); it shows no TIFF. A region is of the stored pixels whatever any of them say
#: (PDI-GRAMMAR.md's reading): the viewer maps what the reader sees to them (:func:`shown_box`).
ORIENTED_WHEN_SHOWN = frozenset({"JPEG", "MPO", "PNG"})


def shown_orientation(image: Any, data: Readable | None = None) -> int:
    """The EXIF orientation (2 to 8) a browser shows the Pillow ``image`` turned by, or 1: none, an orientation
    out of range, or a format whose orientation browsers do not apply (:data:`ORIENTED_WHEN_SHOWN`). A PNG's is its
    ``eXIf`` chunk's before its first ``IDAT``, read from its octets ``data`` (:func:`pdi.fragments.image_size.image_size`):
    Chromium shows one whose ``eXIf`` comes after its image data as stored, where Pillow, reading the whole file,
    finds it (found in review, 2026-12-01: such a PNG's crop said orientation 6, and the viewer mapped a box as
    turned on an image shown unturned)."""
    if getattr(image, "format", None) not in ORIENTED_WHEN_SHOWN:
        return 1
    if image.format == "PNG" and data is not None:
        from pdi.fragments.image_size import image_size

        try:
            size = image_size(data)
        except (ParseError, LimitError):
            return 1
        return size.orientation if size is not None and 2 <= size.orientation <= 8 else 1
    if image.format == "PNG" and "exif" not in getattr(image, "info", {}):
        # an eXIf before the image data is read with the header; Pillow's getexif() would decode the whole image
        # to look for one after it (a crop of a 12,000 × 12,000 PNG held its 144 MB in the resolver's process)
        return 1
    try:
        with pillow_reading():
            orientation = image.getexif().get(0x0112)
    except DAMAGED:
        return 1
    return orientation if isinstance(orientation, int) and 2 <= orientation <= 8 else 1


def shown_box(orientation: int, box: tuple[int, int, int, int], width: int, height: int) -> tuple[int, int, int, int]:
    """Where the region ``box`` (``x1, y1, x2, y2`` of the stored ``width`` × ``height`` pixels) is seen in the
    image shown turned by EXIF ``orientation`` (as Pillow's ``ImageOps.exif_transpose`` turns it): its corners in
    the pixels shown, whose width is ``height`` for orientations 5 to 8."""
    x1, y1, x2, y2 = box

    def shown(x: int, y: int) -> tuple[int, int]:
        return {
            2: (width - x, y), 3: (width - x, height - y), 4: (x, height - y), 5: (y, x),
            6: (height - y, x), 7: (height - y, width - x), 8: (y, width - x),
        }.get(orientation, (x, y))

    (u1, v1), (u2, v2) = shown(x1, y1), shown(x2, y2)
    return min(u1, u2), min(v1, v2), max(u1, u2), max(v1, v2)


def open_image(data: IO[bytes]) -> Any:
    """Pillow's ``Image.open`` of a stranger's image, by every format plugin it has but EPS: Pillow reads an EPS's
    pixels by running Ghostscript on the file (``gs``, where it is installed), whatever media type the image was
    deposited as (Pillow knows a file by its first octets), and pdi runs no interpreter of a stranger's PostScript.
    An EPS is then an image Pillow cannot identify, refused as any unreadable image is."""
    from PIL import Image, UnidentifiedImageError

    Image.preinit()  # the formats Pillow tries first (BMP, GIF, JPEG, PNG, PPM), as Image.open does: no more imported
    known = [name for name in Image.OPEN if name != "EPS"]
    try:
        return Image.open(data, formats=known)
    except UnidentifiedImageError:
        Image.init()  # then every plugin, as Image.open does when those first ones do not know the file
        every = [name for name in Image.OPEN if name != "EPS"]
        if len(every) == len(known):
            raise
        return Image.open(data, formats=every)


@contextlib.contextmanager
def pillow_reading() -> Iterator[None]:
    """Pillow reading a stranger's image without a warning leaving it: its ``DecompressionBombWarning`` (the size is
    bounded here, :data:`MAX_CROP_PIXELS`, and past twice Pillow's bound it refuses) and every ``UserWarning`` of its
    own, each said where it reads past damage and goes on without it: an EXIF block whose directory runs past its
    end ("Corrupt EXIF data", a tag skipped), an APNG whose frame chunks disagree (its default image read), an icon
    of another size than its directory says. EXIF and such are metadata beside the pixels: a region is of the
    pixels Pillow read, and damage that leaves none to read is Pillow's own error (:data:`DAMAGED`). Under ``-W
    error`` such a warning escaped the evaluator (found in review, 2026-11-29: a JPEG with a damaged EXIF)."""
    from PIL import Image

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", Image.DecompressionBombWarning)
        warnings.filterwarnings("ignore", category=UserWarning, module=r"PIL\.")
        yield


def evaluate_image(
    scheme: str, positions: Sequence[object], data: bytes, media_type: str, charset: str | None
) -> FragmentResult:
    """Evaluate ``rect`` or ``crop`` on the image ``data`` (see the module docstring)."""
    from PIL import Image, UnidentifiedImageError

    if scheme not in ("rect", "crop"):
        raise UnsupportedError(f"no image fragment scheme {scheme!r}: rect or crop")
    x1, y1, x2, y2, frame = _rectangle(scheme, positions)
    gif_pixels = None
    if bytes(data[:6]) in (b"GIF87a", b"GIF89a") and len(data) >= 13:  # what Pillow opens as a GIF
        # its frames walked once, bounded, before Pillow walks them (opening it, counting them, seeking one): a
        # hostile GIF (millions of one-pixel frames, megabytes of stray octets) is refused at once
        gif_pixels = gif_frames(data, frame, strict=False).seek_pixels
    try:
        with pillow_reading():
            image = open_image(cast(IO[bytes], BufferFile(data)))  # not a copy of a mapped file (io.BytesIO's), header first
            if image.format == "TIFF":  # before n_frames, which walks every page in time of their number squared
                pages = tiff_pages(data)
                if pages > MAX_TIFF_PAGES:
                    raise LimitError(f"{scheme} on a TIFF of {pages:,} pages or more: more than the"
                                     f" {MAX_TIFF_PAGES:,} image fragments are evaluated on")
            frames = frame_count(image, data)
            if frame >= frames:
                raise NotFoundError(
                    f"frame {frame} is not in this image: it has {plural(frames, 'frame')} (0 to {frames - 1})"
                )
            if frame:
                if image.format in _COMPOSED:
                    _seek_within(scheme, frame, image.size[0], image.size[1], image.format, data, gif_pixels)
                image.seek(frame)
            width, height = image.size
            region = Region(
                min(x1, width), min(y1, height), min(x2, width), min(y2, height),
                frame, width, height, frames,
            )
            clamped = x2 > width or y2 > height
            if scheme == "rect":
                return FragmentResult(
                    data=data, media_type=media_type, clamped=clamped, ranges=(), scheme=scheme,
                    region=region,
                    past_end=(x1 >= width and x2 > width) or (y1 >= height and y2 > height),
                )
            if region.x1 == region.x2 or region.y1 == region.y2:
                past = " (it lies past the image's edge)" if (x1 >= width or y1 >= height) else ""
                raise UnsupportedError(
                    f"crop ({x1},{y1}),({x2},{y2}) holds no pixels of this {width}×{height} image{past}:"
                    " there is no empty image to return"
                )
            if image.format in ("JPEG", "MPO", "BLP") and _more_scans_than(data, MAX_JPEG_SCANS,
                                                                          every_image=image.format == "MPO"):
                # (a BLP1 image of JPEG compression is decoded as the JPEG it holds)
                # each scan of a progressive JPEG visits every block of the frame: a scan of end-of-band runs is
                # some 60 octets, so a 1 MB file held 17,000 of them (33 s to cut a 10x10 crop of 6000x6000)
                raise LimitError(
                    f"crop of a JPEG of more than {MAX_JPEG_SCANS} scans (start-of-scan markers): decoding it"
                    " visits every block once a scan (rect= names the region without decoding)"
                )
            if width * height > MAX_CROP_PIXELS:
                # Pillow decodes the whole frame to cut it (a small file can claim a huge one): libvips streams it
                _check_streamable(data, str(image.format), region, None)
                png = _crop_streamed(data, str(image.format), region, media_type)
                return FragmentResult(
                    data=oriented_png(png, shown_orientation(image, data)), media_type="image/png", clamped=clamped,
                    ranges=(), scheme=scheme, region=region,
                )
            cut = image.crop((region.x1, region.y1, region.x2, region.y2))
            png = oriented_png(_png(cut, image.info.get("icc_profile")), shown_orientation(image, data))
    except PDIError:
        raise
    except Image.DecompressionBombError as exc:
        return _beyond_pillow(scheme, (x1, y1, x2, y2, frame), data, media_type, exc)
    except UnidentifiedImageError as exc:
        raise UnsupportedError(f"{scheme} on {media_type}: not an image format pdi can read") from exc
    except DAMAGED as exc:
        raise UnsupportedError(f"{scheme} on {media_type}: cannot read this image: {damage(exc)}") from exc
    return FragmentResult(
        data=png, media_type="image/png", clamped=clamped, ranges=(), scheme=scheme, region=region
    )


def _beyond_pillow(
    scheme: str, rectangle: tuple[int, int, int, int, int], data: bytes, media_type: str, refusal: Exception
) -> FragmentResult:
    """``rect`` on an image larger than Pillow opens (its ``refusal``), its size read from the header alone
    (:func:`pdi.fragments.image_size.image_size`); ``crop`` cut by streaming where it can be."""
    return _on_header(scheme, rectangle, data, media_type, refusal, cut=True)


def region_from_header(scheme: str, positions: Sequence[object], data: Readable, media_type: str) -> FragmentResult:
    """``rect`` or ``crop`` on the image ``data`` read from its header alone
    (:func:`pdi.fragments.image_size.image_size`: a buffer, or octets read by slices): the region, ``clamped`` and
    ``past_end`` as :func:`evaluate_image` says them of an image larger than Pillow opens, and for ``crop`` every
    check a cut by streaming makes before it decodes, but no pixel cut (the result's ``data`` is empty). For a
    caller that shows where the region is (the viewer) on an image too large to be read whole for it."""
    if scheme not in ("rect", "crop"):
        raise UnsupportedError(f"no image fragment scheme {scheme!r}: rect or crop")
    return _on_header(scheme, _rectangle(scheme, positions), data, media_type, None, cut=False)


def _on_header(
    scheme: str, rectangle: tuple[int, int, int, int, int], data: Readable, media_type: str,
    refusal: Exception | None, *, cut: bool,
) -> FragmentResult:
    from pdi.fragments.image_size import image_size

    x1, y1, x2, y2, frame = rectangle
    why = f"{unopened(refusal)}" if refusal is not None else "an image read from its header alone"
    try:
        size = image_size(data, frame)
    except ParseError as exc:
        raise UnsupportedError(f"{scheme} on {media_type}: cannot read this image's header: {exc}") from exc
    except LimitError as exc:
        raise LimitError(f"{scheme} on {media_type}: {why}, and {exc}") from exc
    if size is None:
        said = why if refusal is not None else f"{why}, of a format whose size pdi does not read so"
        raise LimitError(f"{scheme} on {media_type}: {said}: no fragment of it is evaluated; its octets are had"
                         " whole, by its name without a fragment") from refusal
    if frame >= size.frames:
        raise NotFoundError(
            f"frame {frame} is not in this image: it has {plural(size.frames, 'frame')} (0 to {size.frames - 1})"
        )
    width, height = size.width, size.height
    region = Region(min(x1, width), min(y1, height), min(x2, width), min(y2, height), frame, width, height,
                    size.frames)
    from PIL import Image

    # what Pillow would open (the evaluator's own path, for a caller that does not cut): reaching a frame of a
    # composed image decodes those before it, as the evaluator counts them
    opened = refusal is None and width * height <= 2 * (Image.MAX_IMAGE_PIXELS or 0)
    if opened and frame and size.format in _COMPOSED:
        _seek_within(scheme, frame, width, height, size.format, data, size.seek_pixels)
    if scheme == "crop":
        if region.x1 == region.x2 or region.y1 == region.y2:
            past = " (it lies past the image's edge)" if (x1 >= width or y1 >= height) else ""
            raise UnsupportedError(
                f"crop ({x1},{y1}),({x2},{y2}) holds no pixels of this {width}×{height} image{past}:"
                " there is no empty image to return"
            )
        if size.format == "JPEG" and _more_scans_than(data, MAX_JPEG_SCANS):
            raise LimitError(
                f"crop of a JPEG of more than {MAX_JPEG_SCANS} scans (start-of-scan markers): decoding it"
                " visits every block once a scan (rect= names the region without decoding)"
            )
        if not opened or width * height > MAX_CROP_PIXELS:  # else Pillow cuts it
            _check_streamable(data, size.format, region, refusal)
        png = _crop_streamed(data, size.format, region, media_type) if cut else b""
        if png and size.format in ORIENTED_WHEN_SHOWN:  # as a crop Pillow cuts carries it (shown_orientation)
            png = oriented_png(png, size.orientation)
        return FragmentResult(
            data=png, media_type="image/png", clamped=x2 > width or y2 > height, ranges=(), scheme=scheme,
            region=region,
        )
    return FragmentResult(
        data=data if cut else b"", media_type=media_type, clamped=x2 > width or y2 > height, ranges=(),  # type: ignore[arg-type]  # a rect's answer is the buffer given
        scheme=scheme, region=region, past_end=(x1 >= width and x2 > width) or (y1 >= height and y2 > height),
    )


def _check_streamable(data: Readable, fmt: str, region: Region, refusal: Exception | None) -> None:
    """Whether the ``region`` of a frame larger than a Pillow crop decodes (:data:`MAX_CROP_PIXELS`; ``refusal``:
    Pillow's own, past twice its ``MAX_IMAGE_PIXELS``) can be cut by libvips, streaming
    (:func:`pdi.fragments.image_streamed.crop_streamed`): frame 0 of a PNG, JPEG or TIFF, a region of at most
    :data:`MAX_CROP_PIXELS`; anything else a :class:`~pdi.errors.LimitError`."""
    from pdi.fragments.image_streamed import MAX_STREAMED_PIXELS, streamed_format

    width, height, frame = region.width, region.height, region.frame
    why = f"{unopened(refusal)}, and " if refusal is not None else ""
    if fmt not in ("PNG", "JPEG", "TIFF") or streamed_format(bytes(data[:8])) != fmt or frame:
        which = f"frame {frame} of " if frame else ""
        raise LimitError(
            f"crop of {which}a {width}×{height} {fmt} image: {why}Pillow decodes every pixel of the frame to cut it"
            f" (a crop decodes at most {MAX_CROP_PIXELS:,}), and only the first frame of a PNG, JPEG or TIFF is"
            " cut by streaming; rect= names the same region, read from the header alone, and returns the image whole"
        )
    if width * height > MAX_STREAMED_PIXELS:
        raise LimitError(
            f"crop of a {width}×{height} image: its header claims {width * height:,} pixels, more than the"
            f" {MAX_STREAMED_PIXELS:,} pdi decodes (pdi.fragments.image_streamed.MAX_STREAMED_PIXELS); rect= names"
            " the same region, read from the header alone, and returns the image whole"
        )
    cut = (region.x2 - region.x1) * (region.y2 - region.y1)
    if cut > MAX_CROP_PIXELS:
        raise LimitError(
            f"crop of {cut:,} pixels of a {width}×{height} image: more than the {MAX_CROP_PIXELS:,} a crop"
            " answers (cut it in smaller regions; rect= names the region and returns the image whole)"
        )


def _crop_streamed(data: Readable, fmt: str, region: Region, media_type: str) -> bytes:
    """The ``region`` of the ``fmt`` image (checked by :func:`_check_streamable`) cut by libvips, streaming."""
    from pdi.fragments.image_streamed import crop_streamed

    try:
        return crop_streamed(data, (region.x1, region.y1, region.x2, region.y2),  # type: ignore[arg-type]  # a buffer where it cuts
                             name=f"this {region.width}×{region.height} {fmt}")
    except UnsupportedError as exc:  # libvips could not read it (a damaged file, or one whose header lies)
        raise UnsupportedError(f"crop on {media_type}: {exc}") from None


def unopened(error: Exception) -> str:
    """What Pillow's ``DecompressionBombError`` means, in pdi's words: the pixels the image's header claims (Pillow
    says the number only in its message) and the most Pillow opens an image of, twice its ``MAX_IMAGE_PIXELS``
    (about 179 million: Image.open refuses past it, whatever is asked of the image, the header alone too)."""
    from PIL import Image

    claimed = re.search(r"\((\d+) pixels\)", str(error))
    said = f"{int(claimed[1]):,} pixels" if claimed else "more pixels"
    return (f"its header claims {said}, more than the {2 * (Image.MAX_IMAGE_PIXELS or 0):,} Pillow opens an image"
            " of (twice PIL.Image.MAX_IMAGE_PIXELS)")


def damage(error: Exception) -> str:
    """What one of :data:`DAMAGED` says of an image (a ``KeyError`` says only the value it did not find)."""
    if isinstance(error, KeyError):
        return f"a value no table of its format holds ({error.args[0] if error.args else ''}), a damaged header"
    return str(error)


def frame_count(image: object, data: Buffer) -> int:
    """The frames of the image Pillow opened from ``data``: its ``n_frames``, but for an APNG no more than the
    frames the file holds. Pillow takes an APNG's count from its ``acTL`` chunk, up to 2**31, as the file claims it
    (APNG §2.1: it must equal the number of ``fcTL`` chunks); a 100-octet file claiming 2**31 had that many frames
    (found by an attack: the viewer's frame chooser was built for each of them)."""
    frames = int(getattr(image, "n_frames", 1))
    if frames > 1 and getattr(image, "format", None) == "PNG":
        frames = min(frames, png_frames(data, frames))
    return frames



def _seek_within(scheme: str, frame: int, width: int, height: int, fmt: str, data: Readable,
                 gif_pixels: int | None = None) -> None:
    """Refuse reaching ``frame`` of a composed image (:data:`_COMPOSED`) when it decodes more than
    :data:`MAX_SEEK_PIXELS` of the frames before it (the canvas only grows; a GIF's own frames may be larger: its
    ``gif_pixels``, :attr:`GifFrames.seek_pixels <pdi.fragments.image_size.GifFrames.seek_pixels>`, walked for
    here unless given)."""
    cost = frame * width * height
    if fmt == "GIF":
        cost = max(cost, gif_pixels if gif_pixels is not None else _gif_seek_pixels(data, frame))
    if cost > MAX_SEEK_PIXELS:
        raise LimitError(
            f"{scheme} of frame {frame} of a {width}×{height} {fmt}: reaching it decodes the"
            f" {plural(frame, 'frame')} before it, {cost:,} pixels, more than the limit of {MAX_SEEK_PIXELS:,}"
        )


def _gif_seek_pixels(data: Readable, frame: int) -> int:
    """The pixels Pillow decodes to reach ``frame`` of a GIF: each frame before it, loaded onto the canvas as it
    then is (the logical screen, grown to hold every frame read so far, as Pillow grows it). Read from the blocks'
    headers alone (:func:`pdi.fragments.image_size.gif_frames`, bounded): no pixel is decoded."""
    if len(data) < 13:
        return 0
    return gif_frames(data, frame, strict=False).seek_pixels


def _more_scans_than(data: Readable, most: int, *, every_image: bool = False) -> bool:
    """Whether the JPEG ``data`` (any buffer: a mapped file's too) holds more than ``most`` scans, counted up to one
    past it along its markers (ITU T.81 B.1): from its start of image, segment by segment, each scan's
    entropy-coded data to the next marker, to its end of image. What follows that end (a phone's motion photo
    appends a video, whose octets may spell ``FF DA`` hundreds of times) is not read, unless ``every_image``
    (an MPO's images, one after another)."""
    octets = bytes(data) if isinstance(data, memoryview) else data  # a map finds as bytes do, without a copy
    scans, at, end = 0, 0, len(octets)
    while True:
        at = octets.find(b"\xff\xd8", at)  # a start of image
        if at < 0:
            return False
        at += 2
        while at < end:
            if octets[at] != 0xFF:  # not a marker where one belongs: the image is damaged; read no further
                return False
            while at < end and octets[at] == 0xFF:  # fill octets
                at += 1
            if at >= end:
                return False
            marker = octets[at]
            at += 1
            if marker == 0xD9:  # end of image
                break
            if marker == 0x01 or 0xD0 <= marker <= 0xD8:  # markers without a length
                continue
            if at + 2 > end:
                return False
            at += int.from_bytes(octets[at:at + 2], "big")
            if marker != 0xDA:
                continue
            scans += 1
            if scans > most:
                return True
            while True:  # the scan's entropy-coded data: to the next FF that is not 00 (stuffing) or a restart
                at = octets.find(b"\xff", at)
                if at < 0 or at + 1 >= end:
                    return False
                if octets[at + 1] == 0 or 0xD0 <= octets[at + 1] <= 0xD7:
                    at += 2
                    continue
                break
        if not every_image:
            return False


def oriented_png(png: bytes, orientation: int) -> bytes:
    """The PNG ``png`` with an ``eXIf`` chunk (PNG 3rd edition §11.3.3.6) saying EXIF ``orientation`` after its
    header, where it is 2 to 8: a crop of a JPEG or PNG a browser shows turned is shown turned the same way, the
    region as it is seen in the whole (its pixels are the stored ones, as cut). Else ``png`` unchanged."""
    if not 2 <= orientation <= 8:
        return png
    from PIL import Image

    exif = Image.Exif()
    exif[0x0112] = orientation
    payload = exif.tobytes()
    payload = payload[6:] if payload.startswith(b"Exif\x00\x00") else payload  # PNG's holds the TIFF header on
    chunk = struct.pack(">I", len(payload)) + b"eXIf" + payload
    chunk += struct.pack(">I", zlib.crc32(chunk[4:]) & 0xFFFFFFFF)
    after_header = 8 + 8 + 13 + 4  # the signature, then IHDR: its length and type, 13 octets, its CRC
    assert png[12:16] == b"IHDR"
    return png[:after_header] + chunk + png[after_header:]


def _png(image: object, icc_profile: object) -> bytes:
    """``image`` as PNG bytes: as it is where PNG holds its mode, else converted (see the module docstring)."""
    from PIL import Image

    assert isinstance(image, Image.Image)
    mode = image.mode
    if mode in ("I", "F", "I;32", "I;32B", "I;32L"):
        raise UnsupportedError(
            f"crop of a {mode} image (32-bit samples): PNG holds at most 16 bits a sample, and a crop is never lossy;"
            " use rect, or byte ranges"
        )
    if mode not in _PNG_MODES:
        target = _LOSSLESS.get(mode) or ("RGBA" if mode.endswith("A") or "transparency" in image.info else "RGB")
        image = image.convert(target)
    out = io.BytesIO()
    options: dict[str, object] = {"compress_level": 6}
    # a profile describes the colours of the stored mode: keep it only where the mode is kept
    if isinstance(icc_profile, bytes) and icc_profile and image.mode == mode:
        options["icc_profile"] = icc_profile
    image.save(out, format="PNG", **options)
    return out.getvalue()
