"""Several ranges in one ``Range`` field: ``206`` with a ``multipart/byteranges`` body (RFC 9110 §14.6, §15.3.7.2).

Each answer is read by Python's ``email`` package (an RFC 2046 multipart parser independent of the server's
writer), and each part's octets are compared with the deposited octets at the part's ``Content-Range``; the ranges
expected are worked out from RFC 9110 §14.1.2 here. Asked of uvicorn's protocol and of ``pdi serve``'s (which
answers kept answers itself), twice each, so that the second asking meets a kept answer; and of a large
representation, streamed by verified chunks.
"""

from __future__ import annotations

import email.parser
import email.policy

import httpx
import pytest
from server_helpers import ELSEWHERE, LONG_LINES, Served, long_line, served_port

from pdi.server.protocol import resolver as read

#: A text of 6,000 octets: small enough that the answer cache keeps it whole (its ranges then come from memory).
SMALL = b"".join(b"%04d of a small text\n" % i for i in range(300))


def parts_of(answer: httpx.Response) -> list[tuple[str, str, bytes]]:
    """Each part of a ``multipart/byteranges`` answer as the ``email`` package reads it: its Content-Type,
    Content-Range and octets; the whole is checked to be one multipart body without defects."""
    content_type = answer.headers["content-type"]
    message = email.parser.BytesParser(policy=email.policy.compat32).parsebytes(  # fields as sent
        b"Content-Type: " + content_type.encode("latin-1") + b"\r\n\r\n" + answer.content)
    assert message.get_content_type() == "multipart/byteranges" and message.is_multipart(), content_type
    assert not message.defects, message.defects
    found = []
    for part in message.get_payload():
        assert not part.defects, part.defects
        payload = part.get_payload(decode=True)
        assert isinstance(payload, bytes)
        found.append((str(part["Content-Type"]), str(part["Content-Range"]), payload))
    return found


def expected(whole: bytes, content_type: str, ranges: list[tuple[int, int]]) -> list[tuple[str, str, bytes]]:
    return [(content_type, f"bytes {first}-{last}/{len(whole)}", whole[first : last + 1]) for first, last in ranges]


@pytest.mark.parametrize("how", ["uvicorn", "own", "own, public"])
def test_several_ranges_are_a_multipart_byteranges_206(served: Served, how: str) -> None:
    small = str(served.archive.add(ELSEWHERE, SMALL, format="text"))
    with served_port(served, how) as port, httpx.Client(base_url=f"http://127.0.0.1:{port}") as client:
        for name in (small, served.long):
            url = f"/uri-res/N2R?{name}"
            whole = client.get(url)
            body, size, content_type = whole.content, len(whole.content), whole.headers["content-type"]
            assert body == (SMALL if name == small else "".join(long_line(i) for i in range(LONG_LINES)).encode())
            for _ in range(2):  # the second meets a kept answer
                # in the order asked (RFC 9110 §15.3.7.2: "SHOULD send the parts in the same order"), a suffix too
                answer = client.get(url, headers={"Range": f"bytes=500-509, 0-9 ,-7,{size}-"})
                assert answer.status_code == 206, (name, how, answer.text[:200])
                assert "content-range" not in answer.headers  # §15.3.7.2: MUST NOT, each part says its own
                assert int(answer.headers["content-length"]) == len(answer.content)
                assert parts_of(answer) == expected(body, content_type, [(500, 509), (0, 9), (size - 7, size - 1)])
                for field in ("etag", "cache-control", "vary", "last-modified", "accept-ranges"):  # §15.3.7
                    assert answer.headers.get(field) == whole.headers.get(field), field
                # If-Range (§13.1.5): the tag still the client's, the parts; another, the whole 200
                held = client.get(url, headers={"Range": "bytes=0-9,500-509", "If-Range": whole.headers["etag"]})
                assert parts_of(held) == expected(body, content_type, [(0, 9), (500, 509)])
                stale = client.get(url, headers={"Range": "bytes=0-9,500-509", "If-Range": '"stale"'})
                assert (stale.status_code, stale.content) == (200, body)
                # HEAD ignores Range (§14.2): the whole 200's fields
                head = client.head(url, headers={"Range": "bytes=0-9,500-509"})
                assert head.status_code == 200 and head.headers["content-length"] == str(size)
                # none satisfiable: 416 (§15.5.17); one satisfiable: one part, as a single range is sent
                none = client.get(url, headers={"Range": f"bytes={size}-,{size + 5}-{size + 9}"})
                assert none.status_code == 416 and none.headers["content-range"] == f"bytes */{size}"
                one = client.get(url, headers={"Range": f"bytes=3-5,{size}-"})
                assert (one.status_code, one.headers["content-range"], one.content) == (206, f"bytes 3-5/{size}",
                                                                                        body[3:6])
                # an invalid range makes the whole field invalid (§14.1.1: ignored), as another unit does
                for field in ("bytes=0-9,9-2", "bytes=0-9,x-y", "bytes=0-9,-", "octets=0-9,20-29"):
                    ignored = client.get(url, headers={"Range": field})
                    assert (ignored.status_code, ignored.content) == (200, body), field
                # the kept answer is still the whole one for a GET without Range
                again = client.get(url)
                assert (again.status_code, again.content) == (200, body)


@pytest.mark.parametrize("how", ["uvicorn", "own"])
def test_overlapping_near_and_many_ranges_cost_no_more_than_the_whole(served: Served, how: str) -> None:
    """RFC 9110 §14.2: a server "MAY ignore or reject" a field of "more than two overlapping ranges, or a set of many
    small ranges that are not listed in ascending order", and may coalesce ranges that overlap or lie closer than a
    part costs. No octet is sent twice, every octet asked is sent, and past 16 parts the field is ignored."""
    with served_port(served, how) as port, httpx.Client(base_url=f"http://127.0.0.1:{port}") as client:
        url = f"/uri-res/N2R?{served.long}"
        body = client.get(url).content
        size = len(body)
        # the same octets a thousand times over: each sent once
        same = client.get(url, headers={"Range": "bytes=" + ",".join(["0-99"] * 1000)})
        assert (same.status_code, same.headers["content-range"], same.content) == (206, f"bytes 0-99/{size}",
                                                                                   body[:100])
        # overlapping and adjacent ranges: one part, what they cover together
        joined = client.get(url, headers={"Range": "bytes=10-19,0-14,20-29"})
        assert (joined.status_code, joined.headers["content-range"], joined.content) == (
            206, f"bytes 0-29/{size}", body[:30])
        # far apart, 16 of them, out of order: 16 parts in the order asked; 17: the whole 200
        starts = [(15 - i) * 10_000 for i in range(16)]
        sixteen = client.get(url, headers={"Range": "bytes=" + ",".join(f"{s}-{s + 4}" for s in starts)})
        assert sixteen.status_code == 206
        assert parts_of(sixteen) == expected(body, "text/plain; charset=utf-8", [(s, s + 4) for s in starts])
        assert len(sixteen.content) < 16 * 5 + 16 * 200  # the parts' heads: about 100 octets each
        seventeen = client.get(url, headers={"Range": "bytes=" + ",".join(f"{s}-{s + 4}" for s in [*starts, 200_000])})
        assert (seventeen.status_code, seventeen.content) == (200, body)


@pytest.fixture
def streamed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(read, "STREAM_FROM", 1 << 20)


def test_several_ranges_of_a_streamed_representation(served: Served, streamed: None) -> None:
    """The long text (4.5 MB, five chunks of 1 MiB) streamed: its parts come by verified chunks, across a chunk's
    end; ranges that would read more chunks than twice the text's, jumping back and forth, get the whole 200."""
    deposited = "".join(long_line(i) for i in range(LONG_LINES)).encode()
    size, mib = len(deposited), 1 << 20
    url = f"{served.url}/uri-res/N2R?{served.long}"
    whole = httpx.get(url)
    assert whole.content == deposited
    across = [(mib - 5, mib + 4), (0, 9), (size - 3, size - 1)]
    answer = httpx.get(url, headers={"Range": "bytes=" + ",".join(f"{f}-{last}" for f, last in across)})
    assert answer.status_code == 206 and int(answer.headers["content-length"]) == len(answer.content)
    assert parts_of(answer) == expected(deposited, whole.headers["content-type"], across)
    assert answer.headers["etag"] == whole.headers["etag"]
    assert size // mib + 1 == 5
    to_and_fro = [(k * 1000 + k % 2 * mib, k * 1000 + k % 2 * mib + 9) for k in range(12)]  # chunk 0, 1, 0, 1 …
    costly = httpx.get(url, headers={"Range": "bytes=" + ",".join(f"{f}-{last}" for f, last in to_and_fro)})
    assert (costly.status_code, costly.content) == (200, deposited)
    ascending = sorted(to_and_fro)
    cheap = httpx.get(url, headers={"Range": "bytes=" + ",".join(f"{f}-{last}" for f, last in ascending)})
    assert parts_of(cheap) == expected(deposited, whole.headers["content-type"], ascending)
    assert httpx.get(url, headers={"Range": f"bytes={size}-,{size + 1}-"}).status_code == 416
