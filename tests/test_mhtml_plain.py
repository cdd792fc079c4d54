"""``read_plain``: a file of ``build``'s shape read as ``read_message`` reads it, or left to it (``None``)."""

from __future__ import annotations

import datetime
from unittest.mock import patch

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from pdi.archive.readable import MhtmlCheck
from pdi.errors import FormatCheckError, ParseError, PDIError
from pdi.mhtml.limits import Limits
from pdi.mhtml.parse import check_reads, read_message
from pdi.mhtml.plain import PlainPart, read_plain, reads_plain
from pdi.mhtml.write import Resource, build

SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])

MEDIA = st.sampled_from([
    "text/html", "TEXT/HTML", "application/xhtml+xml", "text/css", "image/png", "image/svg+xml", "application/json",
    "font/woff2", "application/octet-stream", "x-a/b.c+d", "text/plain",
])
CHARSET = st.one_of(st.none(), st.sampled_from(["utf-8", "UTF-8", "iso-8859-1", "windows-1252", "x'y", "a.b_c-d"]))
# URL characters with the awkward ones among them: spaces and non-ASCII (written %-encoded), "=?" (written as
# encoded words), comment brackets at either end, fragments, and lengths that fold the header line.
URL_TEXT = st.lists(st.sampled_from([*"abz09/.-_~%?&=#()+ é中", "=?", "?="]), max_size=120).map("".join)
LOCATION = st.one_of(
    st.builds(lambda scheme, host, rest: f"{scheme}://{host}/{rest}", st.sampled_from(["http", "https", "HTTP"]),
              st.sampled_from(["a.example", "b.example:8080", "x"]), URL_TEXT),
    URL_TEXT,  # relative: resolved against thismessage:/
    st.builds(lambda cid: f"cid:{cid}", st.text(alphabet="abc@.", min_size=1, max_size=8)),
)
DATA = st.one_of(
    st.binary(max_size=300),
    st.builds(lambda t: t.encode("utf-8"), st.text(max_size=200)),
    st.sampled_from([b"", b"\r\n", b"line\nline\r\n.\n", b"=", b"a" * 200, b"--=_pdi_", b"\x00\xff" * 50]),
)


@st.composite
def resources(draw: st.DrawFn, plain: bool) -> list[Resource]:
    count = draw(st.integers(1, 5))
    out = []
    for _ in range(count):
        media = draw(MEDIA)
        cid = None if plain else draw(st.one_of(st.none(), st.text(alphabet="abc@.", min_size=1, max_size=6)))
        out.append(Resource(draw(LOCATION), media, draw(DATA), draw(CHARSET), cid))
    return out


def _built(parts: list[Resource], **top: object) -> bytes:
    try:
        return build(parts[0], parts[1:], **top)  # type: ignore[arg-type]
    except ParseError:
        assume(False)  # labels that collide, or a charset build refuses
        raise  # pragma: no cover


def _general(data: bytes) -> tuple[PlainPart, ...] | None:
    """What read_message reads of ``data``, the root first; ``None`` when it refuses the file."""
    try:
        got = read_message(data)
    except PDIError:
        return None
    root = got.root
    return tuple(
        PlainPart(p.location, p.content_location, p.content_type, p.charset, p.data)
        for p in (root, *(p for p in got.parts if p is not root))
    )


@SETTINGS
@given(resources(plain=True))
def test_a_file_build_writes_is_read_whole_as_read_message_reads_it(parts: list[Resource]) -> None:
    data = _built(parts)
    got = read_plain(data)
    assert got is not None  # the shape every page packed by a WARC import has
    assert got == _general(data)
    # and each part is the resource given to build: its octets, its media type, its charset
    assert [(p.data, p.content_type, p.charset) for p in got] == [
        (r.data, r.media_type.lower(), r.charset) for r in parts]


@SETTINGS
@given(resources(plain=False), st.booleans(), st.booleans(), st.booleans())
def test_any_file_build_writes_is_read_as_read_message_reads_it_or_left_to_it(
    parts: list[Resource], located: bool, subject: bool, dated: bool
) -> None:
    data = _built(
        parts, location="http://top.example/dir/" if located else None, subject="a page" if subject else None,
        date=datetime.datetime(2024, 5, 1, tzinfo=datetime.UTC) if dated else None,
    )
    got = read_plain(data)
    if got is not None:
        assert got == _general(data)
    if located or any(r.content_id for r in parts):
        assert got is None  # a base for the parts, a Content-ID: not the shape read here


TOKENS = [b"\r\n", b"\n", b"\r", b" ", b"--", b"=", b"==", b"QQ==QQ", b'"', b"\x00\xff", b"(", b")", b"=?",
          b"Content-Type: multipart/mixed; boundary=c\r\n", b"Content-Transfer-Encoding: 7bit\r\n", b"--c",
          b"Content-Location: http://other.example/\r\n", b"\xef\xbb\xbf", b"Content-ID: <a@b>\r\n"]


def _damaged(parts: list[Resource], draw: st.DataObject) -> bytes:
    """A file ``build`` writes of ``parts``, damaged one to four times: a token inserted (a delimiter of its own
    boundary among them), octets deleted or one replaced."""
    data = _built(parts)
    boundary = data.split(b'boundary="', 1)[1].split(b'"', 1)[0]
    tokens = [*TOKENS, b"--" + boundary, b"\r\n--" + boundary + b"\r\n", b"--" + boundary + b"--", boundary]
    buf = bytearray(data)
    for _ in range(draw.draw(st.integers(1, 4))):
        op = draw.draw(st.sampled_from(["insert", "delete", "replace"]))
        pos = draw.draw(st.integers(0, len(buf)))
        if op == "insert":
            buf[pos:pos] = draw.draw(st.sampled_from(tokens))
        elif op == "delete":
            del buf[pos : pos + draw.draw(st.integers(1, 8))]
        else:
            buf[pos : pos + 1] = draw.draw(st.binary(min_size=1, max_size=2))
    damaged = bytes(buf)
    return damaged


@SETTINGS
@given(resources(plain=True), st.data())
def test_a_damaged_file_is_read_as_read_message_reads_it_or_left_to_it(parts: list[Resource], draw: st.DataObject) -> None:
    damaged = _damaged(parts, draw)
    got = read_plain(damaged)
    if got is not None:
        assert got == _general(damaged)


def test_what_read_message_repairs_or_reads_otherwise_is_left_to_it() -> None:
    page = Resource("http://a.example/", "text/html", b"<img src=i.png>", "utf-8")
    image = Resource("http://a.example/i.png", "image/png", b"\x89PNG\r\n\x1a\n")
    data = build(page, [image])
    assert read_plain(data) is not None
    encoded = data.split(b"Content-Location: http://a.example/i.png\r\n\r\n", 1)[1].split(b"\r\n", 1)[0]
    assert encoded == b"iVBORw0KGgo="
    # base64 with data after its padding (each run decoded, with a warning), and with bad padding (repaired)
    for damaged in (encoded + b"QUJD", encoded[:-2]):
        changed = data.replace(encoded, damaged)
        assert read_message(changed).parts[1].warnings
        assert read_plain(changed) is None
    # an image first under type="text/html": read_message looks further for the root
    swapped = build(image, [page]).replace(b'type="image/png"', b'type="text/html"')
    assert read_message(swapped).root.content_type == "text/html"
    assert read_plain(swapped) is None
    # a preamble, an epilogue, a bare LF before a delimiter
    boundary = b"--" + data.split(b'boundary="', 1)[1].split(b'"', 1)[0]
    for changed in (data.replace(b"\r\n\r\n" + boundary, b"\r\n\r\npreamble\r\n" + boundary, 1), data + b"epilogue",
                    data.replace(b"\r\n" + boundary + b"\r\nContent-Type: image", b"\n" + boundary + b"\r\nContent-Type: image")):
        assert read_plain(changed) is None
        assert read_message(changed).parts[1].data == b"\x89PNG\r\n\x1a\n"


# --- reads_plain: the deposit's MHTML check of a file of build's shape (pdi.archive.readable.MhtmlCheck) ---


def _check_outcome(data: bytes, limits: Limits | None = None) -> tuple[type, str] | None:
    try:
        check_reads(data, limits=limits)
    except PDIError as exc:
        return type(exc), str(exc)
    return None


def _deposit_check(data: bytes) -> tuple[type, str] | None:
    """What a deposit's MHTML check says of ``data`` (the octets streamed in two pieces)."""
    check = MhtmlCheck(source="page.mht")
    try:
        check.update(data[: len(data) // 2])
        check.update(data[len(data) // 2 :])
        check.finish(None)  # type: ignore[arg-type]  # the blob's digests are not looked at
    except PDIError as exc:
        return type(exc), str(exc)
    return None


def _line_by_line_check(data: bytes) -> tuple[type, str] | None:
    """What the deposit's check said of ``data`` before reads_plain: every file read line by line (check_reads)."""
    with patch("pdi.mhtml.plain.reads_plain", return_value=False):
        return _deposit_check(data)


@SETTINGS
@given(resources(plain=True))
def test_a_file_build_writes_reads_plain_and_check_reads_finds_nothing_wrong(parts: list[Resource]) -> None:
    data = _built(parts)
    assert reads_plain(data)
    assert _check_outcome(data) is None
    assert _deposit_check(data) is None


@SETTINGS
@given(resources(plain=True), st.data())
def test_a_damaged_file_reads_plain_only_when_check_reads_finds_nothing_wrong(
    parts: list[Resource], draw: st.DataObject
) -> None:
    damaged = _damaged(parts, draw)
    if reads_plain(damaged):
        assert _check_outcome(damaged) is None
    if read_plain(damaged) is not None:
        assert reads_plain(damaged)
    # the deposit's check refuses what it refused before, in the same words, and lets the rest through
    said = _deposit_check(damaged)
    if said is not None:
        assert said[1].startswith("page.mht: ")
    assert said == _line_by_line_check(damaged)
    if said is None:
        assert _check_outcome(damaged) is None


@SETTINGS
@given(resources(plain=False), st.booleans(), st.integers(1, 6), st.integers(0, 400))
def test_reads_plain_keeps_within_the_limits_check_reads_keeps(
    parts: list[Resource], located: bool, max_parts: int, max_part_bytes: int
) -> None:
    data = _built(parts, location="http://top.example/dir/" if located else None)
    limits = Limits(max_parts=max_parts, max_part_bytes=max_part_bytes)
    with patch("pdi.mhtml.plain._LIMITS", limits):
        plain = reads_plain(data)
    if plain:
        assert _check_outcome(data, limits) is None
    elif not located and not any(r.content_id for r in parts):
        assert _check_outcome(data, limits) is not None  # build's shape, so only a limit leaves it to check_reads


def test_a_file_pdi_cannot_read_is_refused_by_the_deposit_check_as_before() -> None:
    page = Resource("http://a.example/", "text/html", b"<img src=i.png>", "utf-8")
    data = build(page, [Resource("http://a.example/i.png", "image/png", b"\x89PNG\r\n\x1a\n")])
    boundary = data.split(b'boundary="', 1)[1].split(b'"', 1)[0]
    no_parts = data.split(b"\r\n\r\n", 1)[0] + b"\r\n\r\n--" + boundary + b"--\r\n"
    assert not reads_plain(no_parts)
    said = _deposit_check(no_parts)
    assert said is not None and said[0] is FormatCheckError
    assert "multipart/related has no body parts" in said[1]
    # base64 the general reader repairs (bad padding): not the plain walk's, but readable, so deposited
    repaired = data.replace(b"iVBORw0KGgo=", b"iVBORw0KGgo")
    assert read_plain(repaired) is None and reads_plain(repaired)
    assert _deposit_check(repaired) is None


# A part's label as a stranger may write it, past what build writes: malformed and odd encoded words, comment
# brackets, references that do not resolve, folded lines (the walk of a check does not read labels: issue 24)
LABEL_BITS = st.sampled_from([
    "=?", "?=", "?B?", "?Q?", "?b?", "?q?", "utf-8", "UTF-16", "utf-7", "idna", "zlib", "*fr", "AAA", "====", "=FF",
    "=4", "_", "(", ")", "\\", "http://", "https://[", "]", "%", "%zz", "#", ":", "@", "a", "/", "..", "cid:", "%C3%A9",
])
#: (words of those bits, each after the first on a line of its own or not: a folded line is never blank)
RAW_LABEL = st.lists(st.tuples(st.booleans(), st.lists(LABEL_BITS, min_size=1, max_size=4).map("".join)),
                     max_size=8).map(
    lambda words: "".join(("\r\n " if fold and n else "") + word for n, (fold, word) in enumerate(words)))


@SETTINGS
@given(resources(plain=True), RAW_LABEL)
def test_a_part_labelled_anyhow_is_checked_as_check_reads_checks_it(parts: list[Resource], label: str) -> None:
    data = _built(parts)
    head, sep, rest = data.partition(b"\r\nContent-Location: ")
    assert sep
    written = head + sep + label.encode("ascii") + rest[rest.index(b"\r\n\r\n"):]
    assert reads_plain(written)  # build's shape whatever the label: read plain
    assert _check_outcome(written) is None  # and check_reads, which reads the label, finds nothing wrong either
    assert _deposit_check(written) is None and _line_by_line_check(written) is None
    # the walk that reads the labels (the export's) reads this one as read_message does
    assert read_plain(written) == _general(written) is not None
