"""``check_reads``: parse's reading without undoing transfer encodings gives parse's outcome, error for error."""

from __future__ import annotations

import io

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pdi.errors import LimitError, PDIError
from pdi.mhtml import Limits, parse
from pdi.mhtml.parse import check_reads

VALID = (
    b'Content-Type: multipart/related; boundary="b"; type="text/html"\r\n\r\n'
    b"--b\r\nContent-Type: text/html\r\nContent-Location: http://a/\r\n\r\n"
    b'<img src="i.png">\r\n'
    b"--b\r\nContent-Type: image/png\r\nContent-Transfer-Encoding: base64\r\n"
    b"Content-Location: http://a/i.png\r\n\r\niVBORw0KGgo=\r\n"
    b"--b\r\nContent-Type: text/css\r\nContent-Location: http://a/s.css\r\nContent-Transfer-Encoding: quoted-printable\r\n"
    b"\r\nb{background:url(=\r\nx.png)}\r\n--b--\r\n"
)
SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
TOKENS = [b"\r\n", b"\n", b"--b", b"--b--", b":", b"=", b"==", b"\r", b'"', b"\x00\xff", b"QQ==QQ",
          b"Content-Transfer-Encoding: base64\r\n", b"Content-Type: multipart/related; boundary=c\r\n", b"--c"]
LIMITS = st.builds(
    Limits,
    max_depth=st.integers(1, 4),
    max_parts=st.integers(1, 5),
    max_header_bytes=st.integers(16, 400),
    max_part_bytes=st.integers(1, 200),
    max_header_lines=st.integers(1, 8),
    max_fields=st.integers(1, 20),
    chunk_size=st.integers(1, 64),
)


def _outcome(read: object, data: bytes, limits: Limits) -> tuple[type, str] | None:
    try:
        read(data, limits=limits)  # type: ignore[operator]
    except PDIError as exc:
        return type(exc), str(exc)
    return None


def _same(data: bytes, limits: Limits) -> None:
    assert _outcome(check_reads, data, limits) == _outcome(parse, data, limits)
    # from a stream, read a chunk at a time, as parse reads one
    assert (_outcome(lambda d, limits: check_reads(io.BytesIO(d), limits=limits), data, limits)
            == _outcome(lambda d, limits: parse(io.BytesIO(d), limits=limits), data, limits))


@SETTINGS
@given(st.binary(max_size=600), LIMITS)
def test_random_bytes_read_as_parse_reads_them(data: bytes, limits: Limits) -> None:
    _same(data, limits)


@SETTINGS
@given(st.data(), st.one_of(st.just(Limits()), LIMITS))
def test_mutated_files_read_as_parse_reads_them(data: st.DataObject, limits: Limits) -> None:
    buf = bytearray(VALID)
    for _ in range(data.draw(st.integers(1, 6))):
        op = data.draw(st.sampled_from(["insert", "delete", "replace"]))
        pos = data.draw(st.integers(0, len(buf)))
        if op == "insert":
            buf[pos:pos] = data.draw(st.sampled_from(TOKENS))
        elif op == "delete":
            del buf[pos : pos + data.draw(st.integers(1, 8))]
        else:
            buf[pos : pos + 1] = data.draw(st.binary(min_size=1, max_size=2))
    _same(bytes(buf), limits)


def test_a_body_parse_repairs_is_no_fault() -> None:
    # base64 after its padding and without it: parse decodes each run and repairs, with warnings
    damaged = VALID.replace(b"iVBORw0KGgo=", b"iVBORw0KGgo=QUJD\r\nQQ")
    assert parse(damaged).parts[1].warnings
    check_reads(damaged)


def test_a_part_past_the_limit_is_the_same_limit_error() -> None:
    with pytest.raises(LimitError) as by_parse:
        parse(VALID, limits=Limits(max_part_bytes=10))
    with pytest.raises(LimitError) as by_check:
        check_reads(VALID, limits=Limits(max_part_bytes=10))
    assert str(by_check.value) == str(by_parse.value)
    assert "longer than 10 bytes" in str(by_parse.value)
