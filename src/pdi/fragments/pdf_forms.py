"""Form XObjects that draw themselves (ISO 32000-1 §8.10: a form's content stream may paint other XObjects with
``Do``, named in its ``/Resources``), found before PDFium is handed the page that draws one.

A form that draws itself, directly or through other forms, has no end (§8.10.1 gives a form's content as a
finite picture). PDFium draws it again and again down to its nesting limit, and a form drawing itself twice
is drawn 2, 4, 8… times at each level: a 1-KB PDF took its child past 2 GiB and was refused for memory after
4 to 10 s (found by an attack, 2026-12-02), where ``pdftotext`` reads it at once (poppler draws a form once in
each chain). :func:`self_drawing` reads the page tree and the forms with pdfminer.six (PDFium's API gives no
object of a PDF's, only its pages once parsed, which is where the time goes) and names, for each page whose
content draws such a form, the object numbers of the cycle; :func:`pdi.fragments.pdf.load_page` refuses that
page with them, at once.

A form with no ``/Resources`` of its own is read with those of the page or form that draws it, as PDFium
and pdf.js read one (§8.10.1, Table 95: such a form "shall" have its own, and PDF 1.1 ones inherit). Only
forms are followed (an image XObject draws nothing); a ``Do`` names its XObject in the resources its stream
is read with. At most :data:`MOST_FORMS` forms are read for one PDF: past that, no more are (PDFium's own
limits, run in its child, still bound what it does). A PDF pdfminer.six cannot read is not checked here
(PDFium opened it: its child's limits bound it as before).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final

#: The most forms read for one PDF (each is a stream decoded and its operators read).
MOST_FORMS: Final = 20_000


@dataclass(frozen=True)
class SelfDrawing:
    """The pages whose content draws a form that draws itself, found by :func:`self_drawing`."""

    #: page index (from 0, in the order pdfminer.six walks the page tree) -> the cycle's object numbers, the
    #: form drawn first, then each form it draws in turn, ending with the first again
    pages: dict[int, tuple[int, ...]] = field(default_factory=dict)
    #: how many pages pdfminer.six found
    found: int = 0

    def cycle(self, index: int, pages: int) -> tuple[int, ...] | None:
        """The cycle page ``index`` (from 0) of a PDF of ``pages`` pages (PDFium's count) draws, or None. Where
        pdfminer.six found another number of pages, its page ``index`` may not be PDFium's: any page found
        drawing a cycle then stands for every page."""
        if pages == self.found:
            return self.pages.get(index)
        return next(iter(self.pages.values()), None)


#: The most seconds pdfminer.six is given to read a PDF for :func:`checked` (both checks, one reading): a PDF's
#: page tree and forms read in well under a second for thousands of pages; past it (an object that is a reference
#: to itself, which pdfminer.six's ``resolve1`` follows for ever; a broken cross-reference table that makes it
#: scan a large file) the PDF is not judged, as one it cannot read is not, and PDFium's child limits bound it.
CHECK_SECONDS: Final = 10.0


class _OutOfTime(BaseException):
    """:data:`CHECK_SECONDS` past (a ``BaseException``: no ``except Exception`` of pdfminer.six's or ours takes it)."""


def checked(octets: bytes, seconds: float = CHECK_SECONDS) -> tuple[SelfDrawing, str]:
    """:func:`self_drawing` and :func:`pdi.fragments.pdf_tree.page_tree_fault` (``""``: none) of the PDF ``octets``
    from one reading of it by pdfminer.six, within ``seconds`` (timed by ``SIGALRM`` where this is the main
    thread, as in PDFium's child; elsewhere untimed): what was not found by then is not judged (found by a
    review: ``5 0 obj 5 0 R endobj`` as a page's ``/Resources`` held pdfminer.six until the child's 120 s, and a
    PDF PDFium reads at once was refused)."""
    import io
    import signal
    import threading
    import time

    from pdfminer.pdfdocument import PDFDocument
    from pdfminer.pdfparser import PDFParser

    from pdi.fragments.pdf_tree import page_tree_fault

    def out_of_time(signum: int, frame: Any) -> None:
        raise _OutOfTime

    timed = threading.current_thread() is threading.main_thread()
    forms, fault = SelfDrawing(), ""
    if timed:
        started = time.monotonic()
        previous = signal.signal(signal.SIGALRM, out_of_time)
        before = signal.setitimer(signal.ITIMER_REAL, seconds)

    def disarm() -> None:  # (again if the alarm came while disarming: the outer except)
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous if previous is not None else signal.SIG_DFL)  # (None: set outside Python)

    try:
        try:
            document: Any = None
            try:
                document = PDFDocument(PDFParser(io.BytesIO(octets)))
            except Exception:  # a PDF pdfminer.six cannot read (PDFium opened it): not judged here
                pass
            if document is not None:
                forms = self_drawing(octets, document)
                fault = page_tree_fault(octets, document) or ""
        finally:
            if timed:
                disarm()
    except _OutOfTime:
        if timed:
            disarm()
    if timed and before[0]:  # a timer set before (pytest-timeout's), given back what it has left
        signal.setitimer(signal.ITIMER_REAL, max(0.001, before[0] - (time.monotonic() - started)), before[1])
    return forms, fault


def self_drawing(octets: bytes, document: Any = None) -> SelfDrawing:
    """The pages of the PDF ``octets`` that draw a form that draws itself (:class:`SelfDrawing`; none where
    pdfminer.six cannot read the PDF). ``document``: pdfminer.six's ``PDFDocument`` of it, read already
    (:func:`checked`), else read here (untimed: :func:`checked` bounds the time)."""
    import io

    from pdfminer.pdfdocument import PDFDocument
    from pdfminer.pdfpage import PDFPage
    from pdfminer.pdfparser import PDFParser

    try:
        if document is None:
            document = PDFDocument(PDFParser(io.BytesIO(octets)))
        read = list(PDFPage.create_pages(document))
    except Exception:  # any refusal of pdfminer.six's: PDFium opened it, and its child's limits hold
        return SelfDrawing()
    walk = _Walk()
    found: dict[int, tuple[int, ...]] = {}
    for index, page in enumerate(read):
        try:
            cycle = walk.page(page)
        except _TooMany:
            break
        except Exception:  # a page pdfminer.six cannot read: its child's limits hold for PDFium
            continue
        if cycle is not None:
            found[index] = cycle
    return SelfDrawing(found, len(read))


class _TooMany(Exception):
    """More than :data:`MOST_FORMS` forms read."""


class _Walk:
    """A depth-first walk of the forms pages draw, remembering what each form (with the resources it is read
    with) draws."""

    def __init__(self) -> None:
        #: (form's object number, its resources' id) -> the forms it draws: (object number, resources' id, form)
        self.draws: dict[tuple[int, int], list[tuple[int, int, Any, Any]]] = {}
        #: forms (with their resources) known to reach no cycle
        self.clear: set[tuple[int, int]] = set()

    def page(self, page: Any) -> tuple[int, ...] | None:
        """The cycle of forms ``page`` (a pdfminer.six ``PDFPage``) draws, or None. Its content is read only
        when a form of its resources reaches a cycle (most pages draw none: their content is most of a PDF)."""
        resources = page.resources if isinstance(page.resources, dict) else {}
        cycles: dict[int, tuple[int, ...]] = {}
        for number, stream, form_resources in _forms(resources, None):
            cycle = self._from(number, stream, form_resources)
            if cycle is not None:
                cycles[number] = cycle
        if not cycles:
            return None
        for number, _, _ in _forms(resources, _do_names(list(page.contents or []))):
            if number in cycles:
                return cycles[number]
        return None

    def _from(self, number: int, stream: Any, resources: Any) -> tuple[int, ...] | None:
        """The cycle reached from form ``number`` read with ``resources``, found depth-first (iteratively: a
        chain of thousands of forms is no recursion)."""
        start = (number, id(resources))
        if start in self.clear:
            return None
        path: list[tuple[int, int]] = [start]
        on_path = {start: 0}
        pending = [iter(self._edges(start, stream, resources))]
        while pending:
            step = next(pending[-1], None)
            if step is None:
                done = path.pop()
                del on_path[done]
                self.clear.add(done)
                pending.pop()
                continue
            kid_number, kid_id, kid_stream, kid_resources = step
            key = (kid_number, kid_id)
            if key in on_path:
                return (*(n for n, _ in path[on_path[key]:]), kid_number)
            if key in self.clear:
                continue
            on_path[key] = len(path)
            path.append(key)
            pending.append(iter(self._edges(key, kid_stream, kid_resources)))
        return None

    def _edges(self, key: tuple[int, int], stream: Any, resources: Any) -> list[tuple[int, int, Any, Any]]:
        """The forms form ``key`` draws (each with the resources it is read with), read once."""
        known = self.draws.get(key)
        if known is None:
            if len(self.draws) >= MOST_FORMS:
                raise _TooMany
            # a form whose resources name no form draws none: its content (often most of a PDF) is not read
            known = [(n, id(r), s, r) for n, s, r in _forms(resources, _do_names([stream]))] \
                if _forms(resources, None) else []
            self.draws[key] = known
        return known


def _forms(resources: Any, names: list[str] | None) -> list[tuple[int, Any, Any]]:
    """The forms named in ``resources``' ``/XObject`` (``names`` of them only, in that order; None: all of them):
    object number, stream and the resources it is read with (its own, else ``resources``)."""
    from pdfminer.pdftypes import PDFObjRef, PDFStream

    xobjects = _resolved(resources.get("XObject")) if isinstance(resources, dict) else None
    if not isinstance(xobjects, dict) or names == []:
        return []
    found: list[tuple[int, Any, Any]] = []
    for name in xobjects if names is None else names:
        ref = xobjects.get(name)
        if not isinstance(ref, PDFObjRef):  # a form is a stream, always indirect (§7.3.8)
            continue
        stream = _resolved(ref)
        if isinstance(stream, PDFStream) and _name(stream.attrs.get("Subtype")) == "Form":
            own = _resolved(stream.attrs.get("Resources"))
            found.append((ref.objid, stream, own if isinstance(own, dict) else resources))
    return found


def _do_names(streams: Any) -> list[str]:
    """The names the content ``streams`` paint with ``Do``, in order, each once."""
    from pdfminer.pdfinterp import PDFContentParser
    from pdfminer.psparser import PSEOF, PSKeyword, PSLiteral

    if not isinstance(streams, list):
        streams = [streams] if streams is not None else []
    parser = PDFContentParser(streams)
    names: dict[str, None] = {}
    last: object = None
    while True:
        try:
            _, token = parser.nextobject()
        except PSEOF:
            break
        if isinstance(token, PSKeyword):
            if token.name == b"Do" and isinstance(last, PSLiteral):
                names[_name(last) or ""] = None
            last = None
        else:
            last = token
    return list(names)


def _resolved(value: Any) -> Any:
    from pdfminer.pdftypes import resolve1

    return resolve1(value)


def _name(value: Any) -> str | None:
    """A PDF name's text (pdfminer.six's ``PSLiteral``), or None."""
    from pdfminer.psparser import PSLiteral

    value = _resolved(value)
    if isinstance(value, PSLiteral):
        name = value.name
        return name.decode("latin-1") if isinstance(name, bytes) else str(name)
    return None
