"""``Range`` with several ranges (RFC 9110 §14.1.2, §14.2) read by :func:`~pdi.server.http.conditional.byte_ranges`,
laid out as a ``multipart/byteranges`` body (§14.6) by :class:`~pdi.server.http.byteranges.Byteranges`, and read by
verified chunks a part at a time (:meth:`pdi.archive.blobs.ChunkedReader.spans`).

The expected octets are worked out here from the RFC's definitions, as sets of positions; the layout is read back
by Python's ``email`` package.
"""

from __future__ import annotations

import email.parser
import email.policy
import hashlib
import itertools

from hypothesis import given
from hypothesis import strategies as st

from pdi.archive.blobs import BlobInfo, ChunkedReader
from pdi.server.http.byteranges import MAX_PARTS, NEAR, Byteranges, boundary, chunk_reads, coalesced
from pdi.server.http.conditional import byte_ranges

_SPEC = st.one_of(
    st.tuples(st.integers(0, 3000), st.integers(0, 120)).map(lambda pair: f"{pair[0]}-{pair[0] + pair[1]}"),
    st.tuples(st.integers(0, 3000), st.integers(0, 3000)).map(lambda pair: f"{pair[0]}-{pair[1]}"),
    st.integers(0, 3000).map(lambda first: f"{first}-"),
    st.integers(0, 400).map(lambda suffix: f"-{suffix}"),
)


def _asked(spec: str, length: int) -> set[int] | None:
    """The positions one range-spec selects of ``length`` octets (RFC 9110 §14.1.2), or ``None`` when invalid."""
    first, _, last = spec.partition("-")
    if first == "":
        return set(range(max(0, length - int(last)), length))
    if last != "" and int(last) < int(first):
        return None
    return set(range(int(first), length if last == "" else min(int(last) + 1, length)))


@given(st.lists(_SPEC, min_size=1, max_size=30), st.integers(0, 3000))
def test_several_ranges_send_every_octet_asked_once(specs: list[str], length: int) -> None:
    got = byte_ranges("bytes=" + ", ".join(specs), length)
    asked = [_asked(spec, length) for spec in specs]
    if any(positions is None for positions in asked):  # an invalid range-spec: the whole field is ignored
        assert got is None
        return
    wanted = set().union(*(p for p in asked if p is not None))
    if length == 0 and any(spec.startswith("-") and int(spec[1:]) > 0 for spec in specs):
        assert got is None  # satisfiable, but no Content-Range spells it (the whole, empty body)
        return
    if not wanted:
        assert got == []  # 416
        return
    # the parts: the octets asked, those fewer than NEAR apart in one
    ordered = sorted(wanted)
    clusters = 1 + sum(after - before - 1 >= NEAR for before, after in itertools.pairwise(ordered))
    if clusters > MAX_PARTS:
        assert got is None  # ignored (§14.2)
        return
    assert got is not None and len(got) == clusters
    sent = [set(range(first, last + 1)) for first, last in got]
    assert sum(map(len, sent)) == len(set().union(*sent))  # no octet twice
    covered = set().union(*sent)
    assert wanted <= covered and covered <= set(range(length))
    for extra in covered - wanted:  # an octet not asked lies in a gap shorter than a part's head
        before = max((p for p in wanted if p < extra), default=None)
        after = min((p for p in wanted if p > extra), default=None)
        assert before is not None and after is not None and after - before - 1 < NEAR
    # in the order asked (§15.3.7.2): each part where the first range it holds was asked
    firsts = [next(at for at, p in enumerate(asked) if p and p & part) for part in sent]
    assert firsts == sorted(firsts)


def test_rfc_9110_14_1_2_examples() -> None:
    """§14.1.2's examples of a 10,000-octet representation, and §14.6's of two ranges."""
    assert byte_ranges("bytes=0-499", 10_000) == [(0, 499)]
    assert byte_ranges("bytes=500-999", 10_000) == [(500, 999)]
    assert byte_ranges("bytes=-500", 10_000) == [(9500, 9999)]
    assert byte_ranges("bytes=9500-", 10_000) == [(9500, 9999)]
    assert byte_ranges("bytes=0-0,-1", 10_000) == [(0, 0), (9999, 9999)]
    assert byte_ranges("bytes= 0-999, 4500-5499, -1000", 10_000) == [(0, 999), (4500, 5499), (9000, 9999)]
    assert byte_ranges("bytes=500-600,601-999", 10_000) == [(500, 999)]  # §14.1.2: "other valid (but not
    assert byte_ranges("bytes=500-700,601-999", 10_000) == [(500, 999)]  # canonical) specifications"
    assert byte_ranges("bytes=500-999,7000-7999", 8000) == [(500, 999), (7000, 7999)]  # §14.6
    assert byte_ranges("bytes=0-1,,4-5, ,", 10_000) == [(0, 5)]  # empty list elements (§5.6.1.2), near: one
    assert byte_ranges("bytes=,", 10) is None  # no range-spec at all
    far = [(i * 1000, i * 1000 + 9) for i in range(MAX_PARTS + 1)]
    assert byte_ranges("bytes=" + ",".join(f"{f}-{last}" for f, last in far[:-1]), 20_000) == far[:-1]
    assert byte_ranges("bytes=" + ",".join(f"{f}-{last}" for f, last in far), 20_000) is None  # §14.2: many
    assert coalesced([(100, 109), (0, 9)]) == [(100, 109), (0, 9)] and coalesced([(0, 9), (10, 19)]) == [(0, 19)]


def test_a_multipart_body_is_read_back_by_the_email_package() -> None:
    body = bytes(range(256)) * 40
    ranges = [(500, 999), (7000, 7999), (0, 0)]
    tag = '"' + hashlib.sha256(body).hexdigest() + '"'
    parts = Byteranges.of(ranges, len(body), b"application/pdf", boundary(tag, body))
    made = parts.join(body)
    assert len(made) == parts.length
    message = email.parser.BytesParser(policy=email.policy.compat32).parsebytes(
        b"Content-Type: " + parts.content_type + b"\r\n\r\n" + made)
    assert message.get_content_type() == "multipart/byteranges" and not message.defects
    got = [(p["Content-Type"], p["Content-Range"], p.get_payload(decode=True)) for p in message.get_payload()]
    assert got == [("application/pdf", f"bytes {f}-{last}/{len(body)}", body[f : last + 1]) for f, last in ranges]


def test_a_boundary_is_never_one_the_body_holds() -> None:
    plain = boundary('"x"')
    assert boundary('"x"') == plain and 1 <= len(plain) <= 70  # RFC 2046 §5.1.1: 1 to 70 characters
    other = boundary('"x"', b"before " + plain + b" after")
    assert other != plain and other not in b"before " + plain + b" after"


def _counting_reader(data: bytes, chunk_size: int) -> tuple[ChunkedReader, list[int]]:
    digests = b"".join(hashlib.sha256(data[i : i + chunk_size]).digest() for i in range(0, len(data), chunk_size))
    info = BlobInfo(hashlib.sha256(data).hexdigest(), len(data), chunk_size, digests)
    reads: list[int] = []

    def read_raw(offset: int, length: int) -> bytes:
        reads.append(offset)
        return data[offset : offset + length]

    return ChunkedReader(info, read_raw, name="a test blob"), reads


@given(st.lists(st.tuples(st.integers(0, 999), st.integers(0, 999)).map(sorted), min_size=1, max_size=20))
def test_spans_read_each_chunk_as_chunk_reads_counts(pairs: list[list[int]]) -> None:
    data = bytes(i % 251 for i in range(1000))
    reader, reads = _counting_reader(data, 64)
    spans = [(first, last + 1) for first, last in pairs]
    got: dict[int, bytes] = {}
    for at, piece in reader.spans(spans):
        got[at] = got.get(at, b"") + piece
    assert [got[at] for at in range(len(spans))] == [data[start:end] for start, end in spans]
    assert len(reads) == chunk_reads([(first, last) for first, last in pairs], 64)


@given(st.sampled_from([" ", "\t", "  ", " \t"]), st.sampled_from(["", " "]), st.sampled_from(["bytes", "BYTES", "Bytes"]))
def test_white_space_before_the_units_equals_sign_is_no_range(before: str, after: str, unit: str) -> None:
    """RFC 9110 §14.1.1: ``ranges-specifier = range-unit "=" range-set``, no white space between the unit and its
    ``=``: a field that has some is not a Range field pdi reads, so the whole body is answered (``None``), as nginx
    answers ``bytes = 0-1``. The unit's case does not matter (§14.1: case-insensitive)."""
    assert byte_ranges(f"{unit}{before}={after}0-1", 10) is None
    assert byte_ranges(f"{unit}=0-1", 10) == [(0, 1)]
