"""N2R of a large whole representation is streamed by verified chunks: exact octets, ranges, 416 (issue 13).

``pdi.server.protocol.resolver.STREAM_FROM`` is lowered for the test so that the 2 MB
long text of the shared archive takes the streamed path; the expected octets
are the ones the fixture deposited (``long_line``), never pdi's own output.
"""

from __future__ import annotations

import httpx
import pytest
from server_helpers import LONG_LINES, Served, long_line

from pdi.server.protocol import resolver as read


@pytest.fixture
def streamed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(read, "STREAM_FROM", 1 << 20)


def test_a_large_representation_is_streamed_whole_and_by_range(served: Served, streamed: None) -> None:
    deposited = "".join(long_line(i) for i in range(LONG_LINES)).encode()
    url = f"{served.url}/uri-res/N2R?{served.long}"
    whole = httpx.get(url)
    assert whole.status_code == 200 and whole.content == deposited
    assert whole.headers["content-length"] == str(len(deposited))
    assert whole.headers["cache-control"] == "public, max-age=31536000, immutable"
    tag = whole.headers["etag"]
    part = httpx.get(url, headers={"Range": "bytes=1000-1099"})
    assert part.status_code == 206 and part.content == deposited[1000:1100]
    assert part.headers["content-range"] == f"bytes 1000-1099/{len(deposited)}"
    # across a chunk boundary (1 MiB), and a suffix
    edge = httpx.get(url, headers={"Range": f"bytes={(1 << 20) - 5}-{(1 << 20) + 4}"})
    assert edge.status_code == 206 and edge.content == deposited[(1 << 20) - 5 : (1 << 20) + 5]
    tail = httpx.get(url, headers={"Range": "bytes=-7"})
    assert tail.status_code == 206 and tail.content == deposited[-7:]
    assert httpx.get(url, headers={"Range": f"bytes={len(deposited)}-"}).status_code == 416
    # If-Match (RFC 9110 §13.1.1): 412 when no tag holds, the answer (or its range) when one does
    refused = httpx.get(url, headers={"If-Match": '"nope"'})
    assert refused.status_code == 412 and refused.headers["content-type"] == "application/problem+json"
    assert httpx.get(url, headers={"If-Match": tag, "Range": "bytes=0-9"}).content == deposited[:10]
    # If-None-Match of a streamed answer (after If-Match holds, §13.2.2): 304, no octets; HEAD alike
    for method in ("GET", "HEAD"):
        unchanged = httpx.request(method, url, headers={"If-Match": tag, "If-None-Match": tag})
        assert (unchanged.status_code, unchanged.content, unchanged.headers["etag"]) == (304, b"", tag), method
    assert httpx.get(url, headers={"If-None-Match": tag, "Accept": "text/plain"}).status_code == 304
    # If-Range with another tag: the whole body
    assert httpx.get(url, headers={"Range": "bytes=0-9", "If-Range": '"other"'}).content == deposited
    assert httpx.get(url, headers={"If-None-Match": tag}).status_code == 304
