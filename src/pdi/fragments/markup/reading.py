"""How the source of an HTML or XML document is read into :class:`~pdi.fragments.markup.element.Element` values.

The element table that ``elt`` and ``name`` fragments (:mod:`pdi.fragments.markup`)
cut by, and the charset every scheme on a markup document reads it in. HTML
is read by the HTML5 algorithm (:mod:`pdi.fragments.markup.html`, imported on
first use), XML by ``pyexpat``; :mod:`pdi.fragments.markup` says why. Kept
apart from the evaluator so that the parser and the index made at deposit
(:mod:`pdi.fragments.markup.index`) import what they share from below,
not from the package that uses them. Pure: no I/O.
"""

from __future__ import annotations

import codecs
import functools
import re
from typing import TYPE_CHECKING, Final

from pdi import charsets
from pdi.errors import LimitError, UnsupportedError
from pdi.fragments.markup.element import Element

if TYPE_CHECKING:
    from pdi.fragments.text.index import Buffer


#: How long parsing one HTML document may take (seconds).
MAX_PARSE_SECONDS: Final = 30.0

# What html5lib is given at most. Its parse is pure Python and keeps a tree: about 1.7 KiB and 30 µs
# for every element, more for every attribute, and every start tag costs as many steps as elements
# are open (so depth makes it quadratic; a tag's attributes are compared with each other likewise).
# Past these an elt or name fragment is a LimitError, said before html5lib starts (octets, start tags)
# or as soon as the parse meets it (depth, attributes); within them a parse takes at most about
# 300 MiB (tests/test_fragments_markup_limits.py) and a few seconds. A real page of 1 MB has
# some 26,000 start tags and nests a few dozen deep.

#: The largest HTML document element fragments are evaluated on (octets).
MAX_HTML_OCTETS: Final = 8 << 20
#: The most start tags (a ``<`` followed by an ASCII letter: counted before parsing, so a few in a
#: script or comment count too) of an HTML document element fragments are evaluated on.
MAX_START_TAGS: Final = 100_000
#: The most elements open at once (the depth of the stack of open elements); Blink's parser stops
#: nesting at 512 too (``kMaximumHTMLParserDOMTreeDepth``).
MAX_DEPTH: Final = 256
#: The most attributes of one tag, and of all the tags of a document.
MAX_TAG_ATTRIBUTES: Final = 256
MAX_ATTRIBUTES: Final = 250_000
#: What every such refusal ends with: how to cite the page without parsing it.
OTHERWISE: Final = "; char and line fragments (#char=, #line=) select its text without parsing it"
_START_TAG_OPEN: Final = re.compile(r"<[A-Za-z]")
_XML_DECLARATION: Final = re.compile(rb"""<\?xml\s[^>]*?encoding\s*=\s*["']([A-Za-z][A-Za-z0-9._-]*)["']""")


@functools.lru_cache(maxsize=256)  # a few media types, asked several times a deposit and a read
def markup_kind(media_type: str) -> str | None:
    """``"html"``, ``"xhtml"``, ``"xml"``, ``"sgml"`` or ``None`` for a media type (parameters ignored).

    The families are :func:`pdi.formats.media_family`'s; XHTML
    (``application/xhtml+xml``) is HTML's vocabulary in XML syntax: it is
    read as XML, and ``name`` applies to it as to HTML.
    """
    from pdi import formats

    mtype = media_type.split(";")[0].strip().lower()
    family = formats.media_family(mtype)
    if family == "html":
        return "html" if mtype == "text/html" else "xhtml"
    if family == "xml":
        return "sgml" if mtype.endswith("/sgml") else "xml"
    return None


# --- charsets ---------------------------------------------------------------------------------


def document_charset(data: Buffer, media_type: str, charset: str | None) -> str | None:
    """The charset to read ``data`` in: ``charset`` if given; else sniffed for HTML and XML; else ``None``.

    Every scheme on a markup document (``char``, ``line``, ``elt``, ``name``)
    and the resolver's viewer read it in this charset, so their positions agree.
    """
    if charset is not None:
        return charset
    kind = markup_kind(media_type)
    if kind == "html":  # a memory map is read whole to be sniffed, as bytes would be
        return _html_charset(data if isinstance(data, bytes) else bytes(data))
    if kind in ("xml", "xhtml"):
        return _xml_charset(bytes(data[:1024]))
    return None


def _html_charset(data: bytes) -> str:
    encoding, _, _ = charsets.sniff_encoding(data, declared=None, media_type="text/html")
    return encoding


def _xml_charset(data: bytes) -> str:
    """XML 1.0 Appendix F: a byte-order mark, else the first octets of ``<?xml``, else the declaration, else UTF-8."""
    marks = (
        (codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32"),  # before UTF-16: FF FE 00 00
        (codecs.BOM_UTF8, "utf-8"), (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16"),
        (b"\x00\x00\x00<", "utf-32-be"), (b"<\x00\x00\x00", "utf-32-le"),
        (b"\x00<\x00?", "utf-16-be"), (b"<\x00?\x00", "utf-16-le"),
    )
    for mark, name in marks:
        if data.startswith(mark):
            return name
    declared = _XML_DECLARATION.match(data[:1024])
    return declared.group(1).decode("ascii") if declared else "utf-8"


# --- XML ----------------------------------------------------------------------------------------


def xml_elements(text: str) -> list[Element]:
    """Every start tag and empty-element tag of the XML ``text``, with the extent of its element."""
    import xml.parsers.expat

    parser = xml.parsers.expat.ParserCreate()
    try:
        utf8 = text.encode("utf-8")
    except UnicodeEncodeError as exc:  # a str from a lenient decoding; XML's Char excludes surrogates
        raise UnsupportedError(
            f"element fragments on XML that is not well-formed: character {exc.start} is a lone surrogate"
        ) from None
    starts: list[tuple[str, int, dict[str, str]]] = []  # name, UTF-8 index of '<', attributes
    ends: dict[int, int] = {}  # element number -> UTF-8 index where its end event came
    open_stack: list[int | None] = []

    def start(name: str, attributes: dict[str, str]) -> None:
        index = parser.CurrentByteIndex
        if not utf8.startswith(b"<" + name.encode("utf-8"), index):
            open_stack.append(None)  # an element from an entity's replacement text: no start tag here
            return
        open_stack.append(len(starts))
        starts.append((name, index, attributes))

    def end(name: str) -> None:
        number = open_stack.pop()
        if number is not None:
            ends[number] = parser.CurrentByteIndex

    parser.StartElementHandler = start
    parser.EndElementHandler = end
    try:
        parser.Parse(text, True)  # a str is parsed as UTF-8: the indexes are into text.encode()
    except xml.parsers.expat.ExpatError as exc:
        if xml.parsers.expat.ErrorString(exc.code) == xml.parsers.expat.errors.XML_ERROR_AMPLIFICATION_LIMIT_BREACH:
            raise LimitError(f"the XML's entities expand too much (expat's amplification limit) at line {exc.lineno}") from exc
        raise UnsupportedError(
            f"element fragments on XML that is not well-formed: {xml.parsers.expat.ErrorString(exc.code)}"
            f" at line {exc.lineno}, column {exc.offset}"
        ) from exc
    to_char = _utf8_to_code_points(text, [i for _, i, _ in starts] + list(ends.values()))
    elements = []
    for number, (name, index, attributes) in enumerate(starts):
        start_char = to_char[index]
        closed = tag_end(text, start_char + 1)
        if text[closed - 2] == "/":  # <name .../>: the tag is the element
            end_char = closed
        else:  # the end event comes at the '<' of </name ...>
            end_char = text.index(">", to_char[ends[number]]) + 1
        elements.append(Element(number, name, start_char, end_char, dict(attributes)))
    return elements


def _utf8_to_code_points(text: str, indexes: list[int]) -> dict[int, int]:
    """The code point offset in ``text`` of each octet offset in ``text.encode()``, in one pass."""
    utf8 = text.encode("utf-8")
    found: dict[int, int] = {}
    octet = code_point = 0
    for index in sorted(set(indexes)):
        code_point += len(utf8[octet:index].decode("utf-8"))
        octet = index
        found[index] = code_point
    return found


def tag_end(text: str, at: int, *, unclosed: bool = False) -> int:
    """Just after the ``>`` that closes the tag whose ``<`` is before ``at`` (quoted values may hold ``>``).

    ``unclosed`` (SGML, :mod:`pdi.fragments.markup.sgml`): a ``<`` outside
    quotes ends an unclosed tag there, and so does the end of the text; else a
    tag with no ``>`` is :class:`~pdi.errors.UnsupportedError`.
    """
    quote = ""
    for i in range(at, len(text)):
        ch = text[i]
        if quote:
            if ch == quote:
                quote = ""
        elif ch in "\"'":
            quote = ch
        elif ch == ">":
            return i + 1
        elif ch == "<" and unclosed:
            return i
    if unclosed:
        return len(text)
    raise UnsupportedError(f"the tag at character {at - 1} has no end")  # expat would have said so


# --- HTML ---------------------------------------------------------------------------------------


def html_elements(text: str, *, seconds: float = MAX_PARSE_SECONDS) -> list[Element]:
    """Every start tag of the CRLF-canonical HTML ``text``, with the extent of the element an HTML5 parser makes of it.

    Parsing longer than ``seconds`` is a :class:`~pdi.errors.LimitError`
    (html5lib is pure Python, and deep nesting makes it slow), and so is a
    text past :data:`MAX_START_TAGS` (said before parsing), :data:`MAX_DEPTH`,
    :data:`MAX_TAG_ATTRIBUTES` or :data:`MAX_ATTRIBUTES`. The parser is
    :mod:`pdi.fragments.markup.html`, imported here on first use: html5lib
    takes a tenth of a second to load, and ``char`` and ``line`` fragments of
    HTML need only :func:`document_charset` from this module.
    """
    tags = sum(1 for _ in _START_TAG_OPEN.finditer(text))
    if tags > MAX_START_TAGS:
        raise LimitError(f"this HTML ({len(text):,} characters) has {tags:,} start tags, more than the"
                         f" {MAX_START_TAGS:,} element fragments (elt, name) are evaluated on{OTHERWISE}")
    import pdi.fragments.markup.html as html

    return html.elements(text, seconds)


def check_html_size(size: int) -> None:
    """A :class:`~pdi.errors.LimitError` for an HTML document of ``size`` octets past :data:`MAX_HTML_OCTETS`,
    said before it is read (element fragments on it are refused whatever its markup)."""
    if size > MAX_HTML_OCTETS:
        raise LimitError(f"this HTML is {size:,} octets, more than the {MAX_HTML_OCTETS >> 20} MiB element"
                         f" fragments (elt, name) are evaluated on{OTHERWISE}")
