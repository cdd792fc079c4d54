"""Deposit checks that a reader of the format can read the octets: PDF, e-mail, MHTML, XML (an edge of :mod:`pdi.archive.content`).

Each is an observer of a deposit's single pass (``update`` each piece, ``finish`` once the blob is staged,
``abandon`` if the deposit fails): it keeps the octets as they stream past, up to a bound, and at the end
hands them to the reader that will read them later (PDFium, Python's :mod:`email`, :func:`pdi.mhtml.parse`).
What that reader refuses is a :class:`~pdi.errors.FormatCheckError` (exit 3) naming the file and the reason,
unless ``force`` (``--force``, or a WARC's record kept as served). The video check is
:class:`pdi.archive.video.VideoCheck`. XML's (:class:`XmlCheck`) refuses octets not in its encoding as a text's
charset check does (a :class:`~pdi.errors.ParseError`, exit 1), and only ``--force`` keeps them.
"""

from __future__ import annotations

import codecs
from typing import TYPE_CHECKING

from pdi.archive.blobs import BlobInfo
from pdi.errors import FormatCheckError, LimitError, ParseError, PDIError, UnsupportedError

if TYPE_CHECKING:
    from pdi.mail.message import Mail, ThreadIds

__all__ = ["HELD_UP_TO", "PDF_LAYER_UP_TO", "XML_HEAD", "EmailCheck", "MhtmlCheck", "PdfCheck", "Spool", "XmlCheck",
           "where"]


def where(source: str | None) -> str:
    """``source`` as a refusal starts with it (``NAME: ``), or nothing."""
    return f"{source}: " if source else ""


#: The largest PDF whose text layer is made at deposit (octets): PDFium reads it whole, from memory.
PDF_LAYER_UP_TO = 256 << 20


class PdfCheck:
    """The check a PDF deposit gets, and its text layer: PDFium must open it, and the layer is made then.

    The layer (docs/pdf-text-layer.md) is kept as the PDF's fragment index,
    as a text's block table and a page's element index are
    (:func:`pdi.fragments.build_index`): ``char`` and ``line`` count on it.

    PDFium reads a PDF from its end (the cross-reference table and trailer),
    so the octets are kept as they stream past and opened at the end; a PDF
    it cannot open, or that needs a password, is refused with PDFium's reason
    (a :class:`~pdi.errors.FormatCheckError`: the octets are not the PDF the
    format says), unless ``force``, which deposits it as declared. Memory:
    the whole PDF, for the length of the deposit, up to :data:`PDF_LAYER_UP_TO`
    octets; a larger PDF is kept unchecked and with no text layer (the
    deposit's memory stays bounded), which ``pdi get --info`` then says.
    PDFium reads it in a child process under :data:`pdi.fragments.pdf.LIMITS`
    (a deadline and a memory bound): past them the deposit is a
    :class:`~pdi.errors.LimitError` naming the file and the limit (with
    ``force``, it is deposited with no text layer).
    """

    def __init__(self, *, force: bool = False, source: str | None = None) -> None:
        self.force = force
        self.source = source
        #: its text layer, the PDF's fragment index (:func:`pdi.fragments.pdf.build_layer_index`)
        self.index: bytes | None = None
        self._kept: list[bytes] = []
        self._size = 0

    def update(self, piece: bytes) -> None:
        self._size += len(piece)
        if self._size > PDF_LAYER_UP_TO:
            self._kept = []  # too large to hold: no check, no text layer
            return
        self._kept.append(piece)

    def finish(self, info: BlobInfo) -> None:
        from pdi.fragments.pdf import build_layer_index

        if self._size > PDF_LAYER_UP_TO:
            return
        whole, self._kept = b"".join(self._kept), []
        try:
            self.index = build_layer_index(whole, name=self.source or "the PDF")
        except LimitError:
            if self.force:  # deposited as declared, with no text layer (a read that needs one meets the limit)
                return
            raise
        except (ParseError, UnsupportedError) as exc:
            if self.force:
                return
            raise _unreadable(self.source, "a PDF", exc, " (with no text layer)") from exc

    def abandon(self) -> None:
        self._kept = []


class EmailCheck:
    """The check an e-mail deposit gets: pdi must read it as a message as it will read it later (``docs/email.md``).

    A message of at most :data:`pdi.mail.large.STREAMED_FROM` octets is read whole, by Python's parser
    (:func:`pdi.mail.message.read_message`); a larger one, or one of more lines than that parser is given
    (:func:`pdi.mail.large.by_structure`), by its structure, as every reading of it is
    (:func:`pdi.mail.large.read_large`: its delimiter lines, each entity's header fields, the body's part), in
    bounded memory whatever its size or lines. Either way its octets are kept as they stream past, past
    :data:`HELD_UP_TO` in a temporary file (so a large one is never held: it is read back a window at a time), and
    let go of when the deposit ends, kept or refused. A refusal (no header field on line 1, an mbox's ``From ``
    line, a NUL, too many parts, too deep) is an :class:`~pdi.errors.FormatCheckError` naming what is wrong and
    where, unless ``force``, which keeps nothing. Forced or not, its ids for the thread index (:attr:`thread`) are
    read from its first :data:`pdi.mail.message.THREAD_HEAD` octets, as the migration that indexes messages
    deposited before reads them.

    ``keep`` (the deposit indexes the text of a message of at most that many octets): its octets, and its reading
    once checked (:attr:`mail`), are kept past :meth:`finish` (forced or not) until :meth:`abandon`, for the
    full-text index (:class:`pdi.archive.search.SearchIndexer`), which reads its body from them: one temporary
    copy and one reading of a message a deposit (before, the index kept a copy of its own and read the message
    again). A forced message longer than ``keep`` is not kept, as it is not read.
    """

    def __init__(self, *, force: bool = False, source: str | None = None, keep: int | None = None) -> None:
        from pdi.mail.message import THREAD_HEAD

        self.force = force
        self.source = source
        self.keep = keep
        self._kept: Spool | None = Spool("pdi-message-") if keep is not None or not force else None
        self._head: list[bytes] = []
        self._size = 0
        self.head_size = THREAD_HEAD
        #: The message's ids for the thread index, once finished.
        self.thread: ThreadIds | None = None
        #: The message as the check read it (by its structure where :func:`pdi.mail.large.by_structure` says so, else
        #: whole), once finished and kept (``keep``); ``None`` if forced (not read).
        self.mail: Mail | None = None

    @property
    def kept(self) -> Spool | None:
        """The message's octets as they streamed past (``keep``: until :meth:`abandon`), or ``None``."""
        return self._kept

    def update(self, piece: bytes) -> None:
        if self._size < self.head_size:
            self._head.append(piece[: self.head_size - self._size])
        self._size += len(piece)
        if self._kept is not None:
            if self.force and self.keep is not None and self._size > self.keep:  # neither checked nor indexed
                self._kept.close()
                self._kept = None
                return
            self._kept.write(piece)

    def finish(self, info: BlobInfo) -> None:
        from pdi.mail.large import read_mail
        from pdi.mail.message import thread_ids

        head, self._head = b"".join(self._head), []
        self.thread = thread_ids(head)
        if self._kept is None or self.force:  # forced: not read (kept for the index, if it is to be made)
            return
        try:
            mail = read_mail(self._kept)  # as every reading of it will read it: whole, or by its structure
        except (ParseError, LimitError) as exc:
            self.abandon()
            raise _unreadable(self.source, "a message", exc) from exc
        except BaseException:
            self.abandon()
            raise
        if self.keep is not None and len(self._kept) <= self.keep:
            self.mail = mail
        else:
            self.abandon()

    def abandon(self) -> None:
        self._head = []
        self.mail = None
        if self._kept is not None:
            self._kept.close()
            self._kept = None


#: The octets a :class:`Spool` holds in memory before it writes them to a temporary file.
HELD_UP_TO = 1 << 20


class Spool:
    """Octets kept as they stream past (:class:`tempfile.SpooledTemporaryFile`: in memory up to :data:`HELD_UP_TO`,
    then a temporary file), then read back by slices: what :class:`pdi.mail.large.Octets` asks (a length and
    ``[start:end]``), a slice at a time."""

    def __init__(self, prefix: str) -> None:
        import tempfile

        self._file = tempfile.SpooledTemporaryFile(max_size=HELD_UP_TO, prefix=prefix)  # noqa: SIM115 - close()
        self.size = 0

    def write(self, piece: bytes) -> None:
        self._file.seek(0, 2)
        self._file.write(piece)
        self.size += len(piece)

    def __len__(self) -> int:
        return self.size

    def __getitem__(self, key: slice, /) -> bytes:
        start, stop, step = key.indices(self.size)
        if step != 1:
            raise ValueError("kept octets are read by plain slices")
        if stop <= start:
            return b""
        self._file.seek(start)
        return self._file.read(stop - start)

    def close(self) -> None:
        self._file.close()


class MhtmlCheck:
    """The check an MHTML deposit (``related``, ``multipart/related``) gets: replay must be able to parse it.

    The octets are kept as they stream past, up to
    :data:`pdi.mhtml.limits.MAX_REPLAY_OCTETS`, and read at the end as
    :func:`pdi.mhtml.parse` reads them (:func:`pdi.mhtml.parse.check_reads`: the
    bodies left encoded) within its default :class:`pdi.mhtml.limits.Limits`
    (parts, nesting, header blocks and fields, part sizes, time), as ``pdi serve``'s
    replay parses them, so a capture that could be stored but never shown is kept
    out, unless ``force``. A file of exactly the shape :func:`pdi.mhtml.write.build`
    writes, its parts within those limits, is known to read so from its octets by
    :func:`pdi.mhtml.plain.reads_plain`, a few calls a part (a third of the line-by-line
    reading's time: issue 24); any other is read line by line. Either way: a file that does not parse is a
    :class:`~pdi.errors.FormatCheckError` (exit 3), one past a limit a
    :class:`~pdi.errors.LimitError` (exit 7), each naming the fault or the limit
    and where. The references of its pages are not read here: replay reads them
    when a page is shown, within their own bounds. A larger file is deposited
    unchecked: replay does not show it, and its fragments read its root part
    when asked.
    """

    def __init__(self, *, force: bool = False, source: str | None = None) -> None:
        from pdi.mhtml.limits import MAX_REPLAY_OCTETS

        self.force = force
        self.source = source
        self.limit = MAX_REPLAY_OCTETS
        self._kept: list[bytes] = []
        self._size = 0

    def update(self, piece: bytes) -> None:
        if self.force:
            return
        self._size += len(piece)
        if self._size > self.limit:
            self._kept = []
            return
        self._kept.append(bytes(piece))

    def finish(self, info: BlobInfo) -> None:
        from pdi.mhtml.parse import check_reads
        from pdi.mhtml.plain import reads_plain

        if self.force or self._size > self.limit:
            return
        whole, self._kept = b"".join(self._kept), []
        if reads_plain(whole):  # the shape pdi.mhtml.write.build writes (a WARC import's pages), read in a few calls a part
            return
        try:
            check_reads(whole)  # parse's reading without decoding the bodies, which cannot fail
        except LimitError as exc:
            raise LimitError(f"{where(self.source)}the MHTML file is past a limit of replay's reading: {exc};"
                             " --force deposits it as declared") from exc
        except ParseError as exc:
            raise _unreadable(self.source, "an MHTML file", exc) from exc

    def abandon(self) -> None:
        self._kept = []


#: How to deposit XML refused for an octet not in its encoding, by how the encoding was found (else: declare it).
_XML_ADVICE = {
    "declaration": "correct its encoding declaration",
    "bom": "remove its byte-order mark and declare its encoding",
}

#: The first octets of an XML document its encoding is found from (:func:`pdi.fragments.markup.reading.xml_encoding`).
XML_HEAD = 1024


class XmlCheck:
    """The check an XML deposit that is not text (``application/xml``, any ``+xml``: SVG, Atom, XHTML) gets: every
    octet must be in the encoding the XML reader reads it in.

    Such a deposit has no charset of its own: every reading of it (``char``, ``line``, ``elt``, the viewer) finds
    its encoding from its first :data:`XML_HEAD` octets as XML 1.0 says (:func:`pdi.fragments.markup.reading.xml_encoding`:
    a byte-order mark, the octets of ``<?xml`` in UTF-16 or UTF-32, the encoding declaration, else UTF-8) and decodes
    it strictly, so octets past one that is not in that encoding could never be read. They are refused as a text's are
    (:class:`pdi.archive.content.TextCheck`): a :class:`~pdi.errors.ParseError` (exit 1, HTTP 400) naming the octet
    offset, the encoding and how it was found. So is an encoding declaration that names an encoding its own octets are
    not in (``encoding="UTF-16"`` in ASCII octets: XML 1.0 §4.3.3 makes it a fatal error), and one naming an encoding
    pdi has no decoder for is an :class:`~pdi.errors.UnsupportedError` (exit 6), as a text's unknown ``--charset``
    is. ``force`` (``--force``) keeps the octets as they are, unchecked; a WARC's record kept as served
    (:attr:`pdi.archive.content.Content.keep_unreadable`) is not: it is refused, and listed, as a text's is.
    Memory: the first :data:`XML_HEAD` octets (or the first piece), then the decoder's few pending octets.
    """

    def __init__(self, *, force: bool = False, source: str | None = None) -> None:
        self.force = force
        self.source = source
        self._head: list[bytes] | None = []
        self._held = 0
        self._decoder: codecs.IncrementalDecoder | None = None
        self._encoding = ""
        self._how = ""
        self._declared = False
        self._fed = 0  # octets given to the decoder, the byte-order mark's included

    def update(self, piece: bytes) -> None:
        if self.force:
            return
        if self._head is not None:
            self._head.append(bytes(piece))
            self._held += len(piece)
            if self._held >= XML_HEAD:
                self._begin()
            return
        self._decode(piece, final=False)

    def finish(self, info: BlobInfo) -> None:
        if self.force:
            return
        if self._head is not None:
            self._begin()
        self._decode(b"", final=True)

    def abandon(self) -> None:
        self._head = None
        self._decoder = None

    def _begin(self) -> None:
        """The encoding found from the head, its declaration checked, and the head decoded."""
        from pdi.fragments.markup.reading import xml_encoding
        from pdi.fragments.text.charset import encoding_for

        head, self._head = b"".join(self._head or ()), None
        self._encoding, how, at = xml_encoding(head[:XML_HEAD])
        self._how = how
        self._declared = at is not None
        try:
            encoding = encoding_for(self._encoding, head)
        except UnsupportedError as exc:
            raise UnsupportedError(
                f"{where(self.source)}the XML's encoding declaration names {self._encoding} (at octet {at}), which"
                f" pdi cannot read: {_lowered(str(exc))}; pdi add --force deposits it as it is") from exc
        if at is not None:
            self._check_declaration(head, at, encoding.body)
        self._decoder = codecs.getincrementaldecoder(encoding.body)()
        self._fed = len(encoding.bom)
        self._decode(head[len(encoding.bom):], final=False)

    def _check_declaration(self, head: bytes, at: int, body: str) -> None:
        """Refuse a declaration that names an encoding its own octets (ASCII's, or EBCDIC's, as it was found) do not
        read in."""
        from pdi.fragments.markup.reading import EBCDIC_XML

        declaration = head[: at + len(self._encoding)]
        found = "cp037" if head.startswith(EBCDIC_XML) else "ascii"
        if found == "ascii" and not declaration.isascii():
            return  # not an XML declaration in any encoding (its names and literals are ASCII's): not well-formed
        try:
            same = codecs.decode(declaration, body) == declaration.decode(found)
        except UnicodeDecodeError:
            same = False
        if not same:
            raise ParseError(
                f"{where(self.source)}the XML's encoding declaration names {self._encoding} (at octet {at}), but the"
                f" octets it is written in are not {self._encoding} (XML 1.0 §4.3.3, Appendix F); correct the"
                " declaration or re-encode the document (pdi add --force deposits it as it is)",
                offset=at, rule="charset")

    def _decode(self, piece: bytes, *, final: bool) -> None:
        from pdi.fragments.markup.reading import XML_FOUND_BY

        assert self._decoder is not None
        pending = len(self._decoder.getstate()[0])
        try:
            self._decoder.decode(piece, final)
        except UnicodeDecodeError as exc:
            offset = self._fed - pending + exc.start
            named = self._encoding if self._declared else self._encoding.upper()
            advice = _XML_ADVICE.get(self._how, 'declare its encoding (<?xml version="1.0" encoding="…"?>)')
            raise ParseError(
                f"{where(self.source)}the XML is not valid {named} at octet {offset}: {exc.reason} ({named} is"
                f" {XML_FOUND_BY[self._how]}); {advice}, or re-encode it (pdi add --force deposits it as it is)",
                offset=offset, rule="charset") from None
        self._fed += len(piece)


def _unreadable(source: str | None, what: str, exc: PDIError, kept: str = "") -> FormatCheckError:
    """The refusal of content that is not ``what`` pdi can read, with the reader's reason (``kept``: how
    ``--force`` keeps it)."""
    reason = exc.reason if isinstance(exc, ParseError) else str(exc)
    return FormatCheckError(f"{where(source)}the content is not {what} pdi can read: {_lowered(reason)}", note=kept)


def _lowered(message: str) -> str:
    """``message`` to follow a file name (its first letter lower-cased, as every refusal here starts)."""
    return message[:1].lower() + message[1:]
