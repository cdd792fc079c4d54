"""The RFC 2557 aggregate as values: parts, multipart structures and the aggregate.

A :class:`Part` is a leaf body part (decoded bytes and its labels); a
:class:`Multipart` is a ``multipart/*`` structure with its children; an
:class:`Aggregate` is the whole file with its root (start) part. All are frozen;
they compare by identity (two parts with the same bytes are still two parts).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, BinaryIO

from pdi import charsets
from pdi.mhtml.headers import decoded
from pdi.mhtml.limits import Budget, Limits
from pdi.mhtml.resolve import comparable, location_key

if TYPE_CHECKING:
    from pdi.mhtml.refs import Reference
    from pdi.mhtml.resolve import ResolvedReference

HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})

Headers = tuple[tuple[str, str], ...]


class _Headed:
    """What the part, the multipart and the aggregate share: their header fields."""

    headers: Headers

    def header(self, name: str, *, decode: bool = False) -> str | None:
        """The first header field of that name (case-insensitive), unfolded; the
        aggregate's are the top-level ones.

        With ``decode``, RFC 2047 encoded words are decoded (``=?utf-8?q?…?=``).
        """
        low = name.lower()
        value = next((v for n, v in self.headers if n.lower() == low), None)
        return decoded(value) if decode else value


@dataclass(frozen=True, eq=False)
class Part(_Headed):
    """A leaf body part.

    ``headers`` are (name as written, unfolded value) pairs in file order;
    ``content_type`` is ``type/subtype`` lower-cased (``text/plain`` when absent or
    unreadable, as MIME says); ``charset`` is the ``charset=`` parameter as written
    (``None`` when absent); ``content_location`` is the header's URI after §4.4
    unfolding and RFC 2047 decoding; ``location`` is that URI resolved against the
    enclosing base (§5 (c)–(e)); ``content_id`` has no ``<>``; ``data`` is the body
    with the transfer encoding removed (no other change: line ends are kept);
    ``limits`` are those it was read with, which bound reading its references.

    The decoded text is not kept (:meth:`text` decodes it on each call): the references
    and the ``<base>`` are read from it once and kept, the text itself would double the
    memory a large page takes.
    """

    index: int
    headers: Headers
    content_type: str
    params: tuple[tuple[str, str], ...]
    charset: str | None
    content_location: str | None
    location: str | None
    content_id: str | None
    transfer_encoding: str | None
    data: bytes
    offset: int
    outer_base: str
    scope: tuple[int, ...]
    warnings: tuple[str, ...] = ()
    limits: Limits = field(default=Limits(), repr=False)
    _aggregate: Aggregate | None = field(default=None, init=False, repr=False)

    @property
    def is_text(self) -> bool:
        """True for ``text/*`` parts and the XML/JSON/script types read as text."""
        t = self.content_type
        return t.startswith("text/") or t in HTML_TYPES or t in (
            "application/javascript",
            "application/json",
            "image/svg+xml",
            "application/xml",
        )

    @property
    def is_html(self) -> bool:
        """True for ``text/html`` and ``application/xhtml+xml``."""
        return self.content_type in HTML_TYPES

    @property
    def is_css(self) -> bool:
        """True for ``text/css``."""
        return self.content_type == "text/css"

    @cached_property
    def _sniffed(self) -> tuple[str, str, str | None]:
        found = charsets.sniff_encoding(self.data, declared=self.charset, media_type=self.content_type)
        if self.is_css and found[1] in ("utf-8", "default") and self._aggregate is not None:
            # CSS Syntax §3.2: no BOM, charset= or @charset: the referrer's encoding
            environment = self._aggregate.environment_encoding(self)
            if environment is not None:
                return environment, "environment", None
        return found

    @property
    def encoding(self) -> str:
        """The WHATWG name of the encoding :meth:`text` uses (see :mod:`pdi.charsets.sniff`)."""
        return self._sniffed[0]

    @property
    def encoding_source(self) -> str:
        """Where :attr:`encoding` came from: bom, charset, meta, @charset, environment (a
        style sheet's referrer, CSS Syntax §3.2), utf-8 or default."""
        return self._sniffed[1]

    @property
    def encoding_warning(self) -> str | None:
        """Why the encoding may be wrong (an unknown label, a windows-1252 guess), if so."""
        return self._sniffed[2]

    def text(self) -> str:
        """The body as text, decoded as :attr:`encoding` says (a byte order mark is dropped)."""
        return charsets.whatwg_decode(self.data, self.encoding)

    @property
    def label(self) -> str:
        """What error messages call this part: its index, type and location (or Content-ID)."""
        where = self.location or (f"cid:{self.content_id}" if self.content_id else "")
        if len(where) > 80:
            where = where[:77] + "..."
        return f"part {self.index} ({self.content_type}{' ' + repr(where) if where else ''})"

    def budget(self) -> Budget:
        """A fresh :class:`~pdi.mhtml.limits.Budget` for reading this part, from its :attr:`limits`."""
        return Budget(self.label, seconds=self.limits.max_read_seconds, references=self.limits.max_references)

    @cached_property
    def _html_scan(self) -> tuple[list[Reference], str | None]:
        from pdi.mhtml.refs import scan_html

        return scan_html(self.text(), self.budget())

    @property
    def html_base(self) -> str | None:
        """The ``href`` of the part's ``<base>`` element as written (HTML parts only)."""
        return self._html_scan[1] if self.is_html else None

    @property
    def references(self) -> tuple[Reference, ...]:
        """The references written in this part: HTML and CSS parts (none for other types)."""
        if self.is_html:
            return tuple(self._html_scan[0])
        if self.is_css:
            return self._css_references
        return ()

    @cached_property
    def _css_references(self) -> tuple[Reference, ...]:
        from pdi.mhtml.refs import css_references

        return tuple(css_references(self.text(), self.budget()))

    @cached_property
    def base(self) -> str:
        """The base URI for relative references in this part (RFC 2557 §5 (a)–(e))."""
        b = self.html_base
        if b is not None and b.strip():
            from pdi.mhtml.resolve import resolve_uri

            resolved = resolve_uri(self.outer_base, b)
            if resolved is not None:
                return resolved
        return self.outer_base

    def __repr__(self) -> str:
        return (
            f"Part(index={self.index}, content_type={self.content_type!r}, "
            f"location={self.location!r}, content_id={self.content_id!r}, size={len(self.data)})"
        )


@dataclass(frozen=True, eq=False)
class Multipart(_Headed):
    """A ``multipart/*`` structure: its heading, its children and its root.

    ``root`` is the leaf a reference to this structure means: for
    ``multipart/related`` the start part (``start=`` parameter, else the first
    child, unless the first child is neither a page nor of the ``type`` parameter's
    type, itself or as its root, and a later one is of that type: then the first that
    is, as in files whose multipart/alternative comes after an image; a page first
    stays the root, as Internet Explorer's framesets under
    ``type="multipart/alternative"``), for
    ``multipart/alternative`` the last alternative that is (or whose root is) a page
    (RFC 2557 §7; else the last one, MIME's preferred, RFC 2046 §5.1.4), recursively.
    """

    id: int
    headers: Headers
    content_type: str
    params: tuple[tuple[str, str], ...]
    boundary: str
    content_location: str | None
    location: str | None
    content_id: str | None
    offset: int
    outer_base: str
    scope: tuple[int, ...]
    children: tuple[Part | Multipart, ...]
    root: Part | None
    start: str | None
    type: str | None
    start_found: bool

    def walk(self) -> list[Part | Multipart]:
        """This structure and every node inside it, depth first, in file order."""
        out: list[Part | Multipart] = [self]
        for c in self.children:
            if isinstance(c, Multipart):
                out.extend(c.walk())
            else:
                out.append(c)
        return out

    def __repr__(self) -> str:
        return (
            f"Multipart(id={self.id}, content_type={self.content_type!r}, "
            f"location={self.location!r}, children={len(self.children)})"
        )


@dataclass(frozen=True, eq=False)
class Aggregate(_Headed):
    """An MHTML file read by :func:`pdi.mhtml.parse`.

    ``root`` is the start part (the page); ``parts`` are the leaves in file order;
    ``tree`` is the outermost ``multipart`` (``None`` for a single-part message as in
    §9.1); ``boundary`` its boundary; ``base`` the retrieval URI given to ``parse``;
    ``warnings`` the recoveries made while reading, each naming where; ``limits`` those
    it was read with, which also bound reading and resolving its references.

    Duplicate labels: the lookups return the FIRST part in file order that carries
    the label; :func:`pdi.mhtml.check.check` reports the duplicates (§7 forbids them).
    """

    root: Part
    parts: tuple[Part, ...]
    tree: Multipart | None
    boundary: str | None
    headers: Headers
    base: str | None
    size: int
    warnings: tuple[str, ...] = ()
    limits: Limits = field(default=Limits(), repr=False)
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
        from pdi.mhtml.parse import parse

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
        :func:`pdi.mhtml.resolve.location_key`), with their fragment, then without it,
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
            from pdi.mhtml.resolve import environment_encodings

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
        from pdi.mhtml.resolve import resolve_references

        return resolve_references(self)

    def __repr__(self) -> str:
        return f"Aggregate(parts={len(self.parts)}, root={self.root!r}, size={self.size})"

