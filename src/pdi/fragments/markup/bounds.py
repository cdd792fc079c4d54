"""The bounds of what an element fragment (``elt``, ``name``) is evaluated on, and their refusals.

What :mod:`pdi.fragments.markup.reading` and :mod:`pdi.fragments.markup.html` check before and while they parse
HTML or XML; each refusal is a :class:`~pdi.errors.LimitError` that names the bound and ends with
:data:`OTHERWISE`, how to cite the text without parsing it.
"""

from __future__ import annotations

from typing import Final

from pdi.errors import LimitError

# What html5lib and expat are given at most. html5lib's parse is pure Python and keeps a tree: about
# 1.7 KiB and 30 µs for every element, more for every attribute, and every start tag costs as many steps
# as elements are open (so depth makes it quadratic; a tag's attributes are compared with each other
# likewise). expat is C and fast, but the XML reader keeps a Python object and an attributes dict for
# every element and a str for every attribute: 8 MiB of <a/> was 2 million elements, 1.4 GiB and 12 s,
# and one tag of 845,000 attributes (pyexpat's dict of them made before a handler sees it) 500 MiB.
# Past these an elt or name fragment is a LimitError, said before the parser starts (octets, start tags,
# an XML tag's attributes) or as soon as the parse meets it (depth, attributes in all, an HTML tag's
# attributes); within them an HTML parse takes at most about 300 MiB (tests/test_fragments_markup_limits.py)
# and a few seconds, an XML one about 150 MiB and a second (tests/test_fragments_markup_xml_limits.py).
# A real page of 1 MB has some 26,000 start tags and nests a few dozen deep; libxml2 refuses XML nested
# deeper than 256 unless told XML_PARSE_HUGE (xmlParserMaxDepth), so XML past that is rare too.

#: The largest HTML or XML document element fragments are evaluated on (octets), and the largest that gets an
#: element index at deposit (:class:`pdi.archive.content.IndexBuilder`).
MAX_MARKUP_OCTETS: Final = 8 << 20
#: The largest SGML document ``elt`` fragments are evaluated on, and the largest that gets an element index at
#: deposit (a larger one gets its text's block table, as plain text does): ``onsgmls`` reads some 12 MB a second
#: here, and the text is held whole, decoded, while it runs.
MAX_SGML_OCTETS: Final = 32 << 20
#: What an element index of SGML may hold besides the element names its document writes: at most
#: :data:`MAX_START_TAGS` elements (two offsets and a tag number each, 20 octets at most: 2 MB), the block table of
#: at most :data:`MAX_SGML_OCTETS` of text (16 octets a 64 KiB block: 8 KiB), the charsets and a refusal's words,
#: and the names of elements a DTD implies (a document's own names are bounded by its size, below).
SGML_INDEX_BASE: Final = 8 << 20
#: The longest element name (UTF-8 octets) an element index keeps (its layout's u16, all ones meaning none): the
#: reference concrete syntax's NAMELEN is 8, but an SGML declaration may raise it (``NAMELEN 99999999``).
MAX_ELEMENT_NAME_OCTETS: Final = 0xFFFE


def max_sgml_index_octets(document_octets: int) -> int:
    """The largest element index of an SGML document of ``document_octets`` octets: :data:`SGML_INDEX_BASE` and
    one octet per octet of the document (the element names it writes: an SGML declaration may raise NAMELEN, and
    a name is written once at least). Held by construction: a parse that would make a larger index keeps, in its
    place, the :class:`~pdi.errors.LimitError` :func:`index_too_large` says (:meth:`pdi.fragments.markup.index.
    ElementIndex.build`), so that what an archive keeps another can always read; an index brought from elsewhere
    (a bag's, a mirror's origin's) is read no further than this bound of its document."""
    return SGML_INDEX_BASE + document_octets


#: The largest element index of SGML this pdi keeps, of any document (:func:`max_sgml_index_octets` of
#: :data:`MAX_SGML_OCTETS`: 40 MiB), and what is read at most of one brought from elsewhere before its document is known.
MAX_SGML_INDEX_OCTETS: Final = SGML_INDEX_BASE + MAX_SGML_OCTETS
#: The most start tags of an HTML or XML document element fragments are evaluated on, counted before
#: parsing: in HTML a ``<`` followed by an ASCII letter (so a few in a script or comment count too), in
#: XML a ``<`` not followed by ``/``, ``!`` or ``?`` (start and empty-element tags, and a few in a
#: comment or CDATA section).
MAX_START_TAGS: Final = 100_000
#: The most elements open at once (the depth of the stack of open elements); Blink's HTML parser stops
#: nesting at 512 too (``kMaximumHTMLParserDOMTreeDepth``), libxml2's XML parser at 256.
MAX_DEPTH: Final = 256
#: The most attributes of one tag, and of all the tags of a document.
MAX_TAG_ATTRIBUTES: Final = 256
MAX_ATTRIBUTES: Final = 250_000
#: What every such refusal ends with: how to cite the page without parsing it.
OTHERWISE: Final = "; char and line fragments (#char=, #line=) select its text without parsing it"


def check_markup_size(kind: str | None, size: int) -> None:
    """A :class:`~pdi.errors.LimitError` for an HTML or XML document (``kind`` as :func:`markup_kind` says)
    of ``size`` octets past :data:`MAX_MARKUP_OCTETS`, or an SGML one past :data:`MAX_SGML_OCTETS`, said before it
    is read (element fragments on it are refused whatever its markup); within that, SGML is bounded by
    ``onsgmls``'s own limits too (:mod:`pdi.fragments.markup.sgml`)."""
    if kind in ("html", "xml", "xhtml") and size > MAX_MARKUP_OCTETS:
        raise LimitError(f"this {'HTML' if kind == 'html' else 'XML'} is {size:,} octets, more than the"
                         f" {MAX_MARKUP_OCTETS >> 20} MiB element fragments (elt, name) are evaluated on{OTHERWISE}")
    if kind == "sgml" and size > MAX_SGML_OCTETS:
        raise LimitError(f"this SGML is {size:,} octets, more than the {MAX_SGML_OCTETS >> 20} MiB element"
                         f" fragments (elt) are evaluated on{OTHERWISE}")


def check_start_tags(language: str, text: str, tags: int) -> None:
    """A :class:`~pdi.errors.LimitError` for a ``language`` ("HTML", "XML") ``text`` of ``tags`` start tags past :data:`MAX_START_TAGS`."""
    if tags > MAX_START_TAGS:
        raise LimitError(f"this {language} ({len(text):,} characters) has {tags:,} start tags, more than the"
                         f" {MAX_START_TAGS:,} element fragments (elt, name) are evaluated on{OTHERWISE}")


def too_deep(language: str, at: int) -> LimitError:
    """The refusal of a ``language`` document whose element starting at character ``at`` is more than :data:`MAX_DEPTH` deep."""
    return LimitError(f"this {language} nests elements more than {MAX_DEPTH} deep (at character {at}), the most"
                      f" element fragments (elt, name) are evaluated on{OTHERWISE}")


def crowded_tag(at: int | str) -> LimitError:
    """The refusal of a document whose tag at character ``at`` has more than :data:`MAX_TAG_ATTRIBUTES` attributes."""
    return LimitError(f"the tag at character {at} has more than {MAX_TAG_ATTRIBUTES} attributes, the most"
                      f" element fragments (elt, name) are evaluated on{OTHERWISE}")


def too_many_attributes(language: str) -> LimitError:
    """The refusal of a ``language`` document of more than :data:`MAX_ATTRIBUTES` attributes in all."""
    return LimitError(f"this {language} has more than {MAX_ATTRIBUTES:,} attributes, the most element fragments"
                      f" (elt, name) are evaluated on{OTHERWISE}")


def too_many_elements(language: str, at: int) -> LimitError:
    """The refusal of a ``language`` document whose parse reports more than :data:`MAX_START_TAGS` elements, those
    of its entities' replacement text counted, the last at character ``at``."""
    return LimitError(f"this {language} has more than {MAX_START_TAGS:,} elements, its entities' replacement text"
                      f" counted (at character {at}), more than element fragments (elt, name) are evaluated on{OTHERWISE}")


def index_too_large(octets: int, document_octets: int) -> LimitError:
    """The refusal of an SGML document of ``document_octets`` octets whose parse would make an element index of
    ``octets`` octets, more than :func:`max_sgml_index_octets` allows."""
    return LimitError(f"this SGML's parse would make an element index of {octets:,} octets, more than the"
                      f" {max_sgml_index_octets(document_octets):,} pdi keeps of a document of {document_octets:,}"
                      f" octets ({SGML_INDEX_BASE >> 20} MiB and one octet per octet of the document): its element"
                      f" names are too long (an SGML declaration raising NAMELEN, or a DTD's){OTHERWISE}")


def name_too_long(language: str, octets: int) -> LimitError:
    """The refusal of a ``language`` document with an element name of ``octets`` UTF-8 octets, more than
    :data:`MAX_ELEMENT_NAME_OCTETS`."""
    return LimitError(f"this {language} has an element name of {octets:,} octets, more than the"
                      f" {MAX_ELEMENT_NAME_OCTETS:,} an element index keeps"
                      f"{' (its SGML declaration raises NAMELEN)' if language == 'SGML' else ''}{OTHERWISE}")
