"""Reading: resolving a name — down to a fragment, through :mod:`pdi.fragments` — to exactly the stored bytes.

A versioned name resolves to one format's octets, read by verified chunks
(:mod:`pdi.archive.blobs`), or to what its fragment selects there, using the
index made at deposit when there is one; a generic name to its versions; a
citation to both its ends and the check of its quotation. Every read asks
the reader's guards (:class:`~pdi.archive.base.ArchiveBase`) first, and a
withdrawn name answers with its tombstone.
"""

from __future__ import annotations

import dataclasses
import datetime
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from pdi import formats
from pdi._later import filled
from pdi._wording import shown_url
from pdi.archive.base import gone, refused
from pdi.archive.blobs import (
    BlobInfo,
    ChunkedReader,
    FileReader,
    RangedOctets,
    VerifiedOctets,
    checked_as_given,
    checked_file,
    file_reader,
    mapped,
    read_cached,
    verify_selected,
)
from pdi.archive.blobs.inline import octets_reader
from pdi.archive.naming import generic_of, key_of, parse_pdi, record_name, record_name_as, timestamp
from pdi.archive.record_facts import (
    UNKEPT_SGML,
    RecordFacts,
    large_message_record,
    probed,
    video_index_now,
)
from pdi.archive.results import (
    CitationResolved,
    Generic,
    GenericVersion,
    Opened,
    Resolved,
)
from pdi.archive.store import DocumentKey, PublicVersion, RepresentationRecord, SmallPublic
from pdi.errors import (
    DamagedError,
    IntegrityError,
    NotFoundError,
    ParseError,
    PDIError,
    UnsupportedError,
    WithdrawnError,
)
from pdi.identifier import PDI, Fragment, missing_citation_mark

if TYPE_CHECKING:
    from pdi.fragments import Buffer

__all__ = ["Reading"]


class Reading(RecordFacts):
    """Resolve, locate, get, cite and open the octets of a name; select a fragment of what was read."""

    def resolve(self, pdi: PDI | str, *, latest: bool = False) -> Resolved | Generic:
        """Bytes of a format of a version (or of its fragment), or for a generic PDI its versions.

        ``latest=True`` takes the newest version whatever version the PDI names;
        otherwise an omitted version is version 1 (draft: "when VERSION is
        omitted, it defaults to version 1"). A generic PDI (no format, and so
        no version: PDI-GRAMMAR.md §2.7) names the document: the
        :class:`Generic` lists every version with its deposit time and
        formats (with ``latest=True`` the newest only).
        """
        parsed, found = self._look_up(pdi, latest)
        return found if isinstance(found, Generic) else self._read(parsed, found)

    def read(self, located: Resolved) -> Resolved:
        """What :meth:`resolve` answers for a name :meth:`locate` has found: its bytes (or fragment) read now.

        Saves looking the name up in the catalog twice when a caller first
        decides from the record (its size) whether to read it at all.
        """
        # its name as located: canonical, and without a fragment the name of the whole octets (not built again)
        return self._read(located.pdi, located.record, None if located.pdi.fragment else located.pdi)

    def locate(self, pdi: PDI | str, *, latest: bool = False) -> Resolved | Generic:
        """What :meth:`resolve` would answer, from the catalog alone: no bytes are read.

        For a PDI with a format the :class:`Resolved` has empty ``data`` and no
        fragment result (the fragment is only named); a resolver uses this to
        say where a name resolves without fetching it.
        """
        parsed, found, siblings = self._located(pdi, latest)
        if isinstance(found, Generic):
            return found
        return Resolved(record_name(found, fragment=parsed.fragment), b"", found.media_type, found.charset, found,
                        siblings=tuple(siblings))

    def read_public(self, parsed: PDI, *, most: int) -> Resolved | None:
        """What :meth:`resolve` answers anyone (no token) for a versioned name without a fragment, if the catalog
        tells it in one statement on a connection of the calling thread's own (:meth:`SQLStore.public_version`:
        never waiting for the catalog's lock), read and checked against its chunk digests.

        With its ``siblings``, as :meth:`locate` gives them. ``None`` unless the
        name is that plain case: a series anyone may read, no embargo in force,
        not withdrawn, its octets a local blob file with chunk digests, all in
        the system's page cache (what would wait for the disk is not read
        here), or a small blob's catalog row, at most ``most`` octets; the caller then asks :meth:`resolve` (or :meth:`locate`), whose
        guards say what it is. An :class:`~pdi.errors.IntegrityError` if the
        octets are not what the catalog recorded, as :meth:`resolve` says it.
        """
        found = self._public(parsed)
        if found is None or found.record.size > most:
            return None
        record = found.record
        name = record_name_as(record, parsed)
        if found.data is None and found.size == record.size:
            info = BlobInfo(record.sha256, found.size, found.chunk_size, found.chunks)
            data = read_cached(info, found.path, self.fixity_memo)  # at once, each chunk checked (else read below, which says why)
            if data is not None:
                return Resolved(name, data, record.media_type, record.charset, record, siblings=found.records)
        reader = self._public_reader(found, str(name))  # a small blob's row is checked by chunks as a file is
        if reader is None:
            return None  # missing or unreadable: resolve says so
        if isinstance(reader, FileReader):
            reader.nowait = True  # this thread waits for no disk: octets not in memory are read by resolve
        with reader:
            if reader.size != record.size:
                return None
            try:
                data = reader.read()
            except BlockingIOError:
                return None
        return Resolved(name, data, record.media_type, record.charset, record, siblings=found.records)

    def locate_public(self, parsed: PDI) -> Resolved | None:
        """What :meth:`locate` answers anyone for the plain case of :meth:`read_public` (from the same one
        statement, no octets read), else ``None``."""
        found = self._public(parsed)
        if found is None:
            return None
        record = found.record
        return Resolved(record_name_as(record, parsed), b"", record.media_type, record.charset, record, siblings=found.records)

    def public_serial(self, series: str, day: datetime.date, serial: str, version: int,
                      token: str, name: str | None = None) -> PublicVersion | None:
        """What the catalog tells of the serial name of these fields (``serial``, the serial as the name spells it;
        ``token``, a canonical format token) as :meth:`read_public` would, read as fast as the catalog can
        (:meth:`SQLStore.public_serial_version`: on SQLite, the name's one row), without a :class:`PDI` parsed or
        built: for a resolver that found them in a name spelled canonically
        (:mod:`pdi.server.protocol.plain`). ``None``: not there for anyone now, or not the name its record is
        named by spelled so (the record's own serial, format and version). The octets are not read: check them
        against ``chunks`` (:func:`pdi.archive.blobs.checked`, :func:`~pdi.archive.blobs.read_cached`) before
        any is served. A caller that serves none (N2L, a ``304``) asks :meth:`public_digest`. ``name``: the name
        these fields were read from, spelled as ``pdi add`` prints it, when the caller holds it (it is the key the
        catalog is asked by: give no other)."""
        key = filled(DocumentKey, {"series": series, "day": day, "unique_id": serial})  # DocumentKey(...), made faster
        found = self.store.public_serial_version(key, version, token, self._now_stamp, name)
        return _named_so(found, (series, day, serial, version, token))

    def public_serials(self, asked: Sequence[tuple[SerialFields, str]]) -> list[PublicVersion | None]:
        """:meth:`public_serial` of each of ``asked`` (a serial name's fields, and the name as ``pdi add`` prints
        it), in order, as the catalog reads many names fastest (SQLite: one statement for them all, in one snapshot
        of the catalog, not one or two a name)."""
        keys = [(filled(DocumentKey, {"series": series, "day": day, "unique_id": serial}), version, token, name)
                for (series, day, serial, version, token), name in asked]
        found = self.store.public_serial_versions(keys, self._now_stamp)
        return [_named_so(one, fields) for one, (fields, _) in zip(found, asked, strict=True)]

    def public_serial_named(self, name: str, series: str) -> SmallPublic | PublicVersion | None:
        """:meth:`public_serial` of the serial name ``name`` of ``series``, spelled as :meth:`PDI.build` spells it
        (the caller checked the spelling; the catalog is asked by it), read by that name alone: the common case (a
        version of one format, its octets a small blob kept in the catalog's row, no embargo) as a
        :data:`~pdi.archive.store.SmallPublic` tuple (media type, charset, SHA-256, deposit time, octets) with no
        record made, anything else as :meth:`public_serial` tells it. The octets are not checked: hash them against
        the SHA-256 before any is served. For a resolver's first asking of a name
        (:mod:`pdi.server.protocol.plain`)."""
        return self.store.public_serial_named(name, series, self._now_stamp)

    def public_digest(self, name: str, series: str) -> str | None:
        """The SHA-256 of what the serial name ``name`` of ``series`` names, spelled as :meth:`PDI.build` spells it
        (the caller checked the spelling), if anyone may read it now, as :meth:`public_serial` would tell it; ``None``
        for anything else (not there for anyone now, or a catalog that cannot tell it in one step): for a resolver
        that answers it without octets (N2L, a ``304``)."""
        return self.store.public_digest(name, series, self._now_stamp)

    def open_public(self, series: str, day: datetime.date, serial: str, version: int, token: str,
                    name: str) -> tuple[RepresentationRecord, ChunkedReader] | None:
        """The record and a reader by verified chunks (as :meth:`open_octets` opens them; close it after) of the
        serial name ``name`` whose fields these are, spelled as :meth:`PDI.build` spells it, when the one
        statement of :meth:`public_serial` says anyone may read it now and it is named so; else ``None`` (the
        caller asks :meth:`open_octets`, which says what it is). For a resolver that serves many such names at
        once (``POST /api/octets``): no :class:`PDI` parsed or built, one catalog statement."""
        return self._opened_public(self.public_serial(series, day, serial, version, token, name), name)

    def open_public_many(
        self, asked: Sequence[tuple[SerialFields, str]],
    ) -> list[tuple[RepresentationRecord, ChunkedReader] | PDIError | None]:
        """:meth:`open_public` of each of ``asked`` (a serial name's fields, and the name as ``pdi add`` prints it),
        in order, their records read as :meth:`public_serials` reads them (one catalog statement for them all):
        for each, its record and reader (close it after), ``None`` (ask :meth:`open_octets`), or the
        :class:`~pdi.errors.PDIError` opening its file raised (a file cut short)."""
        opened: list[tuple[RepresentationRecord, ChunkedReader] | PDIError | None] = []
        try:
            for found, (_, name) in zip(self.public_serials(asked), asked, strict=True):
                try:
                    opened.append(self._opened_public(found, name))
                except PDIError as exc:
                    opened.append(exc)
        except BaseException:  # the files opened before it are closed
            for one in opened:
                if isinstance(one, tuple):
                    one[1].close()
            raise
        return opened

    def _opened_public(self, found: PublicVersion | None,
                       name: str) -> tuple[RepresentationRecord, ChunkedReader] | None:
        if found is None or found.size != found.record.size:
            return None
        reader = self._public_reader(found, name)
        return None if reader is None else (found.record, reader)

    def _public_reader(self, found: PublicVersion, name: str) -> ChunkedReader | None:
        """A reader by verified chunks of what one statement found: a small blob's octets in its catalog row, or its
        blob file (``None`` if it is missing or unreadable: the general path says what is wrong)."""
        info = BlobInfo(found.record.sha256, found.size, found.chunk_size, found.chunks)
        if found.data is not None:
            return octets_reader(info, found.data, name=name)
        try:
            reader = file_reader(info, found.path, name=name, memo=self.fixity_memo)
        except OSError:
            return None
        reader.check_size()
        return reader

    def _public(self, parsed: PDI) -> PublicVersion | None:
        if parsed.format is None or parsed.fragment is not None or parsed.citation is not None or parsed.is_pattern:
            return None
        return self.store.public_version(key_of(parsed), parsed.version if parsed.version is not None else 1,
                                         formats.canonical_token(parsed.format), self._now_stamp)

    def _now_stamp(self) -> str:
        """The archive's clock as the catalog keeps a moment (:func:`~pdi.archive.naming.timestamp`)."""
        return timestamp(self.now())

    def version_of(self, located: Resolved) -> GenericVersion:
        """The version of its document a resolved name is of: its number, deposit time and formats.

        From what :meth:`locate` read, or else one catalog read; no guard is
        asked again (the name was resolved for this reader).
        """
        record = located.record
        records = located.siblings or tuple(self.store.representations(
            DocumentKey(record.series, record.day, record.unique_id), record.version))
        own = located.pdi if located.pdi.fragment is None else located.pdi.without_fragment()
        # as generic_of names them (formats in token order, the version dated by its first deposit), without
        # building the generic name or this record's name again
        formats = tuple(own if r == record else record_name(r) for r in sorted(records, key=lambda r: r.format))
        return GenericVersion(record.version, min(r.created_at for r in records), formats)

    def _look_up(self, pdi: PDI | str, latest: bool) -> tuple[PDI, Generic | RepresentationRecord]:
        """The parsed PDI and either its versions (a generic PDI) or the record of the format it names."""
        parsed, found, _ = self._located(pdi, latest)
        return parsed, found

    def _located(
        self, pdi: PDI | str, latest: bool
    ) -> tuple[PDI, Generic | RepresentationRecord, list[RepresentationRecord]]:
        """:meth:`_look_up`, and for a name with a format the records of every format of its version."""
        parsed = parse_pdi(pdi)
        if parsed.is_pattern:
            raise UnsupportedError(f"{parsed} is a pattern; list it with ls")
        if parsed.citation is not None:
            raise UnsupportedError("a citation names two documents: resolve it with cite (pdi cite)")
        if parsed.format is None:
            if parsed.fragment is not None:
                raise UnsupportedError("a fragment needs a format: name one")
            self._guard_series(parsed)
            generic = self._generic(parsed, False)
            self._guard_embargo(parsed, None)
            every = generic
            hidden = self._unlisted()
            if hidden:  # the versions under an embargo the reader is not exempt from are not its to list
                shown = self._listed([generic], hidden)
                if not shown:
                    raise refused(f"{parsed.without_fragment()}: every version is embargoed")
                generic = shown[0]
            generic = self._in_service(parsed, generic, every)  # of what this reader may learn of, alone
            if latest:
                generic = dataclasses.replace(generic, versions=generic.versions[-1:])
            return parsed, generic, []
        self._guard_series(parsed)
        try:
            version, records = self._records(parsed, latest)
            # before a refusal of the format names the version's formats: of an embargoed version, a reader who
            # may not read it learns what its exact name says (403), not which formats it has
            self._guard_embargo(parsed, version)
            record = self._record(parsed, version, records)
        except NotFoundError:
            self._gone_at_origin(parsed)
            raise
        self._not_withdrawn(parsed, record)
        return parsed, record, records

    def _generic(self, parsed: PDI, latest: bool) -> Generic:
        """Every version of the document a generic PDI names (the newest only with ``latest``), from one catalog query,
        withdrawn or not."""
        records = self.store.representations(key_of(parsed))
        if not records:
            self._gone_at_origin(parsed)
            raise NotFoundError(f"{parsed.without_fragment()} is not in this archive")
        return generic_of(records, latest)

    def _in_service(self, parsed: PDI, generic: Generic, every: Generic) -> Generic:
        """The versions of ``generic`` (those of ``every`` version the reader may learn of) not withdrawn, from one
        indexed read of the document's tombstones. When none is left: :class:`AccessError` (403) if a version the
        reader may not learn of is still in service; else the tombstone (:class:`WithdrawnError`, 410) of the
        document withdrawn whole, or of the version (of those the reader may learn of) withdrawn last. A generic
        name resolves as its versioned names do: a withdrawn version is never offered, an embargoed one never told."""
        tombstones = self.store.withdrawals_of([key_of(parsed)])
        if not tombstones:
            return generic
        whole = next((t for t in tombstones if t.version is None), None)
        withdrawn = {t.version for t in tombstones}
        kept = () if whole is not None else tuple(v for v in generic.versions if v.number not in withdrawn)
        if kept:
            return generic if len(kept) == len(generic.versions) else dataclasses.replace(generic, versions=kept)
        if whole is not None:
            raise gone(parsed, "its document was", whole)
        if any(v.number not in withdrawn for v in every.versions):
            raise refused(f"{parsed.without_fragment()}: every version in service is embargoed")
        shown = {v.number for v in generic.versions}
        last = [t for t in tombstones if t.version in shown][-1]  # oldest first: the last made
        what = "its only version was" if len(every.versions) == 1 else (
            f"every version was withdrawn; version {last.version} was")
        raise gone(parsed, what, last)

    def _gone_at_origin(self, parsed: PDI) -> None:
        """For a name not held here: :class:`WithdrawnError` (410) if it is a name of a mirrored series that its
        origin had withdrawn before this archive held it (:meth:`withdrawn_at_origin`); else nothing."""
        gone = self.store.mirror_withdrawals(key_of(parsed))
        if parsed.format is not None:
            token = formats.canonical_token(parsed.format)
            gone = [g for g in gone if g.format == token and g.version == (parsed.version or 1)]
        if gone:
            first = gone[0]
            purged = " (its octets purged)" if first.purged else ""
            raise WithdrawnError(
                f"{parsed.without_fragment()}: withdrawn at its origin {shown_url(first.origin)} {first.at}{purged},"
                " before this mirror held it", reason=f"withdrawn at its origin {shown_url(first.origin)}",
                at=first.at,
                who=shown_url(first.origin), purged=first.purged)

    def cite(self, pdi: PDI | str) -> CitationResolved:
        """Resolve both ends of a citation and check that the quotation stands where it says.

        ``urn:pdi://A/…/5.html.1@120=pdi://B/…/1.text.1#char=37,51``: the
        fragment of B is quoted in A at position 120 of A's default scheme
        (PDI-GRAMMAR.md §3). A must be in this archive; B may not be, and then
        the check is ``unchecked``. See :func:`pdi.fragments.citation.check_quotation`.
        """
        from pdi.fragments.citation import CANONICAL_SCHEMES, QuotationCheck, check_quotation

        try:
            parsed = parse_pdi(pdi)
        except ParseError as exc:
            missing = missing_citation_mark(pdi) if isinstance(pdi, str) else None
            if missing is None:
                raise
            raise missing from exc
        if parsed.citation is None:
            raise UnsupportedError(f"{parsed} is not a citation (NAME@position=PDI)")
        citing_name = dataclasses.replace(parsed, citation=None)
        try:
            citing = self.locate(citing_name)
        except NotFoundError as exc:  # what the archive holds near it, as pdi get says (a name copied with another day)
            raise self.not_found(exc, citing_name) from None  # type: ignore[attr-defined]  # the Archive's browsing part
        if not isinstance(citing, Resolved):
            raise UnsupportedError("the citing document needs a format and a version")
        if citing.media_type != "message/rfc822" or citing.pdi.fragment is not None:
            citing = self.read(citing)  # a message's text is its body's, which char_text reads (a large one's part)
        origin = parsed.citation.origin
        try:
            cited = self.resolve(parsed.citation.cited)
        except NotFoundError as exc:
            series = parsed.citation.cited.series_name.lower()
            if self.store.get_series(series) is not None and not any(
                    m.role == "origin" for m in self.store.list_mirrors(series)):
                # a series minted here, not one copied from elsewhere: the name is wrong, not unreachable
                raise self.not_found(exc, parsed.citation.cited) from None  # type: ignore[attr-defined]
            return CitationResolved(
                parsed, citing, origin, None, QuotationCheck("unchecked", f"the cited document is not here: {exc}")
            )
        if not isinstance(cited, Resolved):
            raise UnsupportedError("the cited PDI needs a format and a version")
        if cited.fragment is not None and cited.fragment.past_end:  # it quotes nothing: no quotation can stand
            from pdi.fragments import past_end_message

            said = past_end_message(cited.pdi, cited.fragment)
            return CitationResolved(parsed, citing, origin, cited, QuotationCheck(
                "mismatch", f"the cited {said}", ""))
        if not cited.data and formats.media_family(cited.media_type) in ("text", "html", "xml"):
            # a zero-length passage (#char=5,5, #char=5, #line=3,3) or an empty document: "ok" would say that
            # nothing stands at the position, which is true of every position of every document
            what = "passage" if cited.fragment is not None else "document"
            return CitationResolved(parsed, citing, origin, cited, QuotationCheck(
                "mismatch", f"the cited {what} {cited.pdi} is empty: it quotes no text, so none can stand at the"
                " position", ""))
        text, media_type, charset, scheme = self._citing_text(citing)
        check = check_quotation(
            text, media_type, charset, scheme, origin,
            cited.data, cited.media_type, cited.charset,
            canonical=cited.fragment is not None and cited.fragment.scheme in CANONICAL_SCHEMES,
        )
        return CitationResolved(parsed, citing, origin, cited, check)

    def _citing_text(self, citing: Resolved) -> tuple[bytes, str, str | None, str]:
        """What a citation's position counts in, as ``#char=`` of the citing document counts: its octets, media
        type, charset and default scheme; for an e-mail or a PDF, :meth:`char_text` as UTF-8, ``char``."""
        text = self.char_text(citing)
        if text is not None:
            return text.encode("utf-8", "surrogatepass"), "text/plain", "utf-8", "char"
        return citing.data, citing.media_type, citing.charset, formats.default_fragment_scheme(citing.record.format)

    def char_text(self, located: Resolved) -> str | None:
        """The text ``#char=`` of a document counts on when it is not the document's own octets: an e-mail's body
        text (``docs/email.md`` §2: read from ``located``'s octets, which the caller has read) or a PDF's text layer
        kept at deposit (``docs/pdf-text-layer.md``); ``None`` for any other media type. A PDF without a text layer
        is an :class:`UnsupportedError`. What citations, text fragments and quotes of either are counted in. A
        message's octets not in hand are read here: one past :data:`pdi.mail.large.STREAMED_FROM` by its structure,
        by verified chunks, its body's part alone (:func:`pdi.fragments.email_text.large_body_text`), never whole."""
        if located.media_type == "message/rfc822":
            from pdi.fragments.email_text import large_message_body_text, message_body_text

            if large_message_record(located.record):
                return large_message_body_text(located.record.sha256, lambda: self._large_body_text(located.record))
            whole = located if located.data or not located.record.size else self.read(located)
            return message_body_text(whole.data)
        if located.media_type == "application/pdf":
            layer = self.text_layer_of(located.record)
            if layer is None:
                raise UnsupportedError(f"{located.pdi}: this PDF has no text layer (PDFium could not read it when it"
                                       " was deposited): it has no page, text or region pdi can cite; cite the whole"
                                       " PDF")
            return layer.text
        return None

    def _records(self, parsed: PDI, latest: bool) -> tuple[int, list[RepresentationRecord]]:
        """The version a PDI names and the records of its formats (not their bytes).

        A version named (not ``latest``) is looked for at once, in one read:
        the document's list of versions is read only when it is not there
        (the refusal names those the reader may know of).
        """
        key = key_of(parsed)
        if not latest:
            records = self.store.representations(key, parsed.version if parsed.version is not None else 1)
            if records:
                return records[0].version, records
        version = self._version_of(parsed, key, latest)
        return version, self.store.representations(key, version)

    @staticmethod
    def _record(
        parsed: PDI, version: int, records: list[RepresentationRecord]
    ) -> RepresentationRecord:
        """The record of the format ``parsed`` names among ``records`` (of ``version``)."""
        token = formats.canonical_token(parsed.format or "")
        for record in records:
            if record.format == token:
                return record
        raise NotFoundError(
            f"{parsed.without_fragment()}: version {version} has no format {token} (formats: "
            f"{', '.join(r.format for r in records)})"
        )

    def get(self, pdi: PDI | str, *, latest: bool = False) -> Resolved:
        """Bytes of a format of a version, or of a fragment of it; a generic PDI is refused."""
        result = self.resolve(pdi, latest=latest)
        if isinstance(result, Generic):
            raise UnsupportedError(
                f"{result.pdi} is generic (no format): name one of "
                + ", ".join(str(p) for p in result.names)
            )
        return result

    def get_record(self, record: RepresentationRecord, name: PDI | None = None) -> Resolved:
        """:meth:`get` of the name of a record already read from the catalog (an export's listing, ``name``: its
        name, if built already): the same guards and withdrawal check, without looking the record up again."""
        parsed = record_name(record) if name is None else name
        self._guard_series(parsed)
        self._guard_embargo(parsed, record.version)
        self._not_withdrawn(parsed, record)
        return self._read(parsed, record, parsed)

    def formats(self, pdi: PDI | str, *, latest: bool = False) -> list[PDI]:
        """The versioned PDIs of every format of the version a PDI names."""
        parsed = parse_pdi(pdi)
        self._guard_series(parsed)
        version, records = self._records(parsed, latest)
        self._guard_embargo(parsed, version)
        return [record_name(r) for r in records]

    def versions(self, pdi: PDI | str) -> list[int]:
        """The version numbers of the document a PDI names."""
        parsed = parse_pdi(pdi)
        self._guard_series(parsed)
        key = key_of(parsed)
        hidden = self._unlisted()
        return [v for v in self.store.versions(key) if hidden.version_listed(key, v)]

    def unminted(self, names: Sequence[PDI]) -> set[PDI]:
        """Those of ``names`` under whose series, day and id no document is minted (so :meth:`versions` of each is
        empty), asked in one read, each series guarded as :meth:`versions` guards it."""
        for series in {p.series_name.lower(): p for p in names}.values():
            self._guard_series(series)
        keys = [key_of(p) for p in names]
        found = self.store.documents_of(keys)
        return {p for p, key in zip(names, keys, strict=True) if key not in found}

    def holding(self, pdi: PDI | str, sha256: Iterable[str]) -> list[RepresentationRecord]:
        """The listed representations of ``pdi``'s document whose bytes have one of these SHA-256s.

        Those in ``pdi``'s own format first, each group oldest version first;
        none when the document holds none of them (or does not exist). An
        import asks it so that what the archive already holds (its own
        export, imported again) is answered by its name, not deposited again.
        """
        parsed = parse_pdi(pdi)
        self._guard_series(parsed)
        key = key_of(parsed)
        wanted = set(sha256)
        listed = set(self.versions(parsed))
        own = (parsed.format or "").lower()
        held = [r for r in self.store.representations(key) if r.sha256 in wanted and r.version in listed]
        return sorted(held, key=lambda r: (r.format.lower() != own, r.version))

    def open_octets(self, pdi: PDI | str, *, latest: bool = False) -> Opened:
        """A versioned name's stored octets, to be read by verified chunks (never whole); close it after.

        The fragment, if any, is only named (:meth:`resolve` evaluates it).
        A generic name is refused as by :meth:`get`.
        """
        parsed, found = self._look_up(pdi, latest)
        if isinstance(found, Generic):
            raise UnsupportedError(
                f"{found.pdi} is generic (no format): name one of "
                + ", ".join(str(p) for p in found.names)
            )
        return Opened(record_name(found, fragment=parsed.fragment), found, self._reader(found))

    def kept_parse(self, pdi: PDI | str) -> bytes:
        """The parse kept of the SGML document a versioned name (without a fragment) names: its element index, the
        octets whose SHA-256 the series' signed manifest gives (``element_index``), for a mirror that cannot make
        the same parse itself (:mod:`pdi.network.mirrors`, ``GET /api/element-index``). Looked up as
        :meth:`open_octets` looks it up, under the same access rules (a private or embargoed name's to a reader
        who may read it alone); a :class:`NotFoundError` when none is kept (not SGML, or not parsed here, or by
        an earlier reading)."""
        return self.kept_parse_read(pdi)[0]

    def kept_parse_read(self, pdi: PDI | str) -> tuple[bytes, bool]:
        """:meth:`kept_parse`, and whether anyone may read it now, without a token (its series public, the name
        not embargoed): whether a shared cache may keep it (``GET /api/element-index``)."""
        from pdi.archive.manifests import kept_sgml_parse

        parsed, found = self._look_up(pdi, False)
        if isinstance(found, Generic):
            raise UnsupportedError(f"{found.pdi} is generic (no format): an element index is kept of a versioned name")
        name = record_name(found)
        if parsed.fragment is not None:
            raise ParseError(f"{parsed} names a fragment: ask for the whole document's name ({name})",
                             rule="element-index")
        index = kept_sgml_parse(self.store, found)
        if index is None:
            from pdi.fragments.markup import markup_kind

            what = (f"it is {found.media_type}, not SGML" if markup_kind(found.media_type) != "sgml"
                    else "its octets were purged" if found.purged is not None
                    else "it was not parsed here (its DTD not found, onsgmls missing, or past the bounds), or only by"
                         " an earlier reading")
            raise NotFoundError(f"no parse of {name} is kept here: {what}")
        return index, self.readable_by_anyone(found)

    def locate_clip(self, located: Resolved) -> Resolved | None:
        """A video's time fragment (``sec``, ``msec``) as :meth:`locate` found it, with the interval it selects read
        from the video's index alone: its answer is the whole video (:mod:`pdi.fragments.video`), for
        :meth:`open_located` to stream, never held as :meth:`read` holds what it answers. ``None`` for any other
        name."""
        fragment = located.pdi.fragment
        if fragment is None or not located.record.media_type.startswith("video/"):
            return None
        scheme = fragment.effective_scheme(located.record.format)
        if scheme not in ("sec", "msec"):
            return None
        from pdi import fragments

        result = fragments.evaluate(scheme, fragment.positions, b"", media_type=located.record.media_type,
                                    index=self.fragment_index(located.record))
        return dataclasses.replace(located, fragment=result)

    def open_located(self, located: Resolved) -> Opened:
        """The stored octets of what :meth:`locate` found, as :meth:`open_octets` opens them, without a second look-up."""
        return Opened(located.pdi, located.record, self._reader(located.record))

    def _read(self, parsed: PDI, record: RepresentationRecord, name: PDI | None = None) -> Resolved:
        """What ``parsed`` selects of ``record``'s octets (``name``: the record's versioned name, if built already)."""
        if name is None and parsed.fragment is None:
            name = record_name(record)
        with self._reader(record, name) as reader:
            if parsed.fragment is None:
                assert name is not None
                data = reader.read()
                return Resolved(name, data, record.media_type, record.charset, record)
            if reader.path is None and parsed.fragment.effective_scheme(record.format) == "byte":
                # a byte range of a blob with no local file: read the chunks it touches, not the whole
                # RangedOctets is no Buffer: it is only sliced, as the byte evaluator (the one it goes to) does
                return self._selected(record, RangedOctets(reader), parsed.fragment)  # type: ignore[arg-type]
            scheme = parsed.fragment.effective_scheme(record.format)
            if scheme in ("rect", "crop") and record.media_type.startswith("video/"):
                return self._video_region(record, reader, parsed.fragment, scheme)
            index = self.fragment_index(record)
            if large_message_record(record) and scheme in ("char", "line", "part"):
                # read by its structure, by verified chunks (pdi.mail.large): never mapped, never held whole
                return self._selected(record, VerifiedOctets(reader), parsed.fragment)  # type: ignore[arg-type]
            if scheme in ("sec", "msec") and record.media_type.startswith("audio/"):
                # a stretch of a recording reads its header and the samples selected (or, compressed, what is
                # decoded to reach them): read by verified chunks as they are touched, each checked by its own
                # digest, so a damaged octet it uses is a DamagedError (not a header "pdi cannot read") and one in
                # a chunk it never reads costs nothing; it hashed the whole blob, for each fragment
                # VerifiedOctets is no Buffer: it is sliced and read as a file (BufferFile), as the audio
                # evaluator reads its data
                return self._selected(record, VerifiedOctets(reader), parsed.fragment, index)  # type: ignore[arg-type]
            with mapped(reader) as octets:
                if len(octets) != record.size:  # a file cut short (or grown): before an index made for the size
                    raise DamagedError(f"the bytes of {record_name(record)} are cut short: {record.size} octets"
                                       f" recorded, {len(octets)} stored")
                checked = checked_as_given(reader)  # no local file: each chunk was checked as it was read
                self._refuse_unkept_sgml(record, scheme)
                try:
                    result = self._selected(record, octets, parsed.fragment, index)
                except Exception as refusal:
                    if not checked and scheme in ("rect", "crop") and formats.media_family(record.media_type) == "image":
                        _damage_behind(reader, refusal)
                    raise
                if checked:  # the store was read once, and nothing the evaluator was given is unchecked
                    pass
                elif record.media_type.startswith(("multipart/", "message/")) or record.media_type == "application/pdf":
                    # an aggregate's fragment is read from its parsed root part, a message's from its parsed
                    # body or part; a PDF's is answered whole (page=) or from its text layer, made from the
                    # whole and kept (its ranges are the layer's): every chunk checked (or remembered checked
                    # by this process, unchanged: the fixity memo)
                    reader.verify_range(0, reader.size)
                else:  # the chunks of the selected ranges; of an image's region all (none hashed again that the memo holds)
                    verify_selected(reader, result.fragment)
                selected: object = result.data  # the map itself when a fragment selects it whole (rect)
                if not isinstance(selected, bytes):
                    result = dataclasses.replace(result, data=bytes(result.data))
                return result

    def _video_region(
        self, record: RepresentationRecord, reader: ChunkedReader, fragment: Fragment, scheme: str
    ) -> Resolved:
        """A region of a video's frame (:func:`pdi.archive.video.frame_region`), read by ffmpeg from the blob file
        the reader opened, every chunk checked, or from a copy of its chunks, each checked as it is copied, where
        the store keeps none (:func:`~pdi.archive.blobs.checked_file`). A video with no fragment index is read by
        ffprobe first (:meth:`fragment_index`) from that same file: the blob opened, checked or copied once (it
        was opened and checked, or read from the store, once for each). So is one whose index an earlier reading
        made (:func:`pdi.fragments.video.made_by_an_earlier_reading`), as :meth:`fragment_index` reads it: its
        frames last as long as a browser shows them (the kept index, where ffprobe cannot read it now)."""
        import pdi.archive.video as video
        from pdi.fragments.video import CONTAINERS

        if record.media_type not in CONTAINERS:
            raise UnsupportedError(f"{scheme} on {record.media_type}: pdi reads regions of {', '.join(CONTAINERS)}")
        index = self.store.fragment_index(record.sha256, record.media_type, record.charset)
        with checked_file(reader) as (path, descriptors):
            index = video_index_now(index, lambda: probed(path, record.media_type, descriptors,
                                                          (self.store.location, record.sha256)))
            result = video.frame_region(path, record.media_type, scheme, fragment.positions, index,
                                        pass_fds=descriptors)
        return Resolved(record_name(record, fragment=fragment), result.data, result.media_type, None, record, result)

    def select(self, whole: Resolved, fragment: Fragment, *, index: bytes | None = None) -> Resolved:
        """What ``fragment`` selects in a whole representation already resolved (its bytes read and checked).

        ``index`` is the one made at deposit (:meth:`Store.fragment_index`), if any: the
        result is the same, read from less (an SGML document's ``elt`` is read from the parse kept for it alone:
        :meth:`_refuse_unkept_sgml`).
        """
        scheme = fragment.effective_scheme(whole.record.format)
        self._refuse_unkept_sgml(whole.record, scheme)
        if index is None and scheme == "elt" and _is_sgml(whole.record):
            index = self.fragment_index(whole.record)  # its elements are the kept parse's, never parsed anew here
        return Reading._selected(whole.record, whole.data, fragment, index)

    def _refuse_unkept_sgml(self, record: RepresentationRecord, scheme: str) -> None:
        """Refuse ``elt`` on an SGML document of which no parse is kept (:class:`~pdi.errors.UnsupportedError`).

        An SGML document's elements depend on the DTD the parser finds, and the archive's SGML folder gains DTDs
        (``pdi sgml add``): a parse made at each request could answer a name otherwise than the one before it, or
        than another process. So ``elt`` is answered only from the parse kept at deposit (its element index), or
        from one an earlier pdi kept, read anew as it was made, before archives had an SGML folder (with the
        machine's catalogs alone). A document with none (``onsgmls`` was missing where it was deposited, or it was
        imported) is refused until ``pdi reindex --elements`` makes and keeps its parse."""
        if scheme not in ("elt", "name") or not _is_sgml(record):
            return
        index = self.store.fragment_index(record.sha256, record.media_type, record.charset)
        if index is not None and bytes(index[:4]) == b"PDIM":
            return
        from pdi.fragments.markup.bounds import MAX_SGML_OCTETS

        if record.size > MAX_SGML_OCTETS:
            return  # refused by its size, as ever
        raise UnsupportedError(
            f"{record_name(record)} has no kept SGML parse ({UNKEPT_SGML}): its elt is read only from a parse"
            " kept once, so that a DTD added later cannot change what a name selects; an operator keeps one with"
            " pdi reindex --elements")

    @staticmethod
    def _selected(record: RepresentationRecord, data: Buffer, fragment: Fragment, index: bytes | None = None) -> Resolved:
        """:meth:`select` on the octets ``data`` of ``record`` (bytes, or a memory map of its blob)."""
        from pdi import fragments

        result = fragments.evaluate(
            fragment.effective_scheme(record.format),
            fragment.positions,
            data,
            media_type=record.media_type,
            charset=record.charset,
            index=index,
            name=str(record_name(record)),  # a PDF's refusal begins with it
        )
        # an aggregate has no charset of its own; its root part's text has (pdi.fragments.aggregate)
        charset = record.charset if record.charset is not None else result.charset
        return Resolved(record_name(record, fragment=fragment), result.data, result.media_type, charset, record, result)


def _is_sgml(record: RepresentationRecord) -> bool:
    """Whether ``record`` is an SGML document (:func:`pdi.fragments.markup.markup_kind`)."""
    from pdi.fragments.markup import markup_kind

    return markup_kind(record.media_type) == "sgml"


def _damage_behind(reader: ChunkedReader, refusal: Exception) -> None:
    """Raise the blob's damage (a :class:`DamagedError` naming the chunk, the refusal its cause) where an image's
    decoder refused octets that fail their digests; else nothing, and the caller raises the refusal.

    An image's ``rect`` or ``crop`` is evaluated on the blob's map, read unchecked where its decoder goes
    (Pillow's, or libvips' in a child, from the blob's file), and the blob is checked whole after: a flipped octet
    the decoder stumbled on was refused before that check ("not an image format pdi can read", a ``415`` that
    blames the format). Checked now, as it would have been had the decoder gone on: every chunk, each read only if
    the fixity memo does not hold it verified and unchanged (so a refusal asked again costs no read)."""
    if isinstance(refusal, IntegrityError):
        return
    try:
        reader.verify_range(0, reader.size)
    except DamagedError as damage:
        raise damage from refusal


#: A serial name's series, day, serial (as spelled), version and format token
#: (:func:`pdi.server.protocol.plain.serial_fields`).
SerialFields = tuple[str, datetime.date, str, int, str]


def _named_so(found: PublicVersion | None, fields: SerialFields) -> PublicVersion | None:
    """``found``, if its record is named by the fields it was asked by (its own serial as spelled, its format,
    version and series); else ``None``."""
    if found is None:
        return None
    record = found.record
    series, _, serial, version, token = fields
    if (record.serial is None or str(record.serial) != serial or record.format != token
            or record.version != version or record.series != series):
        return None
    return found
