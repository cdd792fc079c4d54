"""The full-text index, made at deposit: which octets have text, and their passages (:mod:`pdi.passages.fulltext`).

:class:`SearchIndexer` rides on a deposit's one pass over its octets (a
:class:`~pdi.archive.store.BlobObserver`, beside the content checks and the
fragment index) and leaves the passages in a :class:`Passages` spool (in
memory up to a megabyte, then a temporary file), which the deposit's catalog
transaction writes into the index. What has text (:func:`search_kind`):

* ``text/*``: decoded and made CRLF-canonical as the
  octets stream past; memory: one passage, however long the text;
* HTML and XML (``text/html``, ``application/xhtml+xml``, XML types): the
  text of the page (:class:`pdi.passages.fulltext.MarkupScanner`), decoded and
  scanned as it streams past in the charset recorded for it; a page without
  one (XHTML, XML types) is sniffed as its fragments are, from the whole,
  up to :data:`MARKUP_UP_TO` octets;
* an aggregate (``multipart/related``, an MHTML capture): the text of its
  root part (:mod:`pdi.mhtml`), positions counted as ``char`` counts them on
  the aggregate (:mod:`pdi.fragments.aggregate`); up to :data:`AGGREGATE_UP_TO`.
* an e-mail message (``message/rfc822``): its body's text
  (:func:`pdi.fragments.email_text.body_text`, ``docs/email.md``), positions counted
  as ``char`` counts them on the message; read as ``char`` reads it: whole, or past
  :data:`pdi.mail.large.STREAMED_FROM` or its lines' bound by its structure
  (:func:`pdi.mail.large.by_structure`: its body's part alone, the message kept in a
  temporary file, never held); up to :data:`AGGREGATE_UP_TO`. At
  deposit the index reads the copy the deposit's check kept and the reading it made
  (:class:`pdi.archive.readable.EmailCheck`: one copy, one reading); read again
  (:func:`index_blob`), a message is read from the store's verified chunks, not
  copied first.
* a PDF: the text of its text layer (docs/pdf-text-layer.md), as a text's,
  positions counted as ``char`` counts them on the PDF: the layer made at
  deposit and kept as its fragment index (given by the deposit's
  :class:`~pdi.archive.readable.PdfCheck`, or read from the catalog when the
  indexer or ``pdi reindex`` reads it again), so a hit is ``NAME#char=a,b``
  of the PDF. A layer longer than :data:`QUEUE_PAST` octets is queued, as a
  long text is. A PDF with no layer (``--force``) gets a note.

Octets that cannot be read as text so (a page larger than the limit, an
aggregate that does not parse) get no passages and a note saying why, kept in
the catalog (``search_sources.note``) and reported by ``pdi reindex``; the
deposit itself is not refused for it.

**Large octets are queued, not indexed in the deposit's pass.** Measured on
the 2-core machine (issue 24, ``bench/bench_deposit.py``): the floor of a
deposit (read, SHA-256, write, fsync) runs at 270-450 MiB/s from the page
cache; the line checkpoints (:class:`pdi.archive.content.IndexBuilder`, C,
on other threads) and the chunk digests keep up with it; but decoding and
cutting passages runs at 177 MB/s on the depositing thread, and inserting
them (SQLite's FTS5 tokenizing into its b-trees) at 10-25 MB/s. py-spy on a
100 MB ``pdi add``: 57% of its time in FTS5 insertion, 7% building passages;
1 GB took 26x the floor, and 1.7x once the passages were queued. No single
pass can make those passages at near-I/O speed, so past
:data:`QUEUE_PAST` octets :class:`SearchIndexer` stops (its spool is
dropped) and the deposit's own transaction writes a row of the catalog's
``index_queue`` instead (so a crash loses nothing, and every resolver on
the catalog shares the queue). The document is resolvable at once; its text
is found once a worker (``pdi index``, or ``pdi serve``'s indexer) has
drained the row: :func:`drain` leases a row (``SKIP LOCKED`` on
PostgreSQL; SQLite has one writer), reads the stored blob by verified chunks
(:func:`index_blob`, as ``pdi reindex`` does), and writes its passages a
batch a transaction while it still holds the lease, the source's
``search_sources`` row and the queue row's removal last; a worker killed
mid-way leaves the lease to run out, and the next one deletes what it left
and starts again (idempotent). Until then :meth:`Archive.search` reports the
names whose text is pending. Text up to :data:`QUEUE_PAST` (every small
deposit) is indexed in the deposit's transaction as before, searchable as
soon as it is acknowledged.
"""

from __future__ import annotations

import codecs
import contextlib
import datetime
import functools
import struct
import tempfile
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Final, Protocol

from pdi.archive.blobs import BlobInfo
from pdi.archive.readable import Spool
from pdi.archive.results import IndexRun
from pdi.errors import IntegrityError, PDIError
from pdi.passages.fulltext import JOINT, MarkupScanner, Passage, PassageBuilder, markup_passages

if TYPE_CHECKING:
    from pdi.archive.blobs import ChunkedReader
    from pdi.mail.large import Octets
    from pdi.mail.message import Mail


class KeptMessage(Protocol):
    """A message's octets kept, and its reading if one was made, that :class:`SearchIndexer` reads its body's text
    from: the deposit's check (:class:`pdi.archive.readable.EmailCheck`), or a stored blob (:func:`index_blob`)."""

    @property
    def kept(self) -> Octets | None: ...

    @property
    def mail(self) -> Mail | None: ...


class _Stored:
    """A stored message's verified chunks (:class:`pdi.archive.blobs.VerifiedOctets`), not yet read."""

    def __init__(self, octets: Octets) -> None:
        self.kept: Octets | None = octets
        self.mail: Mail | None = None


class StoredBlobs(Protocol):
    """Where :func:`index_blob` reads a stored blob from (a catalog, which asks its blob store)."""

    def open_blob(self, sha256: str, *, name: str) -> ChunkedReader | None: ...

    def fragment_index(self, sha256: str, media_type: str, charset: str | None) -> bytes | None: ...

#: The largest HTML or XML page without a recorded charset indexed (octets): its text is read whole.
MARKUP_UP_TO: Final = 32 << 20
#: The largest aggregate indexed (octets): it is parsed whole.
AGGREGATE_UP_TO: Final = 256 << 20
#: Passages kept in memory before the spool goes to a temporary file (octets).
SPOOL_IN_MEMORY: Final = 1 << 20
#: Characters of passages held as they are (not spooled): a small text's.
HELD_UP_TO: Final = 64 << 10
#: Octets past which a deposit's text is queued for the background indexer
#: rather than indexed in the deposit's own pass (see the module docstring).
QUEUE_PAST = 1 << 20

_HEAD: Final = struct.Struct("<qII")


@functools.lru_cache(maxsize=256)  # a few media types, asked twice a deposit
def search_kind(media_type: str) -> str | None:
    """``"text"``, ``"html"``, ``"xml"``, ``"aggregate"``, ``"email"``, ``"pdf"`` or ``None`` (no text is indexed) for a media type."""
    from pdi.fragments.markup import markup_kind

    mtype = media_type.split(";")[0].strip().lower()
    if mtype == "multipart/related":
        return "aggregate"
    if mtype == "application/pdf":
        return "pdf"
    if mtype == "message/rfc822":
        return "email"
    kind = markup_kind(mtype)
    if kind == "html":
        return "html"
    if kind in ("xml", "xhtml"):
        return "xml"
    if mtype.startswith("text/"):
        return "text"
    return None


class Passages:
    """The passages of one blob, read back in order: held as they are while few (a small text's), then spooled
    (memory up to :data:`SPOOL_IN_MEMORY`, then a temporary file).

    ``note`` says why there are none when the octets could not be read as text;
    ``queued`` that there are none yet: the deposit leaves them to the indexer's queue.
    """

    def __init__(self) -> None:
        self._held: list[Passage] = []
        self._held_size = 0  # characters of the passages held
        self._file: tempfile.SpooledTemporaryFile[bytes] | None = None
        self.count = 0
        self.note: str | None = None
        self.queued = False

    def add(self, passage: Passage) -> None:
        self.count += 1
        if self._file is None:
            self._held.append(passage)
            self._held_size += len(passage.text)
            if self._held_size <= HELD_UP_TO:
                return
            self._file = tempfile.SpooledTemporaryFile(max_size=SPOOL_IN_MEMORY, prefix="pdi-passages-")  # noqa: SIM115 - closed by close()
            held, self._held = self._held, []
            for each in held:
                self._write(each)
            return
        self._write(passage)

    def _write(self, passage: Passage) -> None:
        assert self._file is not None
        joined = passage.text + JOINT + passage.tail if passage.tail else passage.text  # (JOINT stands in no text)
        text = joined.encode("utf-8", "surrogatepass")
        runs = passage.encoded_runs()
        self._file.write(_HEAD.pack(passage.start, len(text), len(runs)) + text + runs)

    def __iter__(self) -> Iterator[Passage]:
        if self._file is None:
            yield from self._held
            return
        self._file.seek(0)
        for _ in range(self.count):
            start, text_size, runs_size = _HEAD.unpack(self._file.read(_HEAD.size))
            text, _, tail = self._file.read(text_size).decode("utf-8", "surrogatepass").partition(JOINT)
            passage = Passage.decode(start, text, self._file.read(runs_size))
            yield Passage(passage.start, text, passage.runs, tail) if tail else passage

    def close(self) -> None:
        self._held = []
        if self._file is not None:
            self._file.close()


class SearchIndexer:
    """The passages of a deposit's octets, made as they stream past (see the module docstring); a :class:`BlobObserver`."""

    def __init__(
        self,
        media_type: str,
        charset: str | None,
        *,
        queue_past: int | None = None,
        layer: Callable[[], bytes | None] | None = None,
        message: KeptMessage | None = None,
    ) -> None:
        self.kind = search_kind(media_type)
        #: a PDF's kept text layer (its fragment index) once the deposit's PDFium pass has made it
        self.layer = layer
        self.queue_past = queue_past
        self.media_type = media_type
        self.charset = charset
        self.passages = Passages()
        self._size = 0
        # a page without a charset is sniffed as the fragments read it: whole (pdi.fragments.markup.document_charset)
        self._kept: list[bytes] | None = [] if self.kind in ("html", "xml") and charset is None else None
        self._spool = (
            tempfile.SpooledTemporaryFile(max_size=SPOOL_IN_MEMORY, prefix="pdi-aggregate-")  # noqa: SIM115 - closed in finish or abandon
            if self.kind == "aggregate" else None
        )
        # a message is read back by slices: by its structure where pdi.mail.large.by_structure says so;
        # at deposit from the check's copy, as the check read it (``message``: one copy, one reading)
        self._checked = message if self.kind == "email" else None
        self._message = Spool("pdi-message-") if self.kind == "email" and message is None else None
        self._streamed = self.kind == "text" or (self.kind in ("html", "xml") and charset is not None)
        self._builder = PassageBuilder()
        self._scanner = MarkupScanner(self.kind) if self._streamed and self.kind in ("html", "xml") else None
        self._head = b""
        self._decoder: codecs.IncrementalDecoder | None = None
        self._at = 0  # characters of CRLF-canonical text so far
        self._cr = ""  # a CR held back: it may be the start of CRLF or CR NEL

    def update(self, piece: bytes) -> None:
        self._size += len(piece)
        if self.passages.queued or self.kind == "pdf":  # a PDF's text is its layer's, at the end
            return
        if self.queue_past is not None and self._size > self.queue_past:
            self._queue()
            return
        if self._streamed:
            if self.passages.note is not None:
                return
            try:
                self._stream(piece, final=False)
            except UnicodeError as exc:  # the content checks decide about the deposit, at its end
                self.passages.note = f"its text could not be read: {exc}"
        elif self._kept is not None:
            if self._size > MARKUP_UP_TO:
                self._kept = None
                self.passages.note = (
                    f"the page has no charset and is larger than {MARKUP_UP_TO} octets: its text is not indexed"
                )
            else:
                self._kept.append(piece)
        elif self._message is not None or self._checked is not None:
            if self._size > AGGREGATE_UP_TO:
                if self._message is not None:
                    self._message.close()
                self._message = self._checked = None
                self.passages.note = f"the message is larger than {AGGREGATE_UP_TO} octets: its text is not indexed"
            elif self._message is not None:
                self._message.write(piece)
        elif self._spool is not None:
            if self._size > AGGREGATE_UP_TO:
                self._spool.close()
                self._spool = None
                self.passages.note = f"the aggregate is larger than {AGGREGATE_UP_TO} octets: its text is not indexed"
            else:
                self._spool.write(piece)

    def _stream(self, piece: bytes, final: bool) -> None:
        """Decode the next octets, write their line endings CRLF, and pass the text on (to passages or the markup scanner)."""
        from pdi.fragments.text.charset import encoding_for
        from pdi.fragments.text.lines import to_crlf

        if self._decoder is None:
            self._head += piece
            if len(self._head) < 4 and not final:
                return
            encoding = encoding_for(self.charset, self._head[:4])
            self._decoder = codecs.getincrementaldecoder(encoding.body)()
            piece, self._head = self._head[len(encoding.bom) :], b""
        text = self._cr + self._decoder.decode(piece, final)
        self._cr = ""
        if text.endswith("\r") and not final:
            text, self._cr = text[:-1], "\r"
        # LF alone is the usual case, and str.replace is ten times the speed of to_crlf's expression
        text = text.replace("\n", "\r\n") if "\r" not in text and "\x85" not in text else to_crlf(text)
        if self._scanner is not None:
            found = self._scanner.feed(text, final)
        else:
            self._builder.add(text, self._at, self._at + len(text))
            found = self._builder.finish() if final else self._builder.take()
        self._at += len(text)
        for passage in found:
            self.passages.add(passage)

    def _queue(self) -> None:
        """Past :attr:`queue_past`: let go of everything; the passages are the indexer's to make."""
        self.abandon()
        self.passages = Passages()
        self.passages.queued = True
        self._streamed = False
        self._builder = PassageBuilder()
        self._scanner = None

    def finish(self, info: BlobInfo | None = None) -> None:
        if self.passages.queued:
            return
        try:
            found: Iterable[Passage] = ()
            if self.kind == "pdf":
                found = self._pdf()
            elif self._streamed:
                if self.passages.note is None:
                    self._stream(b"", final=True)
            elif self._kept is not None:
                found = self._markup(b"".join(self._kept))
                self._kept = None
            elif self._message is not None or self._checked is not None:
                found = self._email()
            elif self._spool is not None:
                found = self._aggregate()
            for passage in found:
                self.passages.add(passage)
        except (PDIError, UnicodeError) as exc:
            if isinstance(exc, IntegrityError):
                raise
            self.passages.note = f"its text could not be read: {exc}"
        if self.passages.note is not None and self.passages.count:
            self.passages.close()
            note, self.passages = self.passages.note, Passages()
            self.passages.note = note

    def _markup(self, data: bytes) -> list[Passage]:
        from pdi.fragments.markup import document_charset
        from pdi.fragments.text import TextIndex
        from pdi.fragments.text.lines import to_crlf

        assert self.kind is not None
        text = to_crlf(TextIndex(data, document_charset(data, self.media_type, self.charset)).whole_text())
        return markup_passages(text, self.kind)

    def _pdf(self) -> list[Passage]:
        from pdi.fragments.pdf import TextLayer

        index = self.layer() if self.layer is not None else None
        if index is None:
            self.passages.note = "the PDF has no text layer (PDFium could not read it): its text is not indexed"
            return []
        text = TextLayer.from_bytes(index).text
        if self.queue_past is not None and len(text) > self.queue_past:
            self._queue()
            return []
        builder = PassageBuilder()
        builder.add(text, 0, len(text))
        return builder.finish()

    def read_stored(self, octets: Octets) -> None:
        """The passages of a stored message (:func:`index_blob`), read from ``octets`` (its verified chunks) as
        ``char=`` reads it, by its structure where :func:`pdi.mail.large.by_structure` says so: not copied first."""
        assert self.kind == "email" and self.queue_past is None
        if self._message is not None:
            self._message.close()
            self._message = None
        self._size = len(octets)
        if self._size > AGGREGATE_UP_TO:
            self.passages.note = f"the message is larger than {AGGREGATE_UP_TO} octets: its text is not indexed"
        else:
            self._checked = _Stored(octets)
        self.finish()

    def _aggregate(self) -> list[Passage]:
        from pdi.fragments.aggregate import root_text

        assert self._spool is not None
        self._spool.seek(0)
        try:
            kind, text = root_text(self._spool)  # type: ignore[arg-type]  # a binary file
        finally:
            self._spool.close()
            self._spool = None
        if kind is None:
            return []
        if kind == "text":
            builder = PassageBuilder()
            builder.add(text, 0, len(text))
            return builder.finish()
        return markup_passages(text, kind)

    def _email(self) -> list[Passage]:
        from pdi.fragments.email_text import large_body_text, message_body_text
        from pdi.mail.large import by_structure

        checked, self._checked = self._checked, None
        kept = checked.kept if checked is not None else self._message
        mail = checked.mail if checked is not None else None
        if kept is None:  # (the check let go of it: a forced message past what it keeps for the index)
            self.passages.note = "the message was not kept for the index: its text is not indexed"
            return []
        try:  # read as char= reads it: whole, or by its structure (by_structure), its body's part alone
            size = len(kept)
            structure = mail.by_structure if mail is not None else by_structure(kept)
            text = large_body_text(kept, mail) if structure else message_body_text(kept[0:size], mail)
        finally:
            if self._message is not None:
                self._message.close()
                self._message = None
        builder = PassageBuilder()
        builder.add(text, 0, len(text))
        return builder.finish()

    def abandon(self) -> None:
        """The deposit failed: let go of what was kept."""
        self._kept = None
        if self._spool is not None:
            self._spool.close()
            self._spool = None
        if self._message is not None:
            self._message.close()
            self._message = None
        self._checked = None  # (the check's copy: the check lets go of it)
        self.passages.close()


@contextlib.contextmanager
def index_blob(store: StoredBlobs, sha256: str, media_type: str, charset: str | None) -> Iterator[Passages]:
    """The passages of a stored blob, read again from ``store`` by verified chunks (``pdi reindex``, imports; a
    message read from them as ``char=`` reads it, not copied to a temporary file first)."""
    kept = store.fragment_index(sha256, media_type, charset) if search_kind(media_type) == "pdf" else None
    indexer = SearchIndexer(media_type, charset, layer=lambda: kept)  # a PDF's: its layer as kept at deposit
    try:
        reader = store.open_blob(sha256, name=f"blob {sha256}")
        if reader is None:
            raise IntegrityError(f"blob {sha256} is missing from the store: it cannot be indexed")
        with reader:
            if indexer.kind == "email":  # read from the store as char= reads it: no copy of its own
                from pdi.archive.blobs import VerifiedOctets

                indexer.read_stored(VerifiedOctets(reader))
            else:
                for piece in reader.chunks(0, reader.size):
                    indexer.update(piece)
        if indexer.kind != "email":
            indexer.finish()
        yield indexer.passages
    finally:
        indexer.abandon()


class IndexQueue(StoredBlobs, Protocol):
    """What :func:`drain` needs of a catalog (:class:`pdi.archive.catalog.SQLStore`)."""

    def claim_index(self, worker: str, now: str, until: str) -> tuple[str, str, str] | None: ...

    def store_queued(self, source: tuple[str, str, str], worker: str, passages: Passages, at: str) -> bool: ...

    def index_failed(self, source: tuple[str, str, str], worker: str, error: str, retry_at: str) -> None: ...


#: How long a worker's lease on a queue row lasts (seconds); a worker killed mid-way
#: holds its row this long, and one that fails leaves it untried this long.
LEASE_SECONDS: Final = 600.0


def drain(
    queue: IndexQueue,
    worker: str,
    now: Callable[[], datetime.datetime],
    *,
    limit: int | None = None,
    lease: float = LEASE_SECONDS,
    progress: Callable[[tuple[str, str, str]], None] | None = None,
) -> IndexRun:
    """Index the queued sources one at a time (at most ``limit``) until none is left to lease; see the module docstring.

    A source that fails (its blob missing or damaged, its text unreadable
    past what a note can say) keeps its row, with the error, untried for
    ``lease`` seconds; the others go on.
    """
    from pdi.archive.naming import timestamp

    indexed = made = 0
    failed: list[tuple[str, str]] = []
    while limit is None or indexed + len(failed) < limit:
        moment = now()
        source = queue.claim_index(worker, timestamp(moment), timestamp(moment + datetime.timedelta(seconds=lease)))
        if source is None:
            break
        sha256, media_type, charset = source
        try:
            with index_blob(queue, sha256, media_type, charset or None) as passages:
                if queue.store_queued(source, worker, passages, timestamp(now())):
                    indexed += 1
                    made += passages.count
        except PDIError as exc:
            failed.append((sha256, str(exc)))
            retry = now() + datetime.timedelta(seconds=lease)
            queue.index_failed(source, worker, str(exc), timestamp(retry))
        if progress is not None:
            progress(source)
    return IndexRun(indexed, made, tuple(failed))
