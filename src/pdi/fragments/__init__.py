"""Fragments: one module per media family, and the registry that picks the evaluator.

:func:`evaluate` takes the *effective* PDI fragment scheme (``char``, ``line``,
``rect``, ``sec`` …), its positions as the identifier parser gives them,
and the octets and media type of the archived entity, and returns a
:class:`FragmentResult`. The evaluator is chosen by (scheme, media family);
a pair without an evaluator raises :class:`~pdi.errors.UnsupportedError`.

Registered now:

* ``char`` and ``line`` on text (``text/*``, XML media types): the PDI reading
  of ``PDI-GRAMMAR.md`` §3, in :mod:`pdi.fragments.text`: positions over the
  CRLF-canonical text, ``char`` half-open over code points (CR and LF count
  one each), ``line`` as RFC 5147 line positions with the line endings
  included.
* ``byte`` on any media type (family ``*``): the half-open octet range of the
  stored representation, in :mod:`pdi.fragments.octets`.
* ``rect`` and ``crop`` on ``image/*``: a rectangle of pixels of one frame
  (``rect`` returns the whole image and the region, ``crop`` the cut-out
  pixels as PNG), in :mod:`pdi.fragments.image`.
* ``sec`` and ``msec`` on ``audio/*``: a time range, returned as a WAV file
  of the selected samples, in :mod:`pdi.fragments.audio`.

* ``elt`` on HTML and XML and ``name`` on HTML (the text family): from a
  start tag through the end of an element, as a ``char`` range of the
  CRLF-canonical source, in :mod:`pdi.fragments.markup`.
* ``char``, ``line``, ``elt`` and ``name`` on an aggregate
  (``multipart/related``, MHTML): those of its root part, in
  :mod:`pdi.fragments.aggregate`.

Indexes made once, at deposit (:func:`build_index`): for a text, the block
table of :class:`~pdi.fragments.text.TextTable` (counted from a stream of
chunks in bounded memory); for HTML and XML, the
:class:`~pdi.fragments.markup.index.ElementIndex` (one parse, then never
again), which holds the text's table too. Given back to :func:`evaluate` as
``index=``, a query reads the index and the octets it selects, and answers
exactly what it answers without one; an index that is damaged or was made
for other octets is an :class:`~pdi.errors.IntegrityError`.

Not evaluated: ``elt`` on SGML and the time schemes on ``video/*``: they
parse, and resolving them is :class:`~pdi.errors.UnsupportedError`.

An evaluator registered for the family ``*`` serves every media type that has
no evaluator of its own for that scheme.

Pure: no I/O. ``data`` may be ``bytes`` for every family; the text and
markup evaluators also take a memory map (or any buffer) of the entity.
"""

from __future__ import annotations

import importlib
import mmap
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Protocol

from pdi.errors import ParseError, UnsupportedError

#: The octets of an entity: ``bytes``, or a memory map (text and markup evaluators).
Buffer = bytes | bytearray | memoryview | mmap.mmap


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
    ``ranges`` are empty); ``media_type`` is that of ``data``, which may
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
    from pdi._wording import plural

    extent = ""
    if result.interval is not None:
        i = result.interval
        extent = f" (the recording lasts {i.length / i.rate:.3f} s)"
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


Evaluator = Callable[[str, Sequence[object], Buffer, str, "str | None"], FragmentResult]


class IndexedEvaluator(Protocol):
    """An evaluator that can read an index made beforehand (``index``: the octets :func:`build_index` made)."""

    def __call__(
        self,
        scheme: str,
        positions: Sequence[object],
        data: Buffer,
        media_type: str,
        charset: str | None,
        /,
        *,
        index: bytes | None = None,
    ) -> FragmentResult: ...


def _media_family(media_type: str) -> tuple[str, dict[str, str]]:
    """``("text", {"charset": "utf-8"})`` for ``"text/plain; charset=UTF-8"``."""
    head, *params = media_type.split(";")
    mtype = head.strip().lower()
    parameters: dict[str, str] = {}
    for param in params:
        key, sep, value = param.partition("=")
        if sep:
            parameters[key.strip().lower()] = value.strip().strip('"')
    major, _, minor = mtype.partition("/")
    if major == "text" or minor in ("xml", "xhtml+xml", "sgml") or minor.endswith("+xml"):
        return "text", parameters
    return major, parameters


def _text_evaluator(
    scheme: str,
    positions: Sequence[object],
    data: Buffer,
    media_type: str,
    charset: str | None,
    *,
    index: bytes | None = None,
) -> FragmentResult:
    from pdi.fragments.markup import document_charset
    from pdi.fragments.sealed import index_kind
    from pdi.fragments.text import evaluate_pdi

    table = index
    if index is not None and index_kind(index) == "markup":
        from pdi.fragments.markup.index import ElementIndex

        elements = ElementIndex.from_bytes(index)
        charset = elements.reading(data, media_type, charset)  # as sniffed when it was made
        table = elements.text_table
    else:
        charset = document_charset(data, media_type, charset)  # HTML and XML without one: sniffed
    return evaluate_pdi(scheme, positions, data, charset=charset, media_type=media_type, table=table)


def _lazy(module: str, function: str) -> Evaluator:
    """The evaluator ``module.function``, imported when first used (Pillow, soundfile, html5lib load only then)."""

    def evaluate(
        scheme: str, positions: Sequence[object], data: Buffer, media_type: str, charset: str | None
    ) -> FragmentResult:
        evaluator: Evaluator = getattr(importlib.import_module(module), function)
        return evaluator(scheme, positions, data, media_type, charset)

    return evaluate


_octet_evaluator = _lazy("pdi.fragments.octets", "evaluate_bytes")
_image_evaluator = _lazy("pdi.fragments.image", "evaluate_image")
_audio_evaluator = _lazy("pdi.fragments.audio", "evaluate_audio")


def _markup_evaluator(
    scheme: str,
    positions: Sequence[object],
    data: Buffer,
    media_type: str,
    charset: str | None,
    *,
    index: bytes | None = None,
) -> FragmentResult:
    from pdi.fragments.markup import evaluate_markup  # html5lib loads only when a parse is needed

    return evaluate_markup(scheme, positions, data, media_type, charset, index=index)


_aggregate_evaluator = _lazy("pdi.fragments.aggregate", "evaluate_aggregate")

_REGISTRY: dict[tuple[str, str], Evaluator] = {
    ("byte", "*"): _octet_evaluator,
    ("char", "multipart"): _aggregate_evaluator,
    ("line", "multipart"): _aggregate_evaluator,
    ("elt", "multipart"): _aggregate_evaluator,
    ("name", "multipart"): _aggregate_evaluator,
    ("rect", "image"): _image_evaluator,
    ("crop", "image"): _image_evaluator,
    ("sec", "audio"): _audio_evaluator,
    ("msec", "audio"): _audio_evaluator,
}
#: The evaluators that read an index (each is in _REGISTRY too).
_INDEXED: dict[tuple[str, str], IndexedEvaluator] = {
    ("char", "text"): _text_evaluator,
    ("line", "text"): _text_evaluator,
    ("elt", "text"): _markup_evaluator,
    ("name", "text"): _markup_evaluator,
}
_REGISTRY.update(_INDEXED)


def register(scheme: str, family: str, evaluator: Evaluator | IndexedEvaluator, *, indexed: bool = False) -> None:
    """Register ``evaluator`` for ``scheme`` on media family ``family`` (``"text"``, ``"image"`` …).

    With ``indexed``, the evaluator takes the keyword ``index`` (see
    :class:`IndexedEvaluator`) and :func:`evaluate` passes it the index it is given.
    """
    key = (scheme.lower(), family.lower())
    _INDEXED.pop(key, None)
    if indexed:
        _INDEXED[key] = evaluator  # type: ignore[assignment]  # ``indexed`` says it takes ``index``: not checkable
    _REGISTRY[key] = evaluator


def evaluators() -> tuple[tuple[str, str], ...]:
    """The (scheme, media family) pairs that have an evaluator."""
    return tuple(sorted(_REGISTRY))


def evaluate(
    scheme: str,
    positions: Sequence[object],
    data: Buffer,
    *,
    media_type: str,
    charset: str | None = None,
    index: bytes | None = None,
) -> FragmentResult:
    """Evaluate the PDI fragment ``scheme=positions`` on the entity ``data`` of ``media_type``.

    ``charset`` defaults to the ``charset`` parameter of ``media_type``, then
    to US-ASCII (RFC 2046 §4.1.2). ``index`` is what :func:`build_index`
    made from these octets (with the same media type and charset), or
    ``None``: the result is the same either way, but with it a ``char``,
    ``line``, ``elt`` or ``name`` query reads only the index and the
    octets it selects (other schemes do not use it). Raises
    :class:`UnsupportedError` when no evaluator handles the scheme on this
    media family, :class:`~pdi.errors.IntegrityError` for an index that is
    damaged or was made for other octets, and the evaluator's errors
    (:class:`~pdi.errors.ParseError` for bad positions) otherwise.
    """
    family, parameters = _media_family(media_type)
    key = (scheme.lower(), family)
    if key not in _REGISTRY:
        key = (scheme.lower(), "*")
    evaluator = _REGISTRY.get(key)
    if evaluator is None:
        raise UnsupportedError(f"no evaluator for fragment scheme {scheme!r} on {media_type}")
    if charset is None:
        charset = parameters.get("charset")
    indexed = _INDEXED.get(key)
    if indexed is not None:
        return indexed(scheme.lower(), positions, data, media_type, charset, index=index)
    return evaluator(scheme.lower(), positions, data, media_type, charset)


def build_index(
    source: Buffer | Iterable[bytes],
    *,
    media_type: str,
    charset: str | None = None,
    seconds: float | None = None,
) -> bytes | None:
    """The index to keep beside an entity, made once, so that its fragment queries read little; ``None`` if it has none.

    ``source`` is the entity's octets (``bytes`` or a memory map) or an
    iterable of its chunks, in order and of any sizes; ``media_type`` and
    ``charset`` as :func:`evaluate` will be given them.

    * Text (``text/*`` but HTML and XML): the block table of
      :class:`~pdi.fragments.text.TextTable`, counted from the chunks in
      bounded memory (a window of 4 MiB and a block of 64 KiB), 16 octets
      per block of 64 KiB. UTF-8 and one-octet-per-character charsets only:
      a text in another charset (UTF-16, UTF-32, Shift_JIS …) is decoded
      whole by every query anyway, and gets ``None``.
    * HTML and XML: an :class:`~pdi.fragments.markup.index.ElementIndex`,
      which costs one parse (the whole text is read, and a memory map
      copied, as parsing needs; ``seconds`` bounds an HTML parse, by
      default :data:`pdi.fragments.markup.MAX_PARSE_SECONDS`, and a longer
      one is a :class:`~pdi.errors.LimitError`), holds the charset it was
      read in (sniffed once when none is given) and the text's block table.
      A document that cannot be cut still gets an index: it holds the error
      its ``elt`` and ``name`` queries raise.
    * Other media types (images, audio, SGML's elements): ``None``; SGML
      gets the text table, for ``char`` and ``line``.

    Raises :class:`~pdi.errors.UnsupportedError` for a charset label that
    names no charset (text).
    """
    family, parameters = _media_family(media_type)
    if charset is None:
        charset = parameters.get("charset")
    if family != "text":
        return None
    from pdi.fragments.markup import MAX_PARSE_SECONDS, markup_kind
    from pdi.fragments.text.table import WINDOW, TextTable

    if markup_kind(media_type) in ("html", "xml", "xhtml"):
        from pdi.fragments.markup.index import ElementIndex

        whole = source if isinstance(source, (bytes, bytearray, memoryview, mmap.mmap)) else b"".join(source)
        limit = MAX_PARSE_SECONDS if seconds is None else seconds
        return ElementIndex.build(whole, media_type, charset, seconds=limit).to_bytes()
    chunks = _windows(source, WINDOW) if isinstance(source, (bytes, bytearray, memoryview, mmap.mmap)) else source
    table = TextTable.from_chunks(chunks, charset)
    return None if table is None else table.to_bytes()


def _windows(data: Buffer, size: int) -> Iterator[memoryview]:
    """``data`` in pieces of ``size`` octets, without copying."""
    with memoryview(data) as view:
        for at in range(0, len(view), size):
            yield view[at : at + size]
