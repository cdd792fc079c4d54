"""N2R as a cache would want it (RFC 9110, RFC 9111): ETag, If-None-Match, Cache-Control, HEAD, Range.

The expected values are worked out from the RFCs and from the bytes
themselves: the entity tag of a whole representation is the SHA-256 that
``hashlib`` computes over the bytes the resolver returns, a range is the
slice Python takes of them.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st
from server_helpers import S, Served

from pdi.archive import Archive
from pdi.server import create_app
from pdi.server.http.conditional import UNSATISFIABLE, byte_ranges
from support.stored_blobs import delete_every_blob


def _n2r(served: Served, name: str) -> str:
    return f"{served.url}/uri-res/N2R?{name.replace('#', '%23')}"


def test_a_whole_representation_carries_its_sha256_as_its_entity_tag(served: Served) -> None:
    answer = httpx.get(_n2r(served, served.picture))
    assert answer.status_code == 200
    assert answer.headers["etag"] == f'"{hashlib.sha256(answer.content).hexdigest()}"'
    # a versioned name's bytes can never change: any cache may keep them for good (RFC 9111 §5.2.2, RFC 8246)
    assert answer.headers["cache-control"] == "public, max-age=31536000, immutable"
    assert answer.headers["accept-ranges"] == "bytes"
    assert int(answer.headers["content-length"]) == len(answer.content)


def test_if_none_match_answers_304_without_the_bytes(served: Served) -> None:
    url = _n2r(served, served.text + "#char=0,5")
    first = httpx.get(url)
    tag = first.headers["etag"]
    whole = httpx.get(_n2r(served, served.text)).headers["etag"]
    assert tag != whole and tag.startswith(whole[:-1])  # the stored bytes' tag, with the fragment
    for field in (tag, f'"other", {tag}', f"W/{tag}", "*"):
        again = httpx.get(url, headers={"If-None-Match": field})
        assert (again.status_code, again.content) == (304, b""), field
        assert again.headers["etag"] == tag
    assert httpx.get(url, headers={"If-None-Match": '"other"'}).status_code == 200


def test_304_comes_from_the_catalog_alone(tmp_path: Path) -> None:
    # With the blob file gone, reading the bytes is an integrity error, but a client that
    # holds them can still be told they are current: no byte was read to answer it.
    import threading
    import time

    import uvicorn

    archive = Archive.init(tmp_path / "archive")
    archive.add_series(S)
    name = str(archive.add(S, b"kept elsewhere\n", format="text"))
    # without the cache of whole answers, which would answer the second GET from memory
    app = create_app(str(tmp_path / "archive"), cache_bytes=0)
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.02)
    url = f"http://127.0.0.1:{server.servers[0].sockets[0].getsockname()[1]}/uri-res/N2R?{name}"
    try:
        tag = httpx.get(url).headers["etag"]
        assert delete_every_blob(tmp_path / "archive") == 1  # a small blob: its catalog row
        assert httpx.get(url).status_code == 500  # damaged, the archive's fault (pdi.errors.DamagedError)
        assert httpx.get(url, headers={"If-None-Match": tag}).status_code == 304
    finally:
        server.should_exit = True
        thread.join(timeout=10)


@pytest.mark.parametrize(
    ("field", "expected"),
    [
        ("bytes=0-4", (0, 5)),       # RFC 9110 §14.1.2: first-last, both included
        ("bytes=5-", (5, None)),      # from 5 to the end
        ("bytes=-3", (-3, None)),     # the last three
        ("bytes=2-10000", (2, None)),  # a last position past the end is the end
    ],
)
def test_one_range_is_answered_206(served: Served, field: str, expected: tuple[int, int | None]) -> None:
    url = _n2r(served, served.picture)
    whole = httpx.get(url).content
    answer = httpx.get(url, headers={"Range": field})
    start, stop = expected
    part = whole[start:stop]
    first = start % len(whole)
    assert answer.status_code == 206
    assert answer.content == part
    assert answer.headers["content-range"] == f"bytes {first}-{first + len(part) - 1}/{len(whole)}"
    assert int(answer.headers["content-length"]) == len(part)


def test_ranges_that_cannot_be_met_or_are_not_one(served: Served) -> None:
    url = _n2r(served, served.picture)
    whole = httpx.get(url)
    size = len(whole.content)
    beyond = httpx.get(url, headers={"Range": f"bytes={size}-"})
    assert beyond.status_code == 416 and beyond.headers["content-range"] == f"bytes */{size}"
    # a problem saying so (RFC 9457), never stored: a cache keys no answer on Range (RFC 9111 §4), and this 416
    # given to a GET without one would hide the picture; it is no memento either (RFC 7089 §2.1.1)
    assert beyond.headers["content-type"] == "application/problem+json"
    assert beyond.json()["status"] == 416 and f"none of the {size} octets" in beyond.json()["detail"]
    assert beyond.headers["cache-control"] == "no-store" and "memento-datetime" not in beyond.headers
    head = httpx.head(url, headers={"Range": f"bytes={size}-"})  # RFC 9110 §14.2: a HEAD has no range: the whole
    assert head.status_code == 200 and head.headers["cache-control"] == whole.headers["cache-control"]
    # another unit, or nonsense: the server may ignore the field (§14.2); several ranges: test_server_byteranges
    for field in ("words=0-4", "bytes=9-2", "bytes=x-y", "bytes=0-1,9-2"):
        answer = httpx.get(url, headers={"Range": field})
        assert (answer.status_code, answer.content) == (200, whole.content), field
    # a position of more digits than any body has octets is still a position (RFC 9110 §14.1.1)
    huge = "9" * 25
    assert httpx.get(url, headers={"Range": f"bytes={huge}-"}).status_code == 416
    tail = httpx.get(url, headers={"Range": f"bytes=1-{huge}"})
    assert (tail.status_code, tail.content) == (206, whole.content[1:])
    # If-Range: the range only if the tag is still the one the client has (§13.1.5)
    tag = whole.headers["etag"]
    assert httpx.get(url, headers={"Range": "bytes=0-1", "If-Range": tag}).status_code == 206
    assert httpx.get(url, headers={"Range": "bytes=0-1", "If-Range": '"stale"'}).status_code == 200


def test_head_answers_the_same_headers_and_no_body(served: Served) -> None:
    url = _n2r(served, served.text)
    got, head = httpx.get(url), httpx.head(url)
    assert head.status_code == 200 and head.content == b""
    for field in ("etag", "cache-control", "content-type", "content-length", "accept-ranges"):
        assert head.headers[field] == got.headers[field], field


def test_a_generic_name_is_cached_briefly(served: Served) -> None:
    answer = httpx.get(_n2r(served, served.versioned))
    assert answer.status_code == 300
    # a new version adds to the list: caches keep it only a minute
    assert answer.headers["cache-control"] == "public, max-age=60"
    assert "etag" not in answer.headers


def byte_range(field: str, length: int) -> tuple[int, int] | None:
    """What :func:`byte_ranges` reads of a field of one range-spec: its range, :data:`UNSATISFIABLE` for none
    (``416``), or ``None`` (the whole body)."""
    got = byte_ranges(field, length)
    return None if got is None else (got[0] if got else UNSATISFIABLE)


@given(length=st.integers(0, 10_000), first=st.integers(0, 20_000), span=st.integers(0, 20_000), suffix=st.integers(0, 20_000))
def test_byte_range_reads_what_rfc_9110_says(length: int, first: int, span: int, suffix: int) -> None:
    last = first + span
    got = byte_range(f"bytes={first}-{last}", length)
    if first >= length:
        assert got == UNSATISFIABLE
    else:
        assert got == (first, min(last, length - 1))
    assert byte_range(f"bytes={first}-", length) == (UNSATISFIABLE if first >= length else (first, length - 1))
    tail = byte_range(f"bytes=-{suffix}", length)
    if suffix == 0:
        assert tail == UNSATISFIABLE
    elif length == 0:  # satisfiable (§14.1.1) but not spelled by any Content-Range: the whole, empty body
        assert tail is None
    else:
        assert tail == (max(0, length - suffix), length - 1)
    if span:  # last before first: not a range at all
        assert byte_range(f"bytes={last}-{first}", length) is None


@given(st.text(max_size=40))
def test_byte_range_never_fails_on_a_strangers_field(field: str) -> None:
    got = byte_range(field, 100)
    assert got is None or got == UNSATISFIABLE or 0 <= got[0] <= got[1] < 100


@given(length=st.integers(0, 10_000), first=st.integers(0, 10**60), last=st.integers(0, 10**60),
       zeros=st.integers(0, 30), suffix=st.integers(0, 10**60))
def test_a_position_of_any_number_of_digits_is_a_position(length: int, first: int, last: int, zeros: int,
                                                          suffix: int) -> None:
    """RFC 9110 §14.1.1 bounds no position's digits: one beyond every body still asks from past the end (``416``)
    or to the end (``206``), and leading zeros change nothing; the expected answers are the RFC's, worked out with
    Python's unbounded ints (a suffix of an empty body, which §14.1.1 calls satisfiable though no ``Content-Range``
    can spell it, is answered whole, as nginx answers it)."""
    pad = "0" * zeros
    got = byte_range(f"bytes={pad}{first}-{pad}{last}", length)
    if last < first:
        assert got is None
    elif first >= length:
        assert got == UNSATISFIABLE
    else:
        assert got == (first, min(last, length - 1))
    assert byte_range(f"bytes={pad}{first}-", length) == (UNSATISFIABLE if first >= length else (first, length - 1))
    tail = byte_range(f"bytes=-{pad}{suffix}", length)
    assert tail == (UNSATISFIABLE if suffix == 0 else None if length == 0 else (max(0, length - suffix), length - 1))


def test_a_range_of_sixty_thousand_digits_is_read_not_refused() -> None:
    huge = "9" * 60_000  # past Python's bound on converting digits to an int (4,300)
    assert byte_range(f"bytes={huge}-", 100) == UNSATISFIABLE
    assert byte_range(f"bytes=5-{huge}", 100) == (5, 99)
    assert byte_range(f"bytes=-{huge}", 100) == (0, 99)
    assert byte_range(f"bytes={huge}-{huge[:-1]}", 100) is None  # last before first
