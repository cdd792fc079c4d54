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
from collections.abc import Generator, Iterator
from functools import partial

import anyio.to_thread
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from pdi.archive.blobs import ChunkedReader, FileReader
from pdi.archive.blobs.memo import Identity
from pdi.archive.store import RepresentationRecord
from pdi.errors import ParseError, PDIError, ReplicaBehindError
from pdi.server.http.bodies import read_json
from pdi.server.http.preconditions import refuse_if_match
from pdi.server.http.problems import status_of
from pdi.server.process.limits import ArchiveHandlers
from pdi.server.process.zerocopy import EXTENSION, Frame, Stretch, ZeroCopy
from pdi.server.protocol.plain import serial_fields

__all__ = ["MAX_NAMES", "OctetsAPI"]

#: Names one request may ask for.
MAX_NAMES = 1000
#: The longest body read (a JSON object of names).
MAX_BODY = 1 << 20
#: Names looked up together, in one snapshot of the catalog (their files open at once, at most).
LOOK_UPS = 50
#: A name's record and a reader of its octets by verified chunks (to be closed).
Held = tuple[RepresentationRecord, ChunkedReader]
#: Octets of the answer sent at a time (several small parts, or a chunk of a large one).
PIECE = 1 << 20


class OctetsAPI(ArchiveHandlers):
    """``POST /api/octets`` of one archive."""

    def routes(self) -> list[Route]:
        return [Route("/api/octets", self.octets, methods=["POST"])]

    async def octets(self, request: Request) -> Response:
        """The stored octets of up to 1000 versioned names, asked as {"names": [...]}, one multipart/mixed part
        each (its octets, or the problem N2R would answer)."""
        refuse_if_match(request)  # the answer is made from the body: no representation of /api/octets to match
        body = await read_json(request, MAX_BODY, f"the body is more than {MAX_BODY} octets", rule="octets")
        names = body.get("names") if isinstance(body, dict) else None
        if not isinstance(names, list) or not all(isinstance(n, str) and n for n in names):
            raise ParseError('the body is {"names": [versioned names]}, each a non-empty text', rule="octets")
        if not 1 <= len(names) <= MAX_NAMES:
            raise ParseError(f"ask for 1 to {MAX_NAMES} names, not {len(names)}", rule="octets")
        boundary = hashlib.sha256(json.dumps(names).encode()).hexdigest()
        return _Answer(self, names, boundary)

    def _batches(self, names: list[str], boundary: str, *, stretches: bool) -> Generator[list[Frame], None, None]:
        """The answer's frames, about :data:`PIECE` octets in hand at a time (a batch), the names looked up
        :data:`LOOK_UPS` at a time, in one snapshot of the catalog: with ``stretches``, a blob file whose every
        chunk this worker remembers verified, or that a worker sharing its memo verified whole
        (:mod:`pdi.archive.blobs.memo`), as a :class:`Stretch` of its open
        file, to be sent with ``sendfile``; the rest read by verified chunks. The files of a batch stay open until
        the next batch is asked for."""
        batch: list[Frame] = []
        size = 0
        for start in range(0, len(names), LOOK_UPS):
            opened = self._open(names[start:start + LOOK_UPS])
            try:
                for name, one in opened:
                    for frame in _frames(name, one, boundary, stretches=stretches):
                        batch.append(frame)
                        size += sum(len(piece) for piece in frame if not isinstance(piece, Stretch))
                        if size >= PIECE or len(batch) >= LOOK_UPS:
                            yield batch
                            batch, size = [], 0
                if batch:
                    yield batch  # before the files it names are closed
                    batch, size = [], 0
            finally:  # also when the answer was cut (the reader went away)
                for _, one in opened:
                    if not isinstance(one, PDIError):
                        one[1].close()
        yield [[f"--{boundary}--\r\n".encode()]]

    def _open(self, names: list[str]) -> list[tuple[str, Held | PDIError]]:
        """Each name's stored octets opened, or why not, in one snapshot of the catalog. The serial names spelled
        canonically that anyone may read now are opened from their catalog rows, read by one statement for them all
        (:meth:`~pdi.archive.Archive.open_public_many`); any other, by :meth:`~pdi.archive.Archive.open_octets`,
        which says what it is."""
        return self.archive.in_one_view(lambda: self._open_in_view(names))

    def _open_in_view(self, names: list[str]) -> list[tuple[str, Held | PDIError]]:
        """:meth:`_open`, inside its snapshot."""
        opened: list[tuple[str, Held | PDIError]] = []
        fields = [serial_fields(name.encode("utf-8", "replace")) for name in names]
        public = iter(self.archive.open_public_many(
            [(spelled, name) for spelled, name in zip(fields, names, strict=True) if spelled is not None]))
        try:
            for name, spelled in zip(names, fields, strict=True):
                # those spelled canonically take their answers in turn
                one = None if spelled is None else next(public)
                if one is not None:  # opened, or its file cut short: said in its part, as N2R says it
                    opened.append((name, one))
                    continue
                opened.append((name, self._opened(name)))
        except BaseException:  # the files opened so far, and those not reached, are closed
            for _, held in opened:
                if not isinstance(held, PDIError):
                    held[1].close()
            for one in public:
                if isinstance(one, tuple):
                    one[1].close()
            raise
        return opened

    def _opened(self, name: str) -> Held | PDIError:
        """A name's octets opened by :meth:`~pdi.archive.Archive.open_octets`, or why not."""
        try:
            one = self.archive.open_octets(name)
            if one.pdi.fragment is not None:
                one.close()
                raise ParseError(f"{name[:200]} names a fragment: ask for the whole octets", rule="octets")
        except ReplicaBehindError:
            raise  # not this name's answer: the whole snapshot is asked again (Archive.in_one_view)
        except PDIError as exc:
            return exc
        return one.record, one.reader


def _frames(name: str, opened: Held | PDIError, boundary: str, *, stretches: bool) -> Iterator[Frame]:
    """One name's part: its head, then its octets (a stretch of its file, or verified chunks), then its CRLF."""
    location = name.encode("ascii", "replace").replace(b"\r", b"?").replace(b"\n", b"?")
    if isinstance(opened, PDIError):
        problem = json.dumps({"type": opened.problem_type, "title": opened.title, "status": status_of(opened),
                              "detail": str(opened)}).encode()
        yield [(b"--%s\r\nContent-Location: %s\r\nContent-Type: application/problem+json\r\n"
                b"Content-Length: %d\r\n\r\n%s\r\n") % (boundary.encode(), location, len(problem), problem)]
        return
    record, reader = opened
    head = (b"--%s\r\nContent-Location: %s\r\nContent-Type: %s\r\nContent-Length: %d\r\n"
            b"X-PDI-SHA256: %s\r\n\r\n") % (boundary.encode(), location, record.media_type.encode(),
                                           record.size, record.sha256.encode())
    verified = reader.trusted(0, record.size) if stretches and isinstance(reader, FileReader) else None
    if verified is not None:
        assert isinstance(reader, FileReader)
        yield [head, Stretch(reader.fd, 0, record.size, partial(_unchanged, reader, verified)), b"\r\n"]
        return
    frame: list[bytes | Stretch] = [head]
    for chunk in reader.chunks(0, record.size):  # each chunk checked against its digest
        frame.append(chunk)
        yield frame
        frame = []
    frame.append(b"\r\n")
    yield frame


def _unchanged(reader: FileReader, verified: Identity) -> bool:
    """Whether the file is still as it was when its chunks were found verified (if not, the blob is forgotten in
    the fixity memo: :meth:`~pdi.archive.blobs.FileReader.unchanged`)."""
    return reader.unchanged(verified)


class _Answer(StreamingResponse):
    """The ``multipart/mixed`` answer, made as it is sent: each batch of frames on a worker thread (in the
    request's context: the reader it is answered for), sent with ``sendfile`` under ``pdi serve``
    (:meth:`pdi.server.process.zerocopy.ZeroCopy.chunked`), elsewhere as body messages. Starlette's
    :class:`StreamingResponse` around it stops it when the reader goes away (so no blob is read and checked for
    nobody) and raises what it raised (a damaged chunk) as itself."""

    def __init__(self, api: OctetsAPI, names: list[str], boundary: str) -> None:
        super().__init__(iter(()), media_type=f"multipart/mixed; boundary={boundary}",
                         headers={"Cache-Control": "no-store"})
        self.api = api
        self.names = names
        self.boundary = boundary
        self.zerocopy: ZeroCopy | None = None
        self.context = contextvars.copy_context()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        self.zerocopy = scope.get("extensions", {}).get(EXTENSION)
        self.context = contextvars.copy_context()  # the reader this request is answered for (pdi.archive.access)
        self.batches = self.api._batches(self.names, self.boundary, stretches=self.zerocopy is not None)
        try:
            await super().__call__(scope, receive, send)
        finally:
            with anyio.CancelScope(shield=True):  # the files still open are closed, even when cancelled
                await anyio.to_thread.run_sync(self.context.run, self.batches.close)

    async def stream_response(self, send: Send) -> None:
        await send({"type": "http.response.start", "status": self.status_code, "headers": self.raw_headers})
        while (batch := await anyio.to_thread.run_sync(self._following)) is not None:
            if self.zerocopy is not None:
                if not await self.zerocopy.chunked(batch):
                    return  # the reader went away
                continue
            body = b"".join(piece for frame in batch for piece in frame if isinstance(piece, bytes))
            await send({"type": "http.response.body", "body": body, "more_body": True})
        await send({"type": "http.response.body", "body": b"", "more_body": False})

    def _following(self) -> list[Frame] | None:
        """The next batch, made in the request's context (on a worker thread); ``None`` after the last."""
        return self.context.run(next, self.batches, None)
