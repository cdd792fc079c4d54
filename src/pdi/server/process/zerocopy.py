"""Sending a stretch of an open file to the client with ``sendfile``, from ``pdi serve``'s HTTP/1.1 connections.

A large representation whose chunks a worker has already verified, unchanged
since (:mod:`pdi.archive.blobs.memo`), needs no more than copying its file's
pages to the socket, which the kernel does without the octets passing
through Python (``sendfile(2)``, as nginx's ``sendfile on``). uvicorn's
protocols offer no ASGI extension for it (neither ``http.response.pathsend``
nor ``http.response.zerocopysend``), and uvloop's loop has no ``sendfile``
(it raises ``NotImplementedError``), so ``pdi serve``'s protocol
(:class:`pdi.server.process.guarded.GuardedHttpToolsProtocol`) puts a :class:`ZeroCopy`
in each request's scope under ``extensions[EXTENSION]``.

A response that uses it sends ``http.response.start`` (with its
``Content-Length``), awaits ``ZeroCopy(fd, offset, count, unchanged)``, then
sends the final, empty ``http.response.body``. :class:`ZeroCopy` waits for
the headers to leave the connection's buffer, then calls ``os.sendfile`` on
a duplicate of the connection's socket (non-blocking, as the socket is),
waiting for it to be writable whenever the client's window is full (for
``send_seconds`` at most: a client that takes nothing for that long is
dropped, as the connection's buffer is, see
:class:`~pdi.server.process.guarded.GuardedHttpToolsProtocol`), and
checks ``unchanged()`` (an ``fstat``) before each call: a file changed while
it is sent is an :class:`~pdi.errors.IntegrityError` and the answer is cut
short (the ``Content-Length`` promised is not reached, so the client sees
it). A client that goes away ends the sending quietly.

An answer of ``Transfer-Encoding: chunked`` whose parts are stretches of
files among other octets (``POST /api/octets``'s, many blobs in one
answer, :mod:`pdi.server.protocol.octets`) awaits
:meth:`ZeroCopy.chunked` with its frames: each frame is written as one
chunk, its size line and the octets in hand written on the same duplicate
socket, its stretches of files sent with ``sendfile``, each checked the same
way; the app's last, empty, body message then ends the body as the protocol
does (``0`` CRLF CRLF). A file changed meanwhile closes the connection
before the last chunk, so the client sees the cut. Where the extension
is missing (another server, an in-process test client) the response reads
the file itself.
"""

from __future__ import annotations

import asyncio
import os
import socket
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from pdi.errors import DamagedError
from pdi.server.http.middleware import SENDFILE_EXTENSION
from pdi.server.process.limits import DEFAULT_SEND_SECONDS

#: The key of :class:`ZeroCopy` in an ASGI scope's ``extensions``.
EXTENSION = SENDFILE_EXTENSION
#: Octets asked of one ``sendfile`` call (the kernel sends what the socket's buffer takes).
_STEP = 1 << 24
#: How often the headers still in the connection's buffer are looked at again (seconds).
_FLUSH_POLL = 0.002
_FLUSH_POLL_MAX = 0.25
#: Octets of a chunked answer gathered in hand before they are written (small pieces and chunk framing).
_GATHER = 1 << 16


@dataclass(frozen=True)
class Stretch:
    """Octets ``[offset, offset + count)`` of the file open as ``fd``, to be sent only while ``unchanged()``."""

    fd: int
    offset: int
    count: int
    unchanged: Callable[[], bool]


#: One chunk of a ``chunked`` answer (:meth:`ZeroCopy.chunked`): octets in hand and stretches of files, in order.
Frame = Sequence["bytes | Stretch"]


class ZeroCopy:
    """``await ZeroCopy(...)(fd, offset, count, unchanged)``: that stretch of the file sent on the request's connection.

    ``cycle`` is the request's :class:`~pdi.server.process.http11.RequestCycle`; the octets
    sent count against its ``Content-Length`` as a body message's would.
    :meth:`chunked` sends an answer of ``Transfer-Encoding: chunked``
    whose chunks hold stretches of files among other octets. :attr:`sent`
    counts the octets of the body sent here (past the ASGI ``send``).
    """

    def __init__(self, loop: asyncio.AbstractEventLoop, cycle: Any, send_seconds: float = DEFAULT_SEND_SECONDS) -> None:
        self.loop = loop
        self.cycle = cycle
        self.sent = 0
        #: How long the socket may stay unwritable (the client taking nothing) before the connection is dropped.
        self.send_seconds = send_seconds

    async def __call__(self, fd: int, offset: int, count: int, unchanged: Callable[[], bool]) -> bool:
        """Send octets ``[offset, offset + count)`` of ``fd``; ``False`` if the client went away first."""
        cycle = self.cycle
        if (not cycle.response_started or cycle.response_complete or cycle.chunked_encoding
                or cycle.expected_content_length < count):
            raise RuntimeError("sendfile needs a started response with a Content-Length of at least the octets sent")
        out = await self._taken()
        if out is None:
            return self._gone()
        try:
            if not await self._send_file(out, Stretch(fd, offset, count, unchanged)):
                return self._gone()
        finally:
            os.close(out)
        cycle.expected_content_length -= count
        return True

    async def chunked(self, frames: Iterable[Frame]) -> bool:
        """Send each of ``frames`` as one chunk of a started ``chunked`` answer (RFC 9112 §7.1): its size line,
        its octets (a :class:`Stretch` with ``sendfile``), its CRLF. A frame of no octets is skipped (a chunk of
        size 0 would end the body: the app's last, empty, body message does that). ``False`` if the client went
        away first; :class:`~pdi.errors.IntegrityError` (the connection closed) if a file changed meanwhile."""
        cycle = self.cycle
        if not cycle.response_started or cycle.response_complete or not cycle.chunked_encoding:
            raise RuntimeError("chunked frames need a started response of Transfer-Encoding: chunked")
        out = await self._taken()
        if out is None:
            return self._gone()
        # the octets in hand go with MSG_MORE: held by the kernel to leave with the file's octets that follow
        # (one segment, not a small one before each part); the last of them without, so that all is pushed
        try:
            link = socket.socket(fileno=out)
        except OSError:
            os.close(out)
            raise
        try:
            link.setblocking(False)  # as the connection is (whatever socket.setdefaulttimeout says)
            pending = bytearray()
            for frame in frames:
                size = sum(piece.count if isinstance(piece, Stretch) else len(piece) for piece in frame)
                if not size:
                    continue
                if len(pending) >= _GATHER:  # before the next frame, so that the last send always holds octets
                    if not await self._send(link, pending, more=True):
                        return self._gone()
                    pending.clear()
                pending += b"%x\r\n" % size
                for piece in frame:
                    if isinstance(piece, Stretch):
                        if not (await self._send(link, pending, more=True) and await self._send_file(out, piece)):
                            return self._gone()
                        pending.clear()
                    elif len(pending) + len(piece) <= _GATHER:
                        pending += piece
                    else:  # a large piece goes as it is, after what is gathered
                        if not (await self._send(link, pending, more=True) and await self._send(link, piece, more=True)):
                            return self._gone()
                        pending.clear()
                    if not isinstance(piece, Stretch):
                        self.sent += len(piece)
                pending += b"\r\n"
            if not await self._send(link, pending, more=False):  # the last frame's CRLF at least: pushed
                return self._gone()
        finally:
            link.close()  # the duplicate (out)
        return True

    async def _taken(self) -> int | None:
        """Once what the transport holds has left it (the status line and headers go first): a duplicate of the
        connection's socket, ours to write on, wait on and close whatever the transport does meanwhile; ``None``
        when the connection is gone."""
        cycle = self.cycle
        transport = cycle.transport
        delay = _FLUSH_POLL
        held, since = transport.get_write_buffer_size(), self.loop.time()
        while held and not transport.is_closing():
            # a client slow to read them is looked at less often
            await asyncio.sleep(delay)
            delay = min(2 * delay, _FLUSH_POLL_MAX)
            left = transport.get_write_buffer_size()
            if left < held:
                held, since = left, self.loop.time()
            elif self.loop.time() - since > self.send_seconds:  # none of them taken: dropped, as _writable says
                transport.abort()
                return None
        sock = transport.get_extra_info("socket")
        if transport.is_closing() or cycle.disconnected or sock is None:
            return None
        return os.dup(sock.fileno())

    async def _send(self, link: socket.socket, data: bytes | bytearray, *, more: bool) -> bool:
        """All of ``data`` sent on the socket (non-blocking: waiting whenever the client's window is full), with
        ``MSG_MORE`` when ``more`` follows (a send without it pushes what was held); ``False`` if the client went
        away."""
        view = memoryview(data)
        flags = socket.MSG_MORE if more else 0
        while view:
            try:
                written = link.send(view, flags)
            except BlockingIOError:
                if not await self._writable(link.fileno()):
                    return False
                continue
            except OSError:  # reset, timed out, unreachable: the connection is gone
                return False
            view = view[written:]
            if self.cycle.transport.is_closing():
                return False
        return True

    async def _send_file(self, out: int, stretch: Stretch) -> bool:
        """The stretch sent with ``sendfile``, ``unchanged()`` asked before each call; ``False`` if the client went
        away."""
        transport = self.cycle.transport
        offset, left = stretch.offset, stretch.count
        while left:
            if not stretch.unchanged():
                transport.close()
                raise DamagedError("the stored file changed while it was being sent: the answer is cut short")
            try:
                sent = os.sendfile(out, stretch.fd, offset, min(left, _STEP))
            except BlockingIOError:
                if not await self._writable(out):
                    return False
                continue
            except (BrokenPipeError, ConnectionError, TimeoutError):
                return False
            if sent == 0:  # the file is shorter than it was
                transport.close()
                raise DamagedError("the stored file ended before the octets promised were sent")
            offset += sent
            left -= sent
            self.sent += sent
            if transport.is_closing():
                return False
        return True

    async def _writable(self, out: int) -> bool:
        """Once the socket takes octets again: ``True``; ``False`` when it took none for :attr:`send_seconds` (a
        client that asked and does not read), and the connection is then dropped (``abort``: it holds no answer's
        octets of ours, but its socket, the file and a place among the worker's connections)."""
        ready: asyncio.Future[None] = self.loop.create_future()

        def wake() -> None:
            if not ready.done():
                ready.set_result(None)

        self.loop.add_writer(out, wake)
        try:
            await asyncio.wait_for(ready, self.send_seconds)
        except TimeoutError:
            self.cycle.transport.abort()
            return False
        finally:
            self.loop.remove_writer(out)
        return True

    def _gone(self) -> bool:
        # what the protocol does when the connection is lost: later sends of this cycle do nothing
        self.cycle.disconnected = True
        if not self.cycle.transport.is_closing():
            self.cycle.transport.close()
        return False
