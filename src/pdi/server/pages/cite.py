"""What the viewer needs to offer citable names, worked out on the server (an edge over the archive and the cores).

* **RFC 5147 form of a text passage.** RFC 5147 fragment identifiers apply
  to a ``text/plain`` entity retrieved by URL (PDI-GRAMMAR.md §3): here the
  resolver's ``/uri-res/N2R?NAME`` of the whole representation, exactly the
  octets stored. Its positions count every line ending as one character
  (the PDI ``char`` scheme counts CR and LF apart), and its integrity checks
  are of the whole entity (§3.1, §2.3): ``length=`` its characters, ``md5=``
  the MD5 of its octets, each labelled with the charset N2R declares.
  :func:`rfc5147_facts` computes the checks (and, for a window of a long
  text, the RFC 5147 position where the window starts) so the page's
  script only adds the positions of a selection. Hashing reads the whole
  entity: it is done for texts up to :data:`MAX_RFC5147` octets and kept
  per SHA-256 (:data:`_CHECKS`).
* **Image frames and size** (:func:`image_facts`): Pillow reads the header
  (and counts the frames of a GIF, APNG or TIFF: an APNG's those it holds,
  :func:`pdi.fragments.image.frame_count`); of an image larger than Pillow
  opens, :func:`pdi.fragments.image_size.image_size` reads them, as ``rect``
  does. Of an image too large for the viewer to read whole
  (:data:`pdi.server.pages.viewer.MAX_READ`), :func:`header_facts` reads them
  from its header alone, by the blob's verified chunks.
* **Waveform peaks** (:func:`waveform`): the lowest and highest sample of
  each of :data:`COLUMNS` columns, read with :mod:`wave` (PCM WAV) or
  ``soundfile``. Each column reads at most :data:`SAMPLES_PER_COLUMN`
  frames from its start, so a long recording costs no more than a short one;
  one too large to read whole is read so by the blob's verified chunks
  (:class:`pdi.archive.blobs.VerifiedOctets`), its header and those frames only.
* **Image previews** (:func:`image_preview`): the blob's verified chunks
  written one by one to the libvips child's file, never held whole.
* **``/api/rfc5147?pdi=NAME&fragment=FRAGMENT``** (:func:`rfc5147_endpoint`):
  evaluates an RFC 5147 fragment (integrity checks included) on the
  ``text/plain`` representation NAME names, as a client would on its N2R
  entity, and answers JSON: the selected ``text``, the character ``start``
  and ``end``, ``integrity`` (``ok`` when every check it understands
  passed, ``unchecked`` when none applied) and each check's outcome; a
  failed check is a ``422`` problem (:class:`~pdi.errors.IntegrityError`).
  On a PDF, the entity is its text layer (docs/pdf-text-layer.md) in UTF-8:
  ``length=`` and ``md5=`` are of that text, as on a text. On an e-mail
  (``message/rfc822``), the entity is its body's text (docs/email.md) in
  UTF-8, checked so too. The viewer uses it to verify the RFC 5147
  name it offers before showing it.
"""

from __future__ import annotations

import hashlib
import io
import mmap
import threading
import wave
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import IO, TYPE_CHECKING, Any, cast

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from pdi import formats
from pdi.archive import Archive, Generic, Resolved
from pdi.archive.blobs import ChunkedReader, FileReader
from pdi.errors import LimitError, ParseError, PDIError, UnsupportedError
from pdi.fragments.results import BufferFile, Readable
from pdi.server.http.params import optional
from pdi.server.pages.layout import n2r_href
from pdi.server.process.limits import ArchiveHandlers

if TYPE_CHECKING:
    from pdi.fragments.image_size import ImageSize
    from pdi.fragments.text.rfc5147 import TextSelection

#: The largest text (octets) whose RFC 5147 integrity checks the viewer computes (MD5 reads it whole).
MAX_RFC5147 = 64 << 20

#: Columns of a waveform; each is the lowest and highest sample of its stretch of the recording.
COLUMNS = 600

#: The most sample frames read for one column (a long recording is sampled, not read whole).
SAMPLES_PER_COLUMN = 2048

#: Integrity checks already computed, by SHA-256 and charset (the bytes of a name never change).
_CHECKS: OrderedDict[tuple[str, str | None], tuple[str, int]] = OrderedDict()
_CHECKS_KEPT = 64
_CHECKS_LOCK = threading.Lock()


@dataclass(frozen=True)
class RFC5147Facts:
    """What the page's script needs to write the RFC 5147 form of a selection.

    ``url`` is the entity's address relative to the resolver (N2R of the
    whole name); ``checks`` the ``;length=…;md5=…`` suffix; ``offset`` the
    RFC 5147 character position of the first character shown (0 for a
    whole text, the window's start for a long one).
    """

    url: str
    checks: str
    offset: int


def served_charset(resolved: Resolved) -> str:
    """The charset N2R declares for a text (its recorded charset, else UTF-8, as :mod:`pdi.server.protocol.resolver` labels it)."""
    return resolved.record.charset or "utf-8"


def rfc5147_facts(archive: Archive, whole: Resolved, window_start: int | None = None) -> RFC5147Facts | None:
    """The RFC 5147 facts of a ``text/plain`` representation, or ``None`` where none are offered.

    ``whole`` is either read (its ``data`` the octets) or only located (a
    long text shown as a window starting at PDI position ``window_start``).
    ``None`` for a media type other than ``text/plain`` (RFC 5147 defines
    fragments for it alone) and for a text over :data:`MAX_RFC5147` octets.
    """
    from pdi.charsets import iana_name
    from pdi.fragments.text import TextIndex
    from pdi.fragments.text.pdi_reading import pdi_to_rfc5147_char
    from pdi.fragments.text.rfc5147 import IntegrityCheck

    record = whole.record
    if formats.media_family(record.media_type) != "text" or not record.media_type.startswith("text/plain"):
        return None
    if record.size > MAX_RFC5147:
        return None
    charset = served_charset(whole)
    with _octets(archive, whole) as data:
        index_bytes = archive.fragment_index(record)
        # read as the archive reads it (the table made at deposit fits that charset); labelled as N2R declares it
        index = TextIndex(data, record.charset, table=index_bytes)
        key = (record.sha256, record.charset)
        cached = _cached(key)
        if cached is None:
            cached = (hashlib.md5(data, usedforsecurity=False).hexdigest(), index.char_count)
            _keep(key, cached)
        offset = pdi_to_rfc5147_char(window_start, index) if window_start else 0
    label = iana_name(charset) or charset  # the registry's preferred name, as RFC 5147 §3's example writes UTF-8
    digest, length = cached
    checks = f";{IntegrityCheck('length', str(length), label)};{IntegrityCheck('md5', digest, label)}"
    return RFC5147Facts(n2r_href(str(whole.pdi)), checks, offset)


@contextmanager
def _octets(archive: Archive, whole: Resolved) -> Iterator[Any]:
    """The octets of ``whole``: those read, or (a located one) a memory map of its blob file, else read now; each
    chunk checked against its digest first (a :class:`~pdi.errors.DamagedError` if one does not match), as every
    read is (found in review, 2026-11-29: the file was mapped unchecked, and an altered image previewed). The map
    is of the reader's own descriptor, the file it checked: the blob's path opened again read a file renamed over
    it meanwhile, unchecked."""
    if whole.data or whole.record.size == 0:
        yield whole.data
        return
    with archive.open_octets(str(whole.pdi)) as opened:
        reader = opened.reader
        if isinstance(reader, FileReader):
            reader.check_size()  # a file cut short or grown is never mapped
            reader.verify_range(0, reader.size)  # a file's chunks this process verified since it last changed: none read
            with mmap.mmap(reader.fd, 0, access=mmap.ACCESS_READ) as mapped:
                yield mapped
            return
        yield reader.read()


def _cached(key: tuple[str, str | None]) -> tuple[str, int] | None:
    with _CHECKS_LOCK:
        found = _CHECKS.get(key)
        if found is not None:
            _CHECKS.move_to_end(key)
        return found


def _keep(key: tuple[str, str | None], value: tuple[str, int]) -> None:
    with _CHECKS_LOCK:
        _CHECKS[key] = value
        while len(_CHECKS) > _CHECKS_KEPT:
            _CHECKS.popitem(last=False)


#: Previews made lately (:func:`image_preview`), by the SHA-256 of the image and the preview's side: a map scan's
#: takes seconds to make, and the viewer asks for it each time the page is shown. At most :data:`_PREVIEWS_KEPT`
#: previews and :data:`_PREVIEWS_HELD` octets are held (each at most a quarter of it), the least recently used let
#: go. Only an image some reader may read is previewed, and each request is checked before one is given from here.
_PREVIEWS: OrderedDict[tuple[str, int], tuple[bytes, str]] = OrderedDict()
_PREVIEWS_HELD = 64 << 20
_PREVIEWS_KEPT = 1024
_PREVIEWS_LOCK = threading.Lock()


@dataclass(frozen=True)
class ImagePreview:
    """:func:`image_preview`'s answer: the preview's octets (``None``: the client holds it, a ``304``), its media
    type, its entity tag, and whether any cache may keep it and give it to anyone (``shared``: as N2R's answer of
    the image, :func:`pdi.server.protocol.entity_answers.shared_answer`)."""

    body: bytes | None
    media_type: str
    etag: str
    shared: bool


def image_preview(archive: Archive, name: str, held: str | None = None) -> ImagePreview:
    """``/api/image/preview``'s answer for the image ``name`` (one version, one format): the image shrunk by libvips
    to at most :data:`pdi.fragments.image_streamed.PREVIEW_SIDE` pixels a side (in a bounded child:
    :func:`pdi.fragments.image_streamed.preview`), of octets checked against their digests. What the viewer shows
    of an image too large for a browser to decode (:data:`pdi.server.pages.media_view.MAX_SHOWN_PIXELS`). ``held``:
    the request's ``If-None-Match``; when it holds the preview's tag nothing is made (the body is ``None``). A
    request for a preview another request of the same name is making waits for its answer or refusal
    (:class:`_Making`), at most the child's deadline, rather than starting a child of its own."""
    from pdi.fragments.image_streamed import PREVIEW_SIDE, streamed_format
    from pdi.server.http.conditional import tag_matches
    from pdi.server.protocol.entity_answers import shared_answer

    located = archive.locate(name)  # refused here if the reader may not read it, embargoed or withdrawn
    if isinstance(located, Generic):
        raise ParseError(f"/api/image/preview needs the name of one version and format of an image, not {name!r}")
    record = located.record
    if formats.media_family(record.media_type) != "image":
        raise UnsupportedError(f"{located.pdi} is {record.media_type}, not an image: it has no preview")
    key = (record.sha256, PREVIEW_SIDE)
    etag = f'"{record.sha256[:32]}-preview-{PREVIEW_SIDE}-turned"'  # drawn as the browser shows the image
    shared = shared_answer(archive, located)
    if held is not None and tag_matches(held, etag):
        return ImagePreview(None, "", etag, shared)
    with _PREVIEWS_LOCK:
        found = _PREVIEWS.get(key)
        if found is not None:
            _PREVIEWS.move_to_end(key)
            return ImagePreview(found[0], found[1], etag, shared)
        asked = (*key, str(located.pdi))  # waited for by requests of this name only: a refusal names it
        making = _MAKING.get(asked)
        if making is None:
            making = _MAKING[asked] = _Making()
            mine = True
        else:
            mine = False
    if not mine:
        body, media_type = making.wait(str(located.pdi))
        return ImagePreview(body, media_type, etag, shared)
    try:
        with archive.open_located(located) as opened:
            if streamed_format(opened.reader.read(0, 8)) is None:
                raise UnsupportedError(f"{located.pdi} ({record.media_type}): a preview is made of a PNG, JPEG or"
                                       " TIFF only; its octets are served whole by N2R")
            body, media_type = _previewed(opened.reader, str(located.pdi))
    except BaseException as exc:
        making.fail(exc)
        raise
    finally:
        with _PREVIEWS_LOCK:
            _MAKING.pop(asked, None)
    _keep_preview(key, body, media_type)
    making.done(body, media_type)
    return ImagePreview(body, media_type, etag, shared)


def header_orientation(octets: Readable) -> int:
    """The EXIF orientation a browser turns the image ``octets`` by, read from its header alone
    (:attr:`pdi.fragments.image_size.ImageSize.orientation`, of a JPEG or PNG:
    :data:`pdi.fragments.image.ORIENTED_WHEN_SHOWN`); 1 where it says none, or its header cannot be read."""
    from pdi.fragments.image import ORIENTED_WHEN_SHOWN
    from pdi.fragments.image_size import image_size

    try:
        size = image_size(octets)
    except (ParseError, LimitError):
        return 1
    return size.orientation if size is not None and size.format in ORIENTED_WHEN_SHOWN else 1


def _previewed(reader: ChunkedReader, name: str) -> tuple[bytes, str]:
    """The preview of the blob ``reader`` reads, made by libvips in its child from octets checked against their
    digests.

    Where the store keeps the blob as a local file, its chunks are checked (none hashed again that the fixity memo
    holds verified and unchanged) and the child is given that file itself, opened anew through ``/proc/self/fd``
    (:class:`~pdi.fragments.results.MappedFile`, as a crop by libvips is): nothing is copied (a copy of its chunks
    wrote the blob's size to disk again for each preview, 24 MB for a 24 MB TIFF). The file's identity
    (``fstat``: a write in place moves its status-change time) is taken before the check; if it has changed once
    the child is done, the file is checked again, so a preview of octets changed under it is refused, not shown.
    Elsewhere (PostgreSQL, S3) its verified chunks are written one by one to the child's file, never held whole."""
    from pdi.archive.blobs import VerifiedOctets
    from pdi.fragments.image_streamed import PREVIEW_SIDE, preview
    from pdi.fragments.results import MappedFile

    if not isinstance(reader, FileReader):
        orientation = header_orientation(VerifiedOctets(reader))
        return preview(reader.chunks(), PREVIEW_SIDE, name=name, orientation=orientation)
    before = reader.identity()
    reader.verify_range(0, reader.size)
    with MappedFile.of(reader.fd) as octets:  # only its header is read here, for its format and orientation
        made = preview(octets, PREVIEW_SIDE, name=name, orientation=header_orientation(octets))
    if reader.identity() != before:
        reader.verify_range(0, reader.size)
    return made


class _Making:
    """A preview being made by one request (:data:`_MAKING`): others for the same name wait for its answer, or its
    refusal, at most the child's own deadline (``pdi.fragments.image_streamed.LIMITS.seconds``), then are refused
    as their own child would have been."""

    def __init__(self) -> None:
        self._ended = threading.Event()
        self._answer: tuple[bytes, str] | None = None
        self._refusal: BaseException | None = None

    def done(self, body: bytes, media_type: str) -> None:
        self._answer = (body, media_type)
        self._ended.set()

    def fail(self, refusal: BaseException) -> None:
        self._refusal = refusal
        self._ended.set()

    def wait(self, name: str) -> tuple[bytes, str]:
        from pdi.fragments import image_streamed

        seconds = image_streamed.LIMITS.seconds
        if not self._ended.wait(seconds):
            raise LimitError(f"libvips took longer than {seconds:g} s to shrink {name} (another request's preview of"
                             " it, waited for; the limit pdi.fragments.image_streamed.LIMITS.seconds)")
        if self._refusal is not None:
            if isinstance(self._refusal, PDIError):  # a copy of its own: one exception raised in two threads
                kind = type(self._refusal)         # would share (and grow) one traceback; not made again by its
                again = kind.__new__(kind)         # class's constructor, which adds its advice to the message
                again.__dict__.update(vars(self._refusal))
                again.args = self._refusal.args
                raise again
            raise UnsupportedError(f"the preview of {name} could not be made: {type(self._refusal).__name__}")
        assert self._answer is not None
        return self._answer


#: Previews being made now, by the key of :data:`_PREVIEWS` and the name asked for (under :data:`_PREVIEWS_LOCK`): a
#: second request for one waits for the first's answer (:class:`_Making`) rather than starting a libvips child of
#: its own. Not across names of the same octets: a refusal is said of the name its request asked for, which may be
#: one the waiting reader may not read (found in review, 2026-11-29: a private name, in a stranger's ``detail``).
_MAKING: dict[tuple[str, int, str], _Making] = {}


def _keep_preview(key: tuple[str, int], body: bytes, media_type: str) -> None:
    """Keep a preview made (:data:`_PREVIEWS`), letting go of the least recently used past its bounds."""
    global _previews_held
    if len(body) > _PREVIEWS_HELD // 4:
        return
    with _PREVIEWS_LOCK:
        if _PREVIEWS.get(key) is not None:  # made by another request meanwhile
            return
        if not _PREVIEWS:  # emptied (a test puts a new map in place)
            _previews_held = 0
        _PREVIEWS[key] = (body, media_type)
        _previews_held += len(body)
        while _previews_held > _PREVIEWS_HELD or len(_PREVIEWS) > _PREVIEWS_KEPT:
            _, (dropped, _) = _PREVIEWS.popitem(last=False)
            _previews_held -= len(dropped)


#: The octets :data:`_PREVIEWS` holds.
_previews_held = 0


@dataclass(frozen=True)
class ImageFacts:
    """An image's size in pixels and how many frames it has."""

    width: int
    height: int
    frames: int
    #: The EXIF orientation a browser shows it turned by (:func:`pdi.fragments.image.shown_orientation`): 1, none.
    orientation: int = 1


def image_facts(data: bytes, media_type: str) -> ImageFacts:
    """The size and frame count of an image (Pillow reads its header; a GIF's frames are counted)."""
    from PIL import Image, UnidentifiedImageError

    from pdi.fragments import image as images
    from pdi.fragments.image import DAMAGED, damage, frame_count, open_image, pillow_reading

    try:
        with pillow_reading(), open_image(io.BytesIO(data)) as image:  # only the header is read here
            if image.format == "TIFF":  # before n_frames, which walks every page in time of their number squared
                from pdi.fragments.image import MAX_TIFF_PAGES, tiff_pages

                pages = tiff_pages(data)
                if pages > MAX_TIFF_PAGES:
                    raise LimitError(f"{media_type}: a TIFF of {pages:,} pages or more, more than the"
                                     f" {MAX_TIFF_PAGES:,} shown here; its octets are served whole by N2R")
            return ImageFacts(image.width, image.height, frame_count(image, data), images.shown_orientation(image, data))
    except Image.DecompressionBombError as exc:  # a header claiming more than twice Pillow's bound
        from pdi.fragments.image import unopened
        from pdi.fragments.image_size import image_size

        # read from the header alone, as rect= reads it (a map scan of 250 million pixels is cited so)
        try:
            size = image_size(data)
        except ParseError as damaged:
            raise UnsupportedError(f"{media_type}: cannot read this image's header: {damaged}") from damaged
        except LimitError as limit:
            raise LimitError(f"{media_type}: {unopened(exc)}, and {limit}; its octets are served whole by N2R") from limit
        if size is None:
            raise LimitError(f"{media_type}: {unopened(exc)}; its octets are served whole by N2R") from exc
        return ImageFacts(size.width, size.height, size.frames, _shown(size))
    except UnidentifiedImageError as exc:
        raise UnsupportedError(f"{media_type}: not an image pdi can read") from exc
    except DAMAGED as exc:  # counting a damaged GIF's frames trips as its crop does (found by an attack: a 500)
        raise UnsupportedError(f"{media_type}: cannot read this image: {damage(exc)}") from exc


def header_facts(octets: Readable, media_type: str) -> ImageFacts:
    """The size and frame count of an image read from its header alone
    (:func:`pdi.fragments.image_size.image_size`), for an image too large to be read whole for the viewer
    (``octets``: its blob read by verified chunks as the header is walked, a TIFF's directories wherever they are).
    A format whose header is not read so is :class:`~pdi.errors.UnsupportedError`."""
    from pdi.fragments.image_size import image_size

    try:
        size = image_size(octets)
    except ParseError as damaged:
        raise UnsupportedError(f"{media_type}: cannot read this image's header: {damaged}") from damaged
    except LimitError as limit:
        raise LimitError(f"{media_type}: {limit}; its octets are served whole by N2R") from limit
    if size is None:
        raise UnsupportedError(f"{media_type}: an image of this size is read from its header alone here, and pdi"
                               " reads the size of a PNG, JPEG, TIFF, GIF, WebP or BMP only so")
    return ImageFacts(size.width, size.height, size.frames, _shown(size))


def _shown(size: ImageSize) -> int:
    """The orientation a browser shows an image of header ``size`` turned by (that of a JPEG or PNG, else 1)."""
    from pdi.fragments.image import ORIENTED_WHEN_SHOWN

    return size.orientation if size.format in ORIENTED_WHEN_SHOWN else 1


@dataclass(frozen=True)
class Waveform:
    """A recording's duration (seconds), rate and channels, and per column its lowest and highest sample in [-1, 1]."""

    duration: float
    rate: int
    frames: int
    peaks: list[tuple[float, float]]

    def to_json(self) -> dict[str, object]:
        return {
            "duration": self.duration, "rate": self.rate, "frames": self.frames,
            "peaks": [[round(lo, 3), round(hi, 3)] for lo, hi in self.peaks],
        }


def waveform(data: Readable, media_type: str, columns: int = COLUMNS) -> Waveform:
    """The peaks of a recording in ``columns`` columns (fewer when it has fewer frames); bounded work. ``data``: its
    octets, or (a long recording) its blob read by verified chunks, only its header and each column's samples."""
    import numpy as np

    try:
        return _peaks(_WaveSamples(data), columns, np)
    except (wave.Error, EOFError, ValueError, RuntimeError, OSError):
        pass  # not PCM WAV: libsndfile reads it (as the audio fragments do)
    return _peaks(_SoundFileSamples(data, media_type), columns, np)


def _peaks(source: _WaveSamples | _SoundFileSamples, columns: int, np: Any) -> Waveform:
    frames, rate = source.frames, source.rate
    count = max(1, min(columns, frames))
    peaks: list[tuple[float, float]] = []
    for c in range(count if frames else 0):
        start = c * frames // count
        stop = min((c + 1) * frames // count, start + SAMPLES_PER_COLUMN)
        block = source.read(start, max(stop, start + 1))
        if block.size == 0:
            peaks.append((0.0, 0.0))
            continue
        peaks.append((float(np.min(block)), float(np.max(block))))
    return Waveform(frames / rate, rate, frames, peaks)


class _WaveSamples:
    """PCM WAV through the standard :mod:`wave` module, samples as floats in [-1, 1]."""

    def __init__(self, data: Readable) -> None:
        from pdi.fragments.audio import frames_held, wav_data_start

        self._data = data
        # its chunks counted first (a LimitError past MAX_WAV_CHUNKS), and its samples sliced from its data chunk, as
        # the fragments slice them: the wave module walked every chunk again for each column (found by an attack,
        # 2026-11-27: 20,000 empty chunks took 33 s), and read no further than a lying RIFF size
        start = wav_data_start(data)
        with wave.open(cast(IO[bytes], BufferFile(data)), "rb") as w:
            self.rate, self.frames, self.width, self.channels = w.getframerate(), w.getnframes(), w.getsampwidth(), w.getnchannels()
        if self.rate <= 0 or self.channels <= 0 or self.width not in (1, 2, 3, 4) or start is None:
            raise wave.Error("no rate, no channels, an unusual sample width or no data chunk")
        self._start = start
        # as long as the fragments count it: a header may claim more than the file holds (found by an attack: a
        # WAV ffmpeg wrote to a pipe, its data chunk's size 0xFFFFFFFF, was a waveform of 74 hours, not of 1 s)
        self.frames = frames_held(data, self.frames, self.channels * self.width)

    def read(self, start: int, stop: int) -> Any:
        import numpy as np

        frame = self.channels * self.width
        stop = min(stop, self.frames)
        raw = self._data[self._start + start * frame:self._start + max(start, stop) * frame]
        if self.width == 1:  # 8-bit WAV samples are unsigned
            return (np.frombuffer(raw, dtype=np.uint8).astype(np.float32) - 128) / 128
        if self.width == 3:
            octets = np.frombuffer(raw[: len(raw) // 3 * 3], dtype=np.uint8).reshape(-1, 3)
            wide = np.zeros((len(octets), 4), dtype=np.uint8)
            wide[:, 1:] = octets
            return wide.view("<i4").ravel().astype(np.float32) / 2**31
        kind = "<i2" if self.width == 2 else "<i4"
        return np.frombuffer(raw[: len(raw) // self.width * self.width], dtype=kind).astype(np.float32) / 2 ** (8 * self.width - 1)


class _SoundFileSamples:
    """Any recording libsndfile reads, samples as floats in [-1, 1]."""

    def __init__(self, data: Readable, media_type: str) -> None:
        import soundfile

        self._data = data
        try:
            info = soundfile.info(BufferFile(data))
        except (RuntimeError, TypeError) as exc:
            raise UnsupportedError(f"{media_type}: not a recording pdi can read") from exc
        from pdi.fragments.audio import libsndfile_length, w64_floats_as_integers

        # as long as the fragments count it (an MP3 without a Xing header: its frames, not libsndfile's estimate)
        self.rate, (self.frames, self._decodable) = info.samplerate, libsndfile_length(
            data, info.frames, info.format, media_type)
        self._bits = w64_floats_as_integers(data, info.format, info.subtype, media_type)  # as the fragments read it

    def read(self, start: int, stop: int) -> Any:
        import soundfile

        if stop > self._decodable:  # as the fragments say it, not libsndfile's "Internal psf_fseek() failed"
            raise UnsupportedError(
                f"an MP3 without a Xing header, which says its length, libsndfile decodes no further than"
                f" {self._decodable / self.rate:.3f} s of its {self.frames / self.rate:.3f} s; a passage before it"
                " can be cited"
            )
        try:
            with soundfile.SoundFile(BufferFile(self._data)) as f:
                f.seek(start)
                if self._bits:  # 32-bit floats libsndfile takes for integers: their octets, read as floats
                    return f.read(stop - start, dtype="int32").view("<f4")
                return f.read(stop - start, dtype="float32")
        except (RuntimeError, ValueError) as exc:
            raise UnsupportedError(f"cannot decode this recording: {exc}") from exc


def evaluate_rfc5147_on(archive: Archive, name: str, fragment: str) -> dict[str, object]:
    """Evaluate the RFC 5147 ``fragment`` on the N2R entity of the ``text/plain`` name ``name`` (see the module docstring)."""
    from pdi.fragments.text import TextIndex
    from pdi.fragments.text.rfc5147 import evaluate_rfc5147

    resolved = archive.locate(name)
    if isinstance(resolved, Generic) or resolved.fragment is not None or resolved.pdi.fragment is not None:
        raise ParseError(f"{name}: RFC 5147 fragments apply to one whole representation: name a format, no fragment")
    if resolved.media_type not in ("application/pdf", "message/rfc822"):  # a PDF's text is its layer, kept at
        resolved = archive.read(resolved)  # deposit; a message's its body's, read by char_text (a large one's part)
    text = archive.char_text(resolved)  # a PDF's text layer, an e-mail's body text: what their char= counts
    if text is not None:
        body = text.encode("utf-8", "surrogatepass")
        return _rfc5147_answer(name, fragment, evaluate_rfc5147(fragment, TextIndex(body, "utf-8")))
    if not resolved.media_type.startswith("text/plain"):
        raise UnsupportedError(f"{name} is {resolved.media_type}: RFC 5147 defines fragments of text/plain only")
    if resolved.record.size > MAX_RFC5147:
        raise LimitError(f"{name} is {resolved.record.size} octets: RFC 5147 checks are computed up to {MAX_RFC5147}")
    index = TextIndex(resolved.data, resolved.record.charset)
    return _rfc5147_answer(name, fragment, evaluate_rfc5147(fragment, index))


def _rfc5147_answer(name: str, fragment: str, selection: TextSelection) -> dict[str, object]:
    """The JSON of an RFC 5147 ``selection`` (:func:`pdi.fragments.text.rfc5147.evaluate_rfc5147`'s)."""
    first = selection.ranges[0]
    return {
        "pdi": name, "fragment": fragment, "text": selection.text, "start": first.start, "end": first.end,
        "integrity": selection.integrity, "clamped": selection.clamped,
        "checks": [{"check": str(o.check), "status": o.status, "detail": o.detail} for o in selection.checks],
    }


class CiteAPI(ArchiveHandlers):
    """``/api/rfc5147``: an RFC 5147 fragment evaluated on a text's N2R entity (see the module docstring)."""

    async def rfc5147(self, request: Request) -> Response:
        name = optional(request, "pdi")
        fragment = optional(request, "fragment")
        if not name or not fragment:
            raise ParseError("/api/rfc5147 needs pdi= (a text's name) and fragment= (an RFC 5147 fragment, no '#')")
        return JSONResponse(await self.work.run(evaluate_rfc5147_on, self.archive, name, fragment))

    async def image_preview(self, request: Request) -> Response:
        """``/api/image/preview?pdi=NAME``: the image NAME shrunk to at most 4,096 pixels a side
        (:func:`image_preview`), what the viewer shows of an image too large for a browser; the same for
        everyone and for ever (a version's octets never change), so any cache may keep it."""
        from pdi.server.http.readers import PRIVATE
        from pdi.server.process.cache import IMMUTABLE

        name = optional(request, "pdi")
        if not name:
            raise ParseError("/api/image/preview needs pdi= (the name of one version and format of an image)")
        made = await self.work.run(image_preview, self.archive, name, request.headers.get("if-none-match"))
        # as N2R's answer of the image: one read with a token, of an image not anyone's to read, is no cache's to
        # keep (RFC 9111 §5.2.2.7; found in review, 2026-11-29: it was public for a private series)
        headers = {"ETag": made.etag, "Cache-Control": IMMUTABLE if made.shared else PRIVATE}
        if made.body is None:
            return Response(status_code=304, headers=headers)
        return Response(made.body, media_type=made.media_type, headers=headers)

    async def pdf_page(self, request: Request) -> Response:
        """``/api/pdf/page?pdi=NAME&page=N``: a PDF's page of its text layer with each character's box
        (:func:`pdi.server.pages.pdf_view.page_json`), what the viewer lays over the page pdf.js draws."""
        from pdi.server.pages.pdf_view import page_json

        name = optional(request, "pdi")
        number = optional(request, "page")
        if not name or not number:
            raise ParseError("/api/pdf/page needs pdi= (a PDF's name) and page= (a page number from 1)")
        return JSONResponse(await self.work.run(page_json, self.archive, name, number))
