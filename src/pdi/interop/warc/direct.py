"""Pass 1's fast path: the plain records of a WARC read a header block at a time, handing anything else to warcio.

warcio reads a record's WARC and HTTP header blocks a line at a time
(``readline`` through three layered readers, a ``str`` decoded and stripped
for each line) and feeds its digests and payload through as many: that was
most of an import's first pass, itself longer than ``warcio check``
(issue 24, ``bench/bench_warc.py``). Most files hold only plain records: a
gzip member per record (WARC 1.1 annex D) or an uncompressed file, each
record ``version CRLF fields CRLF CRLF block CRLF CRLF`` (ISO 28500:2017 §4)
with an HTTP header block ending in CRLF CRLF. Those are read here: a gzip
member decompressed whole, each header block split whole, each digest
(§5.8, §5.9) made in one ``hashlib`` call, and the index entries made from
them by :func:`~pdi.interop.warc.entries._index_fields`, which warcio's
records go through too (transfer and content codings are undone by
:mod:`~pdi.interop.warc.coding`, as for warcio's records).

The fast path accepts a record only when it is sure warcio, through
:class:`~pdi.interop.warc.bounded.BoundedIterator`, reads it the same and
finds nothing wrong with it (an HTTP header line without a colon it drops,
as warcio's parser does). Whatever else it meets (a WARC header line that is
not ``name: value``, an HTTP field name holding white space, a continuation line, a bare CR or LF, a WARC field named
twice, a version other than ``WARC/1.0`` or ``WARC/1.1``, a digest spelled
other than in base32 as warcio writes it, or that does not match, a member
holding more or less than one record, a record larger than
:data:`RECORD_CAP`, a header block near the bounds, a member expanding
near the bound (:func:`_expansion_cap`), the deadline, any damage) raises
:class:`Handover`, and the caller reads the whole file again with warcio
from its start (warcio's reader started at a member in the middle would
not know the file's format and compression as it does there), which judges
it and names any damage exactly as before. So the fast path changes how
long a plain file takes (a file holding another record takes the fast
path's time up to it more), never what a file yields or which error it
gives: tests/interop/test_interop_warc_direct.py compares the two readings.
"""

from __future__ import annotations

import hashlib
import io
import time
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import BinaryIO

from warcio.utils import BUFF_SIZE

from pdi.errors import PDIError
from pdi.interop.warc.bounded import EXPANSION_ALLOWANCE, ReadLimits, target_uri
from pdi.interop.warc.coding import decoded
from pdi.interop.warc.entries import TARGETED, Entry, LeftOut, _index_fields, unheld
from pdi.interop.warc.sources import Source

__all__ = ["RECORD_CAP", "Handover", "Read", "read_plain"]

#: The largest record (decompressed) the fast path holds whole; a larger one is read by warcio, in pieces.
RECORD_CAP = 16 << 20
_BLOCK = 1 << 20
_VERSIONS = frozenset({"WARC/1.0", "WARC/1.1"})
#: digests made here; any other algorithm is warcio's to judge
_ALGORITHMS = frozenset({"sha1", "sha256", "sha512", "md5"})
_HTTP_RECORDS = ("response", "request", "revisit")


class Handover(Exception):
    """The file holds a record that is not plain (at ``offset``): warcio reads the whole file instead."""

    def __init__(self, offset: int) -> None:
        super().__init__(offset)
        self.offset = offset


@dataclass
class Read:
    """What the fast path read of a file: each record's offset, entry (``None``: not indexed) and kept payload."""

    kept_bytes: int  # the index's kept payloads' octets, these included
    keep_total: int  # and the most it keeps (:data:`~pdi.interop.warc.records.KEEP_TOTAL`)
    records: list[tuple[int, Entry | None, bytes | None]] = field(default_factory=list)
    #: the records left out for their target's scheme (:func:`~pdi.interop.warc.entries.unheld`)
    left: LeftOut = field(default_factory=LeftOut)

    def keep_room(self) -> bool:
        return self.kept_bytes < self.keep_total

    def add(self, offset: int, entry: Entry | None, kept: bytes | None) -> None:
        self.records.append((offset, entry, kept))
        if entry is not None and kept is not None:
            self.kept_bytes += len(kept)


class _Fields:
    """A header block's fields as warcio's ``StatusAndHeaders`` answers them (the first of a name, any case)."""

    __slots__ = ("fields", "statusline")

    def __init__(self, fields: dict[str, str], statusline: str = "") -> None:
        self.fields = fields
        self.statusline = statusline

    def get_header(self, name: str, default_value: str | None = None) -> str | None:
        return self.fields.get(name.lower(), default_value)

    def get_statuscode(self) -> str:
        return self.statusline.split(" ", 1)[0]


class _NotPlain(Exception):
    """This record is not one the fast path reads (warcio's to judge)."""


def _lines(block: bytes) -> list[str]:
    """A header block's lines (CRLF-separated, no trailing blank line), decoded as warcio decodes each line."""
    if b"\n" in block.replace(b"\r\n", b"") or b"\r" in block.replace(b"\r\n", b""):
        raise _NotPlain  # a bare LF or CR: warcio splits such lines its own way
    try:
        return block.decode("utf-8").split("\r\n")
    except UnicodeDecodeError:  # warcio decodes each line as UTF-8, else ISO-8859-1
        lines = []
        for raw in block.split(b"\r\n"):
            try:
                lines.append(raw.decode("utf-8"))
            except UnicodeDecodeError:
                lines.append(raw.decode("iso-8859-1"))
        return lines


def _parse_fields(lines: list[str], *, http: bool = False) -> tuple[str, dict[str, str]]:
    """The status line and fields of a header block, as warcio's ``StatusAndHeadersParser`` reads them (``http``:
    an HTTP header block, whose lines without a colon warcio's parser drops, as the import reads them)."""
    statusline = lines[0].rstrip()
    if not statusline:
        raise _NotPlain
    fields: dict[str, str] = {}
    for raw in lines[1:]:
        line = raw.rstrip()
        if not line or line[0] in " \t":
            raise _NotPlain  # a blank-looking line inside the block, or a continuation line
        name, sep, value = line.partition(":")
        if http and not sep:
            continue  # no field: dropped, as warcio drops it (a continuation line after it is handed over above)
        name = name.rstrip(" \t")
        if not sep or " " in name or "\t" in name:
            # a WARC header line that is no field (bounded.unnamed): refused by the bounded reader, naming it; an
            # HTTP field name holding white space, which warcio reads as the name: warcio's to read
            raise _NotPlain
        fields.setdefault(name.lower(), value.lstrip())
    return statusline, fields


_B32_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
_B32_DIGITS = str.maketrans(_B32_ALPHABET, "0123456789abcdefghijklmnopqrstuv")  # as int(…, 32) reads them
_B32_GONE = str.maketrans("", "", _B32_ALPHABET)


def _digest_right(declared: str, data: bytes | memoryview) -> None:
    """Raise :class:`_NotPlain` unless ``declared`` (``algo:`` and the RFC 4648 base32 of the digest, as warcio
    writes it) is the digest of ``data``.

    The base32 string is compared as the number it spells (its length, padding and alphabet checked, so the
    one number has the one spelling): ``base64.b32encode`` is Python code, and took a tenth of pass 1.
    """
    algorithm, sep, value = declared.partition(":")
    if not sep or algorithm not in _ALGORITHMS:
        raise _NotPlain
    digest = hashlib.new(algorithm, data).digest()
    size = len(digest)
    chars = -(-8 * size // 5)
    if len(value) != -(-size // 5) * 8 or value[chars:] != "=" * (len(value) - chars) or (
            value[:chars].translate(_B32_GONE)):
        raise _NotPlain  # not base32 as warcio writes it: warcio judges it
    if int(value[:chars].translate(_B32_DIGITS), 32) != int.from_bytes(digest, "big") << (5 * chars - 8 * size):
        raise _NotPlain


def _payload_stream(payload: bytes, http: _Fields | None, cut: bool) -> Callable[[], BinaryIO]:
    """The payload's stream with its codings undone, as :func:`~pdi.interop.warc.coding.decoded` undoes a record's
    that warcio reads (``cut``: its record says ``WARC-Truncated``)."""
    return lambda: decoded(io.BytesIO(payload), http, cut=cut)


class _Short(_NotPlain):
    """The record goes on past the octets at hand (an uncompressed file: read more and try again)."""


def _record(
    data: bytes, pos: int, offset: int, whole: bool, source: Source, number: int, limit: int, keep: bool,
    bounds: ReadLimits,
) -> tuple[int, Entry | None, bytes | None, str | None]:
    """Read the record at ``data[pos:]`` (``whole``: that is exactly one record, a gzip member's), at ``offset``
    in the file.

    Answers where it ends in ``data`` (after its closing CRLF CRLF), its entry, its kept payload and its target URI
    when the import leaves it out for its scheme (:func:`~pdi.interop.warc.entries.unheld`).
    """
    head_cap = min(bounds.max_line_bytes, bounds.max_header_bytes)
    end = data.find(b"\r\n\r\n", pos, pos + head_cap)
    if end < 0:
        raise _Short if len(data) - pos < head_cap else _NotPlain
    lines = _lines(data[pos:end])
    statusline, warc = _parse_fields(lines)
    if statusline not in _VERSIONS or len(warc) < len(lines) - 1:
        raise _NotPlain  # (a field named twice: warcio corrects the last WARC-Target-URI, and reads the first)
    kind = warc.get("warc-type")
    declared = warc.get("content-length")
    if kind is None or declared is None or not (declared.isascii() and declared.isdigit()) or (
            "warc-record-id" not in warc or "warc-date" not in warc):
        raise _NotPlain  # (a mandatory field missing: warcio's reading refuses it, naming it)
    if kind in TARGETED and "warc-target-uri" not in warc:
        raise _NotPlain  # (the same)
    length = int(declared)
    start = end + 4
    stop = start + length
    if stop - pos > RECORD_CAP:
        raise _NotPlain
    if len(data) < stop + 4:
        raise _Short
    if data[stop:stop + 4] != b"\r\n\r\n" or (whole and len(data) != stop + 4):
        raise _NotPlain  # its Content-Length does not end where the record does
    uri = warc.get("warc-target-uri")
    if uri is not None:  # as warcio's loader reads it here (Wget's <…>, spaces, encoded words)
        uri = warc["warc-target-uri"] = target_uri(uri)
    block = memoryview(data)[start:stop]
    revisit = kind == "revisit"
    block_digest = warc.get("warc-block-digest")
    if block_digest and not revisit:
        _digest_right(block_digest, block)
    http: _Fields | None = None
    payload_at = 0
    header_lines = len(lines) + 1
    if length and kind in _HTTP_RECORDS:
        if uri is None:
            raise _NotPlain
        if uri[:6].lower().startswith(("http:", "https:")):  # as warcio's reader here (HTTP_SCHEMES_ANY_CASE)
            http_end = data.find(b"\r\n\r\n", start, min(stop, start + head_cap))
            if http_end < 0:
                raise _NotPlain
            http_lines = _lines(data[start:http_end])
            line, fields = _parse_fields(http_lines, http=True)
            parts = line.split(" ", 1)
            http = _Fields(fields, parts[1].strip() if len(parts) > 1 else "")
            payload_at = http_end + 4 - start
            header_lines += len(http_lines) + 1
    # near the bounds (warcio's reader counts a line or two more or less at a record's edges): warcio's to judge
    if header_lines + 4 > bounds.max_header_lines or start - pos + payload_at + 16 > bounds.max_header_bytes:
        raise _NotPlain
    payload = block[payload_at:]
    payload_digest = warc.get("warc-payload-digest")
    if payload_digest and not revisit and "warc-segment-number" not in warc:
        _digest_right(payload_digest, payload)
    try:
        entry, kept = _index_fields(kind, _Fields(warc), http, length, _payload_stream(bytes(payload), http, "warc-truncated" in warc),
                                    source, number, offset, limit, keep, bounds.max_expansion)
    except (PDIError, ValueError):  # (a status of digits int() does not take)
        raise _NotPlain from None  # warcio reads it again, and the same error names it
    return stop + 4, entry, kept, uri if unheld(kind, uri) else None


#: Compressed octets fed to a member's decompressor at a time: warcio's reader's block (``BUFF_SIZE``), at
#: whose ends :mod:`~pdi.interop.warc.bounded` checks the expansion.
_STEP: int = BUFF_SIZE


def _expansion_cap(bounds: ReadLimits) -> float:
    """The expansion past which the fast path hands a member over.

    The bounded reader checks ``made > allowance and made > ratio * given`` at the ends of its blocks; the
    fast path checks after each :data:`_STEP` octets from the member's start, which may fall up to a block
    after the reader's check, so it checks a lower ratio: where the reader's check fails, ``given`` here is
    at most ``given + STEP`` there and ``made`` at least the same, so ``made`` is past ``ratio / 2`` times
    ``given`` (``given`` over two blocks), or past the allowance over two blocks (under them).
    """
    return min(bounds.max_expansion / 2, EXPANSION_ALLOWANCE / (2 * _STEP))


def _members(
    fh: BinaryIO, pending: bytes, bounds: ReadLimits, deadline: float | None
) -> Iterator[tuple[int, int, bytes]]:
    """Each gzip member of the file, whole, with its offset and the next one's; :class:`Handover` at one not
    read here."""
    offset = 0
    file_in = file_out = 0
    cap = _expansion_cap(bounds)
    buffer = memoryview(pending)
    at = 0  # where the next member begins in buffer
    while True:
        if at == len(buffer):
            buffer, at = memoryview(fh.read(_BLOCK)), 0
            if not buffer:
                return
        if deadline is not None and time.monotonic() > deadline:
            raise Handover(offset)
        member = zlib.decompressobj(zlib.MAX_WBITS | 16)
        out: list[bytes] = []
        made = taken = 0
        while not member.eof:
            if at == len(buffer):
                buffer, at = memoryview(fh.read(_BLOCK)), 0
                if not buffer:
                    raise Handover(offset)  # cut inside the member
            step = buffer[at:at + _STEP]
            try:
                piece = member.decompress(step, RECORD_CAP + 1 - made)
            except zlib.error:
                raise Handover(offset) from None
            used = len(step) - len(member.unused_data if member.eof else member.unconsumed_tail)
            at += used
            taken += used
            made += len(piece)
            out.append(piece)
            if made > RECORD_CAP or (made > EXPANSION_ALLOWANCE and made > cap * taken) or (
                    file_out + made > EXPANSION_ALLOWANCE and file_out + made > cap * (file_in + taken)):
                raise Handover(offset)
        file_in += taken
        file_out += made
        yield offset, offset + taken, b"".join(out)
        offset += taken


def read_plain(
    fh: BinaryIO,
    source: Source,
    number: int,
    limit: int,
    bounds: ReadLimits,
    deadline: float | None,
    read: Read,
    progress: Callable[[int], None] | None = None,
) -> None:
    """Read every record of the file ``fh`` (at its start) into ``read``, or raise :class:`Handover`.

    An error reading the file itself (a WACZ entry's CRC-32) is raised as it is.

    ``progress`` is told the octets read.
    """
    first = fh.read(_BLOCK)  # read on, not sought back: a WACZ's stored entry checks its CRC-32 read in order
    if first.startswith(b"\x1f\x8b"):
        for offset, after, data in _members(fh, first, bounds, deadline):
            try:
                _took, entry, kept, other = _record(data, 0, offset, True, source, number, limit, read.keep_room(),
                                                    bounds)
            except _NotPlain:
                raise Handover(offset) from None
            read.add(offset, entry, kept)
            if other is not None:
                read.left.add(number, offset, other)
            if progress is not None:
                progress(after)
    elif first:
        _read_uncompressed(fh, first, source, number, limit, bounds, deadline, read, progress)


def _read_uncompressed(
    fh: BinaryIO, data: bytes, source: Source, number: int, limit: int, bounds: ReadLimits, deadline: float | None,
    read: Read, progress: Callable[[int], None] | None,
) -> None:
    pos = 0  # where the next record begins in data
    at = 0  # the file offset of data[pos]
    eof = False
    while pos < len(data) or not eof:
        if deadline is not None and time.monotonic() > deadline:
            raise Handover(0)
        try:
            if pos == len(data):
                raise _Short
            if not data.startswith(b"WARC/", pos):
                raise _Short if len(data) - pos < 5 else _NotPlain  # blank lines of its own: warcio's to judge
            took, entry, kept, other = _record(data, pos, at, False, source, number, limit, read.keep_room(), bounds)
        except _Short:
            if eof:
                raise Handover(0) from None
            more = fh.read(max(_BLOCK, len(data) - pos))
            eof = not more
            data = data[pos:] + more
            pos = 0
            continue
        except _NotPlain:
            raise Handover(0) from None
        read.add(at, entry, kept)
        if other is not None:
            read.left.add(number, at, other)
        at += took - pos
        pos = took
        if progress is not None:
            progress(at)
