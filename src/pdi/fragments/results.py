"""What a fragment evaluator answers: the values every media family's module shares, below the registry.

:class:`FragmentResult` and its selections (:class:`Range` of characters or
octets, :class:`Region` of pixels, :class:`Interval` of samples), the
:data:`Buffer` an entity's octets come in (and :class:`BufferFile`, which
reads one as a file without copying it), and the two messages every
evaluator words alike (:func:`past_end_message`, :func:`check_order`).
The evaluators (:mod:`pdi.fragments.text`, :mod:`~pdi.fragments.markup`,
:mod:`~pdi.fragments.image` …) import these from here and the registry
(:mod:`pdi.fragments`) imports the evaluators, so imports run one way.
Pure: no I/O.
"""

from __future__ import annotations

import io
import mmap
from dataclasses import dataclass
from typing import Protocol, overload

from pdi._wording import plural
from pdi.errors import ParseError

__all__ = ["Buffer", "BufferFile", "FragmentResult", "Interval", "MappedFile", "Page", "Range", "Readable", "Region", "SlicedOctets", "check_order", "past_end_message", "position_note"]

#: The octets of an entity: ``bytes``, or a memory map (text and markup evaluators).
Buffer = bytes | bytearray | memoryview | mmap.mmap


class MappedFile(mmap.mmap):
    """A read-only memory map of a whole open file that says the file's descriptor (:attr:`descriptor`): a child
    process given these octets (:func:`pdi.fragments.image_streamed.run_streamed`) reads the file itself, rather
    than a copy written through the map, which touched every page of a blob of gigabytes. Made by :meth:`of`; the
    descriptor is the caller's, open as long as the map is used."""

    descriptor: int

    @classmethod
    def of(cls, descriptor: int) -> MappedFile:
        """The whole file open on ``descriptor`` (not empty), mapped read-only."""
        mapped = cls(descriptor, 0, access=mmap.ACCESS_READ)
        mapped.descriptor = descriptor
        return mapped


class SlicedOctets(Protocol):
    """Octets read only by their length, an index, a plain slice and ``find``: a stored blob read by verified
    chunks as they are touched (:class:`pdi.archive.blobs.VerifiedOctets`), never whole and never mapped. The
    header readers (:mod:`pdi.fragments.image_size`, a WAV's chunks) and :class:`BufferFile` take one."""

    def __len__(self) -> int: ...
    @overload
    def __getitem__(self, key: int) -> int: ...
    @overload
    def __getitem__(self, key: slice) -> bytes: ...
    def find(self, sub: bytes, start: int = 0) -> int: ...


#: What a header reader reads: a :data:`Buffer`, or octets read by slices (:class:`SlicedOctets`).
Readable = Buffer | SlicedOctets


class BufferFile(io.RawIOBase):
    """A read-only, seekable binary file of a :data:`Buffer`, for a library that reads files (the wave module,
    libsndfile, Pillow): ``io.BytesIO`` copies any buffer but ``bytes`` whole, so a second of a 200 MB recording's
    memory map took 200 MB more. Each read slices the buffer (a map's slice copies those octets only), and no
    view of it is kept, so the map can be closed while this file is still open."""

    def __init__(self, data: Readable) -> None:
        super().__init__()
        self._data = data.cast("B") if isinstance(data, memoryview) and data.format != "B" else data
        self._size = len(self._data)
        self._at = 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]  # any writable buffer
        with memoryview(buffer) as into:
            count = max(0, min(into.nbytes, self._size - self._at))
            into.cast("B")[:count] = self._data[self._at:self._at + count]
        self._at += count
        return count

    def read(self, size: int | None = -1) -> bytes:
        """At most ``size`` octets (all that are left when ``size`` is negative or ``None``), sliced from the
        buffer: never ``size`` octets made ready first (``RawIOBase.read`` makes them, so a header's claim of 8 GB
        asked for 8 GB of memory)."""
        end = self._size if size is None or size < 0 else min(self._size, self._at + size)
        start = min(self._at, end)
        self._at = max(self._at, end)
        return bytes(self._data[start:end])

    def readall(self) -> bytes:
        return self.read()

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        """As ``io.BytesIO`` seeks: a negative position from the start is an error, one from here or from the end
        is the start."""
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self._at, io.SEEK_END: self._size}.get(whence)
        if base is None:
            raise ValueError(f"invalid whence ({whence})")
        if whence == io.SEEK_SET and offset < 0:
            raise ValueError(f"negative seek value {offset}")
        self._at = max(0, base + offset)
        return self._at

    def tell(self) -> int:
        return self._at


@dataclass(frozen=True)
class Range:
    """One selected stretch: character positions ``[start, end)`` and octet offsets ``[byte_start, byte_end)``.

    Characters are counted the way the scheme counts them (code points of the
    CRLF-canonical text for PDI ``char`` and ``line``; RFC 5147 characters for
    RFC 5147 fragments); octet offsets are into the entity the evaluator was
    given.
    """

    start: int
    end: int
    byte_start: int
    byte_end: int


@dataclass(frozen=True)
class Region:
    """The rectangle an image fragment selects: pixels ``x1 ≤ x < x2``, ``y1 ≤ y < y2`` of ``frame``.

    The corners are clamped to the image (``width`` × ``height`` pixels, the
    size of the frame); ``frames`` is how many frames the image has.
    """

    x1: int
    y1: int
    x2: int
    y2: int
    frame: int
    width: int
    height: int
    frames: int


@dataclass(frozen=True)
class Interval:
    """The stretch of sound a time fragment selects: sample frames ``[start, end)`` at ``rate`` per second.

    ``start`` and ``end`` are clamped to the ``length`` of the recording (in
    sample frames); ``channels`` is the number of channels.
    """

    start: int
    end: int
    rate: int
    channels: int
    length: int

    @property
    def seconds(self) -> tuple[float, float]:
        """Start and end in seconds."""
        return self.start / self.rate, self.end / self.rate


@dataclass(frozen=True)
class Page:
    """The page of a PDF a ``page=`` fragment names: its number (from 1), the PDF's page count, its size in points."""

    number: int
    pages: int
    width: float
    height: float


@dataclass(frozen=True)
class FragmentResult:
    """What a fragment selects.

    ``data`` holds the selected octets in the entity's charset (for several
    ranges, their concatenation in order), ``clamped`` says a position past
    the end was taken as the end, ``ranges`` the stretches selected.
    ``past_end`` says the fragment lies wholly past the end: it starts at or
    after the end and asks for more, so it selects nothing of the entity
    (``char=100,200`` on 50 characters, ``char=50,60`` too). A zero-length
    selection exactly at the end (``char=50,50``, ``char=50``) is a legal
    empty selection *at* the end, not past it; a fragment that starts inside
    and reaches past the end is only ``clamped``. Per dimension on an image:
    a rectangle whose left edge is at or past the right edge and reaches
    further (or the same for its top edge and the bottom), since it holds
    no pixel of the image.
    ``canonicalized`` is true when the entity was not CRLF-canonical: the
    positions were counted over its CRLF-canonical form, as the PDI reading
    requires, and ``data`` is the selection written with CRLF line endings
    (the octet offsets in ``ranges`` still point into the entity as given).
    Image fragments set ``region`` and audio fragments ``interval`` (their
    ``ranges`` are empty), a PDF's ``page`` fragment ``page`` (its range is
    the page's text in the PDF's text layer, octets of that text in UTF-8); ``media_type`` is that of ``data``, which may
    differ from the entity's (a ``crop`` is a PNG image, a time range a WAV
    file).
    """

    data: bytes
    media_type: str
    clamped: bool
    ranges: tuple[Range, ...]
    charset: str | None = None
    scheme: str = ""
    canonicalized: bool = False
    region: Region | None = None
    interval: Interval | None = None
    past_end: bool = False
    page: Page | None = None

    def text(self) -> str:
        """The selected text, decoded with the entity's charset (US-ASCII if none)."""
        import codecs

        return codecs.decode(self.data, self.charset or "us-ascii", "strict")


def past_end_message(name: object, result: FragmentResult) -> str:
    """What is said of ``name`` when its fragment ``result`` lies wholly past the end (:attr:`FragmentResult.past_end`).

    One sentence for every edge: ``pdi get`` prints it as a warning and
    exits 9; the resolver's ``N2R`` answers it as a ``416`` problem. With the
    document's extent when the result knows it (the end of a ``char`` or
    ``byte`` selection is clamped to the end, PDI-GRAMMAR.md §3).
    """
    extent = ""
    if result.page is not None and result.region is not None:  # a PDF's region lies past its page's edge
        r = result.region
        return f"{name} lies wholly past the edge of page {result.page.number} (it is {r.width}x{r.height} points):" \
               " it selects nothing"
    if result.interval is not None:
        i = result.interval
        extent = f" (the recording lasts {i.length / i.rate:.3f} s)"
    elif result.page is not None:
        extent = f" (the PDF has {plural(result.page.pages, 'page')})"
    elif result.region is not None:
        extent = f" (the image is {result.region.width}x{result.region.height} pixels)"
    elif result.scheme in ("char", "byte") and result.ranges:
        end = result.ranges[-1].end  # clamped to the end
        extent = f" (the text has {plural(end, 'character')})" if result.scheme == "char" else f" (it has {plural(end, 'byte')})"
    return f"{name} lies wholly past the end{extent}: it selects nothing"


def check_order(what: str, start: int, end: int, rule: str) -> None:
    """Refuse a range ``what`` (``"byte range"``, ``"sec fragment"``) whose ``end`` comes before its ``start``.

    The :class:`~pdi.errors.ParseError` quotes ``start,end`` and points at the end (where it goes wrong).
    """
    if end < start:
        raise ParseError(
            f"{what} ends before it starts ({end} < {start})",
            text=f"{start},{end}",
            offset=len(str(start)) + 1,
            rule=rule,
        )


#: What one position of a counting scheme counts, in a note's words.
_COUNTS = {"char": "character", "line": "line"}


def position_note(positions: tuple[object, ...], result: FragmentResult) -> str | None:
    """What is said of a ``char`` or ``line`` fragment of one position (``positions``, as written) that selects
    nothing: RFC 5147 §3 (and PDI-GRAMMAR.md §3) read ``line=2`` and ``char=5`` as a position, the place before
    the third line or the sixth character, an empty selection, where a reader may have meant the line or the
    character itself, which is written as a range (``line=2,3``: the next one, when the text has it; at its end
    the range lies past it); ``None`` for any other fragment, and for one past the end (:func:`past_end_message`)."""
    noun = _COUNTS.get(result.scheme)
    if noun is None or len(positions) != 1 or result.data or result.past_end:
        return None
    n = positions[0]
    if not isinstance(n, int) or isinstance(n, bool):
        return None
    scheme = result.scheme
    return f"{scheme}={n} is a position, not a {noun}: it selects nothing; a {noun} is written as a range, {scheme}={n},{n + 1}"
