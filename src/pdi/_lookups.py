"""Host names looked up in daemon threads of their own, within a time: for a capture (:class:`Lookups`, never in
asyncio's default executor: the plain fetcher's connections, :mod:`pdi.capture.fetch`, and the browser's proxy,
:mod:`pdi.capture.proxy`, both), and for pdi's own connections to other archives (:func:`look_up_within`:
:mod:`pdi._public_connect`, the resolver's probe of another resolver).

``socket.getaddrinfo`` takes no time limit: a name whose zone's servers never answer holds it for the system
resolver's whole timeout (30 s and more, with its retries and search domains). So it runs in a thread of its own,
and the caller waits no longer than its bound; the thread ends when the system resolver gives up.
"""

from __future__ import annotations

import asyncio
import socket
import threading
from typing import Any

__all__ = ["MAX_WAITING", "Lookups", "look_up_within"]

#: Lookups :func:`look_up_within` runs at once, those given up on among them (until the system resolver gives up): past
#: them, a lookup is refused at once (a name server that never answers fills no process with threads).
MAX_WAITING = 64

_waiting = threading.BoundedSemaphore(MAX_WAITING)


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


def look_up_within(host: str, port: int, seconds: float) -> list[tuple[Any, ...]]:
    """``socket.getaddrinfo(host, port)`` (TCP) within ``seconds``: its answer, its :class:`OSError` (a
    :class:`UnicodeError`, a label IDNA cannot encode, is one of them, saying so), or an :class:`OSError` saying the
    lookup took longer (a :class:`TimeoutError`; it goes on in its daemon thread, :data:`MAX_WAITING` of them at most at once; past those, an
    :class:`OSError` at once)."""
    places = _waiting  # the one its place is taken from is the one it is given back to
    if not places.acquire(blocking=False):
        raise OSError(f"cannot look up {host[:200]} now: as many lookups as are let run ({MAX_WAITING}) are still"
                      " waiting for name servers")
    done = threading.Event()
    outcome: list[Any] = []

    def look_up() -> None:
        try:
            outcome.append(list(socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)))
        except UnicodeError as exc:  # a label the idna codec refuses
            outcome.append(OSError(f"{host[:200]} is not a host name that can be looked up: {exc}"))
        except OSError as exc:
            outcome.append(exc)
        finally:
            places.release()
            done.set()

    threading.Thread(target=look_up, name=f"pdi-lookup {host[:100]}", daemon=True).start()
    if not done.wait(max(0.0, seconds)):  # a TimeoutError, which is an OSError: a caller may tell the two apart
        raise TimeoutError(f"looking up {host[:200]} took more than {seconds:g} s")
    found = outcome[0]
    if isinstance(found, OSError):
        raise found
    return list(found)
