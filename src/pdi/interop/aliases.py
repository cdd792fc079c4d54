"""Browser fragment syntaxes on a PDI, named as the native fragment each one equals (PDI-GRAMMAR.md §3, aliases).

A PDI whose fragment is

* a WICG fragment directive, ``#:~:text=…`` (:mod:`pdi.fragments.textdirective`),
  on a text, an HTML or XML page or an aggregate, names the ``char`` range of
  the CRLF-canonical text (or source) that holds the text the directive
  finds in the page text (:mod:`pdi.fragments.pagetext`); several
  directives (``&``) name one range each, in order;
* a Media Fragment, ``#t=…`` on audio or video or ``#xywh=…`` on an image
  (:mod:`pdi.fragments.mediafragment`), names the ``sec``/``msec`` or
  ``rect`` fragment that selects the same samples or pixels.

:func:`alias_fragment` tells such a name from a native one (from the text
alone); :func:`native_names` reads the archived document and answers the
native names. Resolving the native name gives exactly the bytes the alias
selects: the alias is resolved by resolving it.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from pdi.archive import Archive, Generic, Resolved
from pdi.errors import NotFoundError, ParseError, UnsupportedError
from pdi.fragments.mediafragment import (
    MediaRegion,
    is_media_fragment,
    native_region,
    native_time,
    parse_media_fragment,
)
from pdi.fragments.textdirective import (
    DELIMITER,
    find_all,
    parse_fragment_directive,
    split_fragment_directive,
)
from pdi.identifier import PDI, Fragment

__all__ = ["Alias", "alias_fragment", "native_names"]


@dataclass(frozen=True)
class Alias:
    """A name with a browser fragment, and the native names it equals.

    ``syntax`` is ``"text-directive"`` or ``"media-fragment"``; ``natives``
    holds one name per directive (``None`` for a text directive whose text is
    not in the document); ``notes`` says what was rounded or left out.
    """

    name: str
    base: PDI
    syntax: str
    fragment: str
    natives: tuple[PDI | None, ...]
    notes: tuple[str, ...] = ()

    @property
    def native(self) -> PDI:
        """The first native name (the one a browser scrolls to); :class:`NotFoundError` if none was found."""
        for found in self.natives:
            if found is not None:
                return found
        raise NotFoundError("; ".join(self.notes) or f"the text of #{self.fragment} is not in {self.base}")

    def to_json(self) -> dict[str, object]:
        return {
            "alias": self.name,
            "syntax": self.syntax,
            "equivalent": next((str(n) for n in self.natives if n is not None), None),
            "equivalents": [None if n is None else str(n) for n in self.natives],
            "notes": list(self.notes),
        }


def alias_fragment(name: str) -> tuple[str, str] | None:
    """``(the name before '#', the fragment)`` when the fragment is a browser syntax, else ``None``."""
    if not isinstance(name, str) or "#" not in name:
        return None
    base, fragment = name.split("#", 1)
    if DELIMITER in fragment or is_media_fragment(fragment):
        return base, fragment
    return None


def native_names(archive: Archive, name: str) -> Alias:
    """The native names a name with a browser fragment equals, read from the archived document it names."""
    split = alias_fragment(name)
    if split is None:
        raise ParseError(f"{name[:120]} has no browser fragment (#:~:text=, #t=, #xywh=)", rule="fragment-specifier")
    base_text, fragment = split
    if DELIMITER in fragment:
        found = archive.locate(base_text)
        # a message's text is its body's, which char_text reads (a large one's from its body's part, never whole)
        whole = found if not isinstance(found, Generic) and found.media_type == "message/rfc822" else archive.get(
            base_text)
        return _text_directives(archive, name, whole.pdi.without_fragment(), fragment, whole)
    # a Media Fragment is named from the catalog, and from no more of the document than it needs (found by an
    # attack: #t=1,2 read a 279 MB video whole, and held it, to name #sec=1,2)
    located = archive.locate(base_text)
    if isinstance(located, Generic):
        located = archive.get(base_text)  # refused, naming its formats, as a generic name is here
    return _media(archive, name, located.pdi.without_fragment(), fragment, located)


def _with(base: PDI, scheme: str, *positions: object) -> PDI:
    return dataclasses.replace(base, fragment=Fragment.of(scheme, *positions))


def _text_directives(archive: Archive, name: str, base: PDI, fragment: str, whole: Resolved) -> Alias:
    from pdi.fragments.pagetext import document_page_text, plain_page_text

    before, directive = split_fragment_directive(fragment)
    if before:
        raise UnsupportedError(
            f"a fragment before the fragment directive ({before[:40]!r}:~:…) is not read: write #:~:text=… alone"
        )
    assert directive is not None
    directives = parse_fragment_directive(directive)
    text = archive.char_text(whole)  # as #char= of it counts: a PDF's text layer, an e-mail's body text
    page = plain_page_text(text) if text is not None else document_page_text(whole.data, whole.media_type,
                                                                               whole.charset)
    natives: list[PDI | None] = []
    notes: list[str] = []
    for parsed, found in zip(directives, find_all(directives, page), strict=True):
        if found is None:
            natives.append(None)
            notes.append(f"the text {parsed.said()} is not in {base}")
            continue
        a, b = page.document_range(*found)
        natives.append(_with(base, "char", a, b))
    return Alias(name, base, "text-directive", fragment, tuple(natives), tuple(notes))


def _media(archive: Archive, name: str, base: PDI, fragment: str, located: Resolved) -> Alias:
    """The native name of a Media Fragment on what ``located`` names (located only: its octets not read)."""
    from pdi import fragments

    parsed = parse_media_fragment(fragment)
    major = located.media_type.split("/", 1)[0]
    notes: list[str] = []
    if isinstance(parsed, MediaRegion):
        if major != "image":
            raise UnsupportedError(f"xywh= selects in an image, not in {located.media_type}")
        width = height = None
        if parsed.unit == "percent":  # the image's size, from its header
            whole = archive.get(base)
            region = fragments.evaluate("rect", ((0, 0), (0, 0)), whole.data, media_type=whole.media_type).region
            assert region is not None
            width, height = region.width, region.height
        (x1, y1), (x2, y2) = native_region(parsed, width=width, height=height)
        return Alias(name, base, "media-fragment", fragment, (_with(base, "rect", (x1, y1), (x2, y2)),))
    if major not in ("audio", "video"):
        raise UnsupportedError(f"t= selects in audio or video, not in {located.media_type}")
    duration = None
    if parsed.end is None and major == "video":  # its duration as ffprobe read it at deposit
        video = archive.video_of(located.record)
        if video is None:
            raise UnsupportedError(f"t= on {base}: ffprobe did not read this {located.media_type} at deposit")
        duration = video.duration_ms
    elif parsed.end is None:  # the recording's length, from its header (no sample of it selected)
        empty = archive.get(_with(base, "msec", 0, 0)).fragment
        assert empty is not None
        interval = empty.interval
        assert interval is not None
        duration = -(-interval.length * 1000 // interval.rate)
    scheme, (a, b), rounded = native_time(parsed, duration_ms=duration)
    if rounded:
        notes.append("a time finer than a millisecond was rounded to the nearest millisecond")
    return Alias(name, base, "media-fragment", fragment, (_with(base, scheme, a, b),), tuple(notes))
