"""A ``POST /api/octets`` answer sent ``Transfer-Encoding: chunked`` (RFC 9112 §7.1), its framing taken out where it
lies in the reader's buffer (:class:`pdi.network.peers._Parts` with ``chunked``). The body is written here as a
multipart answer of parts the test chose, then cut into chunks at places the test chose (sizes in hex of either
case, with leading zeros, with chunk extensions, a trailer section), and read in pieces of sizes the test chose:
each part's octets must be the ones put in, as :mod:`hashlib` hashes them, wherever a cut falls (in a part's head,
between a CR and its LF, in its octets)."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pdi.archive.blobs import BlobInfo
from pdi.archive.blobs.seam import Spooled
from pdi.errors import PDIError, RemoteError
from pdi.network.peers import _Parts

URL = "http://o.example/api/octets"
BOUNDARY = b"0123456789abcdef"
BASE = "http://o.example"


def _multipart(bodies: list[bytes], epilogue: bytes = b"") -> tuple[bytes, list[dict[str, object]]]:
    """The multipart answer of ``bodies`` (RFC 2046 §5.1, as a pdi origin writes it) and each part's entry."""
    out = bytearray()
    entries: list[dict[str, object]] = []
    for index, body in enumerate(bodies):
        name = f"urn:pdi://o.example.us/2026/12/01/{index + 1}.text.1"
        digest = hashlib.sha256(body).hexdigest()
        entries.append({"name": name, "sha256": digest, "size": len(body)})
        out += (b"--%s\r\nContent-Location: %s\r\nContent-Type: text/plain\r\nContent-Length: %d\r\n"
                b"X-PDI-SHA256: %s\r\n\r\n%s\r\n") % (BOUNDARY, name.encode(), len(body), digest.encode(), body)
    out += b"--%s--\r\n" % BOUNDARY + epilogue
    return bytes(out), entries


def _chunked(body: bytes, cuts: list[int], spelt: list[tuple[bool, int, bytes]], trailers: list[bytes]) -> bytes:
    """``body`` in chunks ending at ``cuts``, each size line spelt by ``spelt`` (upper case, leading zeros, an
    extension), then the last chunk and ``trailers``."""
    out = bytearray()
    at = 0
    for index, cut in enumerate([*sorted(set(c for c in cuts if 0 < c < len(body))), len(body)]):
        upper, zeros, extension = spelt[index % len(spelt)] if spelt else (False, 0, b"")
        size = b"0" * zeros + (b"%X" if upper else b"%x") % (cut - at)
        out += size + extension + b"\r\n" + body[at:cut] + b"\r\n"
        at = cut
    out += b"0\r\n" + b"".join(t + b"\r\n" for t in trailers) + b"\r\n"
    return bytes(out)


def _reads(raw: bytes, sizes: list[int]) -> Iterator[int]:
    """How many octets each read gives (cycled), until ``raw`` is all given."""
    index = 0
    while True:
        yield sizes[index % len(sizes)] if sizes else 1 << 20
        index += 1


class _Kept(Spooled):
    def __init__(self, data: bytes) -> None:
        super().__init__(Path("/nonexistent"), BlobInfo(hashlib.sha256(data).hexdigest(), len(data)))
        self.data = data


def _write(pieces: Iterator[memoryview]) -> Spooled:
    return _Kept(b"".join(bytes(piece) for piece in pieces))  # each view used before the next is asked for


def _parts(raw: bytes, sizes: list[int]) -> _Parts:
    given = 0
    reads = _reads(raw, sizes)

    def read_into(view: memoryview) -> int:
        nonlocal given
        count = min(len(view), next(reads), len(raw) - given)
        view[:count] = raw[given:given + count]
        given += count
        return count

    return _Parts(read_into, BOUNDARY, URL, chunked=True)


_SPELT = st.tuples(st.booleans(), st.integers(0, 3), st.sampled_from([b"", b";x", b" ;a=b", b";a=\"q;r\";c"]))


@settings(max_examples=300)
@given(st.lists(st.binary(max_size=300), min_size=1, max_size=5), st.lists(st.integers(0, 2000), max_size=20),
       st.lists(_SPELT, max_size=3), st.lists(st.sampled_from([b"X-T: 1", b"Digest: a"]), max_size=2),
       st.lists(st.integers(1, 64), max_size=5), st.sampled_from([b"", b"\r\nan epilogue\r\n"]))
def test_rfc9112_7_1_each_parts_octets_are_as_sent_wherever_the_chunks_and_reads_are_cut(
        bodies: list[bytes], cuts: list[int], spelt: list[tuple[bool, int, bytes]], trailers: list[bytes],
        sizes: list[int], epilogue: bytes) -> None:
    body, entries = _multipart(bodies, epilogue)
    parts = _parts(_chunked(body, cuts, spelt, trailers), sizes)
    for entry, sent in zip(entries, bodies, strict=True):
        kept = parts.take(entry, _write, BASE)
        assert isinstance(kept, _Kept)
        assert kept.data == sent
        assert kept.info.sha256 == hashlib.sha256(sent).hexdigest()
    parts.close()
    assert parts.finish() is True  # read to the end of the body, and no further


def test_octets_after_the_last_chunk_are_not_taken_as_the_end_of_the_body() -> None:
    """Another answer's octets read with this one's last chunk: the connection is not asked again."""
    body, entries = _multipart([b"hello"])
    parts = _parts(_chunked(body, [], [], []) + b"HTTP/1.1 200 OK\r\n", [])
    assert isinstance(parts.take(entries[0], _write, BASE), _Kept)
    parts.close()
    assert parts.finish() is False


@pytest.mark.parametrize(("framing", "said"), [
    (b"g\r\n", r"chunk 1, at octet 0 of the body, does not begin with a chunk size line \(it begins b'g\\r\\n'\)"),
    (b"1234567890abcdef0\r\n", "chunk 1, at octet 0 of the body, has a size of 17 hex digits, more than the 15"),
    (b"-5\r\n", "chunk 1, at octet 0 of the body, does not begin with a chunk size line"),
    (b"5\n", r"does not begin with a chunk size line \(it begins b'5\\n'\)"),  # a bare LF ends no size line
])
def test_a_chunk_size_that_is_none_is_refused(framing: bytes, said: str) -> None:
    body, entries = _multipart([b"hello"])
    parts = _parts(framing + body, [])
    with pytest.raises(RemoteError, match=said):
        parts.take(entries[0], _write, BASE)


def test_a_chunk_whose_data_runs_past_its_size_is_refused() -> None:
    """The CRLF after a chunk's data must come where its size says."""
    body, entries = _multipart([b"hello"])
    cut = body.index(b"hello")
    raw = b"%x\r\n%sXX\r\n" % (cut, body[:cut]) + _chunked(body[cut:], [], [], [])
    with pytest.raises(RemoteError, match=rf"chunk 1, of {cut} octets, is not followed by CRLF at octet {raw.index(b'XX')} of"
                                          " the body \\(but by b'X'\\)"):
        _parts(raw, []).take(entries[0], _write, BASE)


def test_an_answer_cut_inside_a_chunk_is_refused() -> None:
    body, entries = _multipart([b"hello world"])
    raw = _chunked(body, [], [], [])
    parts = _parts(raw[:raw.index(b"hello") + 3], [])
    with pytest.raises(PDIError, match="the answer ends 8 octets before its part does"):
        parts.take(entries[0], _write, BASE)


def test_a_trailer_section_past_its_bound_is_refused() -> None:
    body, entries = _multipart([b"hello"])
    raw = _chunked(body, [], [], [b"X-T: " + b"a" * 1000] * 10)
    parts = _parts(raw, [])
    assert isinstance(parts.take(entries[0], _write, BASE), _Kept)
    parts.close()
    with pytest.raises(RemoteError, match="the trailer section"):
        parts.finish()
