"""Preconditions of RFC 9110 §13 on the resolver's answers other than N2R's, read by httpx from a live server.

Each expected status is worked out from the RFC text, not from what the server said:

* §13.1.2 ``If-None-Match``: "*" is false when a current representation exists, and a listed tag is compared
  weakly (§8.8.3.2: ``W/"x"`` and ``"x"`` match); false on a ``GET`` or ``HEAD`` means ``304``.
* §13.1.1 ``If-Match``: "*" is true when a representation exists; a list is true only when one listed tag
  matches the selected representation's entity tag by strong comparison, so never for an answer with no
  ``ETag``; false means the method is not performed (``412``). An origin server that receives either field
  "MUST evaluate the condition" (§13.1.1, §13.1.2), for any 2xx answer (§13.2.1).
"""

from __future__ import annotations

import hashlib
import json
import urllib.parse
from pathlib import Path

import httpx
from server_helpers import Served, serving

from pdi.archive import Archive

S = "library.example.us"

MANIFEST = json.loads((Path(__file__).resolve().parents[2] / "src" / "pdi" / "data" / "pdfjs" / "MANIFEST.json")
                      .read_text())


def _pdfjs(served: Served) -> str:
    return f"{served.url}/static/pdfjs/{MANIFEST['version']}/LICENSE"


def test_rfc9110_13_1_2_pdfjs_not_modified_for_a_weak_tag_and_for_a_star(served: Served) -> None:
    url = _pdfjs(served)
    tag = f'"{MANIFEST["files"]["LICENSE"]["sha256"]}"'
    for field in (tag, f"W/{tag}", "*", f'"other", W/{tag}'):
        for method in ("GET", "HEAD"):
            got = httpx.request(method, url, headers={"If-None-Match": field})
            assert (got.status_code, got.content) == (304, b""), (method, field)
            assert got.headers["etag"] == tag
    assert httpx.get(url, headers={"If-None-Match": '"other", W/"other"'}).status_code == 200


def test_rfc9110_13_1_1_pdfjs_if_match_compares_strongly(served: Served) -> None:
    url = _pdfjs(served)
    tag = f'"{MANIFEST["files"]["LICENSE"]["sha256"]}"'
    assert httpx.get(url, headers={"If-Match": f'"other", {tag}'}).status_code == 200
    assert httpx.get(url, headers={"If-Match": "*"}).status_code == 200
    for field in (f"W/{tag}", '"other"'):  # a weak tag never matches strongly (§8.8.3.2)
        refused = httpx.get(url, headers={"If-Match": field})
        assert refused.status_code == 412, field
        assert refused.headers["content-type"] == "application/problem+json"
        assert "If-Match" in refused.json()["detail"]


def test_rfc9110_13_1_an_answer_with_no_entity_tag_meets_if_match_star_alone_and_fails_if_none_match_star(
        served: Served) -> None:
    name = served.versioned  # a document's generic name: its TimeMap
    for path in ("/api/series", f"/timemap/link/{name}", "/oai?verb=Identify"):
        url = served.url + path
        whole = httpx.get(url)
        assert whole.status_code == 200 and "etag" not in whole.headers, path
        for method in ("GET", "HEAD"):
            assert httpx.request(method, url, headers={"If-Match": "*"}).status_code == 200, (method, path)
            assert httpx.request(method, url, headers={"If-None-Match": '"x", W/"y"'}).status_code == 200
            failed = httpx.request(method, url, headers={"If-Match": '"x"'})
            assert failed.status_code == 412, (method, path)
            unchanged = httpx.request(method, url, headers={"If-None-Match": "*"})
            assert (unchanged.status_code, unchanged.content) == (304, b""), (method, path)
            # §15.4.5: the 200's Cache-Control (and Vary) again, no representation metadata
            assert unchanged.headers.get("cache-control") == whole.headers.get("cache-control")
            assert unchanged.headers.get("vary") == whole.headers.get("vary")
            assert "content-type" not in unchanged.headers, (method, path)
        # §13.2.2: If-Match first; when it holds, If-None-Match is still read
        assert httpx.get(url, headers={"If-Match": "*", "If-None-Match": "*"}).status_code == 304


def test_rfc9110_13_2_1_preconditions_are_ignored_when_the_answer_would_not_be_2xx(served: Served) -> None:
    for path in ("/api/no-such-route", "/timemap/link/urn:pdi://library.example.us/1999/01/01/424242"):
        plain = httpx.get(served.url + path).status_code
        assert plain == 404
        for field in ({"If-Match": '"x"'}, {"If-None-Match": "*"}, {"If-Match": "*"}):
            assert httpx.get(served.url + path, headers=field).status_code == plain, (path, field)


def test_rfc9110_13_2_1_a_fragment_wholly_past_the_end_is_416_whatever_its_preconditions(served: Served) -> None:
    """§13.2.1: preconditions are ignored when the answer without them would be neither 2xx nor 412, so a fragment
    that selects nothing (the text has 3 lines and fewer than 100 characters) is 416 with If-None-Match too, not 304."""
    for fragment in ("char=500,600", "line=50,60", "byte=500,600"):
        url = f"{served.url}/uri-res/N2R?{served.text}%23{fragment}"
        assert httpx.get(url).status_code == 416, fragment
        for field in ({"If-None-Match": "*"}, {"If-Match": '"x"'}, {"If-Match": "*"}, {"If-None-Match": '"x"'}):
            for method in ("GET", "HEAD"):
                got = httpx.request(method, url, headers=field)
                assert got.status_code == 416, (fragment, field, method)


def test_rfc9110_13_1_2_the_negotiated_json_of_a_name_is_not_modified_for_a_star(served: Served) -> None:
    url = f"{served.url}/uri-res/N2R?{served.text}"
    json_answer = {"Accept": "application/json"}
    assert httpx.get(url, headers=json_answer).headers["content-type"] == "application/json"
    assert httpx.get(url, headers={**json_answer, "If-None-Match": "*"}).status_code == 304
    assert httpx.get(url, headers={**json_answer, "If-Match": '"x"'}).status_code == 412


def _state(archive: Archive) -> object:
    store = archive.store
    return (list(store.iter_representations()), sorted(store.blob_names()),
            [(e.action, e.subject) for e in store.audit_log()])


def test_rfc9110_13_1_1_a_change_sent_with_if_match_to_a_route_with_no_representation_is_not_made(
        tmp_path: Path) -> None:
    # /api/deposit, /api/version and /api/mirrors have no representation (GET is 405): no entity tag is theirs,
    # and "*" is "false if the origin server has no current representation", so the method is not performed
    with Archive.init(tmp_path / "archive") as archive:
        archive.add_series(S)
        first = str(archive.add(S, b"first\n", format="text"))
        _, token = archive.add_token("depositor", role="deposit", series=[S])
        _, admin = archive.add_token("admin", role="admin")
        before = _state(archive)
        with serving(tmp_path / "archive") as (_, port):
            url = f"http://127.0.0.1:{port}"
            bearer = {"Authorization": f"Bearer {token}"}
            stored = hashlib.sha256(b"first\n").hexdigest()  # the entity tag of the document's N2R
            for field in ('"x"', "*", f'"{stored}"'):
                writes = [
                    ("POST", f"/api/deposit?series={S}&format=text", bearer, b"second\n"),
                    ("POST", f"/api/version?pdi={first.rsplit('.', 2)[0]}&format=text", bearer, b"second\n"),
                    ("DELETE", f"/api/mirrors?series={S}&base_url=https://peer.example.org/",
                     {"Authorization": f"Bearer {admin}"}, b""),
                ]
                for method, path, who, body in writes:
                    got = httpx.request(method, url + path, headers={**who, "If-Match": field}, content=body)
                    assert got.status_code == 412, (field, path, got.text)
                    assert got.headers["content-type"] == "application/problem+json"
                    assert "If-Match" in got.json()["detail"]
            assert _state(archive) == before
            made = httpx.post(f"{url}/api/deposit?series={S}&format=text", headers=bearer, content=b"second\n")
            assert made.status_code == 201, made.text


def test_rfc9110_13_1_the_replay_origins_files_meet_if_match_and_if_none_match(served: Served) -> None:
    url = f"{served.replay_url}/replay/{urllib.parse.quote(served.capture, safe='')}/index.html"
    whole = httpx.get(url, timeout=30)
    assert whole.status_code == 200 and "etag" not in whole.headers
    assert httpx.get(url, headers={"If-Match": "*"}, timeout=30).status_code == 200
    assert httpx.get(url, headers={"If-Match": '"x"'}, timeout=30).status_code == 412
    unchanged = httpx.get(url, headers={"If-None-Match": "*"}, timeout=30)
    assert (unchanged.status_code, unchanged.content) == (304, b"")
    assert unchanged.headers["cache-control"] == whole.headers["cache-control"]


def test_rfc9110_13_1_1_a_post_answered_from_its_content_meets_if_match_with_412_and_if_none_match_as_true(
        tmp_path: Path) -> None:
    # POST /oai (OAI-PMH §3.1.1.2: the arguments as a form) and POST /api/octets answer from the request's content:
    # /oai and /api/octets have no current representation of their own, so If-Match (even "*") is false and the
    # method is not performed (412); If-None-Match names no tag of a representation that does not exist: true
    with Archive.init(tmp_path / "archive") as archive:
        archive.add_series(S)
        text = str(archive.add(S, b"first\n", format="text"))
    posts = [("/oai", {"Content-Type": "application/x-www-form-urlencoded"}, b"verb=Identify"),
             ("/api/octets", {"Content-Type": "application/json"}, json.dumps({"names": [text]}).encode())]
    with serving(tmp_path / "archive") as (_, port):
        url = f"http://127.0.0.1:{port}"
        for path, kind, body in posts:
            plain = httpx.post(url + path, headers=kind, content=body, timeout=30)
            assert plain.status_code == 200, plain.text
            for field in ('"x"', "*"):
                got = httpx.post(url + path, headers={**kind, "If-Match": field}, content=body, timeout=30)
                assert got.status_code == 412, (path, field, got.text)
                assert got.headers["content-type"] == "application/problem+json"
                assert "If-Match" in got.json()["detail"]
                got = httpx.post(url + path, headers={**kind, "If-None-Match": field}, content=body, timeout=30)
                assert got.status_code == 200, (path, field, got.text)
