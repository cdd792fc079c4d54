"""What the archive answers: a deposit's names, a resolved name and its bytes, a generic name's versions, a citation.

These are values :class:`pdi.archive.Archive` returns; the server and the
command line render them (:mod:`pdi.archive.describe`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import field
from typing import TYPE_CHECKING, overload

from pdi._closing import Closing
from pdi.archive.blobs import ChunkedReader
from pdi.archive.store import AssertionRecord, FixityCheck, RepresentationRecord, WithdrawalRecord
from pdi.identifier import PDI

if TYPE_CHECKING:
    from dataclasses import dataclass

    from pdi.fragments import FragmentResult
    from pdi.fragments.citation import QuotationCheck
else:
    from pdi._later import dataclass


@dataclass(frozen=True)
class NotCompared:
    """What :meth:`~pdi.archive.Archive.withdrawn_earlier_alike` could not compare octets with, the newest first.

    ``purged``: the tombstones of earlier versions withdrawn alone that have the format and whose octets were
    purged (a purge keeps a file's SHA-256 and size only, and the same page in another file has others: whether
    it holds the same page cannot be known), the last :data:`~pdi.archive.deposits.WITHDRAWN_COMPARED` of them;
    ``more_purged``, how many purged ones before those were not looked at. ``beyond``: the earlier withdrawn
    versions whose octets are kept past the last ``WITHDRAWN_COMPARED``, not read.
    """

    purged: tuple[WithdrawalRecord, ...] = ()
    more_purged: int = 0
    beyond: tuple[int, ...] = ()


@dataclass(frozen=True)
class Deposit(Sequence[PDI]):
    """What a deposit answers: the versioned names of its formats, and whether it stored them.

    ``unchanged`` is ``True`` when nothing was stored because every format's
    bytes (as the archive stores them: text CRLF-canonical) and charset equal
    those of the latest version of the same document, which has the same
    formats; ``names`` are then that version's existing names. A deposit is
    a sequence of its names, so ``deposit[0]`` and ``(name,) = deposit`` work.
    """

    names: tuple[PDI, ...]
    unchanged: bool = False
    #: the first answer to a retried request with the same Idempotency-Key: nothing was stored now
    replayed: bool = False
    #: the SHA-256 of each format's octets, where the deposit minted a name just now (else empty):
    #: what :meth:`~pdi.archive.Archive.held_the_same_day` looks for
    sha256s: tuple[str, ...] = field(default=(), compare=False, repr=False)
    #: of a ``replayed`` answer: the tombstone that covers its version now (its own or its document's), if one
    #: does (the write happened; what it made was withdrawn since; draft-ietf-httpapi-idempotency-key-header §2.6)
    withdrawn: WithdrawalRecord | None = field(default=None, compare=False)

    @property
    def version(self) -> int:
        """The version the names are of (the new one, or the unchanged latest one)."""
        version = self.names[0].version
        assert version is not None
        return version

    def __len__(self) -> int:
        return len(self.names)

    @overload
    def __getitem__(self, index: int) -> PDI: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[PDI, ...]: ...

    def __getitem__(self, index: int | slice) -> PDI | tuple[PDI, ...]:
        return self.names[index]


@dataclass(frozen=True)
class Resolved:
    """A resolved PDI: the bytes of one format of one version (or of a fragment of it)."""

    pdi: PDI
    data: bytes
    media_type: str
    charset: str | None
    record: RepresentationRecord
    fragment: FragmentResult | None = None
    #: The records of every format of the same version, where the look-up read them (:meth:`~pdi.archive.Archive.locate`):
    #: what :meth:`~pdi.archive.Archive.version_of` answers from without reading the catalog again.
    siblings: tuple[RepresentationRecord, ...] = field(default=(), compare=False, repr=False)

    @property
    def sha256(self) -> str:
        """The fixity checksum of the whole stored representation."""
        return self.record.sha256


@dataclass(frozen=True)
class Opened(Closing):
    """A versioned name opened for reading: its record and a reader of its octets by verified chunks.

    ``reader.chunks(start, end)`` yields the octets (each chunk checked
    against its SHA-256 as it is read); ``reader.path`` is a local file with
    exactly these octets where the store has one. Close it (or use ``with``).
    """

    pdi: PDI
    record: RepresentationRecord
    reader: ChunkedReader

    @property
    def size(self) -> int:
        return self.record.size

    def close(self) -> None:
        self.reader.close()



@dataclass(frozen=True)
class CitationResolved:
    """Both ends of a citation ``A@origin=B#fragment`` and whether the quotation stands at ``origin`` in A.

    ``cited`` is ``None`` when B is not in this archive (the check then says
    ``unchecked``); ``check`` is a :class:`pdi.fragments.citation.QuotationCheck`.
    """

    pdi: PDI
    citing: Resolved
    origin: object
    cited: Resolved | None
    check: QuotationCheck

    def to_json(self) -> dict[str, object]:
        """Both names, the position (as the PDI syntax writes it) and the check, as JSON values."""
        origin = self.origin
        position = "(" + ",".join(map(str, origin)) + ")" if isinstance(origin, tuple) else origin
        assert self.pdi.citation is not None
        return {
            "citing": str(self.citing.pdi),
            "cited": str(self.cited.pdi if self.cited is not None else self.pdi.citation.cited),
            "position": position,
            "check": self.check.status,
            "detail": self.check.detail,
            "quote": self.check.quote,
            "found": self.check.found,
        }


@dataclass(frozen=True)
class GenericVersion:
    """One version of the document a generic PDI names: its number, when it was deposited, its formats.

    ``created_at`` is the deposit time as the catalog records it (ISO 8601,
    UTC: ``2026-11-22T14:30:00.000000Z``), that of the version's first
    format (a format added later with :meth:`Archive.add_format` keeps its
    own time in its record). ``formats`` are the versioned names of its
    formats, in token order.
    """

    number: int
    created_at: str
    formats: tuple[PDI, ...]


@dataclass(frozen=True)
class Generic:
    """A resolved generic PDI (no format, so no version): every version of the document, oldest first.

    Resolved with ``latest=True``, only the newest version.
    """

    pdi: PDI
    versions: tuple[GenericVersion, ...]

    @property
    def names(self) -> tuple[PDI, ...]:
        """The versioned name of every format of every version, oldest version first."""
        return tuple(name for version in self.versions for name in version.formats)


@dataclass(frozen=True)
class DocumentPage:
    """A page of documents (a day's, or a URL's captures), each with its versions, and where the next page starts.

    ``titles`` maps a document's generic name (as text) to its title: the
    latest ``title`` stated about the document, or else about one of its
    versioned names. ``after`` is the cursor of the next page (``None`` on
    the last).
    """

    documents: tuple[Generic, ...]
    titles: dict[str, str]
    after: str | None


@dataclass(frozen=True)
class DocumentDetail:
    """Everything the catalog knows of one document, for its page.

    ``records``: every format of every version, in listing order;
    ``statements``: every statement filed under the document (about it, a
    version, a format or a fragment), oldest first, so a later one of the
    same subject and key supersedes an earlier; ``fixity``: the latest
    fixity check of each of its blobs that was ever checked, by SHA-256.
    """

    generic: Generic
    records: tuple[RepresentationRecord, ...]
    statements: tuple[AssertionRecord, ...]
    fixity: dict[str, FixityCheck]


@dataclass(frozen=True)
class DocumentChange:
    """A document as a harvester sees it (:meth:`Archive.changes`): what it is now and when it last changed.

    ``generic`` lists the versions not withdrawn; ``statements`` are every
    statement filed under the document, oldest first; ``changed_at`` is the
    latest of its deposits, statements, withdrawals, ends of embargoes over and changes of access (ISO 8601 UTC);
    ``withdrawn_at`` when the whole document was withdrawn, if it was, or withheld from the reader by a change of
    access after it was shown to it (then nothing else is said of it);
    ``cursor`` where the next page starts after it.
    """

    cursor: int
    generic: Generic
    statements: tuple[AssertionRecord, ...]
    changed_at: str
    withdrawn_at: str | None


@dataclass(frozen=True)
class SearchHit:
    """One passage that matched a search, in one name (see :meth:`Archive.search`).

    ``name`` is the versioned name with the fragment ``char=start,end``;
    ``snippet`` is some text around the match (white space shown as single
    spaces, ``…`` where it is cut) and ``marks`` the matched words in it
    (positions in ``snippet``); ``matches`` are the ``char`` ranges of every
    matched word of the passage in the document.
    """

    name: PDI
    record: RepresentationRecord
    start: int
    end: int
    snippet: str
    marks: tuple[tuple[int, int], ...]
    matches: tuple[tuple[int, int], ...]
    score: float
    cursor: str

    def to_json(self) -> dict[str, object]:
        return {
            "name": str(self.name),
            "document": str(self.name.without_fragment()),
            "char": [self.start, self.end],
            "snippet": self.snippet,
            "marks": [list(m) for m in self.marks],
            "matches": [list(m) for m in self.matches],
            "media_type": self.record.media_type,
            "deposited": self.record.created_at,
        }


@dataclass(frozen=True)
class SearchResults:
    """A page of :class:`SearchHit` values, the query as read, the cursor of the next page (``None``: the last),
    and how many names' text is still pending."""

    query: object
    hits: tuple[SearchHit, ...]
    next: str | None
    #: Names the reader may search whose text is not indexed yet (queued for the indexer: ``pdi index``).
    pending: int = 0
    #: Why a first page found nothing, where the archive can tell more than that no passage holds the words: a
    #: PostgreSQL database folding only ASCII letters to lower case, asked a word of other letters with a case
    #: (:data:`pdi.archive.listing.ASCII_CASE_NOTE`); else ``None``.
    note: str | None = None


@dataclass(frozen=True)
class ReindexReport:
    """What :meth:`Archive.reindex` did: blobs read, passages made, and blobs whose text could not be read (with why)."""

    sources: int
    passages: int
    unreadable: tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class ElementReindexReport:
    """What :meth:`Archive.reindex_elements` did: element indexes made anew (of XML and SGML octets whose index
    an earlier reading made), those left as they were, each with why (``sha256``, media type, why), and videos'
    indexes made anew (an earlier reading's)."""

    rewritten: int
    left: tuple[tuple[str, str, str], ...]
    videos: int = 0


@dataclass(frozen=True)
class IndexRun:
    """What one drain of the indexer's queue did (:meth:`Archive.index_queued`): sources indexed,
    passages made, and the sources that failed (sha256, why)."""

    indexed: int
    passages: int
    failed: tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class SgmlParse:
    """What ``pdi get --info`` says of an SGML document's parse at deposit (:meth:`pdi.archive.Archive.sgml_parse_of`).

    ``dtd_found`` and ``errors``: whether OpenSP's ``onsgmls`` found its DTD and how many errors it reported
    (``None`` and 0 when there is no parse, and ``not_parsed`` says why: refused, as its ``elt`` is, or none made);
    ``declared``: the DTD its document type declaration names; ``kept``: the file of the archive's SGML folder the
    archive's catalog sends that public identifier to (``None``: the system's catalogs had it, or none did).
    """

    dtd_found: bool | None
    errors: int
    declared: str | None
    not_parsed: str | None = None
    kept: str | None = None
