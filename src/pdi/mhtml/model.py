"""The RFC 2557 aggregate as a value: the whole file, its parts, and how to read one.

An :class:`Aggregate` is the whole file with its root (start) part; its parts
(:class:`~pdi.mhtml.parts.Part`, :class:`~pdi.mhtml.parts.Multipart`) are in
:mod:`pdi.mhtml.parts`. :func:`parse` reads one with the parser of
:mod:`pdi.mhtml.parse`; :attr:`Aggregate.references` are resolved by
:mod:`pdi.mhtml.resolve`. Imports run one way: this module uses the parser
and the resolver, which use the parts, never this module. Frozen; compared by
identity.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import BinaryIO

from pdi.mhtml.limits import Limits
from pdi.mhtml.locations import comparable, location_key
from pdi.mhtml.parse import Input, ParsedFile, read_message
from pdi.mhtml.parts import HTML_TYPES, Headed, Headers, Multipart, Part
from pdi.mhtml.resolve import ResolvedReference, environment_encodings, resolve_references

__all__ = ["HTML_TYPES", "Aggregate", "Headers", "Multipart", "Part", "parse"]


@dataclass(frozen=True, eq=False)
class Aggregate(ParsedFile, Headed):
    """An MHTML file read by :func:`pdi.mhtml.parse`.

    ``root`` is the start part (the page); ``parts`` are the leaves in file order;
    ``tree`` is the outermost ``multipart`` (``None`` for a single-part message as in
    §9.1); ``boundary`` its boundary; ``base`` the retrieval URI given to ``parse``;
    ``warnings`` the recoveries made while reading, each naming where; ``limits`` those
    it was read with, which also bound reading and resolving its references.

    Duplicate labels: the lookups return the FIRST part in file order that carries
    the label; :func:`pdi.mhtml.check.check` reports the duplicates (§7 forbids them).
    """

    _cid: dict[str, Part] = field(default_factory=dict, init=False, repr=False)
    _loc: dict[str, Part] = field(default_factory=dict, init=False, repr=False)
    _plain: dict[str, Part] = field(default_factory=dict, init=False, repr=False)
    _environments: dict[int, str] | None = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        for p in self.parts:
            object.__setattr__(p, "_aggregate", self)  # a style sheet's encoding may come from its referrer
            if p.content_id is not None:
                self._cid.setdefault(p.content_id, p)
            if p.location is not None:
                key = location_key(p.location)
                self._loc.setdefault(key, p)
                self._plain.setdefault(comparable(key), p)

    @classmethod
    def parse(cls, data: bytes | BinaryIO, *, base: str | None = None) -> Aggregate:
        """Same as :func:`pdi.mhtml.parse` (the project's ``Value.parse`` convention)."""
        return parse(data, base=base)

    def by_content_id(self, cid: str) -> Part | None:
        """The first part whose Content-ID is ``cid`` (with or without ``<>``)."""
        c = cid.strip()
        if c.startswith("<") and c.endswith(">"):
            c = c[1:-1]
        return self._cid.get(c)

    def by_location(self, uri: str) -> Part | None:
        """The first part whose resolved Content-Location is ``uri``, octet by octet.

        Both sides are compared percent-encoded as a browser writes them (UTF-8:
        :func:`pdi.mhtml.locations.location_key`), with their fragment, then without it,
        as references are.
        """
        key = location_key(uri)
        found = self._loc.get(key)
        return found if found is not None else self._plain.get(comparable(key))

    def environment_encoding(self, part: Part) -> str | None:
        """The encoding of what refers to the style sheet ``part`` (CSS Syntax §3.2; see
        :func:`pdi.mhtml.resolve.environment_encodings`), ``None`` when nothing does."""
        if self._environments is None:
            found: dict[int, str] = {}
            object.__setattr__(self, "_environments", found)  # read while being filled
            environment_encodings(self, found)
        assert self._environments is not None
        return self._environments.get(part.index)

    @property
    def multiparts(self) -> tuple[Multipart, ...]:
        """Every multipart structure, outermost first, in file order."""
        if self.tree is None:
            return ()
        return tuple(n for n in self.tree.walk() if isinstance(n, Multipart))

    @cached_property
    def references(self) -> tuple[ResolvedReference, ...]:
        """Every reference of every HTML and CSS part, resolved (RFC 2557 §8.2, §8.3)."""
        return resolve_references(self)

    def __repr__(self) -> str:
        return f"Aggregate(parts={len(self.parts)}, root={self.root!r}, size={self.size})"


def parse(data: Input, *, base: str | None = None, limits: Limits | None = None) -> Aggregate:
    """Read an MHTML file (or any MIME message) into an :class:`Aggregate`.

    ``data`` is the whole file or a binary stream, read in chunks; ``base`` is the URI
    the file was retrieved from (RFC 2557 §5 (d)), if any. Raises
    :class:`~pdi.errors.ParseError` or :class:`~pdi.errors.LimitError`; recoveries are
    listed in :attr:`Aggregate.warnings`.
    """
    message = read_message(data, base=base, limits=limits)
    return Aggregate(**vars(message))  # an Aggregate is a ParsedFile with its lookups
