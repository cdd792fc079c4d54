"""A WARC record's HTTP payload with its transfer and content codings undone, a bounded piece at a time.

warcio's ``ArcWarcRecord.content_stream`` reads a chunk of a ``chunked``
payload (RFC 9112 §7.1) whole, up to 2 GiB, however long the record, and
hands each chunk, or each 16 KiB block, to its decompressor in one call with
no bound on what it gives: 12 KB of ``Content-Encoding: br`` made a gigabyte
in one call, and a chunk of 10 MB of gzip ten gigabytes, before any size
check saw the first byte. Here a chunk is read a piece at a time and every
decompression call gives at most :data:`PIECE` octets, so a reader of the
stream holds a piece at a time and can stop at its limit
(:func:`~pdi.interop.warc.entries._drain`).

What the stream gives is what warcio's gives for a payload in good order,
and its guesses for a server's mislabel are warcio's (a reader of a
stranger's WARC expects those), but for the codings' names, read as HTTP
says rather than as warcio does: in any case (RFC 9110 §8.4.1, RFC 9112
§7), ``x-gzip`` as ``gzip`` (RFC 9110 §8.4.1.3), and a ``Transfer-Encoding``
whose last coding is ``chunked`` (RFC 9112 §6.1; a ``gzip`` or ``deflate``
before it undone after the chunks), where warcio takes exactly ``chunked``
and ``gzip`` and gave a page's chunks' framing or its gzip octets as the
page; a payload whose first line is not a chunk's size line and is
not meant as one (it is not one word and a CRLF: ``<!DOCTYPE html>``,
``{"url": …``, a payload with no CRLF) is read as it is (a server that
said ``chunked`` and did not chunk, or a recorder that undid the chunks and
kept the header, as pywb does); a ``Content-Encoding`` of ``gzip``,
``deflate`` (the zlib format, else raw deflate) or ``br`` (when a ``brotli``
module with a bounded decoder is installed), any other left as it is, as is
a payload its coding cannot undo from its start and that does not begin as
that coding does (a gzip member's magic octets, a zlib header); what follows
the end of the coded stream is left out.

A payload that is damaged is a :class:`DecodingError` saying where, where
warcio gives a part of it, or its chunks' framing as if it were the page:

- a chunk cut short by the payload's end (warcio gives what it holds, as
  if it were whole), or not followed by its CRLF (warcio gives the chunk
  with its size line, and what follows, as payload);
- a first line meant as a chunk size that is not one (RFC 9112 §7.1:
  ``1*HEXDIG [ chunk-ext ] CRLF``): ``ZZ`` (warcio gives the payload as it
  is, framing and all), ``-5`` (the same, less two octets), ``0x5`` (read
  as 5, as Python's ``int(…, 16)`` reads it); a size line past the first
  that is not one (warcio gives the rest with its framing);
- a size past :data:`_MAX_CHUNK` (warcio's bound: it gives the payload as
  it is, framing and all);
- a payload that ends before its last chunk (warcio gives what it read);
- a coded stream that ends before its end (warcio gives what it decoded),
  or that its coding cannot undo past its start, or at its start when the
  payload begins as that coding does (a gzip member whose CRC-32 is wrong:
  warcio gives the coded octets as they are; past its start it writes the
  error to stderr and gives what it decoded before it). A payload coded
  ``br`` or raw deflate has no such mark, and one those cannot undo within
  its first piece is read as it is, as warcio reads it.

pdi is stricter than warcio there because a name it mints must bring back
the page's own octets, the same every time: a prefix of a page, or a page
with its chunks' framing in it, is not that page, and a later copy of the
whole page would be a second version of it. A record so damaged is refused
as any other damaged record is (``--partial`` drops it and the rest of its
file). A last chunk's trailer fields (RFC 9112 §7.1.2), which warcio gives
as if they were payload, are read and left out (at most 100 lines; a
payload that ends among them has given all its data, and is whole).
The chunks' framing is read by :class:`pdi._chunked.Chunks`, the one
reader of chunked bodies the mirror's and the capture's use too, here
within warcio's bounds (a size line of 64 octets with its CRLF, a size of
2 GiB) and with spaces before a size passed over, as warcio strips them.

``br`` is undone through libbrotli's C API (``BrotliDecoderCreateInstance``,
``BrotliDecoderDecompressStream`` with its output bound, ``BrotliDecoderGetErrorCode``,
``BrotliDecoderErrorString``) as brotlipy binds it (its module ``brotli._brotli``:
``lib`` and ``ffi``), since brotlipy's ``Decompressor`` gives all its output in
one call; brotlipy is not a dependency of pdi (pywb brings it to the tests), and
without it ``br`` is left as it is, as warcio leaves it.
"""

from __future__ import annotations

import io
import re
import zlib
from collections.abc import Iterator
from typing import Any, BinaryIO

from pdi._chunked import ChunkedError, Chunks, CutShort, pieces

__all__ = ["PIECE", "DecodingError", "decoded", "decodes"]

#: The most octets one read of the raw payload, or one decompression call, gives.
PIECE = 1 << 16
#: The longest chunk size line read, its CRLF with it (warcio reads 64 octets): its size as many hex digits as it
#: holds, bounded by :data:`_MAX_CHUNK`.
_SIZE_LINE = 64
#: The trailer section's most lines, and octets: as many lines of 8 KiB (and the empty line after them).
_TRAILER_LINES = 100
_TRAILER = _TRAILER_LINES * (8 << 10) + 2
#: A chunk's largest size (warcio's bound).
_MAX_CHUNK = 1 << 31
#: A first line meant as a chunk size line that may not be one: one word before its CRLF (``ZZ``, ``-5``,
#: ``0x5``); a first line that is not this is a payload that was not chunked (``<!DOCTYPE html>``).
_SIZE_MEANT = re.compile(rb"[ \t]*[-+]?[0-9A-Za-z_.]+[ \t]*(?:;[^\r\n]*)?\r\n")


class DecodingError(ValueError):
    """A payload whose chunks or coded stream are damaged: cut short, or broken (the message says where)."""


def _brotli_lib() -> Any | None:
    """The C API of libbrotli's decoder as brotlipy binds it (``BrotliDecoderDecompressStream`` with an output
    bound), or ``None`` without brotlipy: warcio decodes ``br`` with whatever ``brotli`` module there is, in calls
    without an output bound, so ``br`` is undone here only through that API, else left as it is."""
    try:
        from brotli import _brotli  # type: ignore[import-untyped,import-not-found,unused-ignore]
    except ImportError:
        return None
    lib = getattr(_brotli, "lib", None)
    if lib is None or not hasattr(lib, "BrotliDecoderDecompressStream") or not hasattr(_brotli, "ffi"):
        return None
    return _brotli


def decodes(coding: str) -> bool:
    """Whether the content coding ``coding`` (lower case) is undone here."""
    return coding in ("gzip", "deflate") or (coding == "br" and _brotli_lib() is not None)


def _raw_pieces(raw: BinaryIO) -> Iterator[bytes]:
    while piece := raw.read(PIECE):
        yield piece


def _dechunked(raw: BinaryIO, cut: bool = False) -> Iterator[bytes]:
    """The data of a ``chunked`` payload (RFC 9112 §7.1), a piece at a time, its framing read by
    :class:`pdi._chunked.Chunks` within warcio's bounds; the payload as it is when its first line is not a chunk
    size line and not meant as one (see the module's docstring), and a :class:`DecodingError` when its chunks are
    damaged: cut short, a size line that is not one, or no last chunk."""
    line = raw.readline(_SIZE_LINE)
    if not _SIZE_MEANT.fullmatch(line):
        # not chunked at all, whatever the header said: read as it is (as warcio does)
        if line:
            yield line
        yield from _raw_pieces(raw)
        return
    chunks = Chunks(max_digits=_SIZE_LINE - 2, max_line=_SIZE_LINE - 2, max_trailer=_TRAILER,
                    max_fields=_TRAILER_LINES, max_size=_MAX_CHUNK, spaces=True, noun="the payload")
    try:
        yield from pieces(raw, chunks, line, PIECE)
    except CutShort as exc:
        # its crawler cut it (WARC-Truncated): what it holds; cut in its trailer section: its data, all given
        if not (cut or chunks.last):
            raise DecodingError(f"its chunked transfer coding is broken: {exc}") from None
    except ChunkedError as exc:
        raise DecodingError(f"its chunked transfer coding is broken: {exc}") from None


class _Zlib:
    def __init__(self, wbits: int) -> None:
        self.d = zlib.decompressobj(wbits)

    def pieces(self, data: bytes) -> Iterator[bytes]:
        while not self.d.eof:
            out = self.d.decompress(data, PIECE)
            data = self.d.unconsumed_tail
            if out:
                yield out
            if not data and len(out) < PIECE:
                return  # all input read and no output held back

    @property
    def eof(self) -> bool:
        return self.d.eof


class _Brotli:
    """libbrotli's streaming decoder, through brotlipy's binding, giving at most :data:`PIECE` octets a call."""

    def __init__(self) -> None:
        binding = _brotli_lib()
        assert binding is not None
        self.lib, self.ffi = binding.lib, binding.ffi
        self.state = self.ffi.gc(self.lib.BrotliDecoderCreateInstance(self.ffi.NULL, self.ffi.NULL, self.ffi.NULL),
                                 self.lib.BrotliDecoderDestroyInstance)
        self.out = self.ffi.new("uint8_t[]", PIECE)
        self.eof = False

    def pieces(self, data: bytes) -> Iterator[bytes]:
        ffi, lib = self.ffi, self.lib
        held = ffi.new("uint8_t[]", data)
        next_in = ffi.new("uint8_t **", held)
        available_in = ffi.new("size_t *", len(data))
        while not self.eof:
            next_out = ffi.new("uint8_t **", self.out)
            available_out = ffi.new("size_t *", PIECE)
            result = lib.BrotliDecoderDecompressStream(self.state, available_in, next_in, available_out, next_out,
                                                       ffi.NULL)
            if result == lib.BROTLI_DECODER_RESULT_ERROR:
                code = lib.BrotliDecoderGetErrorCode(self.state)
                raise zlib.error(ffi.string(lib.BrotliDecoderErrorString(code)).decode("ascii", "replace"))
            made = PIECE - available_out[0]
            if made:
                yield ffi.buffer(self.out, made)[:]
            if result == lib.BROTLI_DECODER_RESULT_SUCCESS:
                self.eof = True
            elif result == lib.BROTLI_DECODER_RESULT_NEEDS_MORE_INPUT:
                return


def _begins_as(coding: str, start: bytes) -> bool:
    """Whether a payload beginning ``start`` begins as the coding ``coding``'s stream does: a gzip member's magic
    octets (RFC 1952 §2.3.1), a zlib header whose check bits are right (RFC 1950 §2.2); raw deflate and ``br``
    have no such mark."""
    if coding == "gzip":
        return start[:2] == b"\x1f\x8b"
    if coding == "deflate":
        return len(start) >= 2 and start[0] & 0x0F == 8 and start[0] >> 4 <= 7 and (start[0] << 8 | start[1]) % 31 == 0
    return False


def _decompressed(pieces: Iterator[bytes], coding: str, raw_deflate: bool = False, cut: bool = False,
                  ) -> Iterator[bytes]:
    """``pieces`` with the content coding ``coding`` undone; as they are when it cannot be undone from its start
    and they do not begin as it does (``deflate``: the zlib format, then raw deflate, as warcio tries them); a
    :class:`DecodingError` when the stream is broken past its start, or ends before its end."""
    wbits = -zlib.MAX_WBITS if raw_deflate else zlib.MAX_WBITS | 16 if coding == "gzip" else zlib.MAX_WBITS
    decoder: _Zlib | _Brotli = _Brotli() if coding == "br" else _Zlib(wbits)
    fed: list[bytes] | None = []  # the input fed while there is no output yet (up to a piece), else None
    at = 0
    for piece in pieces:
        try:
            for out in decoder.pieces(piece):
                fed = None
                yield out
        except zlib.error as exc:
            if fed is None or _begins_as(coding, b"".join([*fed, piece])[:2]):
                raise DecodingError(f"its Content-Encoding {coding} cannot be undone past octet {at} of the"
                                    f" payload: {exc}") from None
            # a mislabel (nothing decoded yet): read as it is, as warcio does
            again = _chain([*fed, piece], pieces)
            yield from _decompressed(again, coding, True, cut) if coding == "deflate" and not raw_deflate else again
            return
        at += len(piece)
        if fed is not None:
            fed.append(piece)
            if at > PIECE:
                fed = None  # past the first piece: no longer a mislabel
        if decoder.eof:
            return  # what follows the coded stream is left out (as warcio does)
    if at and not cut:  # (an empty payload has no coded stream: a HEAD's, a 304's; a cut one: what it held)
        raise DecodingError(f"its Content-Encoding {coding} stream is cut short: the payload ends at octet {at},"
                            " before the stream's end")


def _chain(first: list[bytes], rest: Iterator[bytes]) -> Iterator[bytes]:
    yield from first
    yield from rest


class _Pieces(io.RawIOBase):
    """A readable stream of what an iterator of pieces gives."""

    def __init__(self, pieces: Iterator[bytes]) -> None:
        super().__init__()
        self.pieces = pieces
        self.held = b""
        self.at = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        while self.at == len(self.held):
            piece = next(self.pieces, None)
            if piece is None:
                return 0
            self.held, self.at = piece, 0
        size = min(len(buffer), len(self.held) - self.at)
        buffer[:size] = self.held[self.at:self.at + size]
        self.at += size
        return size


def decoded(raw: BinaryIO, http: Any | None, *, cut: bool = False) -> BinaryIO:
    """The payload ``raw`` (read from its start) with the codings the HTTP header fields ``http`` name undone
    (``http``: warcio's ``StatusAndHeaders`` or one answering ``get_header`` alike; ``None``: a record with no
    HTTP header block, read as it is). ``cut``: the record says its crawler cut its payload short
    (``WARC-Truncated``, WARC 1.1 §5.13): one that ends inside a chunk or its coded stream gives what it holds, as
    before damage was refused (its record's digests vouch for the octets it has), not a :class:`DecodingError`."""
    if not http:  # (warcio's test: a record whose HTTP header block is empty has none)
        return raw
    coding = _coding(http.get_header("content-encoding"))
    if coding is not None and not decodes(coding):
        coding = None
    # RFC 9112 §6.1, §7: Transfer-Encoding lists the transfer codings in the order they were applied, chunked last,
    # each name in any case (warcio undoes chunks only under a value of exactly "chunked": "Chunked" gave the
    # chunks' framing as the page); a coding before chunked (gzip) is undone after the chunks, before the content's
    transfer = [name for name in map(_coding, (http.get_header("transfer-encoding") or "").split(",")) if name]
    chunked = bool(transfer) and transfer[-1] == "chunked"
    outer = [name for name in transfer[:-1] if name != "identity"] if chunked else []
    if outer and not all(decodes(name) for name in outer):
        chunked, outer = False, []  # a transfer coding not undone here: the payload as it is, as warcio gives it
    if not chunked and coding is None:
        return raw
    pieces = _dechunked(raw, cut) if chunked else _raw_pieces(raw)
    for name in reversed(outer):
        pieces = _decompressed(pieces, name, cut=cut)
    if coding is not None:
        pieces = _decompressed(pieces, coding, cut=cut)
    return _Pieces(pieces)  # type: ignore[return-value]  # a RawIOBase is a binary stream, not typed as BinaryIO


def _coding(name: str | None) -> str | None:
    """A content or transfer coding's name as :func:`decodes` knows it: lower case (RFC 9110 §8.4.1, RFC 9112
    §7: case-insensitive), ``x-gzip`` as ``gzip`` (RFC 9110 §8.4.1.3: "A recipient SHOULD consider "x-gzip" to be
    equivalent to "gzip""; warcio left it compressed, and the page was its gzip octets); ``None`` for none."""
    name = (name or "").strip().lower()
    return ("gzip" if name == "x-gzip" else name) or None
