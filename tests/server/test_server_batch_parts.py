"""``POST /api/batch``: parts whose octets or headers a batch cannot take as one document each are refused.

Each refusal names the item or part and what was wrong, and leaves the
archive exactly as it was (its catalog and its blob store compared whole).
The bodies are written by hand after RFC 7578 (multipart/form-data) and RFC
2046 §5.1.1 (delimiters, the close-delimiter and the epilogue), so that a
body no well-behaved library would write can be sent.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from server_helpers import WriteArchive

S = "library.example.us"
KIND = "multipart/form-data; boundary=b0undary"


class Batches(WriteArchive):
    def post(self, body: bytes, kind: str = KIND) -> tuple[int, str]:
        answer = self.client.post(f"/api/batch?series={S}", content=body,
                                  headers={"Authorization": f"Bearer {self.token}", "Content-Type": kind})
        return answer.status_code, answer.json().get("detail", "") if answer.status_code >= 400 else answer.text

    def snapshot(self, files: bool = True) -> object:
        return super().snapshot(files)


@pytest.fixture
def batches(tmp_path: Path) -> Iterator[Batches]:
    made = Batches(tmp_path / "archive")
    try:
        yield made
    finally:
        made.archive.close()


def part(headers: bytes, octets: bytes, boundary: bytes = b"b0undary") -> bytes:
    """One body part: its delimiter line (RFC 2046 §5.1.1), its header fields, a blank line, its octets."""
    return b"--" + boundary + b"\r\n" + headers + b"\r\n" + octets + b"\r\n"


def item(name: str = "a.txt", more: bytes = b"") -> bytes:
    """The header fields of a file part named ``name`` in text/plain, and ``more`` after them."""
    return (f'Content-Disposition: form-data; name="item"; filename="{name}"\r\n'.encode()
            + b"Content-Type: text/plain\r\n" + more)


CLOSE = b"--b0undary--\r\n"
FIRST = part(item(), b"one\n") + CLOSE
#: Two whole bodies one after the other: the second's part stands in the first's epilogue, at octet len(FIRST).
TWO_BODIES = FIRST + part(item("b.txt"), b"two\n") + CLOSE


@pytest.mark.parametrize(("field", "said"), [
    # RFC 7578 §4.7: senders do not use Content-Transfer-Encoding; "aGkK" is base64 for "hi\n"
    (b"Content-Transfer-Encoding: base64\r\n", "item 1 (b.txt) is sent in the Content-Transfer-Encoding 'base64'"),
    (b"Content-Transfer-Encoding: Quoted-Printable\r\n",
     "item 1 (b.txt) is sent in the Content-Transfer-Encoding 'quoted-printable'"),
    (b"Content-Encoding: gzip\r\n", "item 1 (b.txt) is sent in the content coding 'gzip'"),
    (b"Content-Encoding: identity, br\r\n", "item 1 (b.txt) is sent in the content coding 'br'"),
])
def test_a_part_sent_in_a_coding_is_refused_naming_it_and_nothing_is_kept(
        batches: Batches, field: bytes, said: str) -> None:
    before = batches.snapshot()
    status, detail = batches.post(part(item(), b"plain\n") + part(item("b.txt", field), b"aGkK") + CLOSE)
    assert status == 415 and detail.startswith(said), detail
    assert batches.snapshot() == before


@pytest.mark.parametrize("coding", [b"7bit", b"8bit", b"binary", b"Binary"])
def test_a_part_in_an_identity_transfer_encoding_is_kept_as_sent(batches: Batches, coding: bytes) -> None:
    # RFC 2045 §6.2: 7bit, 8bit and binary say the octets are not encoded
    status, text = batches.post(part(item(more=b"Content-Transfer-Encoding: " + coding + b"\r\n"), b"hi\n") + CLOSE)
    assert status == 201, text
    (name,) = batches.archive.ls(series=S)
    with batches.archive.open_octets(str(name)) as opened:
        assert b"".join(opened.reader.chunks(0, opened.size)) == b"hi\n"


@pytest.mark.parametrize("after", [
    part(item("b.txt"), b"two\n") + CLOSE,  # a second body written after the first, as if concatenated
    part(item("b.txt"), b"two\n"),  # a part, and no second close
    b"--b0undary\r\n",  # a delimiter alone
])
def test_a_part_after_the_closing_boundary_refuses_the_batch_naming_where(batches: Batches, after: bytes) -> None:
    # RFC 2046 §5.1.1: what follows the close-delimiter is the epilogue, which a parser ignores: the item sent
    # there was dropped, and a batch of fewer items than sent was deposited
    first = part(item(), b"one\n") + CLOSE
    before = batches.snapshot()
    status, detail = batches.post(first + after)
    assert status == 400, detail
    assert detail.startswith(f"the multipart body goes on after its closing boundary: a delimiter (--b0undary) at"
                             f" octet {len(first)}, in its epilogue, "), detail
    assert batches.snapshot() == before


@pytest.mark.parametrize("epilogue", [b"", b"\r\n", b"a note for whoever reads the epilogue\r\n", b"b0undary--\r\n"])
def test_an_epilogue_without_a_delimiter_is_ignored_as_rfc_2046_says(batches: Batches, epilogue: bytes) -> None:
    status, text = batches.post(part(item(), b"one\n") + CLOSE + epilogue)
    assert status == 201, text
    assert len(batches.archive.ls(series=S)) == 1


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cuts=st.lists(st.integers(min_value=1, max_value=len(TWO_BODIES) - 1), unique=True, max_size=12))
@example(cuts=list(range(1, len(TWO_BODIES))))  # one octet a piece
def test_a_part_after_the_closing_boundary_is_found_however_the_body_is_cut_into_pieces(
        batches: Batches, cuts: list[int]) -> None:
    edges = [0, *sorted(cuts), len(TWO_BODIES)]
    pieces = [TWO_BODIES[a:b] for a, b in itertools.pairwise(edges)]
    before = batches.snapshot()
    answer = batches.client.post(f"/api/batch?series={S}", content=iter(pieces),
                                 headers={"Authorization": f"Bearer {batches.token}", "Content-Type": KIND})
    assert answer.status_code == 400 and f"at octet {len(FIRST)}," in answer.json()["detail"], answer.text
    assert batches.snapshot() == before


@pytest.mark.parametrize(("headers", "said"), [
    # RFC 2045 §5 / RFC 7578 §4.4: a part has one Content-Type; which of two the batch read decided the item's format
    (b'Content-Disposition: form-data; name="item"; filename="b.txt"\r\nContent-Type: text/plain\r\n'
     b"Content-Type: text/html\r\n", "item 1 (b.txt) gives Content-Type 2 times"),
    (b'Content-Disposition: form-data; name="item"; filename="x.txt"\r\n'
     b'Content-Disposition: form-data; name="item"; filename="b.txt"\r\nContent-Type: text/plain\r\n',
     "item 1 (b.txt) gives Content-Disposition 2 times"),
    (b'Content-Disposition: form-data; name="item"; filename="b.txt"\r\nContent-Type: text/plain\r\n'
     b"Content-Transfer-Encoding: binary\r\ncontent-transfer-encoding: 8bit\r\n",
     "item 1 (b.txt) gives Content-Transfer-Encoding 2 times"),
])
def test_a_part_giving_a_header_field_twice_is_refused_naming_it(batches: Batches, headers: bytes, said: str) -> None:
    before = batches.snapshot()
    status, detail = batches.post(part(item(), b"one\n") + part(headers, b"<p>two\n") + CLOSE)
    assert status == 400 and detail.startswith(said), detail
    assert batches.snapshot() == before


def test_a_malformed_delimiter_is_named_with_the_octet_where_it_broke(batches: Batches) -> None:
    # RFC 2046 §5.1.1: a delimiter line is --BOUNDARY, transport padding (spaces, tabs), CRLF; "X" is none of them
    before = batches.snapshot()
    status, detail = batches.post(b"--b0undaryX\r\n" + item() + b"\r\none\r\n" + CLOSE)
    assert status == 400 and "before its first boundary" in detail and "at octet 10" in detail, detail
    assert "Invalid multipart data" not in detail
    assert batches.snapshot() == before


@pytest.mark.parametrize(("more", "what"), [
    (b"X-Long: " + b"a" * 5000 + b"\r\n", "header size"),
    (b"".join(b"X-Field-%d: a\r\n" % n for n in range(20)), "header count"),
])
def test_a_part_header_block_past_the_parsers_bounds_says_which_bound_and_where(
        batches: Batches, more: bytes, what: str) -> None:
    before = batches.snapshot()
    body = part(item(), b"one\n") + part(item("b.txt", more), b"two\n") + CLOSE
    status, detail = batches.post(body)
    start = body.index(b"--b0undary\r\n", 1)
    assert status == 400 and "in the headers of part 2" in detail and what in detail.lower(), detail
    octet = int(detail.split("at octet ", 1)[1].split(")", 1)[0].replace(",", ""))
    assert start < octet < start + len(part(item("b.txt", more), b"")), detail
    assert batches.snapshot() == before


def test_a_batch_of_more_items_than_it_may_hold_is_413_saying_the_bound(batches: Batches) -> None:
    # the write API's documented bound (OpenAPI: "File parts ... at most 1000"): one more is a limit, not a
    # malformed body, and the answer says so in pdi's words, with the part that passed it
    before = batches.snapshot()
    body = b"".join(part(item(f"{n}.txt"), b"%d\n" % n) for n in range(1001)) + CLOSE
    status, detail = batches.post(body)
    assert status == 413, (status, detail)
    assert detail == ("a batch holds at most 1,000 items, and part 1,001 is one more: send the rest in another"
                      " batch; nothing was deposited"), detail
    assert batches.snapshot() == before
    status, _ = batches.post(b"".join(part(item(f"{n}.txt"), b"%d\n" % n) for n in range(1000)) + CLOSE)
    assert status == 201  # the bound itself is taken


def test_a_batch_of_more_fields_than_parts_it_may_hold_is_413_saying_so(batches: Batches) -> None:
    before = batches.snapshot()
    field = b'Content-Disposition: form-data; name="note"\r\n'
    status, detail = batches.post(b"".join(part(field, b"x") for _ in range(1002)) + CLOSE)
    assert status == 413, (status, detail)
    assert detail == ("a batch's parts are its items and one manifest field, and part 1,002 is field 1,002; nothing"
                      " was deposited"), detail
    assert batches.snapshot() == before


#: A part's header field is sent as octets; Starlette reads them as Latin-1, so "é" in UTF-8 (C3 A9) was quoted "Ã©".
#: Each refusal below quotes the field as its client wrote it: UTF-8 read as UTF-8, an octet it does not read \\xNN,
#: ASCII letters lower-cased where the field is case-insensitive (never an octet beyond ASCII), at most 120 characters.
@pytest.mark.parametrize(("fields", "said"), [
    (b"Content-Transfer-Encoding: B\xc3\xa4se64\r\n", "item 0 (a.txt) is sent in the Content-Transfer-Encoding 'bäse64'"),
    (b"Content-Encoding: BR\xc3\x96TLI\r\n", "item 0 (a.txt) is sent in the content coding 'brÖtli'"),
    (b"Content-Encoding: x-\xff\r\n", r"item 0 (a.txt) is sent in the content coding 'x-\xff'"),
])
def test_a_parts_coding_is_quoted_as_sent(batches: Batches, fields: bytes, said: str) -> None:
    before = batches.snapshot()
    status, detail = batches.post(part(item(more=fields), b"aGkK") + CLOSE)
    assert status == 415 and detail.startswith(said), detail
    assert batches.snapshot() == before


def typed(content_type: bytes) -> bytes:
    """A batch of one file part sent with ``content_type``."""
    return part(b'Content-Disposition: form-data; name="item"; filename="a.txt"\r\nContent-Type: ' + content_type
                + b"\r\n", b"hi\n") + CLOSE


LONG = "image/x-" + "é" * 130


@pytest.mark.parametrize(("content_type", "said"), [
    (b"text/Pla\xc3\xafn", "item 0 (a.txt): its Content-Type 'text/Plaïn' is not a media type of pdi's registry"),
    (b"text/\xff", r"item 0 (a.txt): its Content-Type 'text/\xff' is not a media type of pdi's registry"),
    (b"text/plain; charset=UTF-\xc3\xaf",
     "item 0 (a.txt): its Content-Type 'text/plain; charset=UTF-ï' names a charset pdi does not know"),
    (LONG.encode(), f"item 0 (a.txt): its Content-Type '{LONG[:120]}'… is not a media type of pdi's registry"),
])
def test_a_parts_content_type_is_quoted_as_sent(batches: Batches, content_type: bytes, said: str) -> None:
    before = batches.snapshot()
    status, detail = batches.post(typed(content_type))
    assert status == 415 and detail.startswith(said), detail
    assert batches.snapshot() == before


def test_a_parts_ascii_content_type_is_refused_as_before(batches: Batches) -> None:
    status, detail = batches.post(typed(b"text/x-unheard-of"))
    assert status == 415 and detail.startswith("item 0 (a.txt): media type 'text/x-unheard-of' is not in the"), detail
