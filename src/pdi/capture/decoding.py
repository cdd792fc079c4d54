"""Undoing an HTTP response's ``Content-Encoding`` with the decoded size bounded as it grows.

httpx decodes a body whole, one coding after the other, each ``decompress`` call
without an output limit: a few kilobytes sent as ``Content-Encoding: gzip, gzip``
become gigabytes in memory before any size check sees them. Here every coding is
undone by its own ``zlib`` decompressor called with ``max_length`` (RFC 9110 §8.4:
the codings are undone in the reverse of the order listed), so no step holds more
than :data:`PIECE` bytes of output at a time, and each step's output is counted
against the limit as it comes: the first byte past the limit is a
:class:`~pdi.errors.LimitError` naming the resource.

Codings: ``gzip`` (and ``x-gzip``; several members follow one another, RFC 1952
§2.2), ``deflate`` (RFC 9110 §8.4.1.2: the zlib format; a raw deflate stream, which
some servers send, is read too) and ``identity``. Any other is an
:class:`~pdi.errors.UnsupportedError` (capture asks for ``gzip, deflate`` only), and
so is a body that is not what its coding says or that ends inside the coded stream
(a truncated body would be archived as if whole).
"""

from __future__ import annotations

import zlib
from collections.abc import Callable

from pdi._wording import plural
from pdi.errors import LimitError, UnsupportedError

__all__ = ["ACCEPTED", "MAX_CODINGS", "PIECE", "BodyDecoder"]

#: The ``Accept-Encoding`` capture sends.
ACCEPTED = "gzip, deflate"
#: The most codings one response may stack (each one is a pass over up to the limit).
MAX_CODINGS = 3
#: The most output one decompression call may give.
PIECE = 64 * 1024

Emit = Callable[[bytes], None]


class _Inflate:
    """One coding undone, its output handed on in pieces of at most :data:`PIECE` bytes."""

    def __init__(self, coding: str, url: str) -> None:
        self.coding = coding
        self.url = url
        self.gzip = coding in ("gzip", "x-gzip")
        self.started = False  # any input seen
        self.produced = 0
        self._d = self._new(zlib.MAX_WBITS | 16 if self.gzip else zlib.MAX_WBITS)
        self._sniffed = self.gzip  # deflate: zlib or raw is decided on the first two bytes
        self._head = b""

    @staticmethod
    def _new(wbits: int) -> zlib._Decompress:
        return zlib.decompressobj(wbits)

    def _broken(self, why: str) -> UnsupportedError:
        return UnsupportedError(f"{self.url}: the body is not valid {self.coding} data ({why})")

    def push(self, data: bytes, emit: Emit) -> None:
        if not data:
            return
        self.started = True
        if not self._sniffed:
            self._head += data
            if len(self._head) < 2:
                return
            data, self._head = self._head, b""
            self._sniffed = True
            # RFC 1950 §2.2: CM 8 in the low nibble of CMF, and CMF·256 + FLG a multiple of 31
            if not (data[0] & 0x0F == 8 and (data[0] << 8 | data[1]) % 31 == 0):
                self._d = self._new(-zlib.MAX_WBITS)
        while True:
            try:
                out = self._d.decompress(data, PIECE)
            except zlib.error as exc:
                raise self._broken(str(exc)) from exc
            if out:
                self.produced += len(out)
                emit(out)
            if self._d.eof:
                data = self._d.unused_data
                if not data:
                    return
                if not self.gzip:
                    raise self._broken(f"{plural(len(data), 'byte')} after the end of the stream")
                self._d = self._new(zlib.MAX_WBITS | 16)  # the next gzip member
                continue
            data = self._d.unconsumed_tail
            if not data and len(out) < PIECE:
                return  # all input read and no output held back

    def finish(self) -> None:
        if self.started and not self._sniffed:
            raise self._broken("the body is a single byte")
        if self.started and not self._d.eof:
            raise self._broken("the body ends inside the compressed stream")


class BodyDecoder:
    """Feed raw body bytes; :attr:`body` is the decoded body, never longer than ``limit``."""

    def __init__(self, content_encoding: list[str], *, limit: int, url: str) -> None:
        codings = [c.strip(" \t").lower() for c in content_encoding]
        codings = [c for c in codings if c and c != "identity"]
        for coding in codings:
            if coding not in ("gzip", "x-gzip", "deflate"):
                raise UnsupportedError(
                    f"{url} is sent with Content-Encoding {coding!r}, which capture does not decode"
                    f" (it asks for {ACCEPTED})"
                )
        if len(codings) > MAX_CODINGS:
            raise LimitError(
                f"{url} is sent with {len(codings)} content codings ({', '.join(codings)}),"
                f" more than the limit of {MAX_CODINGS}"
            )
        self.codings = codings
        self.limit = limit
        self.url = url
        self.body = bytearray()
        # undone last to first (RFC 9110 §8.4)
        self._stages = [_Inflate(c, url) for c in reversed(codings)]

    def _too_large(self) -> LimitError:
        return LimitError(
            f"{self.url} is larger than the limit of {self.limit} bytes once decoded ({', '.join(self.codings)})"
        )

    def _deliver(self, level: int, piece: bytes) -> None:
        if level == len(self._stages):
            self.body += piece
            if len(self.body) > self.limit:
                raise self._too_large()
            return
        stage = self._stages[level]

        def onward(out: bytes) -> None:
            if stage.produced > self.limit:
                raise self._too_large()
            self._deliver(level + 1, out)

        stage.push(piece, onward)

    def feed(self, raw: bytes) -> None:
        """Decode ``raw`` (the next bytes of the body as sent)."""
        self._deliver(0, raw)

    def finish(self) -> bytes:
        """The decoded body, once every coded stream is checked to have ended."""
        for stage in self._stages:
            stage.finish()
        return bytes(self.body)
