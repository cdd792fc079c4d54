"""An SGML document's source as pdi reads it beside ``onsgmls``: what is not parsed as markup (comments, marked
sections that are ignored or character data: :func:`unparsed_spans`), reserved names in ASCII (:func:`_keyword`),
and where each element the parse reports stands in the document (:class:`_Locator`, its tags found by
:class:`_Tags`). Running the parser, its catalogs and its limits are :mod:`pdi.fragments.markup.sgml`'s."""

from __future__ import annotations

import array
import re
from typing import Final

from pdi.fragments.markup.element import Element
from pdi.fragments.markup.reading import tag_end

#: A comment declaration (ISO 8879 §10.3: ``<!``, comments ``--…--`` each followed by blanks, ``>``), a comment
#: holding no ``--``. Possessive, so linear on any text: ``<!(?:--.*?--\s*)*>`` tried every way of cutting a run of
#: dashes into comments, 2**n of them (``<!`` and 64 dashes in an element of declared CDATA content took ``elt=``
#: 40 s, 80 dashes hours).
_COMMENT_DECLARATION: Final = r"<!(?:--(?:[^-]|-(?!-))*+--\s*)*+>"
_REFERENCE_OR_COMMENT: Final = re.compile(_COMMENT_DECLARATION + r"|&[A-Za-z]")
_BLANK: Final = re.compile(r"(?:\s+|" + _COMMENT_DECLARATION + r")*+")
#: A marked section's start (ISO 8879 §10.4): ``<![``, its status keywords (or parameter entity references), ``[``.
_MARKED: Final = re.compile(r"<!\[([^\[\]<>]*)\[")  # (no nested repetition: linear on any text)
#: What ends a marked section, and what begins one nested in an ignored one.
_MARKED_EDGE: Final = re.compile(r"<!\[|\]\]>")
#: A parameter entity's declaration whose literal may be a status keyword (bounded: linear on any text). ``ENTITY``
#: is a reserved name, ASCII letters in any case (``(?a:…)``: Python's Unicode case rules would take ``ENTıTY``).
_PARAMETER_ENTITY: Final = re.compile(r"""(?a:<!ENTITY)\s+%\s+([\w.-]+)\s+(?:"([^"]{0,64})"|'([^']{0,64})')""", re.I)
#: Marked sections' statuses, strongest first (ISO 8879 §10.4.2).
_STATUSES: Final = ("IGNORE", "CDATA", "RCDATA", "INCLUDE", "TEMP")


def unparsed_spans(text: str) -> list[tuple[int, int, bool]]:
    """Where ``text`` holds no markup for the parser: the content of a marked section it ignores (``IGNORE``,
    nested sections within it counted) or reads as data (``CDATA``, ``RCDATA``), and processing instructions,
    in order, each with whether the parser reads it as data. A status keyword given by a parameter entity is
    read from the text's own declaration of it (the first, as SGML takes it); one it does not declare counts
    as ``INCLUDE``."""
    parameters: dict[str, str] = {}
    for declared in _PARAMETER_ENTITY.finditer(text):
        parameters.setdefault(declared.group(1).upper(), _keyword(declared.group(2) or declared.group(3) or ""))
    spans: list[tuple[int, int, bool]] = []
    at = text.find("<?")
    while at >= 0:  # each "<?" runs to the next ">": found once, so linear on any text
        end = text.find(">", at + 2)
        if end < 0:
            break
        spans.append((at, end + 1, False))
        at = text.find("<?", end + 1)
    at = 0
    while (marked := _MARKED.search(text, at)) is not None:
        words = [parameters.get(w[1:].rstrip(";").upper(), "INCLUDE") if w.startswith("%") else _keyword(w)
                 for w in marked.group(1).split()]
        status = next((s for s in _STATUSES if s in " ".join(words).split()), "INCLUDE")
        if status in ("INCLUDE", "TEMP"):
            at = marked.end()  # its content is parsed: only its start and its "]]>" are no element's
            continue
        end = len(text)
        depth = 1
        for edge in _MARKED_EDGE.finditer(text, marked.end()):
            if edge.group(0) == "<![" and status == "IGNORE":
                depth += 1
            elif edge.group(0) == "]]>":
                depth -= 1
                if depth == 0:
                    end = edge.end()
                    break
        spans.append((marked.start(), end, status != "IGNORE"))
        at = end
    spans.sort()
    return spans


def _keyword(word: str) -> str:
    """``word`` in upper case if it is ASCII, as SGML's reserved names are (ISO 8879 §9.3: the reference concrete
    syntax folds names' lower-case letters a to z); any other word names no keyword. ``str.upper`` makes ``ı``
    (U+0131) an ``I``: ``<![ ıGNORE [`` was taken for an ignored section, which onsgmls parses, and its elements
    were located nowhere."""
    return word.upper() if word.isascii() else word


def _late_record_end(after: list[str]) -> bool:
    """Whether the ESIS event ``after`` an ``L`` command is data of record ends only. SGML holds a record end back
    until what follows it shows it is data (ISO 8879 §7.6.1), so onsgmls reports it, and its line, after the
    events of the markup that follows it, lines later: the line of such an ``L`` bounds none of the events before
    it. (Found by a hunt: in ``<a>`` CR LF CR LF ``&e;&e;``, the first reference was looked for before the line
    it is on, and the elements of both entities were placed at the first.)"""
    return bool(after) and after[0].startswith("-") and not after[0][1:].replace("\\n", "").strip()


class _Locator:
    """Walks ``onsgmls``'s ESIS output and finds each event's markup in the text (see the module docstring)."""

    def __init__(self, text: str, document: str) -> None:
        self.text = text
        self.document = document
        self.unparsed = unparsed_spans(text)
        self.unparsed_starts = [start for start, _, _ in self.unparsed]
        self.line_starts = array.array("q", [0])  # (8 octets a line: a document may be all line ends)
        self.line_starts.extend(m.end() for m in re.finditer("\n", text))
        self.cursor = 0
        self.line = 1
        self.in_document = True
        self.data_since = False
        self.names: list[str] = []
        self.starts: list[int | None] = []
        self.ends: list[int | None] = []
        self.net: list[bool] = []
        self.nowhere: set[int] = set()  # elements whose start tag is not in this text (an entity's)
        self.open: list[int] = []
        self.pending: list[tuple[str, int]] = []  # ("start" | "end", element number) waiting for a place
        self.last_event = ""
        self.upper_line = 1
        self.tags = _Tags("", set(), [])  # (made by run, from the names the parse reports)
        self.slash = (0, -1)  # the last search for a NET: from where, and the first "/" there (or the end)
        self.entity_starts = 0  # start tags, and end tags, still to come from internal entities' replacement text
        self.entity_ends = 0
        self.reference: tuple[int, int] | None = None  # where the reference to the entity whose tags come is written
        self.outer_reference: tuple[int, int] | None = None  # the last reference written in the text
        self.reference_patterns: dict[str, re.Pattern[str]] = {}
        self.reference_memo: dict[str, tuple[int, int, tuple[int, int] | None]] = {}

    def run(self, lines: list[str]) -> list[Element]:
        """Place the elements of the ESIS ``lines`` (:func:`_esis_events`)."""
        omitted = False
        self.tags = _Tags(self.text, {line[1:] for line in lines if line.startswith("(")}, self.unparsed)
        next_line = len(self.line_starts) + 1  # the line of the next L command after each event
        bounds = [0] * len(lines)
        for i in range(len(lines) - 1, -1, -1):
            bounds[i] = next_line
            if lines[i].startswith("L") and lines[i][1:].partition(" ")[0].isdigit() and not _late_record_end(
                    lines[i + 1 : i + 2]):
                next_line = int(lines[i][1:].partition(" ")[0])
        for i, line in enumerate(lines):
            if not line:
                continue
            self.upper_line = bounds[i]
            command, rest = line[0], line[1:]
            if command == "L":
                number, _, name = rest.partition(" ")
                if number.isdigit():
                    self.line = int(number)
                if name:
                    self.in_document = name == self.document
                continue
            if command == "o":
                omitted = True
                continue
            if command == "I":  # an internal entity referred to here: its tags come next, and are not in the text
                starts, ends, name = [*rest.split(" ", 2), "-"][:3]
                if self.in_document:  # (a reference in an entity's text ("-") is read within the last one's)
                    self.reference = self.outer_reference = (self._find_reference(name) if name != "-"
                                                             else self.outer_reference)
                    self.entity_starts += int(starts)
                    self.entity_ends += int(ends)
                continue
            if command == "(":
                self._start(rest, omitted, elsewhere=not self.in_document)
            elif command == ")":
                self._end(omitted or not self.in_document)
            elif command == "-" and self.in_document:
                self._data(rest)
            if command in "()-":
                self.last_event = command
            omitted = False
        self._resolve(len(self.text))
        for still_open in self.open:  # left open: ends at the end
            self.ends[still_open] = len(self.text)
        for elsewhere in self.nowhere:  # an entity's element spans nothing of this text
            self.ends[elsewhere] = self.starts[elsewhere]
        return [
            Element(i, name, start if start is not None else len(self.text),
                    max(end if end is not None else len(self.text), start or 0), {})
            for i, (name, start, end) in enumerate(zip(self.names, self.starts, self.ends, strict=True))
        ]

    def _line(self) -> tuple[int, int]:
        """Where the markup of the current event may begin.

        ``onsgmls`` writes an ``L`` command only now and then: the event's
        markup begins on or after the line of the last one, after the markup
        found before it, and no later than the line of the next one.
        """
        line = min(max(self.line, 1), len(self.line_starts))
        after = self.line_starts[self.upper_line] if self.upper_line < len(self.line_starts) else len(self.text) + 1
        return max(self.cursor, self.line_starts[line - 1]), after

    def _resolve(self, at: int) -> None:
        for what, number in self.pending:
            if what == "start":
                self.starts[number] = at
            else:
                self.ends[number] = at
        self.pending.clear()

    def _start(self, name: str, omitted: bool, *, elsewhere: bool) -> None:
        number = len(self.names)
        self.names.append(name)
        self.starts.append(None)
        self.ends.append(None)
        self.net.append(False)
        self.open.append(number)
        if not omitted and not elsewhere and self.entity_starts:
            self.entity_starts -= 1
            elsewhere = True  # its start tag is an entity's, though a tag of that name may follow in the text
            if self.reference is not None:  # it stands where the reference does, as does what it closed or implied
                self._resolve(self.reference[0])
                self.starts[number] = self.reference[0]
                self.nowhere.add(number)
                self.data_since = False
                self._entity_tag_read()
                return
        if omitted or elsewhere:
            self.pending.append(("start", number))
            if elsewhere:
                self.nowhere.add(number)
            return
        found = self._find_start(name)
        if found is None:  # not in the source: from an entity's replacement text
            self.pending.append(("start", number))
            self.nowhere.add(number)
            return
        at, tag_end, net = found
        self._resolve(at)
        self.starts[number] = at
        self.net[number] = net
        self.cursor = tag_end
        self.data_since = False

    def _end(self, omitted: bool) -> None:
        if not self.open:
            return
        number = self.open.pop()
        if not omitted and self.entity_ends:
            self.entity_ends -= 1
            omitted = True  # its end tag is an entity's: it ends where that entity's reference is
            if self.reference is not None:  # after the reference, which holds its end tag
                self._resolve(self.reference[0])
                self.ends[number] = self.reference[1]
                self.data_since = False
                self._entity_tag_read()
                return
        if omitted:
            if self.last_event == "(" and self.starts[number] is not None and self.names and number == len(self.names) - 1:
                self.ends[number] = self.cursor  # EMPTY (or nothing in it): the start tag is the element
            else:
                self.pending.append(("end", number))
            return
        found = self._find_end(self.names[number], self.net[number])
        if found is None:
            self.pending.append(("end", number))
            return
        at, end = found
        self._resolve(at)
        self.ends[number] = end
        self.cursor = end
        self.data_since = False

    def _entity_tag_read(self) -> None:
        """After a tag of an entity's replacement text: once the last is read, what follows is after the reference."""
        if self.reference is not None and not (self.entity_starts or self.entity_ends):
            self.cursor = max(self.cursor, self.reference[1])
            self.reference = None

    def _find_reference(self, name: str) -> tuple[int, int] | None:
        """Where the reference to entity ``name`` (``&name``, and its ``;`` if it has one) is written, on or after
        the markup found before it and before the line of the next event; ``None`` if it is not there (then the
        entity's elements are placed where the next markup begins)."""
        pattern = self.reference_patterns.get(name)
        if pattern is None:  # (entity names are case-sensitive unless NAMECASE ENTITY YES: either is found)
            # (its letters' case folded as ASCII's: ``&ſection`` is no reference to ``section``)
            pattern = re.compile(_COMMENT_DECLARATION + r"|(?a:&" + re.escape(name) + r")(?![\w.-])(;?)", re.I)
            self.reference_patterns[name] = pattern
        at, before = self._line()
        before = min(before, len(self.text))
        memo = self.reference_memo.get(name)  # (the last search's window and answer: a stranger's text may make
        if memo is not None:  # many searches for one name from one place, each of which would walk the same text)
            searched_from, searched_to, answer = memo
            if answer is None and searched_from <= at and before <= searched_to:
                return None
            if answer is not None and searched_from <= at <= answer[0] and answer[1] <= before:
                return answer
        answer = None
        for found in pattern.finditer(self.text, at, before):
            if found.group(0).startswith("&") and self._unparsed_end(found.start()) is None:
                answer = found.start(), found.end()
                break
        self.reference_memo[name] = (at, before, answer)
        return answer

    def _data(self, data: str) -> None:
        """Character data: what it closes or implies begins at its first character other than white space."""
        if not data.replace("\\n", "").strip():
            return  # white space (record ends): the next thing is still ahead in the source
        if self.pending and not self.data_since:
            self._resolve(self._blank_end(self.cursor))
        self.data_since = True

    def _blank_end(self, at: int) -> int:
        """Past the white space, comment declarations, ignored marked sections and processing instructions at ``at``."""
        while True:
            at = _BLANK.match(self.text, at).end()  # type: ignore[union-attr]
            skipped = self._unparsed_end(at, data=False)
            if skipped is None:  # (a CDATA section is data: what it closes begins where it does)
                return at
            at = skipped

    def _unparsed_end(self, at: int, *, data: bool = True) -> int | None:
        """The end of the unparsed span (:func:`unparsed_spans`; not ``data``: only one the parser does not read
        as data) ``at`` falls in, or ``None``."""
        import bisect

        i = bisect.bisect_right(self.unparsed_starts, at) - 1
        if i >= 0 and self.unparsed[i][0] <= at < self.unparsed[i][1] and (data or not self.unparsed[i][2]):
            return self.unparsed[i][1]
        return None

    def _find_start(self, name: str) -> tuple[int, int, bool] | None:
        at, before = self._line()
        found = self.tags.first(name, at, end=False)
        if found is None or found[0] >= before:  # not on its line: from an entity's replacement text
            return None
        start, after = found
        if after == start + 1:  # "<>"
            return start, start + 2, False
        if after < len(self.text) and self.text[after] == "/":
            return start, after + 1, True
        return start, tag_end(self.text, after, unclosed=True), False

    def _find_end(self, name: str, net: bool) -> tuple[int, int] | None:
        at, before = self._line()
        if net:
            if not self.slash[0] <= self.cursor <= self.slash[1]:  # where the last search found none before it
                next_slash = self.text.find("/", self.cursor)
                self.slash = (self.cursor, len(self.text) if next_slash < 0 else next_slash)
            slash = self.slash[1]
            return None if slash >= min(before, len(self.text)) else (slash, slash + 1)
        found = self.tags.first(name, at, end=True)
        if found is None or found[0] >= before:
            return None
        return found[0], tag_end(self.text, found[1], unclosed=True)


class _Tags:
    """Where the start and end tags of the elements a parse reports are written in a text, found in one pass.

    A tag is ``<`` or ``</`` and a name (case-insensitive, as SGML's NAMECASE GENERAL reads it) followed by a blank,
    ``>``, ``/``, ``<`` or the end, or the empty ``<>`` and ``</>``; none is in a comment declaration or an
    unparsed span (:func:`unparsed_spans`). Found once, so that looking for the tags of many elements that are
    not written (an entity's) costs a binary search each, not a scan of the rest of the text each.
    """

    #: A comment declaration (skipped whole), else a tag open and the name after it.
    _OPEN: Final = re.compile(_COMMENT_DECLARATION + r"|<(/?)([^\s>/<]*)")

    def __init__(self, text: str, names: set[str], unparsed: list[tuple[int, int, bool]]) -> None:
        self._places: dict[tuple[bool, str], array.array[int]] = {}  # (end?, name) -> where each "<" is
        self._after: dict[tuple[bool, str], array.array[int]] = {}  # ... and just after its name
        wanted = {name.lower() for name in names} | {""}
        span = 0
        for match in self._OPEN.finditer(text):
            name = match.group(2)
            if name is None:  # a comment declaration
                continue
            at = match.start()
            while span < len(unparsed) and unparsed[span][1] <= at:
                span += 1
            if span < len(unparsed) and unparsed[span][0] <= at:  # in a span the parser reads no markup in
                continue
            end = match.group(1) == "/"
            if not name and not text.startswith(">", match.end()):
                continue  # "<" or "</" and no name: no tag
            key = (end, name.lower())
            if key[1] not in wanted:
                continue
            if key not in self._places:
                self._places[key], self._after[key] = array.array("q"), array.array("q")
            self._places[key].append(at)
            self._after[key].append(match.end())

    def first(self, name: str, at: int, *, end: bool) -> tuple[int, int] | None:
        """The first start (or ``end``) tag of element ``name``, or an empty one, at or after ``at``: where its
        ``<`` is and where its name ends; ``None`` if there is none."""
        import bisect

        best: tuple[int, int] | None = None
        for key in ((end, name.lower()), (end, "")):
            places = self._places.get(key)
            if places is None:
                continue
            i = bisect.bisect_left(places, at)
            if i < len(places) and (best is None or places[i] < best[0]):
                best = (places[i], self._after[key][i])
        return best
