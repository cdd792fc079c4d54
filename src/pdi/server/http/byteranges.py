"""Several byte ranges in one answer: ``206`` with a ``multipart/byteranges`` body (RFC 9110 §14.6, §15.3.7.2).

:func:`~pdi.server.http.conditional.byte_ranges` reads the ``Range`` field;
here the ranges it found are made few (:func:`coalesced`) and laid out as the
parts of one body (:class:`Byteranges`): each part's delimiter and header
fields (``Content-Type``, ``Content-Range``) before its octets, and the close
delimiter after the last, so that the body's length is known before an octet
is read and the octets can come by verified chunks, a part at a time.

What a stranger's ``Range`` may cost (RFC 9110 §14.2, §17.15): ranges that
overlap, or lie closer than a part's own head would cost, are one part, so no
octet is sent twice; more than :data:`MAX_PARTS` parts after that and the
field is ignored (the whole body, ``200``, what a ``GET`` without it costs).
A streamed answer's chunk reads are counted before it is begun
(:func:`chunk_reads`): more than twice the body's and it is answered whole.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

#: The most parts a ``multipart/byteranges`` answer has once near ranges are one; past it the ``Range`` field is
#: ignored (RFC 9110 §14.2: "a set of many small ranges that are not listed in ascending order" is among the
#: "indications of either a broken client or a deliberate denial-of-service attack").
MAX_PARTS = 16

#: Ranges with fewer octets than this between them are one part: RFC 9110 §14.2 lets a server coalesce ranges
#: "separated by a gap that is smaller than the overhead of sending multiple parts", and a part's own head (its
#: delimiter, ``Content-Type`` and ``Content-Range``) is about this long.
NEAR = 80


def coalesced(ranges: Sequence[tuple[int, int]], near: int = NEAR) -> list[tuple[int, int]]:
    """``ranges`` (inclusive first and last octets) with each set that overlap or lie fewer than ``near`` octets
    apart made one, in the order the first of each was asked (RFC 9110 §15.3.7.2: the parts "in the same order
    that the corresponding range-spec appeared ... excluding those ranges that were ... coalesced into other
    ranges"). No two of those returned share an octet."""
    order = sorted(range(len(ranges)), key=lambda at: ranges[at])
    merged: list[list[int]] = []  # [first, last, where the first of them was asked]
    for at in order:
        first, last = ranges[at]
        if merged and first <= merged[-1][1] + near:
            held = merged[-1]
            held[1], held[2] = max(held[1], last), min(held[2], at)
        else:
            merged.append([first, last, at])
    return [(first, last) for first, last, _ in sorted(merged, key=lambda held: held[2])]


def chunk_reads(ranges: Sequence[tuple[int, int]], chunk_size: int) -> int:
    """How many chunks of ``chunk_size`` octets are read to send ``ranges`` in turn, a chunk that holds the end of
    one and the start of the next read once (as :meth:`pdi.archive.blobs.ChunkedReader.spans` reads them)."""
    reads, held = 0, -1
    for first, last in ranges:
        reads += last // chunk_size - first // chunk_size + (first // chunk_size != held)
        held = last // chunk_size
    return reads


@dataclass(frozen=True)
class Byteranges:
    """The layout of a ``multipart/byteranges`` body of ``ranges`` (inclusive) of a representation of ``length``
    octets: each part's head (delimiter and fields, in :attr:`heads`), then its octets; :attr:`tail` after the
    last. RFC 9110 §14.6's example is the model: no preamble, ``CRLF`` before each later delimiter."""

    boundary: bytes
    ranges: tuple[tuple[int, int], ...]
    heads: tuple[bytes, ...]
    tail: bytes

    @classmethod
    def of(cls, ranges: Sequence[tuple[int, int]], length: int, content_type: bytes, boundary: bytes) -> Byteranges:
        """The layout of ``ranges`` of ``length`` octets served as ``content_type`` (each part says it: RFC 9110
        §15.3.7.2, "the server SHOULD generate that same Content-Type header field in the header area of each
        body part"), delimited by ``boundary``."""
        heads = tuple(b"%s--%s\r\ncontent-type: %s\r\ncontent-range: bytes %d-%d/%d\r\n\r\n"
                      % (b"\r\n" if at else b"", boundary, content_type, first, last, length)
                      for at, (first, last) in enumerate(ranges))
        return cls(boundary, tuple(ranges), heads, b"\r\n--%s--\r\n" % boundary)

    @property
    def content_type(self) -> bytes:
        """The answer's ``Content-Type`` (RFC 9110 §14.6: ``multipart/byteranges`` with its ``boundary``)."""
        return b"multipart/byteranges; boundary=" + self.boundary

    @property
    def length(self) -> int:
        """The body's octets: the parts' heads and octets, and the tail (the answer's ``Content-Length``)."""
        return (sum(map(len, self.heads)) + sum(last - first + 1 for first, last in self.ranges)
                + len(self.tail))

    def join(self, body: bytes) -> bytes:
        """The whole multipart body of the ranges of ``body`` (held in memory already)."""
        pieces = []
        for head, (first, last) in zip(self.heads, self.ranges, strict=True):
            pieces += [head, body[first : last + 1]]
        return b"".join([*pieces, self.tail])


def boundary(tag: str, body: bytes | None = None) -> bytes:
    """The ``boundary`` of the byteranges answer of an entity tagged ``tag``: made from the tag, so that the same
    request is answered alike octet for octet (RFC 2046 §5.1.1: it must occur in no part). The tag holds the
    stored octets' SHA-256, so they cannot hold a string made from it; a ``body`` held in memory (which a
    fragment or another variant made) is looked through, and another is made while it holds one."""
    made = b"pdi-" + hashlib.sha256(tag.encode("utf-8")).hexdigest()[:32].encode("ascii")
    counter = 0
    while body is not None and made in body:
        counter += 1
        made = b"pdi-" + hashlib.sha256(b"%s %d" % (tag.encode("utf-8"), counter)).hexdigest()[:32].encode("ascii")
    return made
