"""How long work on a stranger's input may run: its thread's processor time, with a wall-clock backstop.

Parsing and evaluating a stranger's input (an HTML page for ``elt``, a page's text and style sheets, a text
directive, an MHTML file and its parts' references) is bounded in time as well as in size, because its cost per
octet differs a hundredfold from one input to the next. What such a bound measures is the work done: the
processor time of the thread doing it (:func:`time.thread_time`), not the time on the clock. A page within the
bounds is then not refused because its thread waited for a processor (a machine busy with other work: a CI run
at a load of 20 on two cores gives each process a tenth of one) or for the GIL (the resolver's other threads),
and a page past them is refused after the same work on a quiet machine and a busy one.

A process so starved that it would take hours to spend its budget still ends: :data:`WALL_FACTOR` times the
budget on the clock (:func:`time.monotonic`) is a backstop, and its refusal says so.

The time is the thread's that does the work. Work resumed on another thread (a generator taken up elsewhere)
counts on from what was spent when the budget was last looked at; what the first thread spent after that look
is not counted, at most one stride of the loop that looks. Pure: no I/O.
"""

from __future__ import annotations

import threading
import time
from typing import Final

#: How many times its budget of processor time a piece of work may take on the clock: a process given a tenth
#: of a processor (a load of 20 on two cores) still finishes what its budget allows; one given less is stopped.
WALL_FACTOR: Final = 10.0


class WorkDeadline:
    """``seconds`` of this thread's processor time from now, or :data:`WALL_FACTOR` times that on the clock.

    The loop doing the work calls :meth:`passed` (or :meth:`tick`, once a small step) and, once it is true,
    raises a :class:`~pdi.errors.LimitError` saying ``took`` :meth:`words` (``more than 30 CPU seconds``).
    Reading the processor time costs about 0.7 µs, the clock about 0.1 µs.
    """

    __slots__ = ("_base", "_spent", "_steps", "_thread", "_wall_at", "by_clock", "seconds")

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        #: Whether the clock's backstop, not the processor time, was what passed.
        self.by_clock = False
        self._wall_at = time.monotonic() + seconds * WALL_FACTOR
        self._thread = threading.get_ident()
        self._base = time.thread_time()
        self._spent = 0.0
        self._steps = 0

    def spent(self) -> float:
        """The processor time (seconds) spent on the work so far."""
        now = time.thread_time()
        thread = threading.get_ident()
        if thread != self._thread:  # resumed on another thread: its time counts on from what was spent
            self._thread, self._base = thread, now - self._spent
        self._spent = now - self._base
        return self._spent

    def passed(self) -> bool:
        """Whether the work has had its processor time, or the clock's backstop has passed (the processor time is
        looked at first: work that had its time is said to have had it, however long it waited too)."""
        if self.spent() > self.seconds:
            return True
        self.by_clock = time.monotonic() > self._wall_at
        return self.by_clock

    def tick(self) -> bool:
        """One small step of work: :meth:`passed`, read every 16th step (a step costs a counter)."""
        self._steps += 1
        return not self._steps & 15 and self.passed()

    def words(self) -> str:
        """What the work took once :meth:`passed`: ``more than 30 CPU seconds``, or the backstop's words."""
        if self.by_clock:
            return (f"more than {self.seconds * WALL_FACTOR:g} s on the clock (the backstop, {WALL_FACTOR:g} times"
                    f" its {self.seconds:g} CPU seconds: the machine was too busy to give it them)")
        return f"more than {self.seconds:g} CPU seconds"
