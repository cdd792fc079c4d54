"""The element index of an HTML or XML document, made once (at deposit) so that no query parses.

``elt`` and ``name`` need, for every start tag of the source, where its
element begins and ends; today that takes a parse of the whole document on
every request (html5lib, pure Python: seconds per megabyte). An
:class:`ElementIndex` is the outcome of that parse, kept:

* for every start tag, by number: its tag name and the code points
  ``[start, end)`` of its element in the CRLF-canonical text (what
  :func:`~pdi.fragments.markup.html_elements` and
  :func:`~pdi.fragments.markup.xml_elements` give);
* the ``name`` table: each value of a ``name`` or ``id`` attribute, sorted,
  with the first element that has it (``name=x`` is the first element whose
  ``name`` or ``id`` is ``x``), searched by bisection without loading the table;
* the charset the document was read in (for a document stored without one:
  the charset sniffed when the index was made, so a query need not sniff
  again), and the charset given then;
* the block table of its text (:class:`~pdi.fragments.text.TextTable`, when
  the charset has one), so that the selection is cut from the octets with a
  binary search, for ``elt`` and ``name`` as for ``char`` and ``line``;
* or, for a document that cannot be cut, the error that says so (a
  ``<template>``, XML that is not well-formed, octets that are not text in
  the charset), given again on every query without parsing again; and so
  for an HTML or XML document past the parser's bounds (more start tags,
  depth or attributes than :mod:`pdi.fragments.markup.reading` allows, a
  parse longer than its time, entities that expand too much): that
  :class:`~pdi.errors.LimitError`, so that a parse known to fail is not
  tried again by every query.

A query then reads the index and the octets of the selection:
:func:`~pdi.fragments.markup.evaluate_markup` with ``index=`` gives exactly
what it gives without one, errors included.

Sealed with :mod:`pdi.fragments.sealed` (magic ``PDIM``). Payload layout,
version 1 (little-endian; a string is its UTF-8 after its length, all ones
in the length for none)::

    u8 kind (1 html, 2 xml, 3 xhtml, 4 sgml)   u64 size of the document in octets
    u16-string charset given           u16-string charset read in
    u8 failure (0 none, 1 UnsupportedError, 2 ParseError, 3 LimitError);
       if any: u32-string message, i64 offset (-1: none), u16-string rule
    u32 octets of the text table (all ones: none), then that table (PDIT)
    u32 n elements   u8 width w (4 or 8)
    uw[n] starts     uw[n] ends
    u32 t tag names, each a u16-string     u8 width v (1, 2 or 4)
    uv[n] tag name of each element (its place among the t)
    u32 m values (sorted)   u32[m + 1] offsets into the values' octets
    the values' octets      u32[m] first element of each value
    kind 4 (sgml) only: u8 DTD found (1) or not (0)   u32 errors onsgmls reported

SGML (kind 4) keeps the elements OpenSP's ``onsgmls`` reports
(:mod:`pdi.fragments.markup.sgml`), no ``name`` table (``name`` is HTML's),
and what ``pdi get --info`` says of the parse: whether the document's DTD
was found and how many errors the parser reported.

Pure: no I/O.
"""

from __future__ import annotations

import mmap
import struct
from bisect import bisect_left
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Final, TypeVar, overload

import numpy as np

from pdi.errors import IntegrityError, LimitError, ParseError, UnsupportedError
from pdi.fragments.markup.bounds import (
    MAX_ELEMENT_NAME_OCTETS,
    check_markup_size,
    index_too_large,
    max_sgml_index_octets,
    name_too_long,
)
from pdi.fragments.markup.element import Element
from pdi.fragments.markup.reading import (
    MAX_PARSE_SECONDS,
    document_charset,
    markup_elements,
    markup_kind,
)
from pdi.fragments.sealed import Reader, pack_text, seal, unseal

if TYPE_CHECKING:
    from pdi.fragments.markup.sgml import SgmlCatalog

MAGIC: Final = b"PDIM"
#: The layout's version, which also says what reading made it: version 2 has version 1's layout, made by the
#: readings of XML and SGML of 2026-11-28 (an XML document holding U+0000 refused; an SGML element of an internal
#: entity spans nothing of the source, a document that changes SGML's delimiters or maps a short reference to
#: tags refused, HTML 4.01's doctype read). An index of version 1 of an XML or SGML document was made by the
#: reading before and may hold other answers: :func:`made_by_an_earlier_reading` tells, and the archive reads
#: such a document anew (:meth:`pdi.archive.record_facts.RecordFacts.fragment_index`). One of HTML is as good as new.
#: Version 3, the same layout, is made by the reading of SGML of 2026-11-30 (what an internal entity's tag
#: closes ends at the reference, where the entity's elements stand): one of version 2 is as good as new but
#: for SGML. Version 4, the same layout, is made by the reading of HTML of 2026-12-01 (an element the parser closes
#: when text comes, a head before text, ends where the text begins; <isindex> an element like any unknown one; ruby's
#: rb and rtc, and the special elements, as today), and by the reading of HTML and XML that reads U+0085 (NEL) as
#: a character, not a line ending: one of version 3 is as good as new for SGML alone. Version 5, the same layout,
#: is made by the reading of XML that reads XML 1.0 Fifth Edition's names (``<\u01caa/>``, which expat's Fourth
#: Edition refused), refuses an XML declaration of a version not ``1.`` and digits, reads the internal subset's
#: parameter entities and checks the literals expat leaves unread: one of version 4 is as good as new but for XML.
VERSION: Final = 5
_EARLIER: Final = (1, 2, 3, 4)
_WHAT: Final = "element index"
_KINDS: Final = ("html", "xml", "xhtml", "sgml")
_FAILURES: Final = (None, UnsupportedError, ParseError, LimitError)
_U8 = struct.Struct("<B")
_U16 = struct.Struct("<H")
_U32 = struct.Struct("<I")
_I64 = struct.Struct("<q")
_HEAD = struct.Struct("<BQ")
_NONE32: Final = 0xFFFFFFFF

Buffer = bytes | bytearray | memoryview | mmap.mmap
_T = TypeVar("_T")


class _Table(Sequence[_T]):
    """A sequence read from the index's octets: :meth:`_item` gives each entry; a slice is a list of them."""

    def _item(self, i: int) -> _T:
        raise NotImplementedError

    @overload
    def __getitem__(self, i: int) -> _T: ...
    @overload
    def __getitem__(self, i: slice) -> Sequence[_T]: ...
    def __getitem__(self, i: int | slice) -> _T | Sequence[_T]:
        if isinstance(i, slice):
            return [self._item(j) for j in range(*i.indices(len(self)))]
        return self._item(i)


class _Values(_Table[bytes]):
    """The sorted ``name``/``id`` values, read one at a time from the index's octets (for bisection)."""

    def __init__(self, offsets: Any, octets: memoryview) -> None:
        self._offsets = offsets
        self._octets = octets

    def __len__(self) -> int:
        return len(self._offsets) - 1

    def _item(self, i: int) -> bytes:
        return bytes(self._octets[int(self._offsets[i]) : int(self._offsets[i + 1])])


class ElementIndex(_Table[Element]):
    """The element table of one document, by start tag number (see the module docstring).

    A sequence of :class:`~pdi.fragments.markup.Element` (without their
    attributes: :meth:`first_named` answers ``name``), made by :meth:`build`
    or read back by :meth:`from_bytes`.
    """

    def __init__(
        self,
        *,
        kind: str,
        size: int,
        declared: str | None,
        charset: str | None,
        failure: PDIFailure | None,
        text_table: bytes | None,
        starts: Any,
        ends: Any,
        tag_names: Sequence[str],
        tags: Any,
        values: Sequence[bytes],
        firsts: Any,
        sgml: tuple[bool, int] | None = None,
    ) -> None:
        self.kind = kind
        #: SGML only: whether the DTD was found, and how many errors ``onsgmls`` reported.
        self.sgml = sgml
        self.size = size
        self.declared = declared
        self.charset = charset
        self.failure = failure
        self.text_table = text_table
        self._starts = starts
        self._ends = ends
        self._tag_names = tuple(tag_names)
        self._tags = tags
        self._values = values
        self._firsts = firsts

    # ------------------------------------------------------------ building
    @classmethod
    def build(
        cls, data: Buffer, media_type: str, charset: str | None = None, *, seconds: float = MAX_PARSE_SECONDS,
        sgml_catalog: SgmlCatalog | None = None,
    ) -> ElementIndex:
        """Parse the HTML or XML ``data`` once and keep what ``elt`` and ``name`` need.

        ``charset`` as :func:`~pdi.fragments.markup.evaluate_markup` takes it
        (``None``: sniffed). A document that cannot be cut gets an index that
        says why (its queries raise that error), and so does HTML or XML past
        the parser's bounds: a parse longer than ``seconds`` of processor time (HTML), more
        start tags, depth or attributes than it takes
        (:mod:`pdi.fragments.markup.reading`), an XML entity that expands
        too much (its queries raise that :class:`~pdi.errors.LimitError`, at
        once). HTML or XML larger than
        :data:`~pdi.fragments.markup.bounds.MAX_MARKUP_OCTETS` is a
        :class:`~pdi.errors.LimitError` here, before it is read, and no
        index (:func:`~pdi.fragments.markup.evaluate_markup` refuses its
        ``elt`` and ``name`` by its size alone). A media type that
        is not HTML, XML or SGML is :class:`~pdi.errors.UnsupportedError`.
        SGML is parsed by ``onsgmls`` (:mod:`pdi.fragments.markup.sgml`,
        with ``sgml_catalog``, the archive's own catalog, before the system's),
        which must be installed; a parse past its time, output or memory
        limits (an entity that expands a billion times) gets an index that
        holds that :class:`~pdi.errors.LimitError`, as HTML's time does, so
        that no query runs ``onsgmls`` on it again. So does a parse whose index would be larger than
        :func:`~pdi.fragments.markup.bounds.max_sgml_index_octets` of the document's size, or that has an
        element name longer than :data:`~pdi.fragments.markup.bounds.MAX_ELEMENT_NAME_OCTETS` (an SGML
        declaration may raise NAMELEN): what an archive keeps, another can always read.
        """
        from pdi.fragments.text import TextIndex
        from pdi.fragments.text.lines import to_crlf
        from pdi.fragments.text.table import BLOCK_SIZE

        kind = markup_kind(media_type)
        if kind not in _KINDS:
            raise UnsupportedError(f"element indexes are for HTML, XML and SGML, not {media_type}")
        check_markup_size(kind, len(data))
        octets = data if isinstance(data, bytes) else bytes(data)
        read_in = document_charset(octets, media_type, charset)
        failure: PDIFailure | None = None
        table: bytes | None = None
        elements: list[Element] = []
        sgml: tuple[bool, int] | None = None
        try:
            text_index = TextIndex(octets, read_in, block_size=BLOCK_SIZE)
            text_table = text_index.table()
            table = None if text_table is None else text_table.to_bytes()
            text = text_index.whole_text()
            if kind == "sgml":
                from pdi.fragments.markup.sgml import read_sgml

                parsed = read_sgml(to_crlf(text), seconds=seconds, catalog=sgml_catalog)
                elements, sgml = list(parsed.elements), (parsed.dtd_found, parsed.errors)
            else:
                elements = markup_elements("html" if kind == "html" else "xml", text, seconds=seconds)
        except (UnsupportedError, ParseError) as exc:
            failure = PDIFailure.of(exc)
        except LimitError as exc:  # the parser's bounds (onsgmls's time, output or memory too): said by each query
            failure = PDIFailure.of(exc)
            sgml = None
        tag_names = sorted({e.name for e in elements})
        longest = max((len(name.encode("utf-8", "surrogatepass")) for name in tag_names), default=0)
        if longest > MAX_ELEMENT_NAME_OCTETS:  # (more than the layout's u16 holds)
            language = {"html": "HTML", "sgml": "SGML"}.get(kind, "XML")
            failure, elements, tag_names, sgml = PDIFailure.of(name_too_long(language, longest)), [], [], None
        firsts: dict[str, int] = {}
        for element in elements:
            for key in ("name", "id"):
                value = element.attributes.get(key)
                if value is not None and value not in firsts:
                    firsts[value] = element.number
        names = sorted(firsts)  # code point order, which is also the order of their UTF-8
        tag_of = {name: i for i, name in enumerate(tag_names)}
        encoded = [v.encode("utf-8", "surrogatepass") for v in names]
        index = cls(
            kind=kind, size=len(octets), declared=charset, charset=read_in, failure=failure, text_table=table,
            starts=np.array([e.start for e in elements], dtype=np.int64),
            ends=np.array([e.end for e in elements], dtype=np.int64),
            tag_names=tag_names, tags=np.array([tag_of[e.name] for e in elements], dtype=np.int64),
            values=encoded, firsts=np.array([firsts[v] for v in names], dtype=np.int64), sgml=sgml,
        )
        if kind == "sgml" and len(made := index.to_bytes()) > max_sgml_index_octets(len(octets)):
            # (so that what is kept can be copied: a mirror reads no more of its origin's, a bag's import no more)
            return cls(
                kind=kind, size=len(octets), declared=charset, charset=read_in,
                failure=PDIFailure.of(index_too_large(len(made), len(octets))), text_table=table,
                starts=np.array([], dtype=np.int64), ends=np.array([], dtype=np.int64), tag_names=[],
                tags=np.array([], dtype=np.int64), values=[], firsts=np.array([], dtype=np.int64), sgml=None,
            )
        return index

    # ------------------------------------------------------------ octets
    def to_bytes(self) -> bytes:
        """The index, sealed (see the module docstring for the layout)."""
        parts = [
            _HEAD.pack(_KINDS.index(self.kind) + 1, self.size),
            pack_text(self.declared, _U16), pack_text(self.charset, _U16),
        ]
        if self.failure is None:
            parts.append(_U8.pack(0))
        else:
            parts += [
                _U8.pack(_FAILURES.index(self.failure.error)),
                pack_text(self.failure.message),
                _I64.pack(-1 if self.failure.offset is None else self.failure.offset),
                pack_text(self.failure.rule, _U16),
            ]
        if self.text_table is None:
            parts.append(_U32.pack(_NONE32))
        else:
            parts += [_U32.pack(len(self.text_table)), self.text_table]
        n = len(self)
        wide = n and int(max(self._starts.max(), self._ends.max())) >= 1 << 32
        dtype = "<u8" if wide else "<u4"
        parts += [_U32.pack(n), _U8.pack(8 if wide else 4)]
        parts += [np.asarray(self._starts).astype(dtype).tobytes(), np.asarray(self._ends).astype(dtype).tobytes()]
        parts.append(_U32.pack(len(self._tag_names)))
        parts += [pack_text(name, _U16) for name in self._tag_names]
        tag_width = 1 if len(self._tag_names) <= 1 << 8 else 2 if len(self._tag_names) <= 1 << 16 else 4
        parts += [_U8.pack(tag_width), np.asarray(self._tags).astype(f"<u{tag_width}").tobytes()]
        values = [self._values[i] for i in range(len(self._values))]
        offsets = np.concatenate(([0], np.cumsum([len(v) for v in values], dtype=np.int64)))
        parts += [_U32.pack(len(values)), offsets.astype("<u4").tobytes(), b"".join(values)]
        parts.append(np.asarray(self._firsts).astype("<u4").tobytes())
        if self.kind == "sgml":
            dtd_found, errors = self.sgml or (False, 0)
            parts.append(struct.pack("<BI", 1 if dtd_found else 0, errors))
        return seal(MAGIC, VERSION, b"".join(parts))

    @classmethod
    def from_bytes(cls, data: bytes) -> ElementIndex:
        """The index :meth:`to_bytes` wrote; a damaged, foreign or inconsistent one is an :class:`~pdi.errors.IntegrityError`.

        Reads the arrays in place (no copy, nothing decoded but the tag names).
        """
        reader = Reader(unseal(data, MAGIC, VERSION, _WHAT, also=_EARLIER), _WHAT)
        kind_code, size = reader.unpack(_HEAD)
        if not 1 <= kind_code <= len(_KINDS):
            raise reader.damaged(f"its kind {kind_code} is none of html, xml, xhtml, sgml")
        declared, charset = reader.text(_U16), reader.text(_U16)
        (failure_code,) = reader.unpack(_U8)
        failure: PDIFailure | None = None
        if failure_code:
            if failure_code >= len(_FAILURES):
                raise reader.damaged(f"its failure kind {failure_code} is unknown")
            message = reader.text() or ""
            (offset,) = reader.unpack(_I64)
            rule = reader.text(_U16)
            failure = PDIFailure(_FAILURES[failure_code], message, None if offset < 0 else offset, rule)
        (table_size,) = reader.unpack(_U32)
        text_table = None if table_size == _NONE32 else bytes(reader.take(table_size))
        n, width = reader.unpack(struct.Struct("<IB"))
        if width not in (4, 8):
            raise reader.damaged(f"its offsets are {width} octets wide, not 4 or 8")
        dtype = f"<u{width}"
        starts = np.frombuffer(reader.take(width * n), dtype=dtype)
        ends = np.frombuffer(reader.take(width * n), dtype=dtype)
        (t,) = reader.unpack(_U32)
        tag_names = [reader.text(_U16) or "" for _ in range(t)]
        (tag_width,) = reader.unpack(_U8)
        if tag_width not in (1, 2, 4):
            raise reader.damaged(f"its tag numbers are {tag_width} octets wide, not 1, 2 or 4")
        tags = np.frombuffer(reader.take(tag_width * n), dtype=f"<u{tag_width}")
        (m,) = reader.unpack(_U32)
        offsets = np.frombuffer(reader.take(4 * (m + 1)), dtype="<u4")
        values = _Values(offsets, reader.take(int(offsets[-1])))
        firsts = np.frombuffer(reader.take(4 * m), dtype="<u4")
        sgml: tuple[bool, int] | None = None
        if _KINDS[kind_code - 1] == "sgml":
            dtd_found, errors = reader.unpack(struct.Struct("<BI"))
            sgml = None if failure is not None else (bool(dtd_found), int(errors))  # a failed parse found none
        reader.end()
        if n and (bool(np.any(ends < starts)) or int(tags.max()) >= t):
            raise reader.damaged("an element ends before it starts, or has a tag name it does not list")
        if offsets[0] != 0 or bool(np.any(np.diff(offsets.astype(np.int64)) < 0)) or (m and int(firsts.max()) >= n):
            raise reader.damaged("its name table does not hold together")
        return cls(
            kind=_KINDS[kind_code - 1], size=size, declared=declared, charset=charset, failure=failure,
            text_table=text_table, starts=starts, ends=ends, tag_names=tag_names, tags=tags, values=values,
            firsts=firsts, sgml=sgml,
        )

    # ------------------------------------------------------------ queries
    def __len__(self) -> int:
        return len(self._starts)

    def _item(self, number: int) -> Element:
        if not 0 <= number < len(self):
            raise IndexError(number)
        return Element(
            number, self._tag_names[int(self._tags[number])], int(self._starts[number]), int(self._ends[number]), {}
        )

    def first_named(self, name: str) -> Element | None:
        """The first element whose ``name`` or ``id`` attribute is ``name``, or ``None``."""
        key = name.encode("utf-8", "surrogatepass")
        i = bisect_left(self._values, key)
        if i < len(self._values) and self._values[i] == key:
            return self[int(self._firsts[i])]
        return None

    def reading(self, data: Buffer, media_type: str, charset: str | None) -> str | None:
        """The charset to read ``data`` in, after checking that this index was made for it.

        As :func:`~pdi.fragments.markup.document_charset` would say, without
        sniffing again when no charset was given now nor when the index was
        made. An index made for another kind of document, another size or a
        charset read otherwise is an :class:`~pdi.errors.IntegrityError`.
        """
        kind = markup_kind(media_type)
        if kind != self.kind:
            raise IntegrityError(f"the element index was made for {self.kind}, not for {media_type}")
        if len(data) != self.size:
            raise IntegrityError(f"the element index was made for {self.size} octets, not for these {len(data)}")
        if charset is None and self.declared is None:
            return self.charset
        read_in = document_charset(data, media_type, charset)
        if not _same_reading(read_in, self.charset):
            raise IntegrityError(f"the element index was made reading the document as {self.charset}, not {read_in}")
        return read_in

    def check_made_for(self, data: Buffer, media_type: str, charset: str | None) -> None:
        """Check that this index, brought from elsewhere (another archive's export), can be one made of ``data``
        read as ``media_type`` in ``charset``: of that kind, size and charset (:meth:`reading`), with the block
        table of its text as this pdi counts it, and no element past that text's end; an
        :class:`~pdi.errors.IntegrityError` saying which is not so. What it says of the elements (where each
        begins and ends) is the parse it was made by, which only that parse can tell again."""
        from pdi.fragments.text import TextIndex
        from pdi.fragments.text.lines import to_crlf
        from pdi.fragments.text.table import BLOCK_SIZE

        if self.declared != charset:
            raise IntegrityError(f"the element index was made for the charset {self.declared}, not {charset}")
        read_in = self.reading(data, media_type, charset)
        try:
            text_index = TextIndex(data if isinstance(data, bytes) else bytes(data), read_in, block_size=BLOCK_SIZE)
            table = text_index.table()
            length = len(to_crlf(text_index.whole_text()))
        except (UnsupportedError, ParseError) as exc:
            if self.failure is None or len(self):
                raise IntegrityError(f"the element index holds elements of octets that are not text: {exc}") from exc
            return  # a refusal kept (octets that are not text in the charset): nothing more to check
        if (None if table is None else table.to_bytes()) != self.text_table:
            raise IntegrityError("the element index's block table is not that of these octets")
        if len(self) and int(np.asarray(self._ends).max()) > length:
            raise IntegrityError(f"the element index has an element past the end of the text ({length} characters)")

    def raise_failure(self) -> None:
        """Raise the error the document gave when the index was made, if it did."""
        if self.failure is not None:
            raise self.failure.error_value()


class PDIFailure:
    """An error that evaluating ``elt`` or ``name`` on a document raises, kept to be raised again."""

    def __init__(
        self,
        error: type[UnsupportedError] | type[ParseError] | type[LimitError] | None,
        message: str,
        offset: int | None,
        rule: str | None,
    ) -> None:
        if error is None:
            raise ValueError("a failure needs an error class")
        self.error = error
        self.message = message
        self.offset = offset
        self.rule = rule

    @classmethod
    def of(cls, exc: UnsupportedError | ParseError | LimitError) -> PDIFailure:
        if isinstance(exc, ParseError):
            return cls(ParseError, exc.reason, exc.offset, exc.rule)
        return cls(LimitError if isinstance(exc, LimitError) else UnsupportedError, exc.message, None, None)

    def error_value(self) -> UnsupportedError | ParseError | LimitError:
        if self.error is ParseError:
            return ParseError(self.message, offset=self.offset, rule=self.rule)
        return LimitError(self.message) if self.error is LimitError else UnsupportedError(self.message)


def _same_reading(a: str | None, b: str | None) -> bool:
    """Whether two charset labels read octets alike (the same label, or the same codec)."""
    from pdi.fragments.text.charset import codec_name

    if a is None or b is None:
        return a is b
    if a.casefold() == b.casefold():
        return True
    try:
        return codec_name(a) == codec_name(b)
    except UnsupportedError:
        return False


def made_by_an_earlier_reading(data: bytes) -> bool:
    """Whether the element index ``data`` is of an XML or SGML document and was made by a reading before this
    one's (:data:`VERSION`): its answers may not be this pdi's, so the document is read anew instead."""
    from pdi.fragments.sealed import payload_start, sealed_version

    version = sealed_version(data)
    if version == VERSION:
        return False
    head = payload_start()  # the payload begins with the kind (its _HEAD)
    kind_code = data[head] if len(data) > head else 0
    if not 1 <= kind_code <= len(_KINDS) or version not in _EARLIER:
        return True
    # what each reading since changed: XML and SGML at 2, SGML at 3, HTML and XML at 4, XML at 5
    changed_since = {1: ("html", "xml", "xhtml", "sgml"), 2: ("html", "xml", "xhtml", "sgml"), 3: ("html", "xml", "xhtml"),
                     4: ("xml", "xhtml")}
    return _KINDS[kind_code - 1] in changed_since[version]
