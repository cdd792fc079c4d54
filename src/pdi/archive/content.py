"""What a deposit is: its format, its charset and its canonical text — checked, not trusted.

A deposit is permanent (deposited bytes never change), so a mistake in what
the depositor says about the bytes must be caught here, before it is stored:

- **Format.** libmagic (through ``python-magic``; Debian's ``libmagic1``)
  names what the bytes are, and :func:`check_format` refuses a declared
  format (given, or guessed from a file name) that they contradict: a format
  with a file signature (PNG, JPEG, GIF, WebP, TIFF, BMP, PDF, WAV, FLAC, MP3,
  Ogg, ZIP and the formats built on it, gzip, bzip2, xz) whose bytes are
  something else, and a text or other format whose bytes are clearly one of
  those. Families are compared, not media types: a ``docx`` or ``epub`` that
  libmagic calls ``application/zip`` is a ZIP, a ``video/ogg`` it calls
  ``audio/ogg`` is an Ogg. Text and HTML, XML and its subtypes, and any other
  pair libmagic cannot tell apart by a signature are never refused.
- **Charset.** Bytes that do not decode in the declared charset are a syntax
  error (:func:`canonical_text`); :func:`check_charset` also refuses bytes
  that are valid UTF-8 with at least one multi-byte character but are
  declared in a one-octet-per-character charset (ISO-8859-x, windows-125x,
  KOI8 …): read in that charset they would be mojibake (``Ã©`` for ``é``)
  forever. Plain ASCII declared ``latin-1`` is fine.
- **Exact octets.** Every format is stored exactly as deposited and streamed
  (:func:`prepare`), never held whole; for ``text/*`` formats the charset
  (declared, implied by the format, or detected) is recorded, and the
  CRLF-canonical form the draft counts ``char`` positions on (lines 551-588)
  is derived from the octets when a fragment is read.

- **PDF.** A ``pdf`` deposit must be a PDF that PDFium (pypdfium2) opens
  without a password (:class:`pdi.archive.readable.PdfCheck`): what :mod:`pdi.fragments.pdf`
  reads its pages and text layer with.
- **E-mail.** A ``header`` (``message/rfc822``) deposit must be a message
  Python's :mod:`email` reads within :class:`pdi.mail.message.MailLimits`
  (:class:`pdi.archive.readable.EmailCheck`): header fields first, no NUL, parts and nesting
  bounded; one past :data:`pdi.mail.large.STREAMED_FROM`, or of more lines than that parser is given,
  read by its structure, as it will be read (:func:`pdi.mail.large.by_structure`), from a temporary file; the octets are stored as they came,
  never written back.
- **MHTML.** A ``related`` deposit of up to 64 MiB must parse as replay
  parses it (:class:`pdi.archive.readable.MhtmlCheck`).
- **XML.** XML that is not text (``application/xml``, any ``+xml``) must be
  in the encoding XML 1.0 reads it in (byte-order mark, ``<?xml``'s octets,
  encoding declaration, else UTF-8: :class:`pdi.archive.readable.XmlCheck`),
  as a text must be in its charset: a :class:`~pdi.errors.ParseError` naming
  the octet where it is not, unless ``force``.
- **Video.** A WebM, MP4 or Ogg video (``webm``, ``video+mp4``,
  ``video+ogg``) must be one ``ffprobe`` reads as that container, with a
  duration (and a frame size, if it has a video stream)
  (:class:`pdi.archive.video.VideoCheck`); what it reads is kept.

The checks raise :class:`~pdi.errors.FormatCheckError` or :class:`~pdi.errors.CharsetCheckError`
(integrity errors, exit status 3: the bytes are not what
was said of them), naming what the bytes are, what was declared, and how to
proceed; ``force=True`` (``--force``) deposits as declared instead.
"""

from __future__ import annotations

import codecs
import functools
import itertools
import re
import threading
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

from pdi import charsets, formats
from pdi.archive.blobs import BlobInfo, Octets, pieces
from pdi.archive.readable import EmailCheck, MhtmlCheck, PdfCheck, XmlCheck, where
from pdi.archive.store import BlobObserver, NewRepresentation
from pdi.errors import (
    CharsetCheckError,
    FormatCheckError,
    LimitError,
    ParseError,
    UnsupportedError,
)
from pdi.fragments.markup.bounds import MAX_MARKUP_OCTETS

if TYPE_CHECKING:
    import queue
    from dataclasses import dataclass

    from pdi.archive.catalog import SQLStore
    from pdi.archive.search import Passages
    from pdi.fragments.markup.sgml import SgmlCatalog
else:
    from pdi._later import dataclass

__all__ = [
    "Content",
    "TextCheck",
    "canonical_text",
    "charset_from_head",
    "check_charset",
    "check_format",
    "detect_charset",
    "is_text_format",
    "one_octet_per_character",
    "prepare",
    "signature_family",
    "sniff",
]

#: How much of the bytes libmagic is shown: signatures sit in the first bytes,
#: and the zip-based formats name themselves in their first entries.
SNIFF_BYTES = 1 << 20


@dataclass(frozen=True)
class Content:
    """One format of a deposit: its octets, its format token, and optionally its charset.

    ``data`` is bytes in hand or a stream (a binary file read to its end, or
    an iterable of pieces), never held whole. ``source`` says where the
    octets came from (a file name); a refusal names it.
    """

    data: Octets
    format: str
    charset: str | None = None
    source: str | None = None
    #: Keep a PDF that PDFium cannot open as given (with no text layer) instead of refusing it: what a
    #: web archive recorded a server sending (a WARC's lone resource) is evidence as it stands.
    keep_unreadable: bool = False
    #: Leave the text's full-text passages to the background indexer's queue whatever its size (a bulk
    #: import: :mod:`pdi.interop.warc`): resolvable at once, found by a search once ``pdi index`` drained it.
    index_later: bool = False




# --- charsets and canonical text ----------------------------------------------------------


def codec(charset: str) -> codecs.CodecInfo:
    """Python's codec for ``charset``; :class:`UnsupportedError` when there is none.

    IANA names and aliases first, then Python's text codecs; never a codec
    that is not a charset (``zlib_codec``, ``punycode``): :func:`pdi.charsets.codec_for`.
    """
    return codecs.lookup(charsets.codec_for(charset))


# Charsets whose byte order a BOM decides; we decode and encode them with the
# explicit-order codec and keep the BOM as U+FEFF, so the bytes round-trip.
_BOM_ORDERED = {
    "utf-16": (codecs.BOM_UTF16_LE, "utf-16-le", "utf-16-be"),
    "utf-32": (codecs.BOM_UTF32_LE, "utf-32-le", "utf-32-be"),
}


def _text_codec(data: bytes, charset: str) -> str:
    """The Python codec that decodes and re-encodes ``data`` byte-exactly in ``charset``."""
    name = codec(charset).name
    if name in _BOM_ORDERED:
        little_bom, little, big = _BOM_ORDERED[name]
        return little if data.startswith(little_bom) else big
    return name


def detect_charset(data: bytes, *, source: str | None = None) -> str:
    """The charset of text bytes: a byte-order mark, else UTF-8 if they decode as UTF-8.

    Anything else must be declared: guessing an 8-bit charset would silently
    change which characters a ``char=`` fragment counts.
    """
    marked = _byte_order_mark(data)
    if marked is not None:
        return marked
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ParseError(
            f"{where(source)}the text is not UTF-8 and has no byte-order mark; declare its"
            " charset (--charset, or charset=)",
            offset=exc.start,
            rule="charset",
        ) from exc
    return "utf-8"


def canonical_text(data: bytes, charset: str, *, source: str | None = None) -> tuple[bytes, str]:
    """CRLF-canonical bytes of a text in ``charset`` and its original line-ending convention."""
    from pdi.fragments.text import line_ending_convention, to_crlf

    text_codec = _text_codec(data, charset)
    try:
        text = data.decode(text_codec)
    except UnicodeDecodeError as exc:
        raise ParseError(
            f"{where(source)}the bytes are not valid {charset}: {exc.reason}",
            offset=exc.start,
            rule="charset",
        ) from exc
    convention = line_ending_convention(text)
    try:
        canonical = to_crlf(text).encode(text_codec)
    except UnicodeEncodeError as exc:
        raise UnsupportedError(f"CRLF line endings cannot be written in {charset}") from exc
    return canonical, convention


def is_text(token: str, media_type: str) -> bool:
    """Whether a (canonical) token and its media type are text: in a charset, counted CRLF-canonical."""
    return media_type.startswith("text/") or formats.charset_for(token) is not None


def is_text_format(token: str) -> bool:
    """Whether a format token names text (in a charset, counted CRLF-canonical)."""
    canonical = formats.canonical_token(token)
    return is_text(canonical, formats.media_type_for(canonical))


@functools.cache
def one_octet_per_character(charset: str) -> bool:
    """Whether every octet of ``charset`` is one character by itself (ISO-8859-x, windows-125x, KOI8 …).

    Asked of the codec, not of a list: its incremental decoder is given each
    octet alone, and a charset where some octet starts a longer sequence
    (UTF-8, UTF-16, Shift_JIS, GB18030, ISO-2022-JP's escapes) holds it back.
    """
    decoder = codecs.getincrementaldecoder(codec(charset).name)()
    for octet in range(256):
        decoder.reset()
        try:
            decoded = decoder.decode(bytes((octet,)), final=False)
        except UnicodeDecodeError:
            continue  # an octet the charset leaves undefined (0x81 in windows-1252)
        if len(decoded) != 1:
            return False
    return True


def check_charset(
    data: bytes, charset: str, *, token: str | None = None, source: str | None = None
) -> None:
    """Refuse valid multi-byte UTF-8 declared in a one-octet-per-character ``charset``.

    Such bytes are almost never a real ISO-8859 or windows-125x text (it
    would need ``Ã`` followed by ``©`` and the like throughout) and almost
    always UTF-8 declared wrongly; stored as declared, every non-ASCII
    character would be read as two or more others forever. ``token`` is the
    format when it, not ``--charset``, named the charset. ASCII passes.
    """
    if data.isascii() or not one_octet_per_character(charset):
        return
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return
    at = next(i for i, byte in enumerate(data) if byte > 0x7F)
    first = data[at:].decode("utf-8")[0]
    octets = first.encode("utf-8")
    misread = octets.decode(codec(charset).name, "replace")
    said = (
        f"the format {token} means the charset {charset}"
        if token is not None
        else f"the charset {charset} was declared"
    )
    raise CharsetCheckError(
        f"{where(source)}the text is UTF-8 (its first multi-byte character, {first!r}"
        f" U+{ord(first):04X}, is the bytes {octets.hex(' ').upper()} at byte {at}),"
        f" but {said}, in which those bytes read {misread!r}", declare=_utf8_declared(token),
    )


def _utf8_declared(token: str | None) -> tuple[str, str] | tuple[str, str, str]:
    """What to declare of a UTF-8 text refused in a one-octet charset: the format ``text`` when a format ``token``
    named the charset (UTF-8 is then detected), else the charset."""
    return ("format", "text", " (UTF-8 is then detected)") if token is not None else ("charset", "utf-8")


# --- formats --------------------------------------------------------------------------------

#: Media types whose files start with a signature, by family (the names libmagic
#: gives and the registered ones). Members of one family never contradict each other.
_FAMILIES: dict[str, str] = {
    "image/png": "PNG",
    "image/apng": "PNG",
    "image/vnd.mozilla.apng": "PNG",
    "image/jpeg": "JPEG",
    "image/gif": "GIF",
    "image/webp": "WebP",
    "image/tiff": "TIFF",
    "image/tiff-fx": "TIFF",
    "image/bmp": "BMP",
    "image/x-ms-bmp": "BMP",
    "application/pdf": "PDF",
    "audio/wav": "WAV",
    "audio/x-wav": "WAV",
    "audio/wave": "WAV",
    "audio/vnd.wave": "WAV",
    "audio/flac": "FLAC",
    "audio/x-flac": "FLAC",
    "audio/mpeg": "MPEG audio",
    "audio/ogg": "Ogg",
    "video/ogg": "Ogg",
    "application/ogg": "Ogg",
    "audio/opus": "Ogg",  # an .opus file is Ogg-encapsulated (RFC 7845)
    "audio/vorbis": "Ogg",
    "application/zip": "ZIP",
    "application/java-archive": "ZIP",
    "application/vnd.android.package-archive": "ZIP",
    "application/gzip": "gzip",
    "application/x-gzip": "gzip",
    "application/x-bzip2": "bzip2",
    "application/x-xz": "xz",
}

#: Zip-based formats named by prefix: OOXML and OpenDocument (``+zip`` types too).
_ZIP_PREFIXES = (
    "application/vnd.openxmlformats-officedocument.",
    "application/vnd.oasis.opendocument.",
)

#: Families a valid file of which libmagic may fail to recognise, calling it
#: application/octet-stream: MP3 has no file signature (frames may follow any
#: padding), and a zip may have bytes before its first entry (self-extracting).
_UNSURE = frozenset({"MPEG audio", "ZIP"})

#: libmagic's unregistered names, as the registered types a --format suggestion uses.
_REGISTERED_AS = {
    "audio/x-wav": "audio/wav",
    "audio/x-flac": "audio/flac",
    "application/x-gzip": "application/gzip",
    "image/x-ms-bmp": "image/bmp",
}

# Octets no text holds (C0 controls but TAB, LF, VT, FF, CR, SUB, ESC): bytes
# with one of these are binary. ESC stays allowed for ISO-2022 texts.
_BINARY_OCTET = re.compile(rb"[\x00-\x08\x0e-\x19\x1c-\x1f]")
#: Every octet but those: what :func:`_holds_binary` deletes (bytes.translate runs forty times the speed of
#: the expression's search over a text's first MiB, which was a tenth of a WARC import's deposits).
_NOT_BINARY = bytes(b for b in range(256) if not _BINARY_OCTET.match(bytes([b])))


def _holds_binary(data: bytes, end: int) -> bool:
    """Whether ``data[:end]`` holds an octet no text holds (:data:`_BINARY_OCTET`)."""
    return bool((data[:end] if len(data) > end else data).translate(None, _NOT_BINARY))


def signature_family(media_type: str) -> str | None:
    """The family of files with one signature a media type belongs to (``"ZIP"``), or ``None``."""
    family = _FAMILIES.get(media_type)
    if family is not None:
        return family
    if media_type.endswith("+zip") or media_type.startswith(_ZIP_PREFIXES):
        return "ZIP"
    return None


def _textual(media_type: str) -> bool:
    """Media types whose bytes are text (whatever their charset)."""
    major, _, minor = media_type.partition("/")
    return (
        major in ("text", "message", "multipart")
        or minor.endswith(("+xml", "+json"))
        or media_type in ("application/json", "application/xml", "application/javascript")
    )


def _libmagic(sample: bytes, *, mime: bool) -> str:
    try:
        import magic
    except ImportError as exc:  # python-magic loads libmagic when imported
        raise UnsupportedError(
            f"the content cannot be checked: {exc} (the archive's machine needs libmagic: Debian's libmagic1;"
            " pdi add --force deposits it unchecked)"
        ) from exc
    try:
        return str(magic.from_buffer(sample, mime=mime))
    except magic.MagicException as exc:
        raise UnsupportedError(f"libmagic could not read the content: {exc.message}") from exc


def sniff(data: bytes) -> str:
    """The media type libmagic finds for ``data`` (its first :data:`SNIFF_BYTES`), lower case."""
    return _libmagic(data[:SNIFF_BYTES], mime=True).strip().lower()


def _describe(data: bytes) -> str:
    """libmagic's description of ``data``, up to its first comma (``PNG image data``)."""
    text = _libmagic(data[:SNIFF_BYTES], mime=False)
    return text.split(", ", 1)[0][:100]


def check_format(data: bytes, token: str, media_type: str, *, source: str | None = None) -> None:
    """Refuse bytes that contradict the format they are declared in (see the module's docstring).

    With D the declared media type and S the one libmagic finds:

    - D has a signature (:func:`signature_family`): S must be of D's family;
      for MP3 and ZIP (:data:`_UNSURE`) S may also be application/octet-stream.
    - D is text (text/*, XML, JSON, messages, multipart): refused only when S
      has a signature *and* the bytes hold octets no text holds (a NUL …),
      so a text that happens to start like a GIF (``GIF8…``) stays text.
    - Any other D: refused when S has a signature, unless S is a ZIP (many
      formats are zip containers) or D is application/octet-stream, which
      claims nothing.
    """
    if media_type == "application/octet-stream":
        return
    declared = signature_family(media_type)
    if declared is None and _textual(media_type) and not _holds_binary(data, SNIFF_BYTES):
        return  # no libmagic run for the usual text deposit: it cannot be refused
    found_type = sniff(data)
    found = signature_family(found_type)
    if declared is not None:
        if found == declared or (
            found is None and found_type == "application/octet-stream" and declared in _UNSURE
        ):
            return
    elif found is None or (found == "ZIP" and not _textual(media_type)):
        return
    try:
        suggestion: str | None = formats.token_for(_REGISTERED_AS.get(found_type, found_type))
    except UnsupportedError:
        suggestion = None
    what = "empty" if found_type == "application/x-empty" else f"{found_type} ({_describe(data)})"
    raise FormatCheckError(
        f"{where(source)}the content is {what}, but it was declared {media_type} (pdi's format token {token})",
        declare=("format", suggestion),
    )


# --- a deposit ------------------------------------------------------------------------------


class TextCheck:
    """The checks a text deposit gets, made on its octets as they stream past (a :class:`BlobObserver`).

    Every octet must decode in ``charset`` (a :class:`ParseError` naming the
    octet offset where one does not); with ``utf8_refusal`` the text must
    also not be multi-byte UTF-8 declared in a one-octet-per-character
    charset (:func:`check_charset`, decided at the end). Memory: one piece
    and the decoders' few pending octets.
    """

    def __init__(
        self,
        charset: str,
        *,
        detected: bool,
        utf8_refusal: str | None = None,
        token: str | None = None,
        source: str | None = None,
    ) -> None:
        self.charset = charset
        self.detected = detected
        self.source = source
        self.token = token
        self._codec: str | None = None
        self._decoder: codecs.IncrementalDecoder | None = None
        self._fed = 0
        self._head = b""
        self._utf8 = codecs.getincrementaldecoder("utf-8")() if utf8_refusal else None
        self._first_non_ascii: tuple[int, bytes] | None = None
        self._invalid: ParseError | None = None

    def _decode(self, piece: bytes, final: bool) -> None:
        if self._decoder is None:
            self._head += piece
            if len(self._head) < 4 and not final:
                return  # the byte-order mark decides the codec of UTF-16 and UTF-32
            self._codec = _text_codec(self._head, self.charset)
            self._decoder = codecs.getincrementaldecoder(self._codec)()
            piece, self._head = self._head, b""
        if self._invalid is not None:
            return  # already invalid here: only the UTF-8 question is still open
        pending = len(self._decoder.getstate()[0])
        try:
            self._decoder.decode(piece, final)
        except UnicodeDecodeError as exc:
            offset = self._fed - pending + exc.start
            if self.detected:
                raise ParseError(
                    f"{where(self.source)}the text is not UTF-8 and has no byte-order mark;"
                    " declare its charset (--charset, or charset=)",
                    offset=offset,
                    rule="charset",
                ) from exc
            self._invalid = ParseError(
                f"{where(self.source)}the bytes are not valid {self.charset}: {exc.reason}",
                offset=offset,
                rule="charset",
            )
            if self._utf8 is None:
                raise self._invalid from exc
            # UTF-8 declared wrongly is the likelier mistake: decided at the end
        self._fed += len(piece)

    def update(self, piece: bytes) -> None:
        if self._utf8 is not None:
            if self._first_non_ascii is None and not piece.isascii():
                at = next(i for i, octet in enumerate(piece) if octet > 0x7F)
                self._first_non_ascii = (self._fed + len(self._head) + at, piece[at : at + 4])
            try:
                self._utf8.decode(piece)
            except UnicodeDecodeError:
                self._utf8 = None  # not UTF-8: nothing to refuse
                if self._invalid is not None:
                    raise self._invalid from None
        self._decode(piece, final=False)

    def finish(self, info: BlobInfo) -> None:
        self._decode(b"", final=True)
        if self._utf8 is not None and self._first_non_ascii is not None:
            try:
                self._utf8.decode(b"", final=True)
            except UnicodeDecodeError:
                self._utf8 = None
        if self._utf8 is None or self._first_non_ascii is None:
            if self._invalid is not None:
                raise self._invalid
            return
        at, octets = self._first_non_ascii
        first = octets.decode("utf-8", "ignore")[:1] or octets[:1].decode("latin-1")
        octets = first.encode("utf-8")
        misread = octets.decode(codec(self.charset).name, "replace")
        said = (
            f"the format {self.token} means the charset {self.charset}"
            if self.token is not None
            else f"the charset {self.charset} was declared"
        )
        raise CharsetCheckError(
            f"{where(self.source)}the text is UTF-8 (its first multi-byte character, {first!r}"
            f" U+{ord(first):04X}, is the bytes {octets.hex(' ').upper()} at byte {at}),"
            f" but {said}, in which those bytes read {misread!r}", declare=_utf8_declared(self.token),
        )


#: The longest a deposit spends parsing a page for its element index (seconds).
ELEMENT_INDEX_SECONDS = 10.0


#: Text up to this many octets is counted on the depositing thread at the end; a longer one on a second thread.
COUNT_ON_THREAD_PAST = 1 << 20

#: A plain text of at most this many octets gets no block table: it would be one block of
#: :data:`pdi.fragments.text.table.BLOCK_SIZE`, so a query decodes the whole text with it or without it.
ONE_BLOCK = 1 << 16


def _is_xml(media_type: str) -> bool:
    """Whether a format that is not text (no charset: SVG, Atom, XHTML, any ``+xml``) is XML all the same,
    whose element index is made at deposit as a text's is (read in the charset its octets declare)."""
    from pdi.fragments.markup import markup_kind

    return markup_kind(media_type) in ("xml", "xhtml")


class IndexBuilder:
    """Builds a representation's fragment index (:func:`pdi.fragments.build_index`) on the deposit's one pass.

    A text's block table is counted on a second thread from the pieces as
    they stream past (a bounded queue: memory stays a few pieces), once it is
    longer than :data:`COUNT_ON_THREAD_PAST` (a small one is counted at the
    end, where a thread's start and hand-overs would cost more than it; one of
    a single block, :data:`ONE_BLOCK`, not at all); an HTML
    or XML page up to :data:`pdi.fragments.markup.bounds.MAX_MARKUP_OCTETS`, the largest whose ``elt`` and
    ``name`` are evaluated (SVG and other ``+xml``
    formats too, though not text: read in the charset they declare) is kept
    and parsed once at the end. A page past the parser's bounds (too many start tags, too
    deep, too many attributes, too slow: :mod:`pdi.fragments.markup.reading`;
    HTML's and XML's alike) gets an index that
    holds that :class:`~pdi.errors.LimitError`, which its ``elt`` and
    ``name`` queries give at once, without parsing; its ``char`` and
    ``line`` read the index's block table as any page's do. A larger page
    gets no index.
    """

    def __init__(self, media_type: str, charset: str | None, sgml_catalog: SgmlCatalog | None = None) -> None:
        from pdi.fragments.markup import markup_kind

        self.media_type = media_type
        self.charset = charset
        self.sgml_catalog = sgml_catalog  # the archive's own SGML catalog, which SGML's parse reads first
        self.index: bytes | None = None
        kind = markup_kind(media_type)
        self._markup = kind in ("html", "xml", "xhtml")
        self._plain = kind is None  # a text's block table, not an element index (SGML's)
        self._kept: list[bytes] | None = [] if self._markup else None
        self._size = 0
        self._queue: queue.Queue[bytes | None] | None = None
        self._thread: threading.Thread | None = None
        self._error: BaseException | None = None
        self._small: list[bytes] | None = None if self._markup else []  # a text's first octets, before the thread
        self._ended = False  # whether the counting thread has taken the end of the pieces

    def _start(self) -> None:
        import queue  # here: only a large text's deposit counts in a thread

        self._queue = queue.Queue(maxsize=8)
        self._thread = threading.Thread(target=self._count, name="pdi-index", daemon=True)
        self._thread.start()

    def _pieces(self) -> Iterator[bytes]:
        assert self._queue is not None
        if self._ended:
            return
        while (piece := self._queue.get()) is not None:
            yield piece
        self._ended = True  # the deposit's last piece was taken: nothing more comes

    def _count(self) -> None:
        from pdi.fragments import build_index

        try:
            self.index = build_index(self._pieces(), media_type=self.media_type, charset=self.charset,
                                     seconds=ELEMENT_INDEX_SECONDS, sgml_catalog=self.sgml_catalog)  # (SGML past 1 MiB is parsed here)
        except BaseException as exc:  # reported by finish, on the depositing thread
            self._error = exc
            for _ in self._pieces():  # keep draining, so the deposit never blocks (unless all of it was taken)
                pass

    def update(self, piece: bytes) -> None:
        self._size += len(piece)
        if self._small is not None:
            self._small.append(piece)
            if self._size > COUNT_ON_THREAD_PAST:
                self._start()
                assert self._queue is not None
                for kept in self._small:
                    self._queue.put(kept)
                self._small = None
        elif self._queue is not None:
            self._queue.put(piece)
        elif self._kept is not None:
            if self._size > MAX_MARKUP_OCTETS:  # a larger page's elt and name are refused by its size alone
                self._kept = None
            else:
                self._kept.append(piece)

    def finish(self, info: BlobInfo) -> None:
        from pdi.fragments import build_index

        if self._small is not None:
            small, self._small = self._small, None
            if self._plain and self._size <= ONE_BLOCK:
                return  # its block table would be one block, the whole text: a query reads no less with it
            try:  # (SGML's elements are parsed here too, within the deposit's time for them)
                self.index = build_index(iter(small), media_type=self.media_type, charset=self.charset,
                                         seconds=ELEMENT_INDEX_SECONDS, sgml_catalog=self.sgml_catalog)
            except UnsupportedError:
                self.index = None  # a charset the counter cannot read: queries decode it whole
        elif self._queue is not None and self._thread is not None:
            self._queue.put(None)
            self._thread.join()
            if self._error is not None:
                if isinstance(self._error, UnsupportedError):
                    self.index = None  # a charset the counter cannot read: queries decode it whole
                else:
                    raise self._error
        elif self._kept is not None:
            try:
                self.index = build_index(
                    b"".join(self._kept), media_type=self.media_type, charset=self.charset,
                    seconds=ELEMENT_INDEX_SECONDS, sgml_catalog=self.sgml_catalog,
                )
            except LimitError:
                self.index = None
            self._kept = None

    def abandon(self) -> None:
        """The deposit failed before :meth:`finish`: stop the counting thread."""
        self._small = None
        if self._queue is not None and self._thread is not None and self._thread.is_alive():
            self._queue.put(None)
            self._thread.join()


#: The video containers ffprobe reads at deposit (:mod:`pdi.archive.video`; as in :data:`pdi.fragments.video.CONTAINERS`).
_VIDEO_CONTAINERS = frozenset({"video/webm", "video/mp4", "video/ogg"})


class _Observers:
    """Several observers on one pass, and a progress callback counting octets."""

    def __init__(self, observers: list[BlobObserver], progress: Callable[[int], None] | None) -> None:
        self.observers = observers
        self.progress = progress

    def update(self, piece: bytes) -> None:
        for observer in self.observers:
            observer.update(piece)
        if self.progress is not None:
            self.progress(len(piece))

    def finish(self, info: BlobInfo) -> None:
        for observer in self.observers:
            observer.finish(info)


def _head(stream: Iterator[bytes], size: int) -> tuple[bytes, Iterator[bytes]]:
    """The first ``size`` octets of a stream (fewer if it is shorter), and the whole stream again."""
    taken: list[bytes] = []
    have = 0
    for piece in stream:
        taken.append(piece)
        have += len(piece)
        if have >= size:
            break
    head = b"".join(taken)
    return head[:size], itertools.chain([head], stream)


def prepare(
    content: Content,
    store: SQLStore,
    *,
    force: bool = False,
    progress: Callable[[int], None] | None = None,
    durable: bool = True,
) -> NewRepresentation:
    """One format of a deposit checked while it is streamed into ``store`` (staged, not yet named).

    The octets are kept exactly as they come. Refuses (unless ``force``)
    octets that contradict their format (:func:`check_format`, on the first
    :data:`SNIFF_BYTES`) or their declared charset (:func:`check_charset`);
    text that does not decode in its charset is refused even so. A refusal,
    at whatever octet, leaves nothing staged. ``progress`` is told the size
    of every piece as it is stored. Not ``durable`` (a batch's): its blob is made durable with the batch's
    others (:meth:`~pdi.archive.catalog.blobs.BlobRules.make_durable`), before the batch's transaction.
    """
    data: object = content.data
    if isinstance(data, str):
        raise ParseError("content must be bytes or a binary stream, not text", rule="content")
    token = formats.canonical_token(content.format)
    media_type = formats.media_type_for(token)
    sample, stream = _head(pieces(content.data), SNIFF_BYTES)
    if not force:
        check_format(sample, token, media_type, source=content.source)
    charset: str | None = None
    observers: list[BlobObserver] = []
    if is_text(token, media_type):
        implied = formats.charset_for(token)
        # stored and served under its IANA name: "latin-1" is iso-8859-1, "cp1252" windows-1252
        declared = formats.registered_charset(content.charset) if content.charset else None
        if declared is not None:
            codec(declared)
        if implied and declared and codec(implied).name != codec(declared).name:
            raise UnsupportedError(
                f"format {token} means charset {implied}, but charset {declared} was declared"
            )
        detected = not (declared or implied)
        charset = declared or implied or charset_from_head(sample)
        found = _xml_found(sample) if detected and _is_xml(media_type) else None
        if found is not None:
            # text/xml with no charset given is read by XML's own rules (RFC 7303 §3.2), as application/xml is: in
            # the encoding its declaration or its <?xml octets name, kept as its charset, and checked as XML is
            charset = found
            codec(charset)
            observers.append(XmlCheck(force=force, source=content.source))
        else:
            refuse_utf8 = not force and not detected and one_octet_per_character(charset)
            observers.append(
                TextCheck(
                    charset,
                    detected=detected,
                    utf8_refusal=charset if refuse_utf8 else None,
                    token=None if declared else token,
                    source=content.source,
                )
            )
    elif content.charset:
        raise UnsupportedError(f"{media_type} (pdi's format token {token}) is not text: it has no charset")
    elif _is_xml(media_type):  # read in the encoding its octets say: each must be in it (a WARC's record too)
        observers.append(XmlCheck(force=force, source=content.source))
    sgml_catalog = None
    from pdi.fragments.markup import markup_kind

    if markup_kind(media_type) == "sgml":  # its DTD may be the archive's own (pdi sgml add)
        from pdi.archive.sgml_dtds import sgml_catalog_of

        sgml_catalog = sgml_catalog_of(store.location)
    indexer = (IndexBuilder(media_type, charset, sgml_catalog) if charset is not None or _is_xml(media_type)
               else None)
    if indexer is not None:
        observers.append(indexer)
    pdf = (
        PdfCheck(force=force or content.keep_unreadable, source=content.source)
        if media_type == "application/pdf" else None
    )
    if pdf is not None:
        observers.append(pdf)
    import pdi.archive.search as search

    searching = search.search_kind(media_type) is not None
    indexed = searching and not content.index_later
    # the check keeps the message and its reading for the index (one copy, one reading) when the index reads it
    mail = EmailCheck(force=force or content.keep_unreadable, source=content.source,
                      keep=min(search.QUEUE_PAST, search.AGGREGATE_UP_TO) if indexed else None,
                      ) if media_type == "message/rfc822" else None
    if mail is not None:
        observers.append(mail)
    mhtml = MhtmlCheck(force=force or content.keep_unreadable, source=content.source) if media_type == "multipart/related" else None
    if mhtml is not None:
        observers.append(mhtml)
    video = None
    if media_type in _VIDEO_CONTAINERS:
        from pdi.archive.video import VideoCheck

        video = VideoCheck(media_type, force=force or content.keep_unreadable, source=content.source)
        observers.append(video)
    searcher = (
        search.SearchIndexer(media_type, charset, queue_past=search.QUEUE_PAST,
                             layer=(lambda: pdf.index) if pdf is not None else None, message=mail)
        if indexed else None
    )
    if searcher is not None:
        observers.append(searcher)
    try:
        blob = store.stage_blob(stream, _Observers(observers, progress), durable=durable)
    except BaseException:
        if searcher is not None:
            searcher.abandon()
        raise
    finally:
        if indexer is not None:
            indexer.abandon()
        if pdf is not None:
            pdf.abandon()
        if video is not None:
            video.abandon()
        if mail is not None:
            mail.abandon()
        if mhtml is not None:
            mhtml.abandon()
    index = indexer.index if indexer else pdf.index if pdf else video.index if video else None
    return NewRepresentation(
        token, media_type, charset, None, blob, index,
        searcher.passages if searcher else _queued(search.Passages()) if searching else None,
        mail.thread if mail is not None else None,
    )


def _queued(passages: Passages) -> Passages:
    """None yet: the deposit queues its octets for the indexer (:attr:`Content.index_later`)."""
    passages.queued = True
    return passages


def _xml_found(head: bytes) -> str | None:
    """The charset a ``text/xml`` deposit given none is read in when its first octets say one other than a text's
    rule finds (a byte-order mark, else UTF-8): the encoding declaration's (``encoding="ISO-8859-1"``, under its
    IANA name), or that of the octets of ``<?xml`` in UTF-16 or UTF-32 without a mark (XML 1.0 Appendix F).
    RFC 7303 §3.2: text/xml without a charset parameter is read as application/xml is, by XML's rules, not as a
    text in UTF-8. ``None``: the text's rule gives the same."""
    from pdi.fragments.markup.reading import xml_encoding

    found, how, _ = xml_encoding(head)
    if how not in ("declaration", "octets"):
        return None
    return formats.registered_charset(found) or found


def charset_from_head(head: bytes) -> str:
    """:func:`detect_charset` from the first octets: a byte-order mark, else UTF-8 (checked as it streams)."""
    return _byte_order_mark(head) or "utf-8"


def _byte_order_mark(head: bytes) -> str | None:
    """The charset a byte-order mark at the start of ``head`` names (UTF-32's before UTF-16's, which it begins with)."""
    if head.startswith(codecs.BOM_UTF8):
        return "utf-8"
    if head.startswith((codecs.BOM_UTF32_LE, codecs.BOM_UTF32_BE)):
        return "utf-32"
    if head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return "utf-16"
    return None
