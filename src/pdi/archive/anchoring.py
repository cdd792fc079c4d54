"""Re-anchoring a cited passage in another version of the same document: the archive's side of :mod:`pdi.passages.reanchor`.

:func:`anchor` takes a name with a fragment (``…/1.text.1#char=120,164``)
and a version (a number, or ``latest``), reads both versions of the same
format, and asks :func:`pdi.passages.reanchor.anchor_passage` where the passage stands
in the other one. The answer names it there.

What is compared (PDI-GRAMMAR.md §3):

* a text (``text/*``, RFC 822 headers): its CRLF-canonical text, the text
  ``char`` and ``line`` count in;
* a PDF: its text layer *D* (``docs/pdf-text-layer.md``), as kept at
  deposit, the text ``char`` and ``line`` count on it;
* an HTML or XML page (and an aggregate's root part): the page's *text*,
  its markup left out (:func:`pdi.passages.fulltext.markup_passages`: each
  character of text knows where it stands in the source), so an edit of the
  markup alone moves nothing. The cited ``char``, ``line``, ``elt`` or
  ``name`` range of the source becomes the stretch of text it holds, and the
  stretch found becomes a range of the other version's source again.

The answer (**our reading**, written down here and in docs/how-to/reanchor.md): a ``char``
range ``[a, b)`` of the CRLF-canonical text (or source) of the other
version, ``NAME.FORMAT.V#char=a,b``. When the cited fragment was ``line`` and
the range found begins and ends at line boundaries, the answer is
``line=`` of those lines instead. ``elt`` and ``name`` are not given back:
an element's count or its name may well have changed between versions, and
the text found is what was cited.

A passage that is not found is an :class:`~pdi.errors.OrphanedError`
(exit status 12; ``422`` with problem type ``/api#problem-passage-orphaned``),
one that stands in several places none better than the rest an
:class:`~pdi.errors.AmbiguousError` (exit status 13; problem type
``/api#problem-passage-ambiguous``), listing the places.
"""

from __future__ import annotations

import dataclasses
import io
import re
from bisect import bisect_left, bisect_right
from dataclasses import dataclass

from pdi import formats
from pdi.archive import Archive, Resolved, parse_pdi
from pdi.errors import (
    AmbiguousError,
    LimitError,
    OrphanedError,
    ParseError,
    UnsupportedError,
    WithdrawnError,
)
from pdi.identifier import PDI
from pdi.passages.reanchor import Anchoring, anchor_passage

#: The largest representation (octets) compared: both versions are read and decoded whole.
MAX_ANCHOR_OCTETS = 32 << 20

#: The fragment schemes a cited passage may be named by.
SCHEMES = ("char", "line", "elt", "name")


@dataclass(frozen=True)
class AnchorAnswer:
    """Where a cited passage stands in another version: its name there, found how, and how sure.

    ``start``/``end`` are the ``char`` range of the target's CRLF-canonical
    text (or source); ``quote`` is the cited text and ``found`` the text at
    the new place (of a page: its text, the markup left out).
    """

    cited: PDI
    target: PDI
    method: str
    score: float
    context: float
    start: int
    end: int
    quote: str
    found: str
    notes: tuple[str, ...]

    def to_json(self) -> dict[str, object]:
        return {
            "cited": str(self.cited), "pdi": str(self.target), "method": self.method,
            "score": round(self.score, 4), "context": round(self.context, 4),
            "start": self.start, "end": self.end, "quote": self.quote, "found": self.found,
            "notes": list(self.notes),
        }


class _Text:
    """What is compared of one version: ``text``, and (a page) where each of its characters stands in the source."""

    def __init__(self, source: str, kind: str) -> None:
        self.source = source
        if kind == "text":
            self.text = source
            self._runs: list[tuple[int, int, int]] | None = None
            return
        from pdi.passages.fulltext import markup_passages

        passages = markup_passages(source, kind, size=len(source) + 1)
        parts: list[str] = []
        runs: list[tuple[int, int, int]] = []
        at = 0
        for passage in passages:
            if parts:  # passages are cut at white space: join them with a space
                parts.append(" ")
                at += 1
            parts.append(passage.text)
            runs.extend((at + t, passage.start + s, passage.start + e) for t, s, e in passage.runs)
            at += len(passage.text)
        self.text = "".join(parts)
        self._runs = runs
        self._t = [t for t, _, _ in runs]

    def _run(self, i: int) -> tuple[int, int, int, int]:
        assert self._runs is not None
        r = bisect_right(self._t, i) - 1
        t0, s, e = self._runs[max(r, 0)]
        t1 = self._runs[r + 1][0] if r + 1 < len(self._runs) else len(self.text)
        return t0, t1, s, e

    def to_text(self, start: int, end: int) -> tuple[int, int]:
        """The stretch of text that source range ``[start, end)`` holds (a page's markup left out, and white space at its ends)."""
        if self._runs is None:
            return start, end
        a: int | None = None
        b: int | None = None
        runs = self._runs
        for r, (t0, s, e) in enumerate(runs):
            t1 = runs[r + 1][0] if r + 1 < len(runs) else len(self.text)
            if s >= end:
                break
            if t1 - t0 == e - s:  # one for one: character t stands at s + (t - t0)
                lo, hi = t0 + max(0, start - s), t0 + min(t1 - t0, end - s)
            else:  # a character reference: all of it, or none
                lo, hi = (t0, t1) if s >= start and e <= end else (t1, t1)
            if lo < hi:
                a = lo if a is None else a
                b = hi
        if a is None or b is None:
            raise OrphanedError("the cited passage holds no text of the page (only markup)")
        while a < b and self.text[a].isspace():  # the space an element's tags stand for is not the passage's
            a += 1
        while b > a and self.text[b - 1].isspace():
            b -= 1
        return a, b

    def to_source(self, a: int, b: int) -> tuple[int, int]:
        """Where text ``[a, b)`` stands in the source (a zero-length stretch: where its next character stands)."""
        if self._runs is None:
            return a, b
        if not self.text:
            return 0, 0
        if a == b:
            at = self.to_source(min(a, len(self.text) - 1), min(a, len(self.text) - 1) + 1)
            return (at[0], at[0]) if a < len(self.text) else (at[1], at[1])
        t0, t1, s, e = self._run(a)
        first = s + (a - t0) if t1 - t0 == e - s else s
        t0, t1, s, e = self._run(b - 1)
        last = s + (b - t0) if t1 - t0 == e - s else e
        return first, last


def _read_text(resolved: Resolved, archive: Archive) -> _Text:
    """The CRLF-canonical text (or source) of a whole representation, and what of it is compared."""
    from pdi.archive.search import search_kind
    from pdi.fragments.markup import document_charset
    from pdi.fragments.text import TextIndex
    from pdi.fragments.text.lines import to_crlf

    media_type = resolved.media_type
    kind = search_kind(media_type)
    if kind == "aggregate":
        from pdi.fragments.aggregate import root_text

        root_kind, text = root_text(io.BytesIO(resolved.data))
        if root_kind is None:
            raise UnsupportedError(f"{resolved.pdi}: its root part has no text to find a passage in")
        return _Text(text, root_kind)
    if kind == "pdf":  # a PDF's passages count on its text layer D, kept at deposit (docs/pdf-text-layer.md §5)
        from pdi.fragments.pdf import layer_of

        index = archive.fragment_index(resolved.record)
        return _Text(layer_of(resolved.data, index, name=str(resolved.pdi)).text, "text")
    if kind == "email":  # a message's passages count on its body's text (docs/email.md)
        from pdi.fragments.email_text import message_body_text

        return _Text(message_body_text(resolved.data), "text")
    if kind is None:
        raise UnsupportedError(f"{resolved.pdi} is {media_type}: passages are re-anchored in texts and pages only")
    data = resolved.data
    charset = document_charset(data, media_type, resolved.charset) if kind != "text" else resolved.charset
    return _Text(to_crlf(TextIndex(data, charset).whole_text()), kind)


def _version_choice(to: str | int) -> int | None:
    """The version number ``to`` gives, or ``None`` for ``latest``; a :class:`ParseError` for anything else.

    Checked before any name is looked up, so that a malformed ``to`` is a syntax error whatever the name.
    """
    if isinstance(to, int) and not isinstance(to, bool):
        text = "" if to < 1 else str(to)  # a caller's number: no digits to read
    else:
        text = str(to).strip()
        if text.lower() == "latest":
            return None
    significant = text.lstrip("0")  # int() counts leading zeros against its 4,300 digits: 0…01 is version 1
    if not (text.isascii() and text.isdigit()) or not significant:  # '²' is a digit to str.isdigit, not to int()
        raise ParseError(f"a version is a positive number or 'latest', not {str(to)[:40]!r}", rule="version")
    if len(significant) > _MAX_VERSION_DIGITS:
        raise LimitError(f"a version of {len(significant)} digits is longer than {_MAX_VERSION_DIGITS} digits")
    return int(significant)


#: The longest version number read, as the PDI grammar reads one (pdi.identifier): no document has more versions.
_MAX_VERSION_DIGITS = 100


def version_named(cited: PDI | str, to: str | int) -> str | int:
    """``to`` as a version: the version of a versioned name of the document ``cited`` names (in the same format),
    else ``to`` as it is; another document's or format's name is a :class:`ParseError`."""
    cited = parse_pdi(cited)
    if not isinstance(to, str) or "pdi://" not in to.lower():
        return to
    named = parse_pdi(to.strip())
    same = named.format is not None and cited.format is not None and (
        (named.series_name.lower(), named.date, named.unique_id, formats.canonical_token(named.format))
        == (cited.series_name.lower(), cited.date, cited.unique_id, formats.canonical_token(cited.format)))
    if not same or named.fragment is not None or named.version is None:
        raise ParseError(f"--to names a version: a number, 'latest', or a versioned name of the same document and"
                         f" format as the passage ({cited.without_fragment()}), not {to[:200]}", rule="version")
    return named.version


def _target_version(archive: Archive, parsed: PDI, to: str | int) -> int:
    """The version ``to`` names: a number, or ``latest``, the newest not withdrawn (as N2R of a generic name offers)."""
    chosen = _version_choice(to)
    if chosen is not None:
        return chosen
    gone: WithdrawnError | None = None
    for version in reversed(archive.versions(parsed)):
        try:
            archive.locate(dataclasses.replace(parsed, version=version))
        except WithdrawnError as withdrawn:
            gone = gone or withdrawn
            continue
        return version
    assert gone is not None  # a document has a version
    raise gone


def _whole(archive: Archive, name: PDI) -> Resolved:
    located = archive.locate(name)
    assert isinstance(located, Resolved)
    if located.record.size > MAX_ANCHOR_OCTETS:
        raise LimitError(f"{name} is {located.record.size} octets: passages are re-anchored in up to {MAX_ANCHOR_OCTETS}")
    return archive.read(located)


def _line_positions(text: str) -> list[int]:
    """``[p0, p1, …]``: line position ``k`` (RFC 5147) is character ``p[k]``; the last is the end of the text."""
    starts = [0] + [m.end() for m in re.finditer("\r\n", text)]
    if starts[-1] == len(text):  # a final line ending opens no empty last line (specs/README.md)
        starts.pop()
    return [*starts, len(text)] if text else [0]


def _fragment_of(cited_scheme: str, source: str, start: int, end: int) -> str:
    if cited_scheme == "line":
        positions = _line_positions(source)
        a, b = bisect_left(positions, start), bisect_left(positions, end)
        if a < len(positions) and positions[a] == start and b < len(positions) and positions[b] == end:
            return f"line={a},{b}"
    return f"char={start},{end}"


def anchor(archive: Archive, name: PDI | str, to: str | int) -> AnchorAnswer:
    """Find the passage ``name`` cites in version ``to`` (a number, or ``latest``) of the same format (module
    docstring); ``pdi anchor --to`` also takes a versioned name (:func:`version_named`)."""
    parsed = parse_pdi(name)
    _version_choice(to)
    if parsed.fragment is None:
        raise ParseError(f"{parsed}: name the cited passage with a fragment (#char=a,b, #line=a,b, #elt=…, #name=…)")
    if parsed.format is None:
        raise UnsupportedError(f"{parsed}: a cited passage needs a format and a version")
    scheme = parsed.fragment.effective_scheme(parsed.format)
    if scheme not in SCHEMES:
        raise UnsupportedError(f"{scheme}= names no passage of text: re-anchoring works on {', '.join(SCHEMES)}")
    whole_name = parsed.without_fragment()
    cited = _whole(archive, whole_name)
    # a PDF's passage is counted on its kept text layer (without it, PDFium would read the whole PDF again)
    index = archive.fragment_index(cited.record) if cited.media_type == "application/pdf" else None
    selected = archive.select(cited, parsed.fragment, index=index)
    assert selected.fragment is not None
    if selected.fragment.past_end:  # it selects nothing: no passage to find (found by a probe, 2026-11-30: an
        # empty one at the end was "found by exact"), as an annotation of it is refused (pdi.interop.annotation)
        raise UnsupportedError(f"{parsed} lies wholly past the end of its document: it selects no passage to find")
    ranges = selected.fragment.ranges
    if len(ranges) != 1:
        raise UnsupportedError(f"{parsed}: a passage is one range; this fragment selects {len(ranges)}")
    version = _target_version(archive, whole_name, to)
    target_name = dataclasses.replace(whole_name, version=version)
    target = _whole(archive, target_name)
    old, new = _read_text(cited, archive), _read_text(target, archive)
    start, end = old.to_text(ranges[0].start, ranges[0].end)
    found: Anchoring = anchor_passage(old.text, start, end, new.text)
    quote = old.text[start:end]
    facts: dict[str, object] = {"cited": str(parsed), "version": version, "quote": quote}
    if found.status == "orphaned":
        raise OrphanedError(
            f"{parsed}: the passage is not in version {version} (not unchanged, not quoted, nothing similar enough)",
            details={**facts, "notes": list(found.notes)},
        )
    if found.status == "ambiguous":
        places = [
            f"{target_name}#{_fragment_of(scheme, new.source, *new.to_source(c.start, c.end))}" for c in found.candidates
        ]
        raise AmbiguousError(
            f"{parsed}: the passage stands in {len(places)} places of version {version}, none more like the citation: "
            + ", ".join(places),
            details={**facts, "candidates": places},
        )
    a, b = new.to_source(found.start, found.end)
    answer_name = parse_pdi(f"{target_name}#{_fragment_of(scheme, new.source, a, b)}")
    assert found.method is not None
    return AnchorAnswer(
        parsed, answer_name, found.method, found.score, found.context, a, b, quote,
        new.text[found.start:found.end], found.notes,
    )
