"""Log lines a stranger can cause by the thousand, said at most once a second a worker, the next counting those
between (:class:`RefusalLog`): refused request heads (:mod:`pdi.server.process.connection`), and the storage
errors whose reasons the answers leave out (:mod:`pdi.server.http.problems`).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from pdi._wording import MESSAGE_MOST, clipped

#: How often, at most, a worker logs a refused request head (seconds): a stranger can make refusals by the thousand.
REFUSAL_LOG_SECONDS = 1.0


class RefusalLog:
    """A worker's log line for each request head its protocol refuses (:mod:`pdi.server.process.connection`):
    who sent it, the status and why (``refused a request from 192.0.2.7: 414 the request target is more
    than 65535 octets (RFC 9112 §3)``), at the warning level, in place of uvicorn's own ``Invalid HTTP request
    received.``, which says neither (pdi's protocol never writes it). At most one line a ``seconds``; the
    next line says how many refusals came between, so a flood of bad requests costs the log one line a
    second and loses no count."""

    def __init__(self, seconds: float = REFUSAL_LOG_SECONDS, clock: Callable[[], float] = time.monotonic,
                 done: str = "refused") -> None:
        self.seconds = seconds
        self.done = done
        self._clock = clock
        self._next = float("-inf")
        self._unsaid = 0

    def say(self, logger: logging.Logger, client: str | None, status: int, detail: str) -> bool:
        """Log this refusal, unless one was logged less than :attr:`seconds` ago (then count it); whether it was.
        ``detail`` may quote what the client sent: escaped and cut in its middle (:func:`pdi._wording.clipped`)."""
        return self.say_line(logger, "refused a request from %s: %d %s%s", client, status,
                             clipped(detail, MESSAGE_MOST))

    def say_line(self, logger: logging.Logger, line: str, client: str | None, *values: object) -> bool:
        """:meth:`say` of another kind of line: ``line`` of the client, ``values`` and the count of lines unsaid."""
        now = self._clock()
        if now < self._next:
            self._unsaid += 1
            return False
        more = f" ({self._unsaid} more {self.done} since the last such line)" if self._unsaid else ""
        logger.warning(line, client or "an unknown address", *values, more)
        self._unsaid = 0
        self._next = now + self.seconds
        return True
