"""The one reader of chunked transfer coding (RFC 9112 §7.1), :mod:`pdi._chunked`, against two others: h11's
(:class:`h11.Connection`, uvicorn's parser) and :mod:`http.client`'s, given the same octets. A body is written here
from §7.1's grammar (sizes with leading zeros in either case, chunk extensions of §7.1.1, a trailer section of
§7.1.2) and given to the decoder in pieces of sizes the test chooses, as a reader of a connection would give them:
its data must be what both others read, wherever a piece ends. A body broken anywhere gives one answer however it
is cut, and the data h11 reads where h11 reads it whole; what pdi reads of it, http.client reads alike, and h11
too but for what pdi passes over (a trailer line that is no field, a space before an extension's ``;``). Its bounds and its errors' words and offsets are worked
out from the octets here."""

from __future__ import annotations

import http.client
import io
import itertools
import re

import h11
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from pdi._chunked import ChunkedError, Chunks, CutShort, pieces

HEAD = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"


def fed(body: bytes, steps: list[int], **bounds: object) -> tuple[bytes, int]:
    """``body`` read by :class:`Chunks` as a connection's reader does: the octets in hand growing by ``steps``
    (cycled; a buffer holding only them, read from where the decoder stopped), each chunk's data taken where it
    lies. Its data and where the body ended; :class:`ChunkedError` as the decoder raised it."""
    chunks = Chunks(**bounds)  # type: ignore[arg-type]
    step = itertools.cycle([s for s in steps if s > 0] or [len(body) or 1])
    given = at = 0
    out = bytearray()
    while True:
        at = chunks.framing(body[:given], at, given)
        if chunks.ended:
            return bytes(out), at
        if not chunks.in_data:
            if given == len(body):
                raise chunks.cut_short(given - at)
            given = min(len(body), given + next(step))
            continue
        left = chunks.size
        while left:
            if at == given:
                if given == len(body):
                    raise chunks.cut_short(chunks.size - left)
                given = min(len(body), given + next(step))
            take = min(left, given - at)
            out += body[at:at + take]
            at += take
            left -= take


def by_h11(body: bytes) -> bytes | None:
    """The data h11 reads of ``body``, or ``None`` if it refuses it or it ends before its end."""
    read = h11_reading(body)
    return read if isinstance(read, bytes) else None


def h11_reading(body: bytes) -> bytes | str | None:
    """The data h11 reads of ``body``, why it refuses it, or ``None`` if it ends before its end."""
    connection = h11.Connection(h11.CLIENT)
    connection.send(h11.Request(method="GET", target="/", headers=[("Host", "a.example")]))
    connection.receive_data(HEAD + body)
    out = bytearray()
    try:
        while True:
            event = connection.next_event()
            if isinstance(event, h11.Data):
                out += event.data
            elif isinstance(event, h11.EndOfMessage):
                return bytes(out)
            elif event is h11.NEED_DATA:
                return None
    except h11.RemoteProtocolError as exc:
        return str(exc)


class _Socket:
    def __init__(self, data: bytes) -> None:
        self.data = data

    def makefile(self, mode: str, *args: object, **kwargs: object) -> io.BytesIO:
        return io.BytesIO(self.data)


def by_http_client(body: bytes) -> bytes:
    answer = http.client.HTTPResponse(_Socket(HEAD + body))  # type: ignore[arg-type]
    answer.begin()
    return answer.read()


_TOKEN = st.text("!#$%&'*+-.^_`|~0123456789abcdefXYZ", min_size=1, max_size=6).map(str.encode)
_QUOTED = st.text("abc ;=\t\\\"", max_size=6).map(lambda t: b'"' + t.replace("\\", "\\\\").replace('"', '\\"')
                                                  .encode() + b'"')
_BWS = st.sampled_from([b"", b" ", b"\t", b" \t "])


@st.composite
def _extensions(draw: st.DrawFn) -> bytes:
    """``*( BWS ";" BWS chunk-ext-name [ BWS "=" BWS chunk-ext-val ] )`` (§7.1.1), with no BWS before the first
    ``;`` (h11 refuses it: see the test of its own)."""
    out = b""
    for index in range(draw(st.integers(0, 3))):
        out += (draw(_BWS) if index else b"") + b";" + draw(_BWS) + draw(_TOKEN)
        if draw(st.booleans()):
            out += draw(_BWS) + b"=" + draw(_BWS) + draw(st.one_of(_TOKEN, _QUOTED))
    return out


_FIELDS = st.lists(st.tuples(st.sampled_from([b"X-A", b"Digest", b"Expires", b"Server-Timing"]),
                             st.text("abc 0123;=,", max_size=20).map(lambda t: t.strip().encode())), max_size=3)


@st.composite
def bodies(draw: st.DrawFn) -> tuple[bytes, bytes]:
    """A chunked body of §7.1's grammar and the data it holds."""
    data = draw(st.binary(max_size=600))
    cuts = sorted(set(draw(st.lists(st.integers(1, max(1, len(data) - 1)), max_size=6))))
    out = bytearray()
    at = 0
    for cut in [*[c for c in cuts if c < len(data)], len(data)]:
        if cut == at:
            continue
        size = b"0" * draw(st.integers(0, 3)) + (b"%X" if draw(st.booleans()) else b"%x") % (cut - at)
        out += size + draw(_extensions()) + b"\r\n" + data[at:cut] + b"\r\n"
        at = cut
    out += b"0" * draw(st.integers(1, 3)) + draw(_extensions()) + b"\r\n"
    out += b"".join(name + b":" + draw(_BWS) + value + b"\r\n" for name, value in draw(_FIELDS)) + b"\r\n"
    return bytes(out), data


@settings(max_examples=400)
@given(bodies(), st.lists(st.integers(1, 40), max_size=6))
@example((b"5;a=\"q;r\"\r\nhello\r\n0\r\nX-A: b\r\n\r\n", b"hello"), [1])
def test_rfc9112_7_1_a_body_gives_what_h11_and_http_client_read_of_it_wherever_its_pieces_end(
        body_data: tuple[bytes, bytes], steps: list[int]) -> None:
    body, data = body_data
    assert by_h11(body) == data
    assert by_http_client(body) == data
    # another answer's octets after it are not taken: the body ends where its empty line does
    assert fed(body + b"HTTP/1.1 200 OK\r\n", steps) == (data, len(body))
    assert b"".join(pieces(io.BytesIO(body + b"rest"), Chunks(), most=7)) == data
    read = sum(steps) % (len(body) + 1)  # some of it read before, handed over with the stream
    assert b"".join(pieces(io.BytesIO(body[read:] + b"rest"), Chunks(), body[:read], most=7)) == data


def _outcome(body: bytes, steps: list[int], **bounds: object) -> bytes | str:
    try:
        return fed(body, steps, **bounds)[0]
    except ChunkedError as exc:
        return f"{type(exc).__name__}: {exc} @{exc.offset}"


@settings(max_examples=400)
@given(bodies(), st.lists(st.tuples(st.integers(0, 10_000), st.integers(0, 3), st.binary(max_size=3)), max_size=3),
       st.lists(st.integers(1, 40), max_size=6))
def test_a_body_broken_anywhere_gives_one_answer_however_it_is_cut_and_h11s_data_where_h11_reads_it(
        body_data: tuple[bytes, bytes], edits: list[tuple[int, int, bytes]], steps: list[int]) -> None:
    body = bytearray(body_data[0])
    for at, cut, put in edits:  # octets taken out and put in, anywhere: framing, data, trailer
        at %= len(body) + 1
        body[at:at + cut] = put
    broken = bytes(body)
    whole = _outcome(broken, [], max_digits=20, max_trailer=1 << 16)
    assert _outcome(broken, steps, max_digits=20, max_trailer=1 << 16) == whole
    theirs = h11_reading(broken)
    # h11 reads a bare CR in a chunk extension (§7.1.1 has none: a token or a quoted-string); pdi refuses it
    size_lines_have_bare_cr = any(b"\r" in line[:-1] for line in broken.split(b"\n"))
    if isinstance(theirs, bytes) and not size_lines_have_bare_cr:
        assert whole == theirs
    if isinstance(whole, bytes):
        assert by_http_client(broken) == whole  # what pdi reads, http.client reads alike
        # h11 refuses no more of it than what pdi passes over: a trailer line that is not a field (pdi reads none
        # as one; a line folded onto none, which h11 calls a continuation line at the start of headers: RFC 9112
        # §5.2's obs-fold, which a response's reader takes as spaces), a BWS before an extension's ";" (RFC 9112
        # §7.1.1 has one there)
        assert isinstance(theirs, bytes) or re.fullmatch(
            r"illegal header line: .*|continuation line at start of headers"
            r"|illegal chunk header: bytearray\(b'[0-9A-Fa-f]{1,20}(?: |\\t)+;.*'\)",
            str(theirs)), theirs


@pytest.mark.parametrize(("body", "data"), [
    (b"5 ;a=b\r\nhello\r\n0\r\n\r\n", b"hello"),  # BWS before ";" (§7.1.1; h11 refuses it, http.client reads it)
    (b"5 \t\r\nhello\r\n0\r\n\r\n", b"hello"),  # spaces after a size and no extension (h11 reads them)
    (b"5\r\nhello\r\n0\r\nX-A: b\nX-B: c\n\n", b"hello"),  # trailer lines ended by bare LFs (§2.2; h11 too)
])
def test_what_is_passed_over_as_h11_or_http_client_passes_it_over(body: bytes, data: bytes) -> None:
    assert by_http_client(body) == data
    assert fed(body, [1]) == (data, len(body))


def test_spaces_before_a_size_only_for_a_reader_of_strangers_records() -> None:
    """warcio and :mod:`http.client` strip them (``int(line, 16)``); RFC 9112 has none there."""
    body = b" \t5\r\nhello\r\n 0\r\n\r\n"
    assert by_http_client(body) == b"hello"
    assert fed(body, [], spaces=True) == (b"hello", len(body))
    with pytest.raises(ChunkedError, match=r"chunk 1, at octet 0 of the body, does not begin with a chunk size"):
        fed(body, [])


@pytest.mark.parametrize(("body", "words", "offset"), [
    (b"3\r\nabcXY0\r\n\r\n", r"chunk 1, of 3 octets, is not followed by CRLF at octet 6 of the body \(but by b'X'\)",
     6),
    (b"3\r\nabc\nX", r"chunk 1, of 3 octets, is not followed by CRLF at octet 6 of the body \(but by b'\\n'\)", 6),
    (b"3\r\nabc\r\rX", r"chunk 1, of 3 octets, is not followed by CRLF at octet 6 of the body \(but by b'\\r\\r'\)", 6),
    (b"3\r\nabc\r\nzz\r\n", r"chunk 2, at octet 8 of the body, does not begin with a chunk size line \(it begins"
                            r" b'zz\\r\\n'\)", 8),
    (b"3\r\nabc\r\n5\nhello\r\n", r"chunk 2, at octet 8 of the body, does not begin with a chunk size line \(it"
                                  r" begins b'5\\n'\)", 8),  # a bare LF ends no size line
    (b"0x5\r\nhello\r\n0\r\n\r\n", "chunk 1, at octet 0 of the body, does not begin with a chunk size line", 0),
    (b"+5\r\nhello\r\n0\r\n\r\n", "chunk 1, at octet 0 of the body, does not begin with a chunk size line", 0),
    (b"5;a\rb\r\nhello\r\n0\r\n\r\n", "chunk 1, at octet 0 of the body, does not begin with a chunk size line", 0),
    (b"\r\n", r"chunk 1, at octet 0 of the body, does not begin with a chunk size line \(it begins b'\\r\\n'\)", 0),
    (b"1\r\na\r\n00000000000000001\r\nb", "chunk 2, at octet 6 of the body, has a size of 17 hex digits, more than"
                                          " the 16 a size may have here", 6),
])
def test_a_break_of_the_framing_is_named_with_its_chunk_and_octet(body: bytes, words: str, offset: int) -> None:
    for steps in ([], [1], [2, 5]):
        with pytest.raises(ChunkedError, match=f"^{words}") as raised:
            fed(body, steps)
        assert raised.value.offset == offset and not isinstance(raised.value, CutShort)


@pytest.mark.parametrize(("body", "words", "offset"), [
    (b"", r"the body ends at octet 0, before its first chunk, without its last chunk \(a chunk of size 0\)", 0),
    (b"2", "the body ends at octet 1, inside the size line of chunk 1, without its last chunk", 1),
    (b"20\r\nhello", "chunk 1, of 32 octets, is cut short: the body ends after 5 of them, at its octet 9", 9),
    (b"5\r\nhello", r"chunk 1, of 5 octets, is not followed by CRLF at octet 8 of the body \(the body ends there\)",
     8),
    (b"5\r\nhello\r", r"chunk 1, of 5 octets, is not followed by CRLF at octet 8 of the body \(the body ends after"
                      r" its CR\)", 9),
    (b"5\r\nhello\r\n5\r\nworld\r\n", r"the body ends at octet 20, after chunk 2, without its last chunk", 20),
    (b"5\r\nhello\r\n0\r\nX-A: b\r\n", "the body ends at octet 21, inside the trailer section after its last chunk",
     21),
])
def test_a_body_cut_short_says_where(body: bytes, words: str, offset: int) -> None:
    for steps in ([], [1], [3]):
        with pytest.raises(CutShort, match=f"^{words}") as raised:
            fed(body, steps)
        assert raised.value.offset == offset
    with pytest.raises(CutShort, match=f"^{words}"):
        b"".join(pieces(io.BytesIO(body), Chunks()))


@settings(max_examples=50)
@given(st.integers(1, 64), st.integers(1, 8))
def test_a_size_line_of_its_bound_is_read_and_one_octet_more_is_refused_before_its_end_comes(
        bound: int, digits: int) -> None:
    """``max_line`` octets before the CRLF, the size's digits among them; one more is refused as soon as it is in
    hand, whatever may follow (the octets held for a line never pass the bound and its CRLF)."""
    digits = min(digits, bound)
    line = b"0" * (digits - 1) + b"3" + (b";" + b"e" * (bound - digits - 1) if bound > digits else b"")
    assert len(line) == bound
    assert fed(line + b"\r\nabc\r\n0\r\n\r\n", [1], max_line=bound) == (b"abc", len(line) + 12)
    longer = line + b"e" if bound > digits else b"0" + line
    with pytest.raises(ChunkedError, match=f"^chunk 1, at octet 0 of the body, has a size line longer than {bound}"
                                           " octets"):
        Chunks(max_line=bound).framing(longer + b"\r", 0, len(longer) + 1)  # no LF yet: refused all the same
    assert Chunks(max_line=bound).framing(longer, 0, len(longer)) == 0  # one octet fewer: more is asked for


def test_a_size_of_its_bound_of_digits_or_octets_is_read_and_one_more_is_refused() -> None:
    assert fed(b"000000000000003\r\nabc\r\n0\r\n\r\n", [], max_digits=15)[0] == b"abc"
    with pytest.raises(ChunkedError, match="has a size of 16 hex digits, more than the 15 a size may have here"):
        fed(b"0000000000000003\r\nabc\r\n0\r\n\r\n", [], max_digits=15)
    assert fed(b"3\r\nabc\r\n0\r\n\r\n", [], max_size=3)[0] == b"abc"
    with pytest.raises(ChunkedError, match=r"^chunk 1, at octet 0 of the body, says it holds 2147483649 octets, more"
                                           " than the 2 GiB a chunk may hold here"):
        fed(b"80000001\r\n", [], max_size=1 << 31)
    with pytest.raises(ChunkedError, match="says it holds 4 octets, more than the 3 octets a chunk may hold here"):
        fed(b"4\r\nabcd\r\n0\r\n\r\n", [], max_size=3)


def test_a_trailer_section_of_its_bound_is_read_and_one_octet_or_line_more_is_refused() -> None:
    """``max_trailer``: the trailer section's octets, its empty line among them; ``max_fields``: its lines. It is
    passed over as it comes, never held: a line of it may be longer than what a reader holds at a time."""
    start = b"3\r\nabc\r\n0\r\n"
    section = b"X-A: " + b"a" * 93 + b"\r\n" + b"\r\n"  # 102 octets
    assert fed(start + section, [1], max_trailer=102) == (b"abc", len(start) + 102)
    with pytest.raises(ChunkedError, match=r"^the trailer section after the last chunk, at octet 11 of the body,"
                                           " holds more than 101 octets") as raised:
        fed(start + section, [7], max_trailer=101)
    assert raised.value.offset == 11
    lines = b"X: 1\r\n" * 3 + b"\r\n"
    assert fed(start + lines, [], max_fields=3)[0] == b"abc"
    with pytest.raises(ChunkedError, match="the trailer section after the last chunk, at octet 11 of the body, holds"
                                           " more than 2 lines"):
        fed(start + lines, [], max_fields=2)
    chunks = Chunks(max_trailer=1 << 20)
    long = start + b"X-A: " + b"a" * 5000
    assert chunks.framing(long, 0, len(long)) == 3 and chunks.size == 3
    assert chunks.framing(long, 6, len(long)) == len(long)  # all taken, none held
    assert chunks.last and not chunks.ended
    assert chunks.framing(b"aa\r\n\r\n", 0, 6) == 6 and chunks.ended


def test_the_data_is_the_callers_to_take_and_is_counted_in_the_offsets() -> None:
    """A caller takes each chunk's data where it lies and calls again at its end; the offsets count it."""
    chunks = Chunks(noun="the payload")
    body = b"a\r\n0123456789\r\n1;x\r\n!\r\nzz\r\n"
    assert chunks.framing(body, 0, len(body)) == 3 and chunks.in_data and chunks.size == 10
    assert chunks.framing(body, 13, len(body)) == 20 and chunks.size == 1 and chunks.at == 20
    with pytest.raises(ChunkedError, match=r"^chunk 3, at octet 23 of the payload, does not begin"):
        chunks.framing(body, 21, len(body))
