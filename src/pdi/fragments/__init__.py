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
* ``sec`` and ``msec`` on ``video/*`` (WebM, MP4, Ogg): a time range of the
  milliseconds selected, answered with the whole video, from what ffprobe
  read at deposit (the video's index), in :mod:`pdi.fragments.video`;
  ``rect`` and ``crop`` at a time on a video need ffmpeg to decode a frame,
  and are answered by the archive (:func:`pdi.archive.video.frame_region`),
  not here.

* ``char``, ``line``, ``rect`` and RFC 8118's ``page``, ``nameddest``, ``viewrect`` and ``search`` on
  ``application/pdf``: counted
  on the PDF's text layer (``docs/pdf-text-layer.md``), in
  :mod:`pdi.fragments.pdf`; ``char`` and ``line`` give the passage's text.
* ``elt`` on HTML, XML and SGML and ``name`` on HTML (the text family): from a
  start tag through the end of an element, as a ``char`` range of the
  CRLF-canonical source, in :mod:`pdi.fragments.markup` (SGML's elements are
  those OpenSP's ``onsgmls`` reports given the document's DTD).
* ``char``, ``line``, ``elt`` and ``name`` on an aggregate
  (``multipart/related``, MHTML): those of its root part, in
  :mod:`pdi.fragments.aggregate`.
* ``char`` and ``line`` on an e-mail message (``message/rfc822``): counted
  on its body's text (``docs/email.md``), and the extension scheme ``part``
  (a part by number, ``cid:`` or name), in :mod:`pdi.fragments.email`.

Indexes made once, at deposit (:func:`build_index`): for a text, the block
table of :class:`~pdi.fragments.text.TextTable` (counted from a stream of
chunks in bounded memory); for HTML, XML and SGML, the
:class:`~pdi.fragments.markup.index.ElementIndex` (one parse, then never
again), which holds the text's table too. Given back to :func:`evaluate` as
``index=``, a query reads the index and the octets it selects, and answers
exactly what it answers without one; an index that is damaged or was made
for other octets is an :class:`~pdi.errors.IntegrityError`.

Not evaluated: time schemes on a video that ffprobe cannot read: they parse,
and resolving them is :class:`~pdi.errors.UnsupportedError`.

An evaluator registered for the family ``*`` serves every media type that has
no evaluator of its own for that scheme.

Pure: no I/O, except ``elt`` on SGML, which runs ``onsgmls``. ``data`` may be ``bytes`` for every family; the text and
markup evaluators also take a memory map (or any buffer) of the entity.
"""

from __future__ import annotations

import importlib
import itertools
import mmap
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from pdi._wording import clipped
from pdi.errors import ParseError, UnsupportedError
from pdi.fragments.results import (
    Buffer,
    FragmentResult,
    Interval,
    Range,
    Region,
    check_order,
    past_end_message,
    position_note,
)

if TYPE_CHECKING:
    from pdi.fragments.markup.sgml import SgmlCatalog

__all__ = [
    "Buffer",
    "FragmentResult",
    "IndexedEvaluator",
    "Interval",
    "Range",
    "Region",
    "build_index",
    "check_order",
    "evaluate",
    "evaluators",
    "past_end_message",
    "position_note",
    "register",
]

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
    if mtype == "application/pdf":
        return "pdf", parameters
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


def _lazy_indexed(module: str, function: str) -> IndexedEvaluator:
    """The evaluator ``module.function`` that reads an index, imported when first used (html5lib, pypdfium2,
    the video reader load only when a fragment of theirs is evaluated)."""

    def evaluate(*arguments: Any, index: bytes | None = None) -> FragmentResult:  # an IndexedEvaluator's
        evaluator: IndexedEvaluator = getattr(importlib.import_module(module), function)
        return evaluator(*arguments, index=index)

    return evaluate


_markup_evaluator = _lazy_indexed("pdi.fragments.markup", "evaluate_markup")
_aggregate_evaluator = _lazy("pdi.fragments.aggregate", "evaluate_aggregate")
_email_evaluator = _lazy("pdi.fragments.email", "evaluate_email")
_pdf_evaluator = _lazy_indexed("pdi.fragments.pdf", "evaluate_pdf")
_video_evaluator = _lazy_indexed("pdi.fragments.video", "evaluate_video")


_REGISTRY: dict[tuple[str, str], Evaluator] = {
    ("byte", "*"): _octet_evaluator,
    ("char", "multipart"): _aggregate_evaluator,
    ("line", "multipart"): _aggregate_evaluator,
    ("elt", "multipart"): _aggregate_evaluator,
    ("name", "multipart"): _aggregate_evaluator,
    ("char", "message"): _email_evaluator,
    ("line", "message"): _email_evaluator,
    ("part", "message"): _email_evaluator,
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
    ("char", "pdf"): _pdf_evaluator,
    ("line", "pdf"): _pdf_evaluator,
    ("page", "pdf"): _pdf_evaluator,
    ("nameddest", "pdf"): _pdf_evaluator,
    ("rect", "pdf"): _pdf_evaluator,
    ("viewrect", "pdf"): _pdf_evaluator,
    ("search", "pdf"): _pdf_evaluator,
    ("sec", "video"): _video_evaluator,
    ("msec", "video"): _video_evaluator,
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


#: Schemes a media family has that the archive answers, not an evaluator here (module docstring): a refusal of
#: another scheme names them among those there are.
_ANSWERED_BY_THE_ARCHIVE = {"video": ("crop", "rect")}


def _schemes_on(scheme: str, family: str, media_type: str) -> str:
    """What the refusal of ``scheme`` adds: the schemes there are for this media type, and the near one (of the
    draft's schemes, those it defines for the type: ``elt`` is evaluated for the text family's HTML, not for
    ``text/plain``)."""
    import difflib

    from pdi.formats import did_you_mean
    from pdi.identifier import FRAGMENT_SCHEMES, allowed_schemes

    defined = allowed_schemes(media_type.split(";", 1)[0].strip().lower())
    schemes = sorted({s for s, f in _REGISTRY if f in (family, "*") and (s not in FRAGMENT_SCHEMES or s in defined)}
                     | set(_ANSWERED_BY_THE_ARCHIVE.get(family, ())))
    near = difflib.get_close_matches(scheme.lower(), schemes, n=1, cutoff=0.6)
    return f"{did_you_mean(near)} (there: {', '.join(schemes)})" if schemes else ""


def evaluate(
    scheme: str,
    positions: Sequence[object],
    data: Buffer,
    *,
    media_type: str,
    charset: str | None = None,
    index: bytes | None = None,
    sgml_catalog: SgmlCatalog | None = None,
    name: str | None = None,
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
    ``sgml_catalog`` is the archive's own SGML catalog, which ``elt`` on SGML
    with no element index reads before the system's (as :func:`build_index` did).
    ``name`` is the entity's name (its PDI), which a PDF's refusals begin with
    (:func:`pdi.fragments.pdf.said_of`), as a deposit's begin with its file's.
    """
    family, parameters = _media_family(media_type)
    key = (scheme.lower(), family)
    if key not in _REGISTRY:
        key = (scheme.lower(), "*")
    evaluator = _REGISTRY.get(key)
    if evaluator is None:
        raise UnsupportedError(
            f"no evaluator for fragment scheme '{clipped(scheme)}' on {media_type}"
            f"{_schemes_on(scheme, family, media_type)}")
    if charset is None:
        charset = parameters.get("charset")
    indexed = _INDEXED.get(key)
    try:
        if indexed is _markup_evaluator and sgml_catalog is not None:
            return _evaluate_with_catalog(scheme.lower(), positions, data, media_type, charset, index=index,
                                         sgml_catalog=sgml_catalog)
        if indexed is _pdf_evaluator and name is not None:
            return _evaluate_named_pdf(scheme.lower(), positions, data, media_type, charset, index=index, name=name)
        if indexed is not None:
            return indexed(scheme.lower(), positions, data, media_type, charset, index=index)
        return evaluator(scheme.lower(), positions, data, media_type, charset)
    except ParseError as exc:
        if exc.rule != "charset":
            raise
        # the entity's octets do not decode, not the name's grammar: what it selects cannot be counted in
        # characters (an XML whose bytes are not its encoding's, which a deposit takes; a text kept with --force)
        raise UnsupportedError(f"{exc.reason}: its characters cannot be counted, so no {scheme.lower()} passage of it"
                               " can be cited; cite it whole, or by byte=") from exc


def _evaluate_named_pdf(*arguments: Any, index: bytes | None, name: str) -> FragmentResult:
    """:func:`pdi.fragments.pdf.evaluate_pdf` given the PDF's name (imported when first used)."""
    from pdi.fragments.pdf import evaluate_pdf

    return evaluate_pdf(*arguments, index=index, name=name)


def _evaluate_with_catalog(*arguments: Any, index: bytes | None, sgml_catalog: SgmlCatalog) -> FragmentResult:
    """:func:`pdi.fragments.markup.evaluate_markup` given the archive's SGML catalog (imported when first used)."""
    from pdi.fragments.markup import evaluate_markup

    return evaluate_markup(*arguments, index=index, sgml_catalog=sgml_catalog)


def build_index(
    source: Buffer | Iterable[bytes],
    *,
    media_type: str,
    charset: str | None = None,
    seconds: float | None = None,
    sgml_catalog: SgmlCatalog | None = None,
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
      copied, as parsing needs; ``seconds`` bounds an HTML parse's processor time, by
      default :data:`pdi.fragments.markup.MAX_PARSE_SECONDS`), holds the
      charset it was read in (sniffed once when none is given) and the
      text's block table. A document that cannot be cut, or is past the
      parser's bounds (a longer parse, more start tags, depth or attributes
      than :mod:`pdi.fragments.markup.reading` allows), still gets an index:
      it holds the error its ``elt`` and ``name`` queries raise. HTML or XML
      larger than :data:`pdi.fragments.markup.bounds.MAX_MARKUP_OCTETS` is a
      :class:`~pdi.errors.LimitError` (its queries refuse it by its size).
    * PDF: its text layer (:func:`pdi.fragments.pdf.build_layer_index`),
      read whole by PDFium; its errors if PDFium cannot open it.
    * SGML: an :class:`~pdi.fragments.markup.index.ElementIndex` of the
      elements OpenSP's ``onsgmls`` reports, ``sgml_catalog`` (the archive's
      own SGML catalog) read before the system's (and whether the DTD was found,
      and the parser's error count, for ``pdi get --info``), or of its
      :class:`~pdi.errors.LimitError` when the parse goes past ``onsgmls``'s
      time, output or memory bounds (its ``elt`` queries refuse it at once); where
      ``onsgmls`` is not installed, the text table only, and ``elt`` parses
      on each query.
    * Video: none here; what ffprobe reads at deposit (:class:`pdi.fragments.video.VideoInfo`,
      made by :mod:`pdi.archive.video`) is its index.
    * Other media types (images, audio): ``None``.

    Raises :class:`~pdi.errors.UnsupportedError` for a charset label that
    names no charset (text).
    """
    family, parameters = _media_family(media_type)
    if charset is None:
        charset = parameters.get("charset")
    if family == "pdf":
        from pdi.fragments.pdf import build_layer_index

        return build_layer_index(source if isinstance(source, (bytes, bytearray, memoryview, mmap.mmap))
                                 else b"".join(source))
    if family != "text":
        return None
    from pdi.fragments.markup import MAX_PARSE_SECONDS, markup_kind
    from pdi.fragments.markup.bounds import MAX_SGML_OCTETS
    from pdi.fragments.text.table import WINDOW, TextTable

    kind = markup_kind(media_type)
    whole: Buffer | None = None
    if kind in ("html", "xml", "xhtml"):
        whole = source if isinstance(source, (bytes, bytearray, memoryview, mmap.mmap)) else b"".join(source)
    elif kind == "sgml" and _has_onsgmls():
        # held whole to be parsed, up to its bound; past it, its block table as a plain text's (elt refused)
        found = source if isinstance(source, (bytes, bytearray, memoryview, mmap.mmap)) else _within(
            iter(source), MAX_SGML_OCTETS)
        if not isinstance(found, (bytes, bytearray, memoryview, mmap.mmap)) or len(found) > MAX_SGML_OCTETS:
            source = found
        else:
            whole = found
    if whole is not None:
        from pdi.fragments.markup.index import ElementIndex

        limit = MAX_PARSE_SECONDS if seconds is None else seconds
        return ElementIndex.build(whole, media_type, charset, seconds=limit, sgml_catalog=sgml_catalog).to_bytes()
    chunks = _windows(source, WINDOW) if isinstance(source, (bytes, bytearray, memoryview, mmap.mmap)) else source
    table = TextTable.from_chunks(chunks, charset)
    return None if table is None else table.to_bytes()


def _within(chunks: Iterator[bytes], most: int) -> bytes | Iterator[bytes]:
    """The octets of ``chunks`` joined, if there are at most ``most``; else all of them as chunks again (those read
    to find it so, then the rest, unread), having held no more than ``most`` and one chunk."""
    read: list[bytes] = []
    size = 0
    for chunk in chunks:
        read.append(chunk)
        size += len(chunk)
        if size > most:
            return itertools.chain(read, chunks)
    return b"".join(read)


def _has_onsgmls() -> bool:
    """Whether OpenSP's ``onsgmls`` is here to parse SGML (without it, SGML is indexed as text)."""
    from pdi.fragments.markup.sgml import onsgmls_path

    return onsgmls_path() is not None


def _windows(data: Buffer, size: int) -> Iterator[memoryview]:
    """``data`` in pieces of ``size`` octets, without copying."""
    with memoryview(data) as view:
        for at in range(0, len(view), size):
            yield view[at : at + size]
