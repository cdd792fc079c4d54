"""What the archive keeps of a representation besides its octets, and what is read of those octets to say so.

The index made at deposit (:meth:`RecordFacts.fragment_index`) and what it holds: a PDF's text layer, a video's
facts, an SGML document's parse; a capture's parts and an e-mail message's facts, read from verified octets; a large
message read by its structure and one of its parts streamed (:class:`StreamedPart`), never held. Every read is by
verified chunks (:meth:`RecordFacts._reader`). No guard is asked here: the records given are those a reader has
resolved (:mod:`pdi.archive.reading`, which builds on this).
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from pdi.archive.base import ArchiveBase
from pdi.archive.blobs import ChunkedReader, FileReader, VerifiedOctets, checked_file
from pdi.archive.naming import record_name
from pdi.archive.results import Resolved, SgmlParse
from pdi.archive.store import RepresentationRecord
from pdi.errors import DamagedError, UnsupportedError
from pdi.identifier import PDI

if TYPE_CHECKING:
    from pdi.fragments.image_size import ImageShown
    from pdi.fragments.pdf import TextLayer
    from pdi.fragments.video import VideoInfo
    from pdi.mail.large import PartMap
    from pdi.mail.message import Mail, MailPart

__all__ = ["RecordFacts", "StreamedPart"]

K = TypeVar("K")
V = TypeVar("V")

#: Why an SGML document may have no kept parse (:meth:`pdi.archive.reading.Reading._refuse_unkept_sgml`).
UNKEPT_SGML = "OpenSP's onsgmls was not installed where it was deposited, or it was imported"


class RecordFacts(ArchiveBase):
    """A representation's kept index and the facts read from it or from its verified octets."""

    def _reader(self, record: RepresentationRecord, name: PDI | None = None) -> ChunkedReader:
        """A reader of a record's octets by verified chunks (``name``: the record's versioned name, if built already)."""
        if name is None:
            name = record_name(record)
        reader = self.store.open_blob(record.sha256, name=str(name))
        if reader is None:
            raise DamagedError(f"the bytes of {record_name(record)} are missing from the store")
        if isinstance(reader, FileReader):
            reader.memo = self.fixity_memo  # first: a file of another size is forgotten in it (check_size)
            reader.check_size()
        if reader.size != record.size:
            reader.close()
            raise DamagedError(
                f"the bytes of {record_name(record)} are {reader.size} octets, not the {record.size} recorded"
            )
        return reader

    def fragment_index(self, record: RepresentationRecord) -> bytes | None:
        """The index made at deposit for a representation's octets, if any (what :meth:`select` reads from less).

        A WebM, MP4 or Ogg video that has none (brought in by an import, which
        keeps no index, or deposited with ``--force``) is read by ffprobe from
        its octets, verified at each request, once a process (:data:`_PROBED`):
        ``None`` if ffprobe cannot read it, or is not installed (then asked
        again at the next request).
        So is one whose index an earlier reading made
        (:func:`pdi.fragments.video.made_by_an_earlier_reading`; the kept index
        if ffprobe cannot read it now), until ``pdi reindex --elements`` makes it anew.
        An XML or SGML document's element index made by an earlier reading
        (:func:`pdi.fragments.markup.index.made_by_an_earlier_reading`) is ``None``:
        the document is read anew at each request.
        """
        index = self.store.fragment_index(record.sha256, record.media_type, record.charset)
        if record.media_type.startswith("video/"):
            return video_index_now(index, lambda: self._probe_video(record))
        if index is not None and bytes(index[:4]) == b"PDIM":  # an element index (pdi.fragments.markup.index)
            from pdi.fragments.markup.index import made_by_an_earlier_reading

            if made_by_an_earlier_reading(index):
                return None  # an XML or SGML document's, made by an earlier reading: read anew, as pdi reads it now
        return index

    def _probe_video(self, record: RepresentationRecord) -> bytes | None:
        """What ffprobe reads of a stored video now (:func:`pdi.archive.video.probe`), as its index, or None: read
        from the blob file the reader opened, every chunk checked, or from a copy of its chunks, each checked as it
        is copied, where the store keeps none (:func:`~pdi.archive.blobs.checked_file`); once checked, what this
        process's ffprobe read of them lately (:data:`_PROBED`)."""
        from pdi.fragments.video import CONTAINERS

        if record.media_type not in CONTAINERS:
            return None
        with self._reader(record) as reader, checked_file(reader) as (path, descriptors):
            return probed(path, record.media_type, descriptors, (self.store.location, record.sha256))

    def text_layer_of(self, record: RepresentationRecord) -> TextLayer | None:
        """A PDF's text layer as made at deposit and kept (docs/pdf-text-layer.md), or None (not a PDF, or none
        was made: a PDF deposited with ``--force`` that PDFium cannot open). No guard is asked: give it a
        record a reader has resolved."""
        if record.media_type != "application/pdf":
            return None
        index = self.fragment_index(record)
        if index is None:
            return None
        from pdi.fragments.pdf import TextLayer

        return TextLayer.from_bytes(index, record.size)

    def sgml_parse_of(self, record: RepresentationRecord) -> SgmlParse | None:
        """An SGML document's parse as made at deposit (:class:`~pdi.archive.results.SgmlParse`): whether its DTD
        was found, how many errors OpenSP's ``onsgmls`` reported, the DTD its document type declaration names
        (:func:`pdi.fragments.markup.sgml.declared_dtd`, read from its first octets, checked as they are read) and
        the file of the archive's SGML folder its catalog sends that public identifier to; or why there is no
        parse: refused (the reason its ``elt`` is refused with), or none made at deposit. ``None``: not SGML.
        No guard is asked: give it a record a reader has resolved."""
        from pdi.fragments.markup import markup_kind

        if markup_kind(record.media_type) != "sgml":
            return None
        from pdi.fragments.markup.bounds import MAX_SGML_OCTETS
        from pdi.fragments.sealed import index_kind

        index = self.store.fragment_index(record.sha256, record.media_type, record.charset)
        declared = self._declared_dtd(record)
        if index is None or index_kind(bytes(index)) != "markup":
            why = (f"it is larger than {MAX_SGML_OCTETS >> 20} MiB, past what pdi parses" if record.size > MAX_SGML_OCTETS
                   else f"{UNKEPT_SGML}; #elt= is refused until pdi reindex --elements keeps a parse of it")
            return SgmlParse(None, 0, declared, f"not parsed at deposit: {why}")
        from pdi.fragments.markup.index import ElementIndex, made_by_an_earlier_reading

        if made_by_an_earlier_reading(index):
            return SgmlParse(None, 0, declared, "its parse was made by an earlier pdi, before archives had an SGML"
                                                " folder: #elt= parses it anew at each request with the machine's SGML"
                                                " catalogs alone, as it was made (pdi reindex --elements keeps that"
                                                " parse)")
        element_index = ElementIndex.from_bytes(index)
        if element_index.failure is not None:  # refused: said as its elt is
            return SgmlParse(None, 0, declared, f"refused at deposit: {element_index.failure.message}")
        parse = element_index.sgml
        if parse is None:
            return SgmlParse(None, 0, declared, "not parsed at deposit")
        kept = None
        if parse[0] and declared is not None:
            from pdi.archive.sgml_dtds import kept_for

            kept = kept_for(self.store.location, declared)
        return SgmlParse(parse[0], parse[1], declared, None, kept)

    def _declared_dtd(self, record: RepresentationRecord) -> str | None:
        """The DTD an SGML document's document type declaration names, read from its first octets."""
        from pdi import charsets
        from pdi.fragments.markup.sgml import DOCTYPE_WITHIN, declared_dtd

        with self._reader(record) as reader:
            head = reader.read(0, min(record.size, DOCTYPE_WITHIN * 4))  # 4 octets a character at most
        try:
            codec = charsets.codec_for(record.charset or "utf-8")
        except UnsupportedError:  # a charset no codec reads: what can be read of it as UTF-8
            codec = "utf-8"
        return declared_dtd(head.decode(codec, "replace"))

    def capture_of(self, record: RepresentationRecord) -> dict[str, Any] | None:
        """A capture's parts (an MHTML aggregate, ``multipart/related``), as ``pdi get --info`` lists them: its
        root (RFC 2557 §5's start part, the page) and each part in file order with its media type, charset as
        written, Content-Location (resolved), Content-ID and size decoded; ``readable`` false, with ``why``, when
        its parts cannot be listed (past what replay reads, :data:`pdi.mhtml.limits.MAX_REPLAY_OCTETS`, or not
        readable within :func:`pdi.mhtml.parse`'s limits: deposited with ``--force``); None (not a capture). Read
        from its verified octets. No guard is asked: give it a record a reader has resolved."""
        if record.media_type != "multipart/related":
            return None
        from pdi._wording import byte_size
        from pdi.errors import LimitError, ParseError
        from pdi.mhtml import Aggregate
        from pdi.mhtml.limits import MAX_REPLAY_OCTETS

        if record.size > MAX_REPLAY_OCTETS:
            return {"readable": False, "why": f"it is over {byte_size(MAX_REPLAY_OCTETS)}, past what replay reads"}
        with self._reader(record) as reader:
            data = reader.read()
        try:
            aggregate = Aggregate.parse(data)
        except (ParseError, LimitError):
            return {"readable": False,
                    "why": "pdi's MHTML reader cannot read it within its limits (deposited with --force)"}
        parts = [{"part": p.index, "media_type": p.content_type, "charset": p.charset, "location": p.location,
                  "content_id": p.content_id, "bytes": len(p.data)} for p in aggregate.parts]
        return {"readable": True, "root": aggregate.root.index, "parts": parts}

    def message_of(self, record: RepresentationRecord) -> dict[str, Any] | None:
        """An e-mail message's facts (:meth:`pdi.mail.message.Mail.facts`: From, To, Date, Subject, ids, its
        body and parts), read from its verified octets; None (not a message, or one Python's ``email`` cannot
        read within the limits: deposited with ``--force``). No guard is asked: give it a record a reader has
        resolved."""
        if record.media_type != "message/rfc822":
            return None
        from pdi.errors import LimitError, ParseError
        from pdi.fragments.email_text import message_facts
        from pdi.mail.large import read_mail
        from pdi.mail.message import MailLimits

        try:
            if large_message_record(record):  # read by its structure, by verified chunks, never held (pdi.mail.large)
                from pdi.mail.large import read_large

                with self._reader(record) as reader:
                    return message_facts(read_large(VerifiedOctets(reader)))
            if record.size > MailLimits().max_bytes:
                return None
            with self._reader(record) as reader:
                data = reader.read()
            return message_facts(read_mail(data))  # whole, or by its structure (its lines: by_structure)
        except (ParseError, LimitError):
            return None

    def _large_body_text(self, record: RepresentationRecord) -> str:
        from pdi.fragments.email_text import large_body_text

        with self._reader(record) as reader:
            return large_body_text(VerifiedOctets(reader))

    def large_message(self, located: Resolved) -> Mail:
        """The message ``located`` names read by its structure (:func:`pdi.mail.large.read_large`), by verified chunks,
        never held: its header fields, parts and where each lies, its body's part read (for the reader's page of a
        message of more than :data:`pdi.mail.large.STREAMED_FROM` octets)."""
        from pdi.mail.large import read_large

        with self._reader(located.record) as reader:
            return read_large(VerifiedOctets(reader))

    def locate_message_part(self, located: Resolved) -> StreamedPart | None:
        """A part (``part=``) of a message of more than :data:`pdi.mail.large.STREAMED_FROM` octets as :meth:`locate`
        found it: what it answers (its media type, charset and range; no octets in hand) and its octets to stream
        (:meth:`StreamedPart.pieces`, or a range of them: :meth:`StreamedPart.range_pieces`), never held as
        :meth:`read` holds what it answers. Its structure is read and the part mapped once here, by verified
        chunks (:func:`pdi.mail.large.part_map`: base64 counted, not decoded), so that its size is known and a
        part that cannot be decoded a window at a time is refused before anything is sent. ``None`` for any
        other name."""
        fragment = located.pdi.fragment
        if fragment is None or not large_message_record(located.record):
            return None
        if fragment.effective_scheme(located.record.format) != "part":
            return None
        from pdi.fragments.email import find_large_part, part_result
        from pdi.mail.large import part_map

        key = (located.record.sha256, str(fragment))
        found = _PARTS.get(key)
        if found is None:  # a message's octets never change: its structure read, and the part mapped, once
            with self._reader(located.record) as reader:
                octets = VerifiedOctets(reader)
                part = find_large_part(octets, fragment.positions)
                found = part, part_map(octets, part)
            _PARTS.keep(key, found)
        part, mapped = found
        result = part_result(part, b"", mapped.size)
        charset = located.record.charset if located.record.charset is not None else result.charset
        resolved = dataclasses.replace(located, data=b"", media_type=result.media_type, charset=charset,
                                       fragment=result)
        return StreamedPart(resolved, mapped.size, part, lambda: self._reader(located.record), mapped)

    def image_of(self, record: RepresentationRecord) -> ImageShown | None:
        """An image's size, frames and EXIF orientation, read from its header by verified chunks
        (:func:`pdi.fragments.image_size.image_size`: a PNG, JPEG, TIFF, GIF, WebP or BMP), and its size as a
        browser shows it; ``None`` for any other record, or a header that cannot be read. No guard is asked: give
        it a record a reader has resolved."""
        if not record.media_type.startswith("image/"):
            return None
        from pdi.errors import LimitError, ParseError
        from pdi.fragments.image_size import ImageShown, image_size

        kept = _IMAGES.get(record.sha256)
        if kept is not None:
            return kept[0]
        try:
            with self._reader(record) as reader:
                size = image_size(VerifiedOctets(reader))
        except (ParseError, LimitError):
            size = None
        shown = None if size is None else ImageShown.of(size)
        _IMAGES.keep(record.sha256, (shown,))
        return shown

    def video_of(self, record: RepresentationRecord) -> VideoInfo | None:
        """What ffprobe read of a video at deposit (duration, frame size, codecs), or None (not a video, or one
        deposited unread with ``--force``). No guard is asked: give it a record a reader has resolved."""
        if not record.media_type.startswith("video/"):
            return None
        index = self.fragment_index(record)
        if index is None:
            return None
        from pdi.fragments.video import VideoInfo

        return VideoInfo.from_bytes(index)


def video_index_now(kept: bytes | None, probe: Callable[[], bytes | None]) -> bytes | None:
    """A video's index as this pdi reads the video: ``kept`` (its fragment index), unless there is none or an earlier
    reading made it (:func:`pdi.fragments.video.made_by_an_earlier_reading`: its duration may not be this one's);
    then what ``probe`` reads now, or ``kept`` where it reads nothing (ffprobe missing, or past its bounds)."""
    from pdi.fragments.video import MAGIC, made_by_an_earlier_reading

    if kept is not None and not (bytes(kept[:4]) == MAGIC and made_by_an_earlier_reading(kept)):
        return kept
    return probe() or kept


def probed(path: str, media_type: str, descriptors: tuple[int, ...], octets: tuple[str, str]) -> bytes | None:
    """What ffprobe reads of the video at ``path`` (a checked blob file, :func:`~pdi.archive.blobs.checked_file`, of
    the ``octets``: the archive's location and their SHA-256), as its fragment index, or ``None`` where it cannot
    read it (:func:`pdi.archive.video.probe`): what this process read of the same octets lately, if any, and an index
    read kept for the next (:data:`_PROBED`)."""
    import pdi.archive.video as video
    from pdi.errors import LimitError, ParseError

    key = (*octets, media_type)
    kept = _PROBED.get(key)
    if kept is not None:
        return kept[0]
    try:
        index: bytes | None = video.probe(path, media_type, pass_fds=descriptors).to_bytes()
    except UnsupportedError:
        return None  # no ffprobe: asked again (at no cost) once it is installed
    except (ParseError, LimitError):
        index = None  # kept too: a video ffprobe reads for its whole time limit is not read again at each request
    _PROBED.keep(key, (index,))
    return index


def large_message_record(record: RepresentationRecord) -> bool:
    """Whether ``record`` is a message read by its structure from its verified chunks, never held whole
    (:func:`pdi.mail.large.unheld`: by its size alone). One of fewer octets is read into memory, then read whole or
    by its structure as :func:`pdi.mail.large.by_structure` says (by its lines)."""
    if record.media_type != "message/rfc822":
        return False  # nothing of pdi.mail imported for another kind (a worker's preload has not)
    from pdi.mail.large import unheld

    return unheld(record.size)


class _Kept(Generic[K, V]):
    """Facts of stored octets found lately, by a key naming the octets (their SHA-256, and what was asked of them),
    at most ``most``, the oldest forgotten first: octets never change, so what was read of them once (from octets
    checked as they were read) need not be read again by a ``304``, a ``HEAD``, a range or the same question asked
    again."""

    def __init__(self, most: int) -> None:
        self.most = most
        self._kept: dict[K, V] = {}
        self._lock = threading.Lock()

    def get(self, key: K) -> V | None:
        with self._lock:
            return self._kept.get(key)

    def keep(self, key: K, found: V) -> None:
        with self._lock:
            self._kept[key] = found
            while len(self._kept) > self.most:
                del self._kept[next(iter(self._kept))]


#: The parts of large messages located lately, and their maps (decoded size, places a decoding starts again), by the
#: message's SHA-256 and the fragment as written: finding a part reads the message's structure (0.5 s for 60 MB) and
#: mapping it reads the part. What is kept is where the part lies and how it is coded (some hundred octets a MiB of
#: part); the octets streamed are checked again as they are read (:meth:`StreamedPart.pieces`).
_PARTS: _Kept[tuple[str, str], tuple[MailPart, PartMap]] = _Kept(256)
#: Images' facts read from their headers lately (:meth:`RecordFacts.image_of`), by SHA-256, in a tuple (``(None,)``:
#: none could be read): a GIF's frames are counted by walking all its blocks (15 ms for 2,000 frames), which every
#: ``/api/resolve`` of it asked again.
_IMAGES: _Kept[str, tuple[ImageShown | None]] = _Kept(1024)
#: Videos' indexes read by ffprobe lately (:func:`probed`), by the archive's location, SHA-256 and media type, where
#: none is kept or an earlier reading made the one kept (:meth:`RecordFacts.fragment_index`): ffprobe took 0.5 s for
#: an MP4 of 2 minutes (its packets read to find where they end) at each request of it, and one it cannot read
#: within :data:`pdi.archive.video.PROBE_SECONDS` took that long at each, in a tuple (``(None,)``: not read). Each
#: request still checks the octets (a damaged video is refused as before); some hundred octets each.
_PROBED: _Kept[tuple[str, str, str], tuple[bytes | None]] = _Kept(1024)


@dataclasses.dataclass(frozen=True)
class StreamedPart:
    """A part of a large message (:meth:`Reading.locate_message_part`): what it answers, and its octets to stream."""

    #: the name located, with the part's media type, charset and fragment (its range); ``data`` empty
    resolved: Resolved
    #: its octets' count
    size: int
    part: MailPart
    opener: Callable[[], ChunkedReader]
    #: its decoded size and the places its decoding starts again (:func:`pdi.mail.large.part_map`)
    mapped: PartMap

    def pieces(self) -> Iterator[bytes]:
        """Its octets, a window at a time, each read from the message's verified chunks (the blob opened here, and
        closed when the last piece is taken or the iterator is closed)."""
        from pdi.mail.large import part_pieces

        with self.opener() as reader:
            yield from part_pieces(VerifiedOctets(reader), self.part, mapped=self.mapped)

    def range_pieces(self, first: int, stop: int) -> Iterator[bytes]:
        """Its octets ``first`` to ``stop`` (not included), decoded from the place nearest before ``first``
        (:func:`pdi.mail.large.part_range`), each read from the message's verified chunks."""
        from pdi.mail.large import part_range

        with self.opener() as reader:
            yield from part_range(VerifiedOctets(reader), self.part, self.mapped, first, stop)
