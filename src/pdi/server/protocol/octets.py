"""``POST /api/octets``: the stored octets of many names in one answer, for a mirror's sync.

A mirror (:mod:`pdi.network.mirrors`) copying thousands of names would pay
one request each through ``N2R``; here it names up to :data:`MAX_NAMES`
versioned names in one JSON body, ``{"names": [...]}``, and the answer is a
``multipart/mixed`` body (RFC 2046 §5.1) with one part a name, in the order
asked. Each part has ``Content-Location`` (the name as asked),
``Content-Length`` (so that a reader need not scan for the boundary) and
either the stored octets (``Content-Type`` the record's media type,
``X-PDI-SHA256`` their digest) or an RFC 9457 problem
(``application/problem+json``: the status and words ``N2R`` would have
answered, ``404``, ``403``, ``410`` …). The boundary is the SHA-256 of the
body asked for: the same question is answered byte for byte alike.

What a part holds is what ``N2R`` of the name would answer this reader (the
access rules of :mod:`pdi.archive.access`: an anonymous reader gets public
names only), read by verified chunks, never held whole: a chunk found
damaged ends the answer early (its length is not reached, a reader sees the
cut), as ``N2R`` does. Answers are never kept by a cache (``no-store``):
they may hold a token holder's private names.
"""

from __future__ import annotations

import contextvars
import hashlib
import json
from collections.abc import AsyncIterator, Iterator

import anyio.to_thread
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from pdi.archive.results import Opened
from pdi.errors import ParseError, PDIError
from pdi.server.http.bodies import read_json
from pdi.server.process.limits import ArchiveHandlers

__all__ = ["MAX_NAMES", "OctetsAPI"]

#: Names one request may ask for.
MAX_NAMES = 1000
#: The longest body read (a JSON object of names).
MAX_BODY = 1 << 20
#: Names looked up together, in one snapshot of the catalog (their files open at once, at most).
LOOK_UPS = 50
#: Octets of the answer sent at a time (several small parts, or a chunk of a large one).
PIECE = 1 << 20


class OctetsAPI(ArchiveHandlers):
    """``POST /api/octets`` of one archive."""

    def routes(self) -> list[Route]:
        return [Route("/api/octets", self.octets, methods=["POST"])]

    async def octets(self, request: Request) -> Response:
        """The stored octets of up to 1000 versioned names, asked as {"names": [...]}, one multipart/mixed part
        each (its octets, or the problem N2R would answer)."""
        body = await read_json(request, MAX_BODY, f"the body is more than {MAX_BODY} octets", rule="octets")
        names = body.get("names") if isinstance(body, dict) else None
        if not isinstance(names, list) or not all(isinstance(n, str) and n for n in names):
            raise ParseError('the body is {"names": [versioned names]}, each a non-empty text', rule="octets")
        if not 1 <= len(names) <= MAX_NAMES:
            raise ParseError(f"ask for 1 to {MAX_NAMES} names, not {len(names)}", rule="octets")
        boundary = hashlib.sha256(json.dumps(names).encode()).hexdigest()
        parts = self._parts(names, boundary)
        context = contextvars.copy_context()  # the reader this request is answered for (pdi.archive.access)

        def following() -> bytes | None:
            return context.run(next, parts, None)

        async def body_pieces() -> AsyncIterator[bytes]:
            while (piece := await anyio.to_thread.run_sync(following)) is not None:
                yield piece

        return StreamingResponse(body_pieces(), media_type=f"multipart/mixed; boundary={boundary}",
                                 headers={"Cache-Control": "no-store"})

    def _parts(self, names: list[str], boundary: str) -> Iterator[bytes]:
        """The answer's octets, :data:`PIECE` at a time or so (small parts joined); the names looked up
        :data:`LOOK_UPS` at a time, in one snapshot of the catalog."""
        pending: list[bytes] = []
        size = 0
        for start in range(0, len(names), LOOK_UPS):
            opened = self._open(names[start:start + LOOK_UPS])
            try:
                while opened:
                    name, one = opened.pop(0)
                    for piece in self._part(name, one, boundary):
                        pending.append(piece)
                        size += len(piece)
                        if size >= PIECE:
                            yield b"".join(pending)
                            pending, size = [], 0
            finally:
                for _, one in opened:  # the answer was cut (the reader went away): what is still open is closed
                    if not isinstance(one, PDIError):
                        one.close()
        pending.append(f"--{boundary}--\r\n".encode())
        yield b"".join(pending)

    def _open(self, names: list[str]) -> list[tuple[str, Opened | PDIError]]:
        """Each name's stored octets opened, or why not, in one snapshot of the catalog."""
        opened: list[tuple[str, Opened | PDIError]] = []
        with self.archive.snapshot():
            for name in names:
                try:
                    one = self.archive.open_octets(name)
                    if one.pdi.fragment is not None:
                        one.close()
                        raise ParseError(f"{name[:200]} names a fragment: ask for the whole octets", rule="octets")
                except PDIError as exc:
                    opened.append((name, exc))
                    continue
                opened.append((name, one))
        return opened

    def _part(self, name: str, opened: Opened | PDIError, boundary: str) -> Iterator[bytes]:
        location = name.encode("ascii", "replace").replace(b"\r", b"?").replace(b"\n", b"?")
        if isinstance(opened, PDIError):
            problem = json.dumps({"type": opened.problem_type, "title": opened.title, "status": opened.http_status,
                                  "detail": str(opened)}).encode()
            yield (b"--%s\r\nContent-Location: %s\r\nContent-Type: application/problem+json\r\n"
                   b"Content-Length: %d\r\n\r\n%s\r\n") % (boundary.encode(), location, len(problem), problem)
            return
        with opened:
            record = opened.record
            yield (b"--%s\r\nContent-Location: %s\r\nContent-Type: %s\r\nContent-Length: %d\r\n"
                   b"X-PDI-SHA256: %s\r\n\r\n") % (boundary.encode(), location, record.media_type.encode(),
                                                   record.size, record.sha256.encode())
            yield from opened.reader.chunks(0, record.size)  # each chunk checked against its digest
            yield b"\r\n"
