"""Limits on reading an MHTML file: sizes, counts and time, each a clear :class:`~pdi.errors.LimitError`.

:class:`Limits` bounds what :func:`pdi.mhtml.parse` reads (and is kept on the parts and
the aggregate for what is read later, lazily: the references of HTML and CSS parts).
:class:`Budget` is what reading one part's text may cost, in processor time
(:class:`~pdi._work_deadline.WorkDeadline`) and in references found; the reading loops
(:mod:`pdi.mhtml.refs`, :mod:`pdi.mhtml.resolve`, :mod:`pdi.mhtml.unpack`) charge it as they go.
A budget may also carry a :class:`Deadline`, the moment a larger work it is part of must be done
by (a capture's ``--timeout``: on the clock, as it waits for the network).

Why a time limit on top of the size limits: reading is linear, but its cost per byte
differs a hundredfold between a page of images and a page of tags, so no size limit
small enough to stop minutes of work is large enough for real pages. Reading a 50 MB
page of short lines takes seconds; a part that takes a minute is not a page. The time is the
work's (the thread's processor time), so that waiting for a processor on a busy machine is not
counted against the page; ten times it on the clock is a backstop.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from pdi._work_deadline import WorkDeadline
from pdi.errors import LimitError

MAX_READ_SECONDS = 60.0
"""Default processor time (seconds) for reading (and resolving) the references of one part."""
MAX_REFERENCES = 1_000_000
"""Default number of references in one file (the largest corpus page has a few thousand)."""
MAX_ATTRIBUTES = 10_000
"""The most attributes one start tag may have (browsers write a few dozen; HTML sets no bound). Each attribute read
costs a few hundred octets until its tag is done, so a 44 MB tag of 6.5 million attributes took gigabytes: a tag
with more is a :class:`~pdi.errors.LimitError`, not read (reading it in part could miss a reference after the bound)."""
MAX_REPLAY_OCTETS = 64 << 20
"""The largest MHTML file (octets) replay shows (``pdi serve``'s ``/replay/``) and a deposit reads whole to
check that it can (:class:`pdi.archive.readable.MhtmlCheck`); a larger one is read by fragment."""


@dataclass(frozen=True)
class Limits:
    """Limits that turn hostile input into a clear :class:`~pdi.errors.LimitError`.

    The defaults sit far above what browsers write and far below what hurts:
    ``max_depth`` 16 nested multiparts (captures nest two or three deep; the parser
    recurses once per level); ``max_parts`` 100,000 body parts (the largest corpus
    capture has 124); ``max_header_bytes`` 256 KiB per header block, which also bounds
    a single header line (Chromium's blocks are a few hundred bytes; a URL rarely tops
    8 KiB; it keeps ``compat32``'s parameter splitting, quadratic at worst, under a
    second); ``max_part_bytes`` 200 MiB per body part as written in the file (removing
    a transfer encoding never makes it larger), checked while the part is read, so a
    larger one is never held whole; ``max_header_lines`` 1,000 fields in one header block,
    a folded field's continuation lines counted with it (browsers write four to six a
    part, mail a few dozen; the bytes bound alone let a block hold 40,000 short fields,
    each parsed); ``max_fields`` 500,000 header fields in the whole file (five for each of
    the most parts; 100,000 parts of 60 fields took a gigabyte and most of a minute to
    parse); ``max_parse_seconds`` 60 CPU seconds to parse the
    whole file (:mod:`pdi._work_deadline`: the thread's processor time, with a backstop of ten times
    that on the clock; ``None``: no time limit; parsing is linear, but a file of header lines
    costs half a second a megabyte where one of bodies costs a hundredth: the 200 MiB
    parts of a real page parse in seconds); ``max_read_seconds`` 60 CPU seconds to read and resolve the
    references of one HTML or CSS part (``None``: no time limit); ``max_references``
    1,000,000 references in the whole file (each costs a few hundred bytes once read
    and resolved); ``chunk_size`` 1 MiB read at a time from a stream (not a limit: the
    buffer grows to the largest part).
    """

    max_depth: int = 16
    max_parts: int = 100_000
    max_header_bytes: int = 256 * 1024
    max_part_bytes: int = 200 * 1024 * 1024
    max_read_seconds: float | None = MAX_READ_SECONDS
    max_references: int = MAX_REFERENCES
    chunk_size: int = 1 << 20
    max_header_lines: int = 1_000
    max_parse_seconds: float | None = MAX_READ_SECONDS
    max_fields: int = 500_000


@dataclass(frozen=True)
class Deadline:
    """A moment (:func:`time.monotonic`) past which a whole piece of work stops, and what its
    :class:`~pdi.errors.LimitError` says then (``capturing URL took longer than 10 s``)."""

    at: float
    words: str

    @classmethod
    def after(cls, seconds: float, words: str) -> Deadline:
        """The moment ``seconds`` from now."""
        return cls(time.monotonic() + seconds, words)

    def left(self) -> float:
        """Seconds left (negative once passed)."""
        return self.at - time.monotonic()

    def check(self) -> None:
        """:class:`~pdi.errors.LimitError` once the moment has passed."""
        if time.monotonic() > self.at:
            raise LimitError(self.words)


class Budget:
    """What reading one text may cost: ``seconds`` of processor time and ``references`` found.

    Reading loops call :meth:`tick` once a step (the clock is read every 16 steps, so a
    step costs a counter) and :meth:`found` once a reference; past either limit (the time
    measured as :class:`~pdi._work_deadline.WorkDeadline` does)
    they raise :class:`~pdi.errors.LimitError` naming ``what`` (say ``part 3
    (text/html https://example.org/)``). ``found_before`` references already found
    elsewhere in the same file count against ``references`` too. The clock starts when
    the budget is made. ``whole`` names what the references are counted in (``the file``;
    a crawl's ``the capture``). ``deadline`` is the moment the whole work this text is part of
    must be done by (a capture's ``--timeout``): past it the reading stops too, with its words.
    """

    __slots__ = ("_deadline", "_steps", "count", "deadline", "references", "seconds", "what", "whole")

    def __init__(
        self,
        what: str,
        *,
        seconds: float | None = MAX_READ_SECONDS,
        references: int | None = MAX_REFERENCES,
        found_before: int = 0,
        whole: str = "the file",
        deadline: Deadline | None = None,
    ) -> None:
        self.what = what
        self.deadline = deadline
        self.whole = whole
        self.seconds = seconds
        self.references = references
        self.count = found_before
        self._deadline = None if seconds is None else WorkDeadline(seconds)
        self._steps = 0

    def tick(self) -> None:
        """One step of work; every 16th looks at the clock."""
        self._steps += 1
        if not self._steps & 15:
            self.check_time()

    def check_time(self) -> None:
        """:class:`~pdi.errors.LimitError` once the time is spent (this text's, or the whole work's)."""
        if self.deadline is not None:
            self.deadline.check()
        if self._deadline is not None and self._deadline.passed():
            raise LimitError(f"reading {self.what} took {self._deadline.words()} (the time limit for one part)")

    def found(self, n: int = 1) -> None:
        """``n`` more references found: :class:`~pdi.errors.LimitError` past the limit."""
        self.count += n
        if self.references is not None and self.count > self.references:
            raise LimitError(
                f"{self.what} takes {self.whole} past {self.references:,} references"
                f" (the limit for one {self.whole.removeprefix('the ')})"
            )
