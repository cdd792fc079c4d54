"""What a stranger's request head may say, asked of a real ``pdi serve``: found by probing it (2026-11-28).

Three findings: the Host rules skipped for a target in absolute form (below); ``Range``, ``If-Range`` and
``Accept-Datetime`` sent on several lines read as their first line alone; a target of another scheme than http
answered as if it were one.

A request in absolute form (``GET http://host/path``, RFC 9112 §3.2.2) names its host in the target, and the Host
field is ignored for it; but RFC 9112 §3.2 still has the server "respond with a 400 (Bad Request) status code to any
HTTP/1.1 request message that lacks a Host header field and to any request message that contains more than one Host
header field line or a Host header field with an invalid field value". The target's authority used to stand in for
every Host field before they were checked, so such a request was answered ``200``.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator

import pytest
from server_helpers import serving, until_closed

from pdi.archive import Archive

S = "library.example.us"
TEXT = b"line one\nline two\nline three\n"


@pytest.fixture(scope="module")
def stranger_served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[int, str]]:
    """``pdi serve`` (one worker) of an archive holding one text: its port and the text's name."""
    location = tmp_path_factory.mktemp("stranger") / "archive"
    with Archive.init(location) as archive:
        archive.add_series(S)
        name = str(archive.add(S, TEXT, format="text"))
    with serving(location, "--workers", "1") as (_, port):
        yield port, name


def _status_and_detail(answer: bytes) -> tuple[int, str]:
    head, _, body = answer.partition(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    if b"application/problem+json" not in head.lower():
        return status, ""
    return status, str(json.loads(body)["detail"])


@pytest.mark.parametrize("path", ["/api/series", "/uri-res/N2R?{name}", "/uri-res/N2Ls?{name}"])
@pytest.mark.parametrize(("fields", "said"), [
    (b"", "this one has 0"),  # HTTP/1.1 and no Host
    (b"Host: a.example\r\nHost: b.example\r\n", "this one has 2"),
    (b"Host: a>b\r\n", "the Host field is 'a>b'"),
    (b"Host: a b\r\n", "the Host field is 'a b'"),
])
def test_rfc9112_3_2_a_request_in_absolute_form_is_held_to_the_host_field_rules(
        stranger_served: tuple[int, str], path: str, fields: bytes, said: str) -> None:
    port, name = stranger_served
    target = "http://pdi.example.org" + path.format(name=name)
    # asked twice, in order: the second meets whatever the first left in the worker's answer cache
    for _ in range(2):
        answer = until_closed(port, f"GET {target} HTTP/1.1\r\n".encode() + fields + b"Connection: close\r\n\r\n")
        status, detail = _status_and_detail(answer)
        assert status == 400, answer[:400]
        assert said in detail and "RFC 9112 §3.2" in detail, detail


@pytest.mark.parametrize("path", ["/api/series", "/uri-res/N2Ls?{name}"])
def test_rfc9112_3_2_2_absolute_form_with_one_good_host_field_names_the_targets_host(
        stranger_served: tuple[int, str], path: str) -> None:
    port, name = stranger_served
    target = "http://pdi.example.org" + path.format(name=name)
    for version, fields in ((b"1.1", b"Host: other.example\r\n"), (b"1.0", b"")):  # HTTP/1.0 needs no Host
        answer = until_closed(port, f"GET {target} HTTP/".encode() + version + b"\r\n" + fields + b"Connection: close\r\n\r\n")
        assert answer.startswith(b"HTTP/1.1 200 "), answer[:400]
        assert b"other.example" not in answer
        if "N2Ls" in path:
            assert f"http://pdi.example.org/uri-res/N2R?{name}".encode() in answer, answer


def test_rfc9112_3_2_an_origin_form_request_is_held_to_the_same_rules(stranger_served: tuple[int, str]) -> None:
    port, _ = stranger_served
    for fields, said in ((b"", "this one has 0"), (b"Host: a>b\r\n", "the Host field is 'a>b'")):
        status, detail = _status_and_detail(until_closed(port, b"GET /api/series HTTP/1.1\r\n" + fields
                                                 + b"Connection: close\r\n\r\n"))
        assert status == 400 and said in detail, detail



# RFC 9110 §5.3: a field sent on several lines is read as their values joined by commas, in order; Range
# (§14.1.1: one range unit and its range-set), If-Range (§13.1.5: one entity tag or one date) and Accept-Datetime
# (RFC 7089 §2.1.1: one date) are no lists, so that joining makes one invalid value. Read as the first line alone,
# a proxy or cache that reads the last (or joins them) would take the answer for another request's (found by
# probing, 2026-11-28: Range: bytes=0-1 then Range: bytes=3-4 was a 206 of the first two octets).
#: The text's entity tag: the SHA-256 of its octets (pdi.server.http.conditional.entity_tag).
TAG = f'"{hashlib.sha256(TEXT).hexdigest()}"'


def _get(port: int, target: str, fields: str) -> bytes:
    return until_closed(port, f"GET {target} HTTP/1.1\r\nHost: a.example\r\n{fields}Connection: close\r\n\r\n".encode())


@pytest.mark.parametrize("fields", [
    "Range: bytes=0-1\r\nRange: bytes=3-4\r\n",  # joined: "bytes=0-1, bytes=3-4", not a range-set
    f"Range: bytes=0-1\r\nIf-Range: {TAG}\r\nIf-Range: \"other\"\r\n",  # joined: two tags, not one validator
    f"Range: bytes=0-1\r\nIf-Range: \"other\"\r\nIf-Range: {TAG}\r\n",
])
def test_rfc9110_5_3_range_or_if_range_on_several_lines_is_ignored_and_the_whole_body_sent(
        stranger_served: tuple[int, str], fields: str) -> None:
    port, name = stranger_served
    for _ in range(2):  # the second meets the worker's answer cache, which the first filled
        answer = _get(port, f"/uri-res/N2R?{name}", fields)
        head, _, body = answer.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 200 "), head
        assert body == TEXT
        # no Content-Range field (the CORS field naming it among those a script may read is no such field)
        assert not [line for line in head.lower().split(b"\r\n") if line.startswith(b"content-range:")], head


def test_rfc9110_5_3_a_range_set_sent_on_two_lines_is_one_range_set(stranger_served: tuple[int, str]) -> None:
    port, name = stranger_served
    head, _, body = _get(port, f"/uri-res/N2R?{name}", "Range: bytes=0-1\r\nRange: 5-6\r\n").partition(b"\r\n\r\n")
    # "bytes=0-1, 5-6": two ranges fewer than a part's head apart, sent as one part (RFC 9110 §14.2 lets them be)
    assert head.startswith(b"HTTP/1.1 206 ") and b"content-range: bytes 0-6/29" in head.lower(), head
    assert body == b"line on"


def test_rfc7089_2_1_1_accept_datetime_on_two_lines_is_no_date(stranger_served: tuple[int, str]) -> None:
    port, name = stranger_served
    generic = name.rsplit(".", 2)[0]
    answer = _get(port, f"/timegate/{generic}",
                  "Accept-Datetime: Sat, 28 Nov 2026 19:01:54 GMT\r\nAccept-Datetime: Thu, 01 Jan 1970 00:00:00 GMT\r\n")
    status, detail = _status_and_detail(answer)
    assert status == 400, answer[:400]
    assert "Accept-Datetime 'Sat, 28 Nov 2026 19:01:54 GMT, Thu, 01 Jan 1970 00:00:00 GMT' is not an RFC 1123" in detail


@pytest.mark.parametrize("scheme", ["ftp", "gopher", "urn"])
def test_rfc9110_15_5_20_a_target_of_another_scheme_is_misdirected(stranger_served: tuple[int, str], scheme: str) -> None:
    """A target in absolute form of a scheme no HTTP connection serves (``GET ftp://host/path``) was answered as
    the Host field's, its scheme and authority unread (found by probing, 2026-11-28): this server is no proxy, and
    such a target "does not match the connection context over which the request was received" (RFC 9110
    §15.5.20): ``421``, nothing answered of it."""
    port, _ = stranger_served
    answer = _get(port, f"{scheme}://pdi.example.org/api/series", "")
    status, detail = _status_and_detail(answer)
    assert status == 421, answer[:400]
    assert f"the request target names the scheme {scheme!r}" in detail and "RFC 9110 §15.5.20" in detail, detail
    assert b'"series"' not in answer
