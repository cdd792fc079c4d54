"""The parts of an RFC 2557 aggregate as values: leaf parts and multipart structures.

A :class:`Part` is a leaf body part (decoded bytes and its labels); a
:class:`Multipart` is a ``multipart/*`` structure with its children. Both are
frozen; they compare by identity (two parts with the same bytes are still two
parts). The whole file, :class:`pdi.mhtml.model.Aggregate`, holds them; the
parser (:mod:`pdi.mhtml.parse`) makes them and the resolver
(:mod:`pdi.mhtml.resolve`) reads them, each importing this module, never the
other way.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Protocol

from pdi import charsets
from pdi.mhtml.headers import decoded
from pdi.mhtml.limits import Budget, Limits
from pdi.mhtml.locations import resolve_uri

if TYPE_CHECKING:
    from pdi.mhtml.refs import Reference

HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})

Headers = tuple[tuple[str, str], ...]


class Environment(Protocol):
    """What holds a part and knows the encoding its referrers give it (:meth:`pdi.mhtml.model.Aggregate.environment_encoding`)."""

    def environment_encoding(self, part: Part) -> str | None: ...


class Headed:
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
class Part(Headed):
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
    _aggregate: Environment | None = field(default=None, init=False, repr=False)

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
class Multipart(Headed):
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
