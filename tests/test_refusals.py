"""What another server said when it refused (:mod:`pdi._refusals`): its RFC 9457 problem's ``detail``, quoted on one
line of printable characters, and nothing at all from a body that is not one, too long, too slow or too deep."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import cast

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from pdi._refusals import MAX_PROBLEM, refusal, said
from pdi.errors import NotFoundError, ParseError, RemoteError, RemoteNotFoundError, StoreError


def _answer(body: bytes | Iterator[bytes], content_type: str = "application/problem+json") -> httpx.Response:
    stream = httpx.ByteStream(body) if isinstance(body, bytes) else _Stream(body)
    return httpx.Response(404, headers={"content-type": content_type}, stream=stream)


class _Stream(httpx.SyncByteStream):
    def __init__(self, pieces: Iterator[bytes]) -> None:
        self.pieces = pieces

    def __iter__(self) -> Iterator[bytes]:
        return self.pieces


def test_the_detail_of_a_problem_is_quoted() -> None:
    body = json.dumps({"type": "about:blank", "title": "not found", "status": 404,
                       "detail": "series nosuch.example.us is not registered"}).encode()
    assert said(_answer(body)) == "series nosuch.example.us is not registered"
    assert said(_answer(json.dumps({"title": "not found"}).encode())) == "not found"  # RFC 9457 §3.1.3
    # its type (RFC 9457 §3.1.1) is kept beside it: a pdi resolver's kinds of not-found told apart by it
    assert said(_answer(body)).problem_type == "about:blank"
    assert said(_answer(json.dumps({"title": "not found"}).encode())).problem_type is None
    assert said(_answer(json.dumps({"title": "x", "type": ["no"]}).encode())).problem_type is None


@pytest.mark.parametrize("body", [b"<html>Not Found</html>", b"{", b"[1, 2]", json.dumps({"detail": 7}).encode(),
                                  json.dumps({"detail": " \t "}).encode(), b"[" * 100_000 + b"]" * 100_000,
                                  json.dumps({"detail": "x" * MAX_PROBLEM}).encode()])
def test_nothing_is_quoted_from_a_body_that_is_no_problem(body: bytes) -> None:
    assert said(_answer(body)) is None


def test_nothing_is_quoted_from_a_body_of_another_type() -> None:
    assert said(_answer(json.dumps({"detail": "x"}).encode(), "text/html")) is None


def test_a_body_that_comes_too_slowly_is_not_waited_for() -> None:
    def slowly() -> Iterator[bytes]:
        yield b'{"detail": "'
        while True:
            time.sleep(0.01)
            yield b"x"

    started = time.monotonic()
    assert said(_answer(slowly()), started + 0.2) is None
    assert time.monotonic() - started < 2


@given(st.text(max_size=2000))
def test_what_is_quoted_is_one_line_of_printable_characters_of_the_detail(detail: str) -> None:
    quoted = said(_answer(json.dumps({"detail": detail}).encode()))
    if quoted is None:
        assert not "".join(c for c in detail if c.isprintable()).strip()
        return
    assert quoted.isprintable() and len(quoted) <= 1000 and quoted == quoted.strip() and "  " not in quoted
    assert all(word in detail for word in quoted.split())  # the detail's own words, nothing added


def test_a_refusal_is_the_error_its_status_says() -> None:
    assert isinstance(refusal(400, "the manifest u", "day is a GMT day"), ParseError)
    found = refusal(404, "the manifest u", "series s is not registered")
    assert isinstance(found, NotFoundError) and str(found).startswith("the manifest u: HTTP 404: series s is not")
    assert isinstance(found, RemoteNotFoundError) and found.told_type is None
    kind = said(_answer(json.dumps({"type": "/api#problem-unknown-series", "detail": "series s"}).encode()))
    assert cast(RemoteNotFoundError, refusal(404, "the manifest u", kind)).told_type == "/api#problem-unknown-series"
    # the other server failed: a remote error, not this archive's storage (exit 8)
    assert isinstance(refusal(503, "the manifest u"), RemoteError) and str(refusal(503, "x")) == "x: HTTP 503"
    assert not isinstance(refusal(500, "x"), StoreError) and refusal(500, "x").exit_code == 16
