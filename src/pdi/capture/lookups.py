"""Host names looked up for a capture in daemon threads of its own (:class:`Lookups`), never in asyncio's default
executor: the plain fetcher's connections (:mod:`pdi.capture.fetch`) and the browser's proxy
(:mod:`pdi.capture.proxy`) both."""

from __future__ import annotations

import asyncio
import socket
import threading
from typing import Any

__all__ = ["Lookups"]


class Lookups:
    """``getaddrinfo`` in daemon threads of its own, at most ``most`` at once.

    Not in asyncio's default executor: ``asyncio.run`` waits for its threads when it ends (Python 3.11 without a
    bound), so a lookup a site's name server leaves unanswered (30 s and more, with retries and search domains)
    held a capture long past its ``--timeout`` after it had given up. A lookup given up on here goes on in its
    thread, which holds its place until it ends: a name server that never answers slows the capture (bounded by
    its timeout), never fills the process with threads.
    """

    def __init__(self, most: int) -> None:
        self._places = asyncio.Semaphore(most)

    async def lookup(self, host: str, port: int) -> list[tuple[Any, ...]]:
        loop = asyncio.get_running_loop()
        await self._places.acquire()
        answer: asyncio.Future[list[tuple[Any, ...]]] = loop.create_future()

        def settle(infos: list[tuple[Any, ...]] | None, error: OSError | UnicodeError | None) -> None:
            self._places.release()
            if answer.done():  # given up on
                return
            if error is not None:
                answer.set_exception(error)
            else:
                answer.set_result(infos or [])

        def look_up() -> None:
            infos: list[tuple[Any, ...]] | None = None
            error: OSError | UnicodeError | None = None
            try:
                infos = list(socket.getaddrinfo(host, port, type=socket.SOCK_STREAM))
            except (OSError, UnicodeError) as exc:  # UnicodeError: a label the idna codec refuses
                error = exc
            try:
                loop.call_soon_threadsafe(settle, infos, error)
            except RuntimeError:  # the loop is closed: the capture is over
                pass

        threading.Thread(target=look_up, name=f"pdi-capture-lookup {host}", daemon=True).start()
        return await answer
