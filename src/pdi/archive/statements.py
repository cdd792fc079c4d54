"""Statements about names: append-only assertions (``key = value``) and kept W3C Web Annotations.

Assertions are Dublin Core terms or free keys about a name or a fragment of
one, with their whole history kept. Web annotations are the annotation
server's domain (:mod:`pdi.archive.kept_annotations`: Web Annotation Protocol
§5): each is shown only to a reader who may read every archived document it
targets.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import pdi.archive.kept_annotations as anno
from pdi._wording import clipped
from pdi.archive.access import HIDDEN, current_reader
from pdi.archive.naming import (
    MAX_ASSERTION_VALUE,
    STATEMENT_KEY,
    UNKEPT_IN_VALUE,
    key_of,
    parse_pdi,
    timestamp,
)
from pdi.archive.reading import Reading
from pdi.archive.results import Resolved
from pdi.archive.store import AnnotationRecord, AssertionRecord, DocumentKey
from pdi.archive.tokens import Writer
from pdi.errors import (
    DeletedError,
    ImmutabilityError,
    LimitError,
    NotFoundError,
    ParseError,
    PreconditionError,
    UnsupportedError,
)
from pdi.identifier import PDI

__all__ = ["Statements"]

#: Names one statement query asks about (:meth:`Statements.latest_statements`): well under SQLite's 32,766 parameters.
_STATEMENT_NAMES = 1000


def _check_statement(key: str, value: str) -> None:
    """A :class:`ParseError` or :class:`LimitError` unless ``key = value`` may be stated (:meth:`Statements.annotate`)."""
    if not isinstance(key, str) or not STATEMENT_KEY.match(key):
        raise ParseError(
            f"bad key '{clipped(str(key))}': a letter, then up to 199 letters, digits, '.', '_', ':', '-'",
            rule="key",
        )
    if not isinstance(value, str):
        raise ParseError("a value must be text", rule="value")
    if len(value) > MAX_ASSERTION_VALUE:
        raise LimitError(f"a value may have at most {MAX_ASSERTION_VALUE} characters")
    bad = UNKEPT_IN_VALUE.search(value)
    if bad is not None:  # SQLite's text ends at a NUL (the rest was dropped); a lone surrogate is no character
        raise ParseError(f"a value may not hold U+{ord(bad[0]):04X} (character {bad.start()}): it is no text the"
                         " catalog keeps whole", text=value[:80], offset=min(bad.start(), 80), rule="value")


class Statements(Reading):
    """Assert and read statements about a name; keep, read, replace and delete web annotations.

    A part of :class:`~pdi.archive.Archive` built on :class:`~pdi.archive.reading.Reading`:
    a statement's subject and an annotation's targets must resolve.
    """

    def annotate(
        self, pdi: PDI | str, key: str, value: str, *, who: str | None = None, writer: Writer | None = None
    ) -> AssertionRecord:
        """Append a statement ``key = value`` about a PDI (or fragment PDI); history is kept.

        Keys are Dublin Core terms (``title``, ``creator``, ``date``, ``dcterms:…``)
        or free keys: a letter, then letters, digits, ``.``, ``_``, ``:``, ``-``.
        A ``writer`` (a token of the write API) must have the role ``curate``
        over the series; the statement is then audited in its transaction.
        """
        parsed = parse_pdi(pdi)
        if writer is not None:
            writer.require("curate", parsed.series_name.lower())
        _check_statement(key, value)
        subject = self._subject(parsed)
        if writer is not None:
            return self.store.add_assertion(
                key_of(parsed), subject, key, value, writer.name, timestamp(self.now()),
                address=writer.address, audited=True,
            )
        return self.store.add_assertion(
            key_of(parsed), subject, key, value, who or self.who, timestamp(self.now())
        )

    def annotate_all(
        self, pdi: PDI | str, statements: Sequence[tuple[str, str]], *, who: str | None = None
    ) -> list[AssertionRecord]:
        """:meth:`annotate` of each ``(key, value)`` about one PDI, in one transaction: all of them or none.

        The owner's (an import's): every statement is checked before any is made.
        """
        parsed = parse_pdi(pdi)
        for key, value in statements:
            _check_statement(key, value)
        if not statements:
            return []
        return self.store.add_assertions(
            key_of(parsed), self._subject(parsed), list(statements), who or self.who, timestamp(self.now())
        )

    def _subject(self, parsed: PDI) -> str:
        """The canonical text of a name statements are about; it must be in the archive.

        The document must exist, and the version and format if named (their
        bytes are not read: that is :meth:`verify`'s work).
        """
        if parsed.is_pattern:
            raise UnsupportedError(f"{parsed} is a pattern; statements are about one name")
        if parsed.format is not None:
            self._record(parsed, *self._records(parsed, latest=False))
        elif not self.store.document_exists(key_of(parsed)):
            raise NotFoundError(f"{parsed} is not in this archive")
        return str(parsed.canonical())

    def history(self, pdi: PDI | str) -> list[AssertionRecord]:
        """Every statement made about exactly this PDI, oldest first; it must be in the archive."""
        parsed = parse_pdi(pdi)
        self._guard_series(parsed)
        # first: of an embargoed version (or document), a reader who may not read it learns what its exact name
        # says (403), not its formats, as the refusal of a format it lacks would name them
        self._guard_embargo(parsed, None if parsed.format is None else (parsed.version or 1))
        subject = self._subject(parsed)
        return self.store.assertions(subject)

    def meta(self, pdi: PDI | str) -> dict[str, str]:
        """The latest value of each key stated about exactly this PDI."""
        current: dict[str, str] = {}
        for record in self.history(pdi):
            current[record.key] = record.value
        return current

    def latest_statements(self, names: Sequence[PDI], key: str) -> dict[str, str]:
        """The latest value of ``key`` stated about each of ``names``, by canonical name (absent: none stated).

        :meth:`meta` for a list (a TimeMap's captures): one catalog query a
        thousand names at a time, where :meth:`meta` costs a few a name. The
        names are of documents the caller found through this archive (which
        checked their series for the current reader); a version under an
        embargo the reader is not exempt from gets no value, as :meth:`meta`
        refuses it.
        """
        reader = current_reader.get()
        subjects: list[str] = []
        now = timestamp(self.now())
        for name in names:
            document = key_of(name)
            if reader is not None and not reader.may_read(document.series):
                until = self.store.embargo(document, name.version)
                if until is not None and until > now:
                    continue
            subjects.append(str(name.canonical()))
        found: dict[str, str] = {}
        for start in range(0, len(subjects), _STATEMENT_NAMES):
            for record in self.store.statements_about(subjects[start : start + _STATEMENT_NAMES], key):
                found[record.subject] = record.value  # oldest first: the last one read is the latest
        return found

    def create_annotation(
        self, data: object, *, slug: str | None = None, writer: Writer | None = None, who: str | None = None,
        holds: Callable[[], bool] | None = None,
    ) -> AnnotationRecord:
        """Keep a new W3C Web Annotation (Web Annotation Protocol §5.1, §5.2): its record, audited.

        Its name is ``slug`` if that is a safe path segment naming no
        annotation, present or deleted (:func:`pdi.archive.kept_annotations.safe_slug`),
        and it targets no document of a hidden series, else a UUID. An ``id``
        it has is kept as ``via``. Its archived targets must be in the archive
        and readable now; a ``writer`` needs the role ``curate`` over each
        one's series (over all, when it has none). ``holds``: whether the client's precondition on the
        container holds (its If-Match, If-None-Match), asked in the transaction that keeps the annotation, with
        other conditional creates held off: :class:`~pdi.errors.PreconditionError` (412) when it does not.
        """
        kept = anno.check_annotation(data)
        given = data.get("id") if isinstance(data, dict) else None
        if isinstance(given, str) and given:
            kept.setdefault("via", given)
        targets = self._annotation_targets(kept, writer)
        chosen = anno.safe_slug(slug)
        if chosen is not None and targets:
            # a name taken is given to no one else, so whoever asks for it learns that it is taken: an annotation of
            # a hidden series (whose annotations are not found by those who may not read it) is named by a UUID,
            # never by a Slug, so that a writer of another series learns nothing of it by asking for its name
            access = self.series_access()
            if any(access.get(key.series) == HIDDEN for key, _ in targets):
                chosen = None
        def check() -> None:
            if holds is not None and not holds():
                raise PreconditionError("the container is no longer in the state its If-Match names, or is in one"
                                        " its If-None-Match names: read it again (ETag)")

        return self.store.add_annotation(
            chosen, anno.new_slug(), anno.encode(kept), targets,
            writer.name if writer else (who or self.who), timestamp(self.now()),
            address=writer.address if writer else None, check=None if holds is None else check,
        )

    def annotation(self, slug: str) -> AnnotationRecord:
        """The annotation named ``slug``, if the current reader may read every archived document it targets.

        Not found (404) when there is none, or when one of its documents is
        in a hidden series; 403 when one is private or embargoed; once
        deleted, :class:`~pdi.errors.DeletedError` (410).
        """
        record = self.store.annotation(slug)
        if record is None:
            raise NotFoundError(f"no annotation {slug!r} in this archive")
        for key, version in record.targets:
            self._guard_document(key, version, f"the annotation {slug!r}")
        if record.deleted_at is not None:
            raise DeletedError(f"the annotation {slug!r} was deleted {record.deleted_at}")
        return record

    def replace_annotation(
        self, slug: str, data: object, *, holds: Callable[[str], bool], writer: Writer | None = None,
        who: str | None = None,
    ) -> AnnotationRecord:
        """Replace an annotation's whole state (Web Annotation Protocol §5.3): its new record, audited.

        ``holds`` says whether the precondition the client sent holds for the
        current entity tag (:func:`pdi.archive.kept_annotations.entity_tag`):
        :class:`~pdi.errors.PreconditionError` (412) when it does not, or when
        another change came first. A ``canonical`` or ``via`` once set may not
        change (409). A ``writer`` needs ``curate`` over the series of the
        targets before and after.
        """
        current = self._annotation_to_change(slug, holds, writer)
        kept = anno.check_annotation(data)
        import json  # here: reading a name needs no JSON

        changed = anno.unchanged_links(json.loads(current.data), kept)
        if changed:
            raise ImmutabilityError(f"the annotation {slug!r} keeps its {' and '.join(changed)}: they may not change")
        targets = self._annotation_targets(kept, writer)
        replaced = self.store.replace_annotation(
            slug, current.revision, anno.encode(kept), targets, writer.name if writer else (who or self.who),
            timestamp(self.now()), address=writer.address if writer else None,
        )
        if replaced is None:
            raise PreconditionError(f"the annotation {slug!r} changed (or was deleted) meanwhile: read it again")
        return replaced

    def delete_annotation(
        self, slug: str, *, holds: Callable[[str], bool], writer: Writer | None = None, who: str | None = None
    ) -> None:
        """Delete an annotation (Web Annotation Protocol §5.4), audited; its name is never given again.

        ``holds`` and ``writer`` as for :meth:`replace_annotation`.
        """
        current = self._annotation_to_change(slug, holds, writer)
        if not self.store.delete_annotation(
            slug, current.revision, writer.name if writer else (who or self.who), timestamp(self.now()),
            address=writer.address if writer else None,
        ):
            raise PreconditionError(f"the annotation {slug!r} changed (or was deleted) meanwhile: read it again")

    def _annotation_to_change(self, slug: str, holds: Callable[[str], bool], writer: Writer | None) -> AnnotationRecord:
        current = self.annotation(slug)
        if writer is not None:
            writer.require("curate")
            for key, _ in current.targets:
                writer.require("curate", key.series)
        if not holds(anno.entity_tag(current)):
            raise PreconditionError(
                f"the annotation {slug!r} is no longer in the state its If-Match names, or is in the one its"
                " If-None-Match names: read it again (ETag)"
            )
        return current

    def annotations(self, offset: int = 0, limit: int = 100) -> tuple[int, list[AnnotationRecord]]:
        """How many annotations the current reader may read, and ``limit`` of them from ``offset``, oldest first."""
        if offset < 0 or not 1 <= limit <= 10_000:
            raise LimitError(f"a page of annotations starts at 0 or after and holds 1 to 10000, not {offset}+{limit}")
        return self.store.annotation_page(self._search_access(), offset, limit)

    def _annotation_targets(self, data: dict[str, object], writer: Writer | None) -> list[tuple[DocumentKey, int | None]]:
        """The archived documents (and versions) an annotation targets: each in the archive, readable now, and
        (for a ``writer``) in a series its token may curate."""
        found: list[tuple[DocumentKey, int | None]] = []
        held = {record.name.lower() for record in self.store.list_series()}
        # a URL naming a PDI of a series not held here is a web page's, but a writer must curate that series all the
        # same: answered otherwise, a token of one series would learn which hidden series the archive holds
        elsewhere = None if writer is None else (lambda series: writer.require("curate", series))
        for name in anno.archived_targets(data, held.__contains__, elsewhere):
            parsed = parse_pdi(name)
            if parsed.is_pattern or parsed.citation is not None:
                raise UnsupportedError(f"an annotation targets one archived name, not a pattern or citation: {name[:120]}")
            if writer is not None:
                writer.require("curate", parsed.series_name.lower())
            located = self.locate(parsed.without_fragment())
            version = located.record.version if isinstance(located, Resolved) else None
            found.append((key_of(parsed), version))
        if writer is not None and not found:
            writer.require("curate")
        return found
