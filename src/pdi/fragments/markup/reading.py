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

import bisect
import codecs
import functools
import itertools
import re
from typing import TYPE_CHECKING, Final

from pdi import charsets
from pdi.errors import LimitError, UnsupportedError
from pdi.fragments.markup.bounds import (
    MAX_ATTRIBUTES,
    MAX_DEPTH,
    MAX_START_TAGS,
    MAX_TAG_ATTRIBUTES,
    check_start_tags,
    crowded_tag,
    too_deep,
    too_many_attributes,
    too_many_elements,
)
from pdi.fragments.markup.element import Element

if TYPE_CHECKING:
    from pdi.fragments.text.index import Buffer


#: How long parsing one HTML document may take (CPU seconds: :mod:`pdi._work_deadline`, whose backstop on the
#: clock is ten times that).
MAX_PARSE_SECONDS: Final = 30.0

_START_TAG_OPEN: Final = re.compile(r"<[A-Za-z]")
#: An XML start tag of more than :data:`MAX_TAG_ATTRIBUTES` attributes (XML 1.0 §3.1: no ``<`` in a tag,
#: values quoted), found before expat builds their dict; possessive and atomic, so it never backtracks.
_CROWDED_XML_TAG: Final = re.compile(
    r"""<[^\s<>/!?]++(?>\s++[^\s=<>]++\s*+=\s*+(?>"[^"<]*+"|'[^'<]*+'))"""
    + f"{{{MAX_TAG_ATTRIBUTES + 1}}}"
)
#: XML 1.0 §2.8 [26] VersionNum: an XML declaration of another version is no XML 1.0 (expat reads any).
_VERSION_NUM: Final = re.compile(r"1\.[0-9]+")
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
    return xml_encoding(data)[0]


#: How :func:`xml_encoding` found an XML document's encoding.
#: ``<?xm`` in EBCDIC (XML 1.0 Appendix F: 4C 6F A7 94), in every EBCDIC code page.
EBCDIC_XML: Final = b"\x4c\x6f\xa7\x94"

XML_FOUND_BY: Final = {
    "bom": "named by its byte-order mark",
    "octets": "what the octets of its <?xml are in, by XML 1.0 Appendix F",
    "declaration": "named by its encoding declaration",
    "default": "XML's default, as it has neither a byte-order mark nor an encoding declaration: XML 1.0 §4.3.3",
    "ebcdic": "XML's default, as no encoding declaration names the EBCDIC code page its first octets are in"
              " (<?xm, XML 1.0 Appendix F)",
}


def xml_encoding(data: bytes) -> tuple[str, str, int | None]:
    """The encoding an XML document is read in from its first octets (up to 1,024), how it was found, and where
    the encoding declaration's value starts (octet offset, or ``None``).

    XML 1.0 §4.3.3 and Appendix F: a byte-order mark (UTF-32's before UTF-16's, which it begins with); else the
    octets of ``<?xml`` in UTF-16 or UTF-32 without one; else the encoding declaration, read in EBCDIC when the
    document begins with ``<?xm`` in EBCDIC (:data:`EBCDIC_XML`, which names no code page: the declaration does);
    else UTF-8. How is a key
    of :data:`XML_FOUND_BY`. What every reading of the document (:func:`document_charset`) and the deposit's
    check (:class:`pdi.archive.readable.XmlCheck`) read it in.
    """
    marks = (
        (codecs.BOM_UTF32_LE, "utf-32", "bom"), (codecs.BOM_UTF32_BE, "utf-32", "bom"),  # before UTF-16: FF FE 00 00
        (codecs.BOM_UTF8, "utf-8", "bom"), (codecs.BOM_UTF16_LE, "utf-16", "bom"), (codecs.BOM_UTF16_BE, "utf-16", "bom"),
        (b"\x00\x00\x00<", "utf-32-be", "octets"), (b"<\x00\x00\x00", "utf-32-le", "octets"),
        (b"\x00<\x00?", "utf-16-be", "octets"), (b"<\x00?\x00", "utf-16-le", "octets"),
    )
    for mark, name, how in marks:
        if data.startswith(mark):
            return name, how, None
    head = data[:1024]
    if head.startswith(EBCDIC_XML):  # "<?xm" in EBCDIC: the declaration (which must be there) says which code page
        head = head.decode("cp037").encode("latin-1")  # its names and literals are EBCDIC's invariant characters
    declared = _XML_DECLARATION.match(head)
    if declared is None:
        return "utf-8", "ebcdic" if data.startswith(EBCDIC_XML) else "default", None
    return declared.group(1).decode("ascii"), "declaration", declared.start(1)


# --- XML ----------------------------------------------------------------------------------------


def xml_elements(text: str) -> list[Element]:
    """Every start tag and empty-element tag of the XML ``text``, with the extent of its element.

    A text of more than :data:`MAX_START_TAGS` start tags, or with a tag of
    more than :data:`MAX_TAG_ATTRIBUTES` attributes, is a
    :class:`~pdi.errors.LimitError` before expat starts; one nested more than
    :data:`MAX_DEPTH` deep, of more than :data:`MAX_ATTRIBUTES` attributes
    in all, or whose entities' replacement text brings its elements past
    :data:`MAX_START_TAGS`, as soon as expat meets it.
    """
    import xml.parsers.expat

    check_start_tags("XML", text, text.count("<") - text.count("</") - text.count("<!") - text.count("<?"))
    crowded = _CROWDED_XML_TAG.search(text)
    if crowded is not None:
        raise crowded_tag(crowded.start())
    nul = text.find("\x00")
    if nul >= 0:  # expat would read "<\0" or "\0<" at the start as UTF-16 whatever it is told, and find no start tag
        raise UnsupportedError(
            f"element fragments on XML that is not well-formed: character {nul} is U+0000, not an XML Char (XML 1.0 §2.2)"
        )
    parser = xml.parsers.expat.ParserCreate()
    # the internal subset's parameter entities read, as XML 1.0 §4.4.8 includes them (expat skipped what followed the
    # first reference to one); an external one is not: no handler reads it, and the declarations after it are not
    # processed (§5.1)
    parser.SetParamEntityParsing(xml.parsers.expat.XML_PARAM_ENTITY_PARSING_UNLESS_STANDALONE)
    try:
        utf8 = text.encode("utf-8")
    except UnicodeEncodeError as exc:  # a str from a lenient decoding; XML's Char excludes surrogates
        raise UnsupportedError(
            f"element fragments on XML that is not well-formed: character {exc.start} is a lone surrogate"
        ) from None
    from pdi.fragments.markup.xml_names import fourth_edition_text

    rewritten = fourth_edition_text(text)  # expat knows the Fourth Edition's names: the Fifth's written as those
    read = utf8 if rewritten is None else rewritten.text.encode("utf-8")  # the same length, octet by octet
    starts: list[tuple[str, int, dict[str, str]]] = []  # name, UTF-8 index of '<', attributes
    ends: dict[int, int] = {}  # element number -> UTF-8 index where its end event came
    open_stack: list[int | None] = []
    attributes_seen = elements_seen = 0

    def start(name: str, attributes: dict[str, str]) -> None:
        nonlocal attributes_seen, elements_seen
        index = parser.CurrentByteIndex
        if len(open_stack) >= MAX_DEPTH:
            raise too_deep("XML", len(utf8[:index].decode("utf-8")))
        elements_seen += 1  # an entity's elements too: expat expands 8 MiB a hundredfold, a Python call each
        if elements_seen > MAX_START_TAGS:
            raise too_many_elements("XML", len(utf8[:index].decode("utf-8")))
        attributes_seen += len(attributes)
        if attributes_seen > MAX_ATTRIBUTES:
            raise too_many_attributes("XML")
        if not read.startswith(b"<" + name.encode("utf-8"), index):
            open_stack.append(None)  # an element from an entity's replacement text: no start tag here
            return
        open_stack.append(len(starts))
        if rewritten is not None:
            name = rewritten.original(name)
            attributes = {rewritten.original(k): rewritten.original(v) for k, v in attributes.items()}
        starts.append((name, index, attributes))

    def end(name: str) -> None:
        number = open_stack.pop()
        if number is not None:
            ends[number] = parser.CurrentByteIndex

    def declaration(version: str | None, encoding: str | None, standalone: int) -> None:
        if version is not None and not _VERSION_NUM.fullmatch(version):  # expat takes any version
            raise UnsupportedError(
                f"element fragments on XML that is not well-formed: its XML declaration's version {version!r} is not"
                " 1. and a digit or more (XML 1.0 §2.8 [26] VersionNum)"
            )

    subset_at: list[int] = []

    def doctype(name: str, system: str | None, public: str | None, internal_subset: int) -> None:
        if internal_subset:
            subset_at.append(parser.CurrentByteIndex)  # its '['

    def doctype_end() -> None:
        # what expat does not read of the subset (after an external parameter entity's reference: one '%' at least)
        if subset_at and b"%" in utf8[subset_at[0] : parser.CurrentByteIndex]:
            from pdi.fragments.markup.xml_subset import subset_error

            subset = utf8[subset_at[0] + 1 : parser.CurrentByteIndex].decode("utf-8").rstrip()
            error = subset_error(subset.removesuffix("]"))
            if error is not None:
                raise UnsupportedError(f"element fragments on XML that is not well-formed: {error}")

    parser.StartElementHandler = start
    parser.EndElementHandler = end
    parser.XmlDeclHandler = declaration
    parser.StartDoctypeDeclHandler = doctype
    parser.EndDoctypeDeclHandler = doctype_end
    try:
        parser.Parse(text if rewritten is None else rewritten.text, True)  # a str is parsed as UTF-8: the indexes are into text.encode()
    except xml.parsers.expat.ExpatError as exc:
        if xml.parsers.expat.ErrorString(exc.code) == xml.parsers.expat.errors.XML_ERROR_AMPLIFICATION_LIMIT_BREACH:
            raise LimitError(f"the XML's entities expand too much (expat's amplification limit) at line {exc.lineno}") from exc
        column = exc.offset
        if rewritten is not None:  # expat counted the characters written over: a four-octet one is two
            line = utf8[: parser.ErrorByteIndex].decode("utf-8", "replace")
            column = len(line) - max(line.rfind("\n"), line.rfind("\r")) - 1
        raise UnsupportedError(
            f"element fragments on XML that is not well-formed: {xml.parsers.expat.ErrorString(exc.code)}"
            f" at line {exc.lineno}, column {column}"
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


# --- what the parsers read -------------------------------------------------------------------------

_LINE_ENDING: Final = re.compile("\r\n|\r\x85|\r|\n|\x85")


def markup_elements(kind: str, text: str, *, seconds: float = MAX_PARSE_SECONDS) -> list[Element]:
    """:func:`html_elements` (``kind`` ``"html"``) or :func:`xml_elements` of the decoded document ``text``,
    positions in its CRLF-canonical text (:func:`~pdi.fragments.text.lines.to_crlf`).

    The parser reads each CR, LF and CRLF as CRLF, and U+0085 (NEL) as the character it is: neither HTML nor
    XML 1.0 ends a line there, so ``<p\x85id=x>`` is no ``p`` and ``id="a\x85b"`` keeps its NEL, as a browser
    reads them. The CRLF-canonical text, which ``char`` counts, writes NEL as a line ending (CRLF, one code point
    more; CR NEL as one CRLF, one fewer than CR's CRLF and the NEL): the positions are moved to it.
    """
    from pdi.fragments.text.lines import to_crlf

    def parse(read_text: str) -> list[Element]:
        return html_elements(read_text, seconds=seconds) if kind == "html" else xml_elements(read_text)

    if "\x85" not in text:
        return parse(to_crlf(text))
    pieces: list[str] = []
    nels: list[int] = []  # where each NEL stands in what the parser reads
    moves: list[int] = []  # and what it adds to the positions after it: +1 alone, -1 after a CR
    last = read = 0
    for ending in _LINE_ENDING.finditer(text):
        pieces.append(text[last:ending.start()])
        read += ending.start() - last
        last = ending.end()
        if ending.group() == "\x85":
            nels.append(read)
            moves.append(1)
            pieces.append("\x85")
            read += 1
        elif ending.group() == "\r\x85":
            nels.append(read + 2)
            moves.append(-1)
            pieces.append("\r\n\x85")
            read += 3
        else:
            pieces.append("\r\n")
            read += 2
    pieces.append(text[last:])
    read_text = "".join(pieces)
    found = parse(read_text)
    moved = list(itertools.accumulate(moves, initial=0))

    def canonical(at: int) -> int:
        return at + moved[bisect.bisect_left(nels, at)]

    return [Element(e.number, e.name, canonical(e.start), canonical(e.end), e.attributes) for e in found]


# --- HTML ---------------------------------------------------------------------------------------


def html_elements(text: str, *, seconds: float = MAX_PARSE_SECONDS) -> list[Element]:
    """Every start tag of the CRLF-canonical HTML ``text``, with the extent of the element an HTML5 parser makes of it.

    Parsing longer than ``seconds`` of processor time is a :class:`~pdi.errors.LimitError`
    (html5lib is pure Python, and deep nesting makes it slow), and so is a
    text past :data:`MAX_START_TAGS` (said before parsing), :data:`MAX_DEPTH`,
    :data:`MAX_TAG_ATTRIBUTES` or :data:`MAX_ATTRIBUTES`. The parser is
    :mod:`pdi.fragments.markup.html`, imported here on first use: html5lib
    takes a tenth of a second to load, and ``char`` and ``line`` fragments of
    HTML need only :func:`document_charset` from this module.
    """
    check_start_tags("HTML", text, sum(1 for _ in _START_TAG_OPEN.finditer(text)))
    import pdi.fragments.markup.html as html

    return html.elements(text, seconds)
