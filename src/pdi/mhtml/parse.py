"""Reading MHTML files (RFC 2557 on RFC 2045/2046 MIME), robust to what browsers write.

How the work is split with the standard library's ``email`` package
--------------------------------------------------------------------
The multipart structure is split here, by a streaming scanner over the bytes;
``email`` (policy :data:`email.policy.compat32`) reads each header's *meaning*:
``Content-Type`` with its parameters (quoting, RFC 2231, ``boundary`` anywhere among
the parameters, unquoted values containing ``=``) and RFC 2047 encoded words
(``email.header.decode_header``).

Why not hand the whole file to ``email.message_from_bytes``:

* memory: the feed parser keeps every line of the file as a separate ``str`` plus
  the joined payloads; a 67 MB capture peaks near seven times its size. The scanner
  here keeps the input (or, for a stream, only the current part's raw bytes, read in
  1 MiB chunks) and the decoded parts: well under three times the file size.
* ``email.policy.default`` (and ``SMTP``/``HTTP``) refuses or rewrites what browsers
  write: its structured header parser grows quadratically (a ``Content-Type`` with
  4,000 parameters takes about 3 s on the project machine, against 0.06 s here), it
  raises on some malformed values where we want a warning, and ``get_content()``
  re-decodes text with its own charset guess. ``compat32`` is
  linear and never raises on a header value, so it is the policy used, and only for
  single header values.
* ``email``'s header splitter ends the header block at the first line without a
  colon, so the rest of the headers (``Content-Type`` included) would become body;
  Chromium has written such lines (a folded ``X-Snapshot-Title`` that lost its
  indentation). Here such a line is read as a continuation of the previous field,
  with a warning.

What is tolerated (each seen in files browsers wrote), always with the body bytes kept
-------------------------------------------------------------------------------------
CRLF, LF-only and mixed line ends; boundaries containing ``--`` (Chromium's
``----MultipartBoundary--…----``) or ``=`` (unquoted); a delimiter line followed by
white space (RFC 2046 transport padding); a missing closing delimiter (warning; the
last part runs to the end of the file or to the enclosing structure's next delimiter);
header lines without a colon (warning; a continuation); lower-case header names;
quoted-printable with ``=\\n`` soft breaks, lower-case hex and bad escapes (kept as
written, as RFC 2045 §6.7 note (2) suggests); base64 with stray characters (dropped),
bad padding (repaired, warning) or padding inside (each padded run decoded, warning;
``binascii`` alone would drop the rest silently); a byte order mark before the first
header (passed over, warning); 7bit/8bit/binary bodies byte for byte (line ends
kept); no Content-Transfer-Encoding (read as binary); an unknown one (body kept as
is, warning); headers in UTF-8 or, failing that, Latin-1 (warning).

What is refused (a :class:`~pdi.errors.ParseError` naming the offset): a top level that
is not a MIME entity (no header field, or no blank line after the header fields, or a
``MIME-Version`` other than 1.0, RFC 2045 §4); a multipart
without a ``boundary`` parameter; an outermost multipart whose body holds no delimiter
line for its boundary, or no body parts (a nested one is kept empty, with a warning);
an empty input; a stream that does not give bytes.
:class:`~pdi.errors.LimitError`: nesting deeper than ``Limits.max_depth``, more parts
than ``Limits.max_parts``, a header block longer than ``Limits.max_header_bytes`` or of
more fields than ``Limits.max_header_lines``, parsing longer than
``Limits.max_parse_seconds`` of processor time, a body
part longer than ``Limits.max_part_bytes`` (found while it is read, before it is held
whole). :class:`~pdi.mhtml.limits.Limits` is kept on the parts and the aggregate: it also
bounds reading their references, later.

URIs (§4.4, §5): ``Content-Location`` is unfolded by removing the folding line breaks
*and* the white space around them (URLBODY §3.1: a URI holds no white space), then
RFC 2047-decoded, and RFC 822 comments in parentheses at either end are dropped. It is
resolved with :func:`pdi.uri.resolve` against the enclosing base (§5 (c)–(e)): the
nearest enclosing multipart's resolved Content-Location, else the URI the file was
retrieved from (``base=``), else ``thismessage:/``. A ``cid:`` Content-Location (as
Chromium writes for inline stylesheets) labels its part but is never a base.
"""

from __future__ import annotations

import binascii
import functools
import re
from dataclasses import dataclass, field
from email.message import Message
from email.policy import compat32
from typing import BinaryIO, TypedDict

from pdi._mime_params import collapsed, header_params
from pdi._wording import plural
from pdi._work_deadline import WorkDeadline
from pdi.errors import LimitError, ParseError, PDIError
from pdi.mhtml.headers import decode_words
from pdi.mhtml.limits import Limits
from pdi.mhtml.locations import is_cid, resolve_uri
from pdi.mhtml.parts import Headers, Multipart, Part

THISMESSAGE = "thismessage:/"


class _Source:
    """The input as a growing buffer: all of it for bytes, a sliding window for a stream."""

    def __init__(self, data: bytes | bytearray | memoryview | BinaryIO, chunk: int) -> None:
        self.chunk = chunk
        self.shift = 0  # absolute offset of buf[0]
        self.stream: BinaryIO | None
        self.buf: bytes | bytearray
        if isinstance(data, bytes):
            self.buf, self.stream, self.eof = data, None, True
        elif isinstance(data, (bytearray, memoryview)):
            self.buf, self.stream, self.eof = bytes(data), None, True
        elif callable(getattr(data, "read", None)):
            self.buf, self.stream, self.eof = bytearray(), data, False
        else:
            raise ParseError(f"the input must be bytes or a binary stream, not {type(data).__name__}", rule="input")

    def more(self) -> bool:
        """Read one more chunk; False at the end of the input."""
        if self.eof or self.stream is None:
            return False
        try:
            chunk = self.stream.read(self.chunk)
        except (OSError, ValueError) as exc:
            raise ParseError(f"reading the input failed: {exc}", offset=self.shift + len(self.buf)) from exc
        if not isinstance(chunk, (bytes, bytearray)):
            raise ParseError("the input stream must give bytes", rule="input")
        if not chunk:
            self.eof = True
            return False
        assert isinstance(self.buf, bytearray)
        self.buf += chunk
        return True

    def drain(self) -> int:
        """Total input length: the rest of a stream is read (the epilogue) and counted, not kept."""
        total = self.shift + len(self.buf)
        while not self.eof and self.stream is not None:
            try:
                chunk = self.stream.read(self.chunk)
            except (OSError, ValueError) as exc:
                raise ParseError(f"reading the input failed: {exc}", offset=total) from exc
            if not isinstance(chunk, (bytes, bytearray)):
                raise ParseError("the input stream must give bytes", rule="input")
            if not chunk:
                self.eof = True
            total += len(chunk)
        return total

    def compact(self, pos: int) -> int:
        """Forget the bytes before ``pos`` (streams only); returns the new position of ``pos``."""
        if self.stream is None or pos < self.chunk:
            return pos
        assert isinstance(self.buf, bytearray)
        del self.buf[:pos]
        self.shift += pos
        return 0

    def line_end(self, pos: int, limit: int | None = None) -> int:
        """Index of the next ``\\n`` at or after ``pos`` (``len(buf)`` at the end of the input).

        With ``limit``, a line longer than that many bytes is a :class:`LimitError`
        (a stream with no line break must not be read whole into memory).
        """
        start = pos
        while True:
            i = self.buf.find(b"\n", start)
            if i >= 0:
                return i
            if limit is not None and len(self.buf) - pos > limit:
                raise LimitError(f"header line at offset {self.shift + pos} is longer than {plural(limit, 'byte')}")
            start = max(pos, len(self.buf))
            if not self.more():
                return len(self.buf)


@dataclass
class _Hit:
    start: int  # line start of the delimiter
    content_end: int  # end of the content before it (its line break excluded)
    after: int  # just after the delimiter line
    level: int  # index into the delimiter stack
    close: bool


_PADDING_MAX = 1024  # longest "--" + transport padding read after a boundary
_MAYBE_REST = re.compile(rb"^(?:-|--)?[ \t\r]*$")


def _delim_match(line: bytes, delims: list[bytes]) -> tuple[int, bool] | None:
    """(level, is_close) when ``line`` (no line end) is a delimiter of one of ``delims``."""
    for level in range(len(delims) - 1, -1, -1):
        d = delims[level]
        if line.startswith(d):
            rest = line[len(d) :].rstrip(b" \t\r")
            if rest == b"":
                return level, False
            if rest == b"--" or (rest.startswith(b"--") and rest[2:].strip(b" \t") == b""):
                return level, True
    return None


class _Ctx:
    def __init__(self, src: _Source, limits: Limits, *, bodies: bool = True) -> None:
        self.src = src
        self.limits = limits
        self.bodies = bodies  # False: each part's transfer encoding is left on, its data empty (:func:`check_reads`)
        self.warnings: list[str] = []
        self.parts: list[Part] = []
        self.next_multipart = 0
        self.fields = 0  # header fields read so far, every block of the file
        seconds = limits.max_parse_seconds
        self.deadline = None if seconds is None else WorkDeadline(seconds)

    def check_time(self, pos: int) -> None:
        """:class:`LimitError` once the time for parsing the file (``Limits.max_parse_seconds``) is spent."""
        if self.deadline is not None and self.deadline.passed():
            raise LimitError(
                f"parsing took {self.deadline.words()} (the time limit for one file),"
                f" at offset {self.src.shift + pos}"
            )

    def warn(self, pos: int, message: str) -> None:
        self.warnings.append(f"offset {self.src.shift + pos}: {message}")

    # -- scanning --------------------------------------------------------------------

    def scan(self, pos: int, delims: list[bytes]) -> _Hit | None:
        """Find the next delimiter line of any of ``delims`` at or after ``pos`` (a line start)."""
        src = self.src
        search_from = pos
        longest = max(len(d) for d in delims)
        while True:
            buf = src.buf
            best: tuple[int, int, bool, int] | None = None
            need_more = False
            for level in range(len(delims) - 1, -1, -1):
                d = delims[level]
                j = buf.find(d, search_from)
                while j >= 0 and (best is None or j < best[0]):
                    if j == pos or buf[j - 1] == 0x0A:
                        # The rest of a delimiter line is "--" and padding: look at a
                        # bounded window, so a huge line never makes us read on.
                        k = j + len(d)
                        window = bytes(buf[k : k + _PADDING_MAX])
                        nl = window.find(b"\n")
                        if nl < 0 and not src.eof and len(window) < _PADDING_MAX and _MAYBE_REST.match(window):
                            need_more = True
                            break
                        rest = window[:nl] if nl >= 0 else window
                        if nl >= 0 or src.eof or len(window) < _PADDING_MAX:
                            m = _delim_match(d + rest, [d])
                            if m is not None:
                                best = (j, level, m[1], k + nl if nl >= 0 else -1)
                                break
                    j = buf.find(d, j + 1)
                if need_more:
                    break
            if need_more:
                src.more()
                continue
            if best is not None:
                j, level, close, e = best
                end = j
                if j > pos and buf[j - 1] == 0x0A:
                    end = j - 1
                    if end > pos and buf[end - 1] == 0x0D:
                        end -= 1
                return _Hit(j, end, e + 1 if e >= 0 else len(buf), level, close)
            if src.eof:
                return None
            self._check_body(pos, len(buf))
            self.check_time(pos)
            search_from = max(pos, len(buf) - longest - 1)
            src.more()

    def read_header_lines(self, pos: int, delims: list[bytes]) -> tuple[list[bytes], int, str]:
        """Header lines from ``pos`` up to the blank line.

        Returns (lines, position after the block, how it ended: ``"blank"``, ``"delimiter"``
        (a delimiter line came before any blank line; position is at that line) or ``"eof"``).
        """
        src = self.src
        lines: list[bytes] = []
        total = 0
        fields = 0
        start = pos
        self.check_time(pos)
        while True:
            if pos >= len(src.buf) and not src.more():
                return lines, pos, "eof"
            e = src.line_end(pos, self.limits.max_header_bytes)
            line = bytes(src.buf[pos:e])
            nxt = e + 1 if e < len(src.buf) else e
            if line.endswith(b"\r"):
                line = line[:-1]
            if line == b"":
                return lines, nxt, "blank"
            if delims and line.startswith(b"--") and _delim_match(line, delims) is not None:
                return lines, pos, "delimiter"
            total += len(line) + 2
            if total > self.limits.max_header_bytes:
                raise LimitError(
                    f"header block at offset {src.shift + pos} is longer than "
                    f"{plural(self.limits.max_header_bytes, 'byte')}"
                )
            lines.append(line)
            if line[:1] not in (b" ", b"\t"):  # a field; a folded one's continuation lines are its own
                fields += 1
                if fields > self.limits.max_header_lines:
                    raise LimitError(
                        f"header block at offset {src.shift + start} has more than"
                        f" {plural(self.limits.max_header_lines, 'field')}"
                    )
                self.fields += 1
                if self.fields > self.limits.max_fields:
                    raise LimitError(
                        f"the file has more than {self.limits.max_fields:,} header fields (the limit for one file),"
                        f" at offset {src.shift + pos}"
                    )
            pos = nxt

    # -- structure ---------------------------------------------------------------------

    def entity(
        self,
        pos: int,
        delims: list[bytes],
        enclosing_base: str,
        scope: tuple[int, ...],
        depth: int,
        top: bool,
    ) -> tuple[Part | Multipart, int, _Hit | None, bool]:
        """Read one entity (headers and body) starting at ``pos``.

        Returns (node, position, hit, ended): ``hit`` is the delimiter of an enclosing
        structure that ended the entity (``None`` at the end of the input or, for a
        multipart, after its own closing delimiter, in which case ``ended`` is True).
        """
        start_abs = self.src.shift + pos
        lines, pos, how = self.read_header_lines(pos, delims)
        if top:
            _check_message(lines, how, start_abs)
        if how == "delimiter":
            self.warn(pos, "body part has no blank line after its headers: read as headers only")
        elif how == "eof" and not top:
            self.warn(pos, "input ends inside a body part's headers")
        info = _HeaderInfo(lines, start_abs, self)
        location = resolve_uri(enclosing_base, info.content_location) if info.content_location else None
        if info.content_location and location is None:
            self.warn(pos, f"Content-Location {info.content_location!r} cannot be resolved")
        own_base = location if location is not None and not is_cid(location) else enclosing_base

        if info.content_type.startswith("multipart/"):
            return self.multipart(info, pos, delims, location, own_base, scope, depth, how)

        if how == "blank":
            if not delims:
                while self.src.more():
                    self._check_body(pos, len(self.src.buf))
            hit = self.scan(pos, delims) if delims else None
            end = hit.content_end if hit is not None else len(self.src.buf)
            self._check_body(pos, end)
        else:
            hit = None
            end = pos
            if how == "delimiter":
                m = _delim_match(bytes(self.src.buf[pos : self.src.line_end(pos)]).rstrip(b"\r"), delims)
                assert m is not None
                hit = self._hit_at(pos, m)
        data = self.decode(pos, end, info)
        if len(self.parts) >= self.limits.max_parts:
            raise LimitError(f"more than {self.limits.max_parts} body parts")
        part = Part(
            index=len(self.parts),
            **_heading(info, location, own_base, scope),
            charset=info.charset,
            transfer_encoding=info.transfer_encoding,
            data=data,
            offset=start_abs,
            warnings=tuple(info.warnings),
            limits=self.limits,
        )
        self.parts.append(part)
        if hit is None:
            return part, len(self.src.buf), None, False
        return part, hit.start, hit, False

    def _check_body(self, start: int, end: int) -> None:
        """A body (or preamble) from ``start`` runs at least to ``end``: a
        :class:`~pdi.errors.LimitError` past ``Limits.max_part_bytes``, before more is read."""
        if end - start > self.limits.max_part_bytes:
            raise LimitError(
                f"the body part at offset {self.src.shift + start} is longer than "
                f"{plural(self.limits.max_part_bytes, 'byte')} (the limit for one part)"
            )

    def _hit_at(self, pos: int, m: tuple[int, bool]) -> _Hit:
        e = self.src.line_end(pos)
        return _Hit(pos, pos, e + 1 if e < len(self.src.buf) else e, m[0], m[1])

    def multipart(
        self,
        info: _HeaderInfo,
        pos: int,
        delims: list[bytes],
        location: str | None,
        own_base: str,
        scope: tuple[int, ...],
        depth: int,
        how: str,
    ) -> tuple[Multipart, int, _Hit | None, bool]:
        if depth >= self.limits.max_depth:
            raise LimitError(
                f"multipart nesting deeper than {self.limits.max_depth} at offset {info.offset}"
            )
        boundary = info.param("boundary")
        if boundary is None or boundary == "":
            raise ParseError(
                f"{info.content_type} has no boundary parameter", offset=info.offset, rule="boundary"
            )
        boundary = boundary.rstrip(" \t")
        my_id = self.next_multipart
        self.next_multipart += 1
        my_delims = [*delims, b"--" + boundary.encode("utf-8", "surrogateescape")]
        level = len(my_delims) - 1
        children: list[Part | Multipart] = []
        child_scope = (*scope, my_id)
        ended = False
        outer_hit: _Hit | None = None
        hit = self.scan(pos, my_delims) if how == "blank" else None
        if how == "delimiter":
            line = bytes(self.src.buf[pos : self.src.line_end(pos)]).rstrip(b"\r")
            m = _delim_match(line, my_delims)
            assert m is not None
            hit = self._hit_at(pos, m)
        if hit is None or hit.level != level or hit.close:
            problem = (
                "has no body parts"
                if hit is not None and hit.level == level
                else f"body holds no delimiter line for its boundary {boundary!r}"
            )
            if depth == 0:
                raise ParseError(f"{info.content_type} {problem}", offset=info.offset, rule="multipart-body")
            # A nested structure that holds nothing: kept empty, the rest of the file is read.
            self.warnings.append(f"offset {info.offset}: nested {info.content_type} {problem}: read as empty")
            empty = self._make_multipart(my_id, info, boundary, location, own_base, scope, [])
            if hit is None:
                return empty, len(self.src.buf), None, False
            if hit.level != level:
                return empty, hit.start, hit, False
            return empty, hit.after, None, True
        pos = hit.after
        while True:
            node, pos, hit, child_ended = self.entity(
                pos, my_delims, own_base, child_scope, depth + 1, top=False
            )
            children.append(node)
            if child_ended:
                hit = self.scan(pos, my_delims)  # the nested structure's epilogue
            if hit is None:
                self.warn(pos, f"missing closing delimiter for boundary {boundary!r}")
                pos = len(self.src.buf)
                break
            if hit.level != level:
                self.warn(hit.start, f"missing closing delimiter for boundary {boundary!r}")
                outer_hit = hit
                pos = hit.start
                break
            pos = hit.after
            if hit.close:
                ended = True
                break
            if isinstance(node, Part):
                pos = self.src.compact(pos)
        node_mp = self._make_multipart(my_id, info, boundary, location, own_base, scope, children)
        return node_mp, pos, outer_hit, ended

    def _make_multipart(
        self,
        my_id: int,
        info: _HeaderInfo,
        boundary: str,
        location: str | None,
        own_base: str,
        scope: tuple[int, ...],
        children: list[Part | Multipart],
    ) -> Multipart:
        start = info.param("start")
        if start is not None:
            start = _strip_angle(start)
        type_ = info.param("type")
        chosen: Part | Multipart | None = children[0] if children else None
        start_found = True
        if start is not None:
            match = next((c for c in children if c.content_id == start), None)
            if match is None:
                start_found = False
                self.warnings.append(
                    f"offset {info.offset}: start part <{start}> not found; the first body part is the root"
                )
            else:
                chosen = match
        elif (
            type_ is not None
            and children
            and not _is_page(children[0])
            and not _has_type(children[0], type_.strip().lower())
        ):
            # RFC 2387 §3.1 and RFC 2557 §5: the root is the first part, and ``type`` its
            # type. A first part that is no page and not of that type either (an image
            # before Internet Explorer's multipart/alternative) is not the root when a later
            # one has that type, itself or as its root: the first that does is. A first part
            # that is a page stays the root whatever ``type`` says: Internet Explorer's
            # framed pages put the frameset first under type="multipart/alternative", each
            # frame in an alternative of its own after it, and IE and Chromium open the
            # frameset.
            wanted = type_.strip().lower()
            match = next((c for c in children if _has_type(c, wanted)), None)
            if match is not None:
                chosen = match
                self.warnings.append(
                    f"offset {info.offset}: the first body part is {children[0].content_type}, not the "
                    f"type parameter's {wanted}: the first {wanted} part is the root"
                )
        if info.content_type == "multipart/alternative" and children:
            # RFC 2557 §7: the alternative that is a page; RFC 2046 §5.1.4: the last is the best
            html = [c for c in children if (r := _root_of(c)) is not None and r.content_type in _HTML_TYPES]
            chosen = html[-1] if html else children[-1]
        if type_ is not None and chosen is not None and chosen.content_type != type_.strip().lower():
            self.warnings.append(
                f"offset {info.offset}: type parameter {type_!r} differs from the start part's "
                f"{chosen.content_type!r}"
            )
        root = _root_of(chosen) if chosen is not None else None
        return Multipart(
            id=my_id,
            **_heading(info, location, own_base, scope),
            boundary=boundary,
            offset=info.offset,
            children=tuple(children),
            root=root,
            start=start,
            type=type_,
            start_found=start_found,
        )

    # -- bodies ------------------------------------------------------------------------

    def decode(self, start: int, end: int, info: _HeaderInfo) -> bytes:
        if not self.bodies:
            return b""
        cte = info.transfer_encoding
        with memoryview(self.src.buf) as whole, whole[start:end] as body:
            if cte == "base64":
                eq = self.src.buf.find(b"=", start, end)
                if eq >= 0 and _B64_AFTER_PAD.search(self.src.buf, eq, end):
                    # binascii stops at the first padding and drops the rest silently
                    message = "base64 body with data after padding: each padded run decoded"
                    info.warnings.append(message)
                    self.warn(start, message)
                    # one run at a time into one buffer: a list of the runs and of their decodings held 23 times
                    # the body (48 MB of "QQ==" took 1.1 GB)
                    decoded = bytearray()
                    for run in _B64_RUN.finditer(body):
                        decoded += _lenient_base64(run.group())
                    return bytes(decoded)
                try:
                    return binascii.a2b_base64(body)
                except binascii.Error:
                    info.warnings.append("base64 body with bad padding: repaired")
                    self.warn(start, "base64 body with bad padding: repaired")
                    return _lenient_base64(bytes(body))
            if cte == "quoted-printable":
                return binascii.a2b_qp(body)
            if cte not in (None, "7bit", "8bit", "binary"):
                info.warnings.append(f"unknown Content-Transfer-Encoding {cte!r}: body kept as is")
                self.warn(start, f"unknown Content-Transfer-Encoding {cte!r}: body kept as is")
            return bytes(body)


_B64_KEEP = bytes(
    b for b in range(256) if chr(b) in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
)
_B64_DROP = bytes(b for b in range(256) if b not in _B64_KEEP)


_B64_AFTER_PAD = re.compile(rb"=[=\s]*[A-Za-z0-9+/]")
_B64_RUN = re.compile(rb"[^=]+")


def _lenient_base64(body: bytes) -> bytes:
    """Decode base64 after dropping every non-alphabet byte and repairing the padding."""
    clean = body.translate(None, _B64_DROP)
    if len(clean) % 4 == 1:
        clean = clean[:-1]  # a lone trailing sextet carries no whole byte
    clean += b"=" * (-len(clean) % 4)
    return binascii.a2b_base64(clean)


def _without_comments(value: str) -> str:
    """``value`` less its RFC 822 comments (nested, with quoted pairs) and white space."""
    out: list[str] = []
    depth = 0
    i = 0
    while i < len(value):
        ch = value[i]
        if ch == "\\" and depth:
            i += 2
            continue
        if ch == "(":
            depth += 1
        elif ch == ")" and depth:
            depth -= 1
        elif not depth and ch not in " \t":
            out.append(ch)
        i += 1
    return "".join(out)


_VERSION = re.compile(r"([0-9]+)\.([0-9]+)")


def _check_message(lines: list[bytes], how: str, offset: int) -> None:
    """Refuse a top level that is not a MIME entity (RFC 2045 §4, RFC 5322 §2.1): header
    fields, then the blank line that ends them; a MIME-Version, if there is one, of 1.0."""
    fields = [line for line in lines if line[:1] not in (b" ", b"\t") and b":" in line]
    if not fields:
        raise ParseError("not a MIME entity: no header field before the body", offset=offset, rule="entity")
    for line in fields:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"mime-version":
            version = _without_comments(value.decode("latin-1"))
            m = _VERSION.fullmatch(version)
            if m is None or (int(m.group(1)), int(m.group(2))) != (1, 0):
                raise ParseError(
                    f"MIME-Version {version!r} is not 1.0, the only version of MIME (RFC 2045 §4)",
                    offset=offset,
                    rule="version",
                )
            break
    if how == "eof":
        raise ParseError(
            "not a MIME entity: the input ends inside its header fields (no blank line, no body)",
            offset=offset,
            rule="entity",
        )


def _strip_angle(value: str) -> str:
    v = value.strip()
    if v.startswith("<") and v.endswith(">"):
        v = v[1:-1]
    return v.strip()


_HTML_TYPES = ("text/html", "application/xhtml+xml")


def _is_page(node: Part | Multipart) -> bool:
    """``node`` is a page a browser opens as the document (HTML or XHTML), itself or as its root."""
    root = _root_of(node)
    return root is not None and root.content_type in _HTML_TYPES


def _has_type(node: Part | Multipart, media_type: str) -> bool:
    """``node`` is of ``media_type``, or its root is (a multipart/alternative holding a page)."""
    root = _root_of(node)
    return node.content_type == media_type or (root is not None and root.content_type == media_type)


def _root_of(node: Part | Multipart) -> Part | None:
    return node if isinstance(node, Part) else node.root


_ABSOLUTE = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:[^\s]*")  # fullmatch: "$" matches before a final line feed
_COMMENT_END = re.compile(r"\s*\((?:[^()\\]|\\.)*\)\s*$")
_COMMENT_START = re.compile(r"^\s*\((?:[^()\\]|\\.)*\)\s*")


class _Heading(TypedDict):
    """What a part and a multipart take alike from their header block and where it stands."""

    headers: Headers
    content_type: str
    params: tuple[tuple[str, str], ...]
    content_location: str | None
    location: str | None
    content_id: str | None
    outer_base: str
    scope: tuple[int, ...]


def _heading(info: _HeaderInfo, location: str | None, outer_base: str, scope: tuple[int, ...]) -> _Heading:
    return _Heading(
        headers=info.headers, content_type=info.content_type, params=info.params,
        content_location=info.content_location, location=location, content_id=info.content_id,
        outer_base=outer_base, scope=scope,
    )


@functools.lru_cache(maxsize=256)
def _content_type(ct: str | None) -> tuple[str, tuple[tuple[str, str], ...]]:
    """A Content-Type field's media type and parameters, as :mod:`email` reads them but for where a quoted value ends
    (:mod:`pdi._mime_params`; the same few fields recur
    in every file: read once, not once a part; the email package's reading was a tenth of a WACZ export)."""
    msg = Message(policy=compat32)
    if ct is not None:
        msg["Content-Type"] = ct
    found = [] if ct is None else header_params(str(msg["Content-Type"]))  # cut as RFC 2045 cuts it
    params = tuple((k.lower(), collapsed(v)) for k, v in found[1:])
    return msg.get_content_type(), params


class _HeaderInfo:
    """One header block read into fields and the MIME values RFC 2557 needs."""

    def __init__(self, lines: list[bytes], offset: int, ctx: _Ctx) -> None:
        self.offset = offset
        self.warnings: list[str] = []
        fields: list[tuple[str, list[str]]] = []
        latin1 = False
        for raw in lines:
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError:
                line = raw.decode("latin-1")
                latin1 = True
            if line[:1] in (" ", "\t"):
                if fields:
                    fields[-1][1].append(line)
                else:
                    self._warn(ctx, "continuation line before any header field dropped")
                continue
            name, colon, value = line.partition(":")
            name = name.rstrip(" \t")
            if not colon or not name or any(c in name for c in " \t"):
                if fields:
                    fields[-1][1].append(" " + line)
                    self._warn(ctx, f"header line without a colon read as a continuation: {line[:60]!r}")
                else:
                    self._warn(ctx, f"header line without a colon dropped: {line[:60]!r}")
                continue
            fields.append((name, [value]))
        if latin1:
            self._warn(ctx, "header bytes are not UTF-8: read as Latin-1")
        self.headers: Headers = tuple((n, "".join(v).strip()) for n, v in fields)
        self._pieces = fields

        ct = self.get("content-type")
        self.content_type, self.params = _content_type(ct)
        if ct is not None and "/" not in ct.split(";", 1)[0]:
            self._warn(ctx, f"unreadable Content-Type {ct!r}: read as text/plain")
        self.charset = self.param("charset")

        cte = self.get("content-transfer-encoding")
        self.transfer_encoding = cte.strip().lower() if cte else None

        cid = self.get("content-id")
        self.content_id = _strip_angle(cid) if cid else None
        if self.content_id == "":
            self.content_id = None

        self.content_location: str | None = None
        for n, pieces in fields:
            if n.lower() == "content-location":
                if self.content_location is not None:
                    self._warn(ctx, "more than one Content-Location: the first is used")
                    break
                joined = "".join(p.strip(" \t") for p in pieces)
                value = _decode_words(joined, self, ctx)
                value = _COMMENT_START.sub("", _COMMENT_END.sub("", value)).strip()
                self.content_location = value or None

    def _warn(self, ctx: _Ctx, message: str) -> None:
        self.warnings.append(message)
        ctx.warnings.append(f"offset {self.offset}: {message}")

    def get(self, name: str) -> str | None:
        low = name.lower()
        for n, v in self.headers:
            if n.lower() == low:
                return v
        return None

    def param(self, name: str) -> str | None:
        for k, v in self.params:
            if k == name:
                return v
        return None


def _decode_words(value: str, info: _HeaderInfo, ctx: _Ctx) -> str:
    """Remove RFC 2047 encoded words (§4.4.3), keeping everything else as written."""
    text, warnings = decode_words(value)
    for w in warnings:
        info._warn(ctx, w)
    return text


@dataclass(frozen=True, eq=False)
class ParsedFile:
    """An MHTML file read: the fields of :class:`pdi.mhtml.model.Aggregate`, which adds the lookups (compared by identity)."""

    root: Part
    parts: tuple[Part, ...]
    tree: Multipart | None
    boundary: str | None
    headers: Headers
    base: str | None
    size: int
    warnings: tuple[str, ...] = ()
    limits: Limits = field(default=Limits(), repr=False)


#: What an MHTML file is read from: its octets, or a binary stream.
Input = bytes | bytearray | memoryview | BinaryIO


def read_message(data: Input, *, base: str | None = None, limits: Limits | None = None) -> ParsedFile:
    """Read an MHTML file (or any MIME message): :func:`pdi.mhtml.parse`, before the parts are put together."""
    return _read(data, base, limits or Limits(), bodies=True)


def check_reads(data: Input, *, limits: Limits | None = None) -> None:
    """Raise what :func:`pdi.mhtml.parse` of ``data`` raises, or nothing: the same reading, bodies left encoded.

    Undoing a transfer encoding never fails (bad base64 is repaired with a warning) and never makes a body
    larger, so it cannot change whether a file reads within ``limits``; it was half of the reading's time,
    which an archive's check of each MHTML deposit spent on bodies it threw away (issue 24)."""
    _read(data, None, limits or Limits(), bodies=False)


def _read(data: Input, base: str | None, lim: Limits, *, bodies: bool) -> ParsedFile:
    if base is not None and not _ABSOLUTE.fullmatch(base):
        raise ParseError(f"base {base!r} is not an absolute URI", text=base, offset=0, rule="absolute-URI")
    src = _Source(data, lim.chunk_size)
    if not src.buf and not src.more():
        raise ParseError("the input is empty", offset=0, rule="message")
    ctx = _Ctx(src, lim, bodies=bodies)
    while len(src.buf) < 3 and src.more():
        pass
    start = 0
    if src.buf[:3] == b"\xef\xbb\xbf":
        start = 3
        ctx.warnings.append("offset 0: byte order mark before the headers passed over")
    try:
        node, _pos, _hit, _ended = ctx.entity(start, [], base or THISMESSAGE, (), 0, top=True)
    except RecursionError as exc:  # pragma: no cover - max_depth keeps recursion shallow
        raise LimitError("MIME structure nested too deeply") from exc
    except PDIError:
        raise
    size = src.drain()
    if isinstance(node, Part):
        return ParsedFile(node, tuple(ctx.parts), None, None, node.headers, base, size, tuple(ctx.warnings), lim)
    if node.root is None:
        raise ParseError("the multipart has no root part", offset=node.offset, rule="start")
    return ParsedFile(
        node.root, tuple(ctx.parts), node, node.boundary, node.headers, base, size, tuple(ctx.warnings), lim
    )
