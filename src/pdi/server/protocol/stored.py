"""N2R's answers of a large representation's stored octets that are not one stretch read by verified chunks.

:class:`FileSend`: a stretch of a blob file whose chunks are all remembered
verified, sent as it is stored (with ``sendfile`` under ``pdi serve``).

:func:`byteranges_response`: several ranges, a ``multipart/byteranges`` body
streamed by verified chunks. The layout (:class:`pdi.server.http.byteranges.Byteranges`) is known from the
catalog, so the answer says its ``Content-Length``; the octets are read a
part at a time (:meth:`pdi.archive.blobs.ChunkedReader.spans`), each chunk
checked against its SHA-256 as ``N2R`` of one range reads it, never held
whole. A chunk found damaged before the status is sent is a ``500``; midway, it
ends the answer short of its length, as a single range's does.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

import anyio.to_thread
from starlette.responses import Response, StreamingResponse
from starlette.types import Receive, Scope, Send

from pdi.archive import Archive, Resolved
from pdi.archive.blobs import FileReader
from pdi.archive.blobs.memo import Identity
from pdi.archive.results import Opened
from pdi.server.http.byteranges import Byteranges, boundary, chunk_reads
from pdi.server.process.zerocopy import EXTENSION


def byteranges_response(
    archive: Archive, located: Resolved, ranges: list[tuple[int, int]], fields: Mapping[str, str], tag: str,
    media_type: str, *, head: bool = False,
) -> Response | None:
    """``206`` with the ``ranges`` (inclusive, two or more) of ``located``'s stored octets as a
    ``multipart/byteranges`` body, with the whole answer's ``fields`` (RFC 9110 §14.6: those a ``200`` would carry,
    ``ETag`` and ``Cache-Control`` among them), or ``None`` when sending them would read more than twice the
    representation's chunks (:func:`~pdi.server.http.byteranges.chunk_reads`: ranges out of order, each in a chunk
    the one before did not end in; RFC 9110 §14.2 lets such a field be ignored): the caller then answers whole."""
    size = located.record.size
    parts = Byteranges.of(ranges, size, media_type.encode("latin-1"), boundary(tag))
    headers = {**fields, "Content-Length": str(parts.length), "Content-Type": parts.content_type.decode("latin-1")}
    if head:
        return Response(status_code=206, headers=headers)
    opened = archive.open_octets(str(located.pdi))
    try:
        info = opened.reader.info
        if info.chunked and chunk_reads(ranges, info.chunk_size) > 2 * info.chunk_count():
            opened.close()
            return None
        pieces = opened.reader.spans([(first, last + 1) for first, last in ranges])
        first = next(pieces)  # read (and checked) before the status is sent: a damaged start is a 500 problem
    except BaseException:
        opened.close()
        raise

    def body() -> Iterator[bytes]:
        try:
            at, piece = first
            yield parts.heads[0]
            yield piece
            for part, piece in pieces:
                if part != at:
                    at = part
                    yield parts.heads[part]
                yield piece
            yield parts.tail
        finally:
            opened.close()

    return StreamingResponse(body(), status_code=206, headers=headers)


class FileSend(Response):
    """Octets ``[start, end)`` of a blob file whose chunks are all remembered verified: sent as they are stored.

    Under ``pdi serve`` with ``sendfile`` (:mod:`pdi.server.process.zerocopy`);
    elsewhere read in pieces on a worker thread. Either way the file's
    identity is checked again (``fstat``) as it is sent: a file changed
    since its chunks were verified cuts the answer short.
    """

    def __init__(
        self, opened: Opened, reader: FileReader, verified: Identity, start: int, end: int,
        status: int, headers: Mapping[str, str], media_type: str | None,
    ) -> None:
        super().__init__(status_code=status, headers=headers, media_type=media_type)
        self.opened = opened
        self.reader = reader
        self.verified = verified
        self.start = start
        self.end = end

    def unchanged(self) -> bool:
        """Whether the file is still as it was when its chunks were found verified (if not, the blob is forgotten
        in the fixity memo: :meth:`~pdi.archive.blobs.FileReader.unchanged`)."""
        return self.reader.unchanged(self.verified)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await send({"type": "http.response.start", "status": self.status_code, "headers": self.raw_headers})
            sendfile = scope.get("extensions", {}).get(EXTENSION)
            if scope.get("method") == "HEAD":
                pass
            elif sendfile is not None:
                await sendfile(self.reader.fd, self.start, self.end - self.start, self.unchanged)
            else:
                pieces = self.reader.chunks(self.start, self.end)  # trusted by the memo: fstat, no hashing
                while True:
                    piece = await anyio.to_thread.run_sync(next, pieces, None)
                    if piece is None:
                        break
                    await send({"type": "http.response.body", "body": piece, "more_body": True})
            await send({"type": "http.response.body", "body": b"", "more_body": False})
        finally:
            self.opened.close()
