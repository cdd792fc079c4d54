"""Sending a stretch of an open file to the client with ``sendfile``, from ``pdi serve``'s HTTP/1.1 connections.

A large representation whose chunks a worker has already verified, unchanged
since (:mod:`pdi.archive.blobs.memo`), needs no more than copying its file's
pages to the socket, which the kernel does without the octets passing
through Python (``sendfile(2)``, as nginx's ``sendfile on``). uvicorn's
protocols offer no ASGI extension for it (neither ``http.response.pathsend``
nor ``http.response.zerocopysend``), and uvloop's loop has no ``sendfile``
(it raises ``NotImplementedError``), so ``pdi serve``'s protocol
(:class:`pdi.server.process.connection.GuardedHttpToolsProtocol`) puts a :class:`ZeroCopy`
in each request's scope under ``extensions[EXTENSION]``.

A response that uses it sends ``http.response.start`` (with its
``Content-Length``), awaits ``ZeroCopy(fd, offset, count, unchanged)``, then
sends the final, empty ``http.response.body``. :class:`ZeroCopy` waits for
the headers to leave the connection's buffer, then calls ``os.sendfile`` on
a duplicate of the connection's socket (non-blocking, as the socket is),
waiting for it to be writable whenever the client's window is full, and
checks ``unchanged()`` (an ``fstat``) before each call: a file changed while
it is sent is an :class:`~pdi.errors.IntegrityError` and the answer is cut
short (the ``Content-Length`` promised is not reached, so the client sees
it). A client that goes away ends the sending quietly. Where the extension
is missing (another server, an in-process test client) the response reads
the file itself.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from typing import Any

from pdi.errors import IntegrityError

#: The key of :class:`ZeroCopy` in an ASGI scope's ``extensions``.
EXTENSION = "pdi.sendfile"
#: Octets asked of one ``sendfile`` call (the kernel sends what the socket's buffer takes).
_STEP = 1 << 24
#: How often the headers still in the connection's buffer are looked at again (seconds).
_FLUSH_POLL = 0.002
_FLUSH_POLL_MAX = 0.25


class ZeroCopy:
    """``await ZeroCopy(...)(fd, offset, count, unchanged)``: that stretch of the file sent on the request's connection.

    ``cycle`` is uvicorn's request-response cycle of the request; the octets
    sent count against its ``Content-Length`` as a body message's would.
    """

    def __init__(self, loop: asyncio.AbstractEventLoop, cycle: Any) -> None:
        self.loop = loop
        self.cycle = cycle

    async def __call__(self, fd: int, offset: int, count: int, unchanged: Callable[[], bool]) -> bool:
        """Send octets ``[offset, offset + count)`` of ``fd``; ``False`` if the client went away first."""
        cycle = self.cycle
        if (not cycle.response_started or cycle.response_complete or cycle.chunked_encoding
                or cycle.expected_content_length < count):
            raise RuntimeError("sendfile needs a started response with a Content-Length of at least the octets sent")
        transport = cycle.transport
        delay = _FLUSH_POLL
        while transport.get_write_buffer_size() and not transport.is_closing():
            # the status line and headers go first; a client slow to read them is looked at less often
            await asyncio.sleep(delay)
            delay = min(2 * delay, _FLUSH_POLL_MAX)
        sock = transport.get_extra_info("socket")
        if transport.is_closing() or cycle.disconnected or sock is None:
            return self._gone()
        out = os.dup(sock.fileno())  # ours to wait on and to close, whatever the transport does meanwhile
        try:
            left = count
            while left:
                if not unchanged():
                    transport.close()
                    raise IntegrityError("the stored file changed while it was being sent: the answer is cut short")
                try:
                    sent = os.sendfile(out, fd, offset, min(left, _STEP))
                except BlockingIOError:
                    await self._writable(out)
                    continue
                except (BrokenPipeError, ConnectionError):
                    return self._gone()
                if sent == 0:  # the file is shorter than it was
                    transport.close()
                    raise IntegrityError("the stored file ended before the octets promised were sent")
                offset += sent
                left -= sent
                if transport.is_closing():
                    return self._gone()
        finally:
            os.close(out)
        cycle.expected_content_length -= count
        return True

    async def _writable(self, out: int) -> None:
        ready: asyncio.Future[None] = self.loop.create_future()

        def wake() -> None:
            if not ready.done():
                ready.set_result(None)

        self.loop.add_writer(out, wake)
        try:
            await ready
        finally:
            self.loop.remove_writer(out)

    def _gone(self) -> bool:
        # what uvicorn's protocol does when the connection is lost: later sends of this cycle do nothing
        self.cycle.disconnected = True
        if not self.cycle.transport.is_closing():
            self.cycle.transport.close()
        return False
