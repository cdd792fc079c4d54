"""Reading a stranger's WARC within bounds: line length, header lines, expansion, time; and finding where it is cut.

warcio reads a record's header lines with an unbounded ``readline()`` that
joins its 16 KiB blocks one by one (so a 32 MiB line of NUL bytes, 33 KB once
compressed, took 98 s and 1.8 GB), decompresses a ``.warc.gz`` member with no
bound on its ratio, writes a gzip error in the middle of a member to stderr
and carries on, and takes a file that ends inside a gzip member, inside a
header block or before the two CRLFs that close a record (ISO 28500:2017
§4, ``warc-record = header CRLF block CRLF CRLF``) as a shorter file. The
iterator here is warcio's with a reader that refuses each of these, so an
import fails fast with an error naming the record and its offset.

The limits (:class:`ReadLimits`) sit far above what real files hold and far
below what hurts:

- ``max_line_bytes`` 256 KiB for one header line, WARC or HTTP (a URL
  rarely tops 8 KiB; the longest header lines of the corpus, cookies and
  content security policies, a few KiB; as :mod:`pdi.mhtml.limits` bounds a
  header block);
- ``max_header_bytes`` 1 MiB and ``max_header_lines`` 10,000 for a record's
  header blocks (WARC and HTTP together, with the blank lines before them:
  real records have a few dozen lines; continuation lines are joined by
  warcio, so the bytes are bounded too);
- ``max_expansion`` 100: a gzip member (here) or a ZIP entry
  (:mod:`pdi.interop.wacz`) may not decompress to more than 100 times its
  compressed size, past its first MiB (HTML, scripts and JSON compress 3 to
  20 times; deflate reaches 1,032 only on runs of one byte, which is what a
  bomb is made of);
- ``max_seconds`` 3,600 to read and check every record of the file (an hour:
  a 100 GB WARC reads in minutes; ``None``: no limit).

``pdi import`` takes ``--max-expansion`` and ``--max-seconds``.

warcio internals used (warcio is pinned exactly; tests/interop/test_interop_warc_bombs.py
fingerprints each): ``ArchiveIterator.__init__`` (it makes ``self.reader``
from ``self.fh`` and reads nothing), ``ArchiveIterator._next_record``, ``ArchiveIterator._consume_blanklines``,
``BufferedReader._init_decomp``, ``BufferedReader._process_read``,
``BufferedReader._decompress`` (its first-block fallback to an uncompressed
stream), ``BufferedReader._fillbuff``, ``BufferedReader.empty``,
``BufferedReader.read`` (whose contract ``readline`` here keeps),
``ArcWarcRecordLoader.load_http_headers`` (which reads its loader's ``HTTP_SCHEMES``, set on the iterator's
``loader`` by :func:`any_case_schemes`), ``ArcWarcRecordLoader._ensure_target_uri_format`` (replaced on the
loader by :func:`any_case_schemes` with :func:`target_uri`'s reading), ``ArcWarcRecordLoader.__init__`` (its
``warc_parser``) and ``StatusAndHeadersParser.parse`` (which reads a header block by ``readline``, wrapped by
:func:`_colon_lines`) and the
attributes ``buff``, ``buff_size``, ``decompressor``, ``num_block_read`` and ``num_read``.
"""

from __future__ import annotations

import binascii
import email.errors
import email.header
import re
import time
import zlib
from dataclasses import dataclass
from typing import Any, BinaryIO

from warcio.archiveiterator import ArchiveIterator
from warcio.bufferedreaders import DecompressingBufferedReader
from warcio.digestverifyingreader import DigestVerifyingReader
from warcio.utils import BUFF_SIZE

from pdi._wording import clipped, plural
from pdi.errors import LimitError, ParseError, PDIError
from pdi.interop.warc.digests import algorithm_of, digest_octets, warcio_spelling

__all__ = [
    "EXPANSION_ALLOWANCE",
    "HTTP_SCHEMES_ANY_CASE",
    "UNCLOSED_HTTP",
    "WARCIO_INTERNALS",
    "BoundedIterator",
    "ReadLimits",
    "Refused",
    "target_uri",
    "unnamed",
]

#: the warcio names this module relies on beyond its public API (fingerprinted in the tests)
WARCIO_INTERNALS = (
    "warcio.archiveiterator.ArchiveIterator.__init__",
    "warcio.archiveiterator.ArchiveIterator._next_record",
    "warcio.archiveiterator.ArchiveIterator._consume_blanklines",
    "warcio.bufferedreaders.BufferedReader._init_decomp",
    "warcio.bufferedreaders.BufferedReader._process_read",
    "warcio.bufferedreaders.BufferedReader._decompress",
    "warcio.bufferedreaders.BufferedReader._fillbuff",
    "warcio.bufferedreaders.BufferedReader.empty",
    "warcio.bufferedreaders.BufferedReader.read",
    "warcio.recordloader.ArcWarcRecordLoader.load_http_headers",
    "warcio.recordloader.ArcWarcRecordLoader._ensure_target_uri_format",
    "warcio.recordloader.ArcWarcRecordLoader.__init__",
    "warcio.statusandheaders.StatusAndHeadersParser.parse",
)

#: ``http:`` and ``https:`` in every case (RFC 3986 §3.1: a scheme is case-insensitive). warcio's loader takes a
#: record's HTTP header block only under a target URI starting with its ``HTTP_SCHEMES``, in lower case, where its
#: writer writes one under any: a response to ``HTTP://example.org/`` that warcio wrote was refused as damaged, its
#: HTTP header block read as payload, which its payload digest does not match.
HTTP_SCHEMES_ANY_CASE = tuple(
    "".join(c.upper() if n >> i & 1 else c for i, c in enumerate(scheme)) + ":"
    for scheme in ("http", "https") for n in range(1 << len(scheme))
)


def _any_spelling(loader: Any) -> None:
    """``loader`` (warcio's record loader) checking a record's digests in any spelling WARC 1.1 allows
    (:mod:`pdi.interop.warc.digests`: base32 without its padding or in lower case, base16, base64), which warcio's
    checker, reading a value by its length alone, found not to match; and refusing a value of an algorithm it knows
    that spells no digest of it (warcio raised the base64 decoder's "Incorrect padding", said as the payload's)."""
    def wrap(stream: Any, rec_type: str, rec_headers: Any, digest_checker: Any, length: int | None = None) -> Any:
        payload = rec_headers.get_header("WARC-Payload-Digest")
        block = rec_headers.get_header("WARC-Block-Digest")
        segment = rec_headers.get_header("WARC-Segment-Number")
        if not payload and not block:
            return stream, False
        checked = (("WARC-Block-Digest", block), ("WARC-Payload-Digest", payload if segment is None else None))
        for field, value in checked if rec_type != "revisit" else ():  # (warcio checks no revisit's)
            known = algorithm_of(value) if value else None
            if value and known is None and loader.digest_unknown is None:
                # WARC 1.1 §5.8: "No particular algorithm is recommended". warcio's "unknown hash algorithm name in
                # block digest" was said as the record's damage (exit 3); it is no damage, but a digest pdi cannot
                # check: refused as unsupported (by the caller, records, once the record's fields are found whole),
                # nothing of the file deposited unchecked (--partial: the records before it)
                name = value.strip().partition(":")[0].strip() if ":" in value else value.strip()
                loader.digest_unknown = (f"its {field} {clipped(value.strip(), 100)!r} is of an algorithm pdi does"
                                         f" not know ({clipped(name, 40)!r}), so it cannot check it; pdi checks the"
                                         " algorithms Python's hashlib has (sha1, sha256, md5 …)")
            if value and known is not None and digest_octets(value) is None:
                raise Refused(ParseError, f"its {field} {clipped(value.strip(), 100)!r} spells no {known[0]} digest"
                                          f" (its {known[1]} octets in base32, base16 or base64)")
        verifying = DigestVerifyingReader(stream, length, digest_checker, record_type=rec_type,
                                          payload_digest=warcio_spelling(payload), block_digest=warcio_spelling(block),
                                          segment_number=segment)
        return verifying, True

    loader.wrap_digest_verifying_stream = wrap
    loader.digest_unknown = None
    load_http_headers = loader.load_http_headers

    def http_headers(rec_type: str, uri: str | None, stream: Any, length: int | None) -> Any:
        if uri is None and length != 0 and rec_type in loader.HTTP_RECORDS:  # (warcio: None.startswith)
            raise Refused(ParseError, f"it has no WARC-Target-URI, which every {clipped(str(rec_type), 40)} record"
                                      " has (WARC 1.1: \"All 'response', 'resource', 'request', 'revisit',"
                                      " 'conversion' and 'continuation' records shall have a WARC-Target-URI field\")")
        if rec_type != "response":
            return load_http_headers(rec_type, uri, stream, length)
        lines = _LastLine(stream)
        read = load_http_headers(rec_type, uri, lines, length)
        # warcio reads lines to a blank one or the block's end, and took a block that ends inside its header
        # section as a response with an empty payload: said by the caller (records), once it has checked the
        # record's Content-Length, which may be what made the block end early
        loader.http_unclosed = read is not None and lines.last == b""
        return read

    loader.load_http_headers = http_headers
    loader.http_unclosed = False
    _colon_lines(loader)


def unnamed(line: str) -> bool:
    """Whether ``line`` (a WARC header line, its line ending taken off) is no ``named-field`` (WARC 1.1 §4:
    ``field-name ":" [ field-value ]``, a ``field-name`` a ``token``, which holds no white space) nor a
    continuation line: it has no colon (``WARC-Foo bar``), or white space inside the name before its first one
    (``WARC-Payload-Digest sha1:…``, whose colon is the value's). White space between a name and its colon is
    read (a documented leniency), and so is a name of other non-token characters, as warcio reads them."""
    if not line.strip() or line[0] in " \t":
        return False
    name, sep, _value = line.partition(":")
    name = name.rstrip(" \t")
    return not sep or " " in name or "\t" in name


def _colon_lines(loader: Any) -> None:
    """``loader`` (warcio's record loader) refusing a WARC header line that is no named field (:func:`unnamed`):
    warcio's parser drops a line without a colon unsaid, with its continuation lines, and reads
    ``WARC-Payload-Digest sha1:…`` as a field named ``WARC-Payload-Digest sha1``, so the record's digest went
    unchecked, unsaid. The refusal names the line, and the record by its target URI when it has one
    (``loader.target_read``)."""
    parser = loader.warc_parser
    parse = parser.parse

    def checked(stream: Any, full_statusline: Any = None) -> Any:
        lines = _LastLine(stream, keep=True)
        headers = parse(lines, full_statusline)
        for raw in (lines.kept or [])[full_statusline is None:]:  # (the status line, when parse read it)
            line = raw.decode("utf-8", "replace").rstrip("\r\n")
            if unnamed(line):
                written = headers.get_header("WARC-Target-URI")
                loader.target_read = None if written is None else target_uri(written)
                raise Refused(ParseError, f"its WARC header line '{clipped(line, 100)}' is no field: a field is its"
                                          " name, a colon and its value (WARC 1.1 §4: named-field = field-name"
                                          " \":\" [ field-value ], a field-name a token, without spaces)")
        return headers

    parser.parse = checked


#: The refusal of a response whose HTTP header block ends without its empty line (``loader.http_unclosed``).
UNCLOSED_HTTP = ("its HTTP header block ends without the empty line that closes it (RFC 9112 §2.1: start-line CRLF"
                 " *( field-line CRLF ) CRLF [ message-body ]): the response is cut inside its header section")


class _LastLine:
    """A record's stream, keeping the last line read from it (warcio's HTTP parser reads by ``readline``)."""

    def __init__(self, stream: Any, *, keep: bool = False) -> None:
        self.stream = stream
        self.last: bytes | None = None
        #: with ``keep``: every line read (the status line is read before, by warcio's loader)
        self.kept: list[bytes] | None = [] if keep else None

    def readline(self, *args: Any) -> Any:
        self.last = self.stream.readline(*args)
        if self.kept is not None and self.last:
            self.kept.append(self.last)
        return self.last

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stream, name)


#: An RFC 2047 encoded word (``=?charset?Q?text?=``, ``B`` for base64), which WARC 1.1 §4 lets a field's words be.
_ENCODED_WORD = re.compile(r"=\?[^?\s]+\?[QqBb]\?[^?\s]*\?=")


def target_uri(value: str) -> str:
    """A ``WARC-Target-URI`` as written, read as the URI it gives (WARC 1.1 §5.11).

    RFC 2047 encoded words (WARC 1.1 §4 lets a field's words be written so) are decoded; the angle brackets WARC
    1.0 wrote around it (``"<" uri ">"``, dropped by WARC 1.1's erratum) are taken off with the white space inside
    them (RFC 3986 appendix C: the white space around a delimited URI is no part of it); a space left inside the
    URI is ``%20``, as warcio reads it. warcio took the brackets off only when nothing stood between them and the
    URI, and made ``< http://example.org/ >`` ``%20http://example.org/%20``, no HTTP URI: its record was read as
    nothing an import uses, unsaid; so was a URI written as an encoded word."""
    uri = value.strip()
    if _ENCODED_WORD.search(uri):
        try:
            uri = str(email.header.make_header(email.header.decode_header(uri))).strip()
        except (LookupError, ValueError, UnicodeError, binascii.Error, email.errors.HeaderParseError):
            pass  # (an unknown charset, a broken word: read as written)
    if uri.startswith("<") and uri.endswith(">"):
        uri = uri[1:-1].strip()
    return uri.replace(" ", "%20")


def any_case_schemes(iterator: ArchiveIterator) -> ArchiveIterator:
    """``iterator`` (warcio's), reading the HTTP header block of a record whose target URI's scheme is ``http`` or
    ``https`` in any case (:data:`HTTP_SCHEMES_ANY_CASE`), its target URI read by :func:`target_uri`; answered for
    chaining. The loader's ``target_read`` is the target URI of the record it last read the WARC header block of
    (``None`` for one without), so that a refusal met before warcio gives the record (in its HTTP header block, a
    digest field's spelling) names the record's URI as well as its offset."""
    loader = iterator.loader
    loader.HTTP_SCHEMES = HTTP_SCHEMES_ANY_CASE
    loader.target_read = None

    def ensure_target(rec_headers: Any) -> str | None:  # warcio's _ensure_target_uri_format, by target_uri
        written = rec_headers.get_header("WARC-Target-URI")
        uri = None if written is None else target_uri(written)
        if uri is not None and uri != written:
            rec_headers.replace_header("WARC-Target-URI", uri)
        loader.target_read = uri
        return uri

    loader._ensure_target_uri_format = ensure_target
    return iterator

#: bytes a gzip member or ZIP entry may decompress to before its ratio counts (small files compress oddly)
EXPANSION_ALLOWANCE = 1 << 20


@dataclass(frozen=True)
class ReadLimits:
    """Bounds on reading one web archive file (see the module docstring for why these numbers)."""

    max_line_bytes: int = 256 * 1024
    max_header_bytes: int = 1 << 20
    max_header_lines: int = 10_000
    max_expansion: float = 100.0
    max_seconds: float | None = 3600.0


class Refused(Exception):
    """What the reader refused; :func:`pdi.interop.warc.records.read_index` names the record and raises ``error``."""

    def __init__(self, error: type[PDIError], detail: str, *, at: int | None = None) -> None:
        super().__init__(detail)
        self.error = error
        self.detail = detail
        #: the offset of the record at fault when it is not the one being read (a record cut
        #: in its first lines, found while the blank lines closing the one before are read)
        self.at = at


class _BoundedReader(DecompressingBufferedReader):  # type: ignore[misc]  # warcio has no types: its class is Any
    """warcio's reader (gzip members decompressed, lines read), with each read bounded."""

    def __init__(self, stream: Any, *, limits: ReadLimits, deadline: float | None) -> None:
        self.limits = limits
        self.deadline = deadline
        self.member_in = 0  # compressed bytes fed to the current gzip member's decompressor
        self.member_out = 0  # and what it gave
        self.file_in = 0  # the same for every member of the file: many members, each within its own
        self.file_out = 0  # allowance, must not add up to a bomb
        self.lines = 0  # header lines since the record began or the last read()
        self.line_bytes = 0
        self.open_line = False  # the last line read was a header line (not blank): a header block is open
        self.blank_run = 0  # blank lines read in a row
        self.block_start = 0  # where the open header block began (in an uncompressed file: its offset)
        self.between = False  # reading the blank lines between two records
        self.stray = False  # a line not blank read there (the record's Content-Length ends before its CRLF CRLF)
        super().__init__(stream, block_size=BUFF_SIZE)

    def _init_decomp(self, decomp_type: str | None) -> None:
        super()._init_decomp(decomp_type)
        self.member_in = self.member_out = 0

    def _process_read(self, data: bytes) -> None:
        if self.deadline is not None and time.monotonic() > self.deadline:
            raise Refused(LimitError, f"reading the file took more than {self.limits.max_seconds:g} s"
                                      " (the time limit; pdi import --max-seconds)")
        if not data and self.decompressor is not None and self.member_in and not self.decompressor.eof:
            raise Refused(ParseError, "the file ends inside its gzip member (the file is cut short)")
        super()._process_read(data)

    def _decompress(self, data: bytes) -> bytes:
        if not (self.decompressor and data):
            return data
        before = len(self.decompressor.unused_data)
        if self.num_block_read == 0:
            out: bytes = super()._decompress(data)  # not gzip at all: warcio reads it as it is
        else:
            try:
                out = self.decompressor.decompress(data)
            except zlib.error as exc:
                raise Refused(ParseError, f"its gzip member cannot be decompressed: {exc}") from None
        if self.decompressor is not None:
            taken = len(data) - (len(self.decompressor.unused_data) - before)
            self.member_in += taken
            self.member_out += len(out)
            self.file_in += taken
            self.file_out += len(out)
            ratio = self.limits.max_expansion
            for given, made, what in ((self.member_in, self.member_out, "its gzip member decompresses to more than"
                                       f" {ratio:g} times its size"),
                                      (self.file_in, self.file_out, "the file's gzip members decompress to more"
                                       f" than {ratio:g} times their size")):
                if made > EXPANSION_ALLOWANCE and made > ratio * given:
                    raise Refused(LimitError, f"{what} ({plural(given, 'byte')} to {plural(made, 'byte')} so far;"
                                              " the limit of pdi import --max-expansion)")
        return out

    def read(self, length: int | None = None) -> bytes:
        self.lines = self.line_bytes = self.blank_run = 0
        self.open_line = False
        data: bytes = super().read(length)
        return data

    def readline(self, length: int | None = None) -> bytes:
        # warcio's readline joins its blocks one by one and counts ``length`` down
        # wrongly (by the whole line so far); this one reads at most ``want`` bytes.
        cap = self.limits.max_line_bytes + 1
        want = cap if length is None else min(length, cap)
        buff = self.buff
        line = b""
        if buff is not None:
            at = buff.tell()
            start = self.num_read - (self.buff_size - at)
            if at < self.buff_size:
                # the common case, a whole line in the block at hand: one read, no joining
                line = buff.readline(want)
        else:
            start = self.num_read
        if not line.endswith(b"\n"):
            pieces: list[bytes] = [line]
            got = len(line)
            while got < want:
                self._fillbuff()
                if self.empty():
                    break
                piece: bytes = self.buff.readline(want - got)
                pieces.append(piece)
                got += len(piece)
                if piece.endswith(b"\n"):
                    break
            line = b"".join(pieces)
        if len(line) > self.limits.max_line_bytes:
            raise Refused(
                LimitError,
                f"a header line is longer than {plural(self.limits.max_line_bytes, 'byte')}"
                f" (it begins {line[:40]!r})",
            )
        if not line:
            if self.open_line:
                at = self.block_start if self.between and self.decompressor is None else None
                raise Refused(ParseError, "the file ends inside its header block (the file is cut short)", at=at)
            if self.decompressor is None and self.num_read and self.blank_run < 2 and self.stray:
                # octets that are no blank line stood between the block and the file's end: not a file cut short
                raise Refused(ParseError, "its Content-Length does not end where the blank lines (CRLF CRLF) that"
                                          " close the record begin (WARC 1.1 §4: block CRLF CRLF)")
            if self.decompressor is None and self.num_read and self.blank_run < 2:
                raise Refused(
                    ParseError,
                    "the file ends before the blank lines (CRLF CRLF) that close the record (the file is cut short)",
                )
            return line
        self.lines += 1
        self.line_bytes += len(line)
        if self.lines > self.limits.max_header_lines:
            raise Refused(LimitError, f"its header blocks hold more than {plural(self.limits.max_header_lines, 'line')}")
        if self.line_bytes > self.limits.max_header_bytes:
            raise Refused(
                LimitError, f"its header blocks are longer than {plural(self.limits.max_header_bytes, 'byte')}"
            )
        if line != b"\r\n" and line.strip(b"\r\n"):
            self.stray = self.stray or self.between
            if not self.open_line:
                self.block_start = start
            self.open_line = True
            self.blank_run = 0
        else:
            self.open_line = False
            # a lone CR the file ends on is half a line ending: the record's close is cut
            self.blank_run = self.blank_run + 1 if line.endswith(b"\n") else 0
        return line


class BoundedIterator(ArchiveIterator):  # type: ignore[misc]  # warcio has no types: its class is Any
    """warcio's record iterator (digests checked) reading through :class:`_BoundedReader`."""

    def __init__(self, fh: BinaryIO, *, limits: ReadLimits | None = None, deadline: float | None = None) -> None:
        super().__init__(fh, check_digests=True)
        self.reader = _BoundedReader(self.fh, limits=limits or ReadLimits(), deadline=deadline)
        any_case_schemes(self)
        _any_spelling(self.loader)

    def _consume_blanklines(self) -> tuple[bytes | None, int]:
        self.reader.between = True
        self.reader.stray = False
        try:
            found: tuple[bytes | None, int] = super()._consume_blanklines()
        finally:
            self.reader.between = False
        return found

    def _next_record(self, next_line: bytes | None) -> Any:
        self.reader.lines = 1 if next_line else 0
        self.loader.target_read = None
        self.loader.http_unclosed = False
        self.loader.digest_unknown = None
        self.reader.line_bytes = len(next_line or b"")
        return super()._next_record(next_line)
