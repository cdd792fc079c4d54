"""Private series behind a real shared cache: Debian's nginx with ``proxy_cache`` in front of ``pdi serve``.

A shared cache may give an answer it keeps to any later request for the
same URL whose ``Vary`` fields match; RFC 9111 §3.5 only keeps it from
storing an answer *to* a request with ``Authorization`` that is not
``public``. So an answer that depends on who reads must say so: a TimeMap
or TimeGate, a generic name's versions, a refusal. Each test first shows
that nginx does keep the anonymous answer (``X-Cache-Status: HIT``), then
that a reader with a token — as a bearer token or as the sign-in cookie —
is still answered as that reader, and that what a token read is never
given to anyone else. This nginx, like many a site's, also keeps answers
that say nothing of caching (``proxy_cache_valid``) and never looks at
``Authorization``.
"""

from __future__ import annotations

import datetime
import socket
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
from server_helpers import Clock, serving
from test_server_pages_screenshots import SHOTS
from test_server_signin import _js, _key, _shot, _wait

from chromium_helpers import open_page
from pdi._ports import free_port
from pdi.archive import Archive
from pdi.capture.browser import devtools
from support.nginxnode import nginx

S = "library.example.us"
SEALED = "court.example.us"
HIDDEN = "grand-jury.example.us"
URL = "http://www.example.com/ruling.html"


@contextmanager
def caching_proxy(upstream: str, work: Path) -> Iterator[str]:
    """nginx on a free loopback port, a caching reverse proxy of ``upstream``: its base URL.

    Every answer says how nginx's cache served it (``X-Cache-Status``). Like
    many a site's, it also keeps ``200`` and ``404`` answers that say nothing
    of caching a minute (``proxy_cache_valid``), whatever the request's
    ``Authorization``: what a token reads must then say it is not to be kept.
    """
    port = free_port()
    site = f"""
    proxy_cache_path {work}/cache levels=1:2 keys_zone=shared:1m;
    server {{
        listen 127.0.0.1:{port};
        location / {{
            proxy_pass {upstream};
            proxy_set_header Host $http_host;
            proxy_cache shared;
            proxy_cache_valid 200 404 1m;
            add_header X-Cache-Status $upstream_cache_status always;
        }}
    }}
"""
    with nginx(site, work, lambda: socket.create_connection(("127.0.0.1", port), timeout=1).close()):
        yield f"http://127.0.0.1:{port}"


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str, dict[str, str]]]:
    """nginx in front of ``pdi serve`` over an archive with a public, a private and a hidden series: the
    proxy's URL, the token that reads the private and hidden ones, and the names deposited."""
    root = tmp_path_factory.mktemp("shared-cache")
    location = root / "archive"
    clock = Clock(datetime.datetime(2026, 3, 2, 9, 0, tzinfo=datetime.UTC))
    with Archive.init(location, clock=clock) as archive:
        for series in (S, SEALED, HIDDEN):
            archive.add_series(series)
        # the same page captured twice: into the public series, then (an hour later) into the private one
        public = str(archive.add(S, b"<p>public copy</p>", format="html", foreign_id=URL))
        clock.now += datetime.timedelta(hours=1)
        sealed = str(archive.add(SEALED, b"<p>sealed copy</p>", format="html", foreign_id=URL))
        sealed_text = str(archive.add(SEALED, b"sealed minutes\n", format="text"))
        hidden = str(archive.add(HIDDEN, b"a hidden record\n", format="text"))
        archive.set_series_access(SEALED, "private")
        archive.set_series_access(HIDDEN, "hidden")
        _, reader = archive.add_token("clerk", role="read", series=[SEALED, HIDDEN])
    names = {"public": public, "sealed": sealed, "sealed_text": sealed_text, "hidden": hidden}
    with serving(location) as (_, port), caching_proxy(f"http://127.0.0.1:{port}", root / "nginx") as base:
        yield base, reader, names


def _get(base: str, path: str, **headers: str) -> httpx.Response:
    return httpx.get(base + path, headers=headers, follow_redirects=False, timeout=30)


def _mementos(answer: httpx.Response) -> int:
    return sum('memento"' in line for line in answer.text.splitlines())


def test_an_anonymous_timemap_kept_by_the_cache_is_not_given_to_a_reader_with_a_token(
    site: tuple[str, str, dict[str, str]],
) -> None:
    base, reader, _ = site
    path = f"/timemap/link/{URL}"
    first, again = _get(base, path), _get(base, path)
    assert (first.status_code, _mementos(first)) == (200, 1)  # the public capture alone
    assert again.headers["x-cache-status"] == "HIT" and _mementos(again) == 1  # nginx keeps it
    bearer = _get(base, path, Authorization=f"Bearer {reader}")
    assert bearer.status_code == 200 and _mementos(bearer) == 2, bearer.headers
    signed_in = _get(base, path, Cookie=f"pdi-token={reader}")
    assert signed_in.status_code == 200 and _mementos(signed_in) == 2, signed_in.headers
    # and what the token read was not kept for the next anonymous reader
    assert _mementos(_get(base, path)) == 1


def test_an_anonymous_timegate_kept_by_the_cache_is_not_given_to_a_reader_with_a_token(
    site: tuple[str, str, dict[str, str]],
) -> None:
    base, reader, names = site
    path = f"/timegate/{URL}"

    def chosen(answer: httpx.Response) -> str:
        assert answer.status_code == 302, answer.text
        # the N2R URL's query is the name with its own "%" escaped as "%25" where it must be (RFC 2169)
        return answer.headers["location"].split("/uri-res/N2R?", 1)[1].replace("%25", "%")

    first, again = _get(base, path), _get(base, path)
    public, sealed = names["public"], names["sealed"]
    assert chosen(first) == chosen(again) == public  # the only memento anyone may read
    assert again.headers["x-cache-status"] == "HIT"
    # without Accept-Datetime the latest: for the token, the capture in the private series, an hour later
    assert chosen(_get(base, path, Authorization=f"Bearer {reader}")) == sealed
    assert chosen(_get(base, path, Cookie=f"pdi-token={reader}")) == sealed
    assert chosen(_get(base, path)) == public


def test_a_private_documents_versions_read_with_a_token_are_never_given_to_others(
    site: tuple[str, str, dict[str, str]],
) -> None:
    base, reader, names = site
    generic = names["sealed_text"].rsplit(".", 2)[0]
    path = f"/uri-res/N2R?{generic}"
    read = _get(base, path, Authorization=f"Bearer {reader}")
    assert read.status_code == 300 and names["sealed_text"] in read.text  # the list of its formats
    assert read.headers["cache-control"] == "private, no-store"
    for _ in range(2):  # not kept: every anonymous reader is refused
        refused = _get(base, path)
        assert refused.status_code == 403 and names["sealed_text"] not in refused.text


def test_a_refusal_kept_by_the_cache_is_not_given_to_a_reader_with_a_token(
    site: tuple[str, str, dict[str, str]],
) -> None:
    base, reader, names = site
    path = f"/uri-res/N2R?{names['hidden']}"
    first, again = _get(base, path), _get(base, path)
    assert first.status_code == again.status_code == 404  # a hidden series' name: as if never minted
    assert again.headers["x-cache-status"] == "HIT"  # this nginx keeps 404s a minute
    for headers in ({"Authorization": f"Bearer {reader}"}, {"Cookie": f"pdi-token={reader}"}):
        answer = _get(base, path, **headers)
        assert answer.status_code == 200 and answer.content == b"a hidden record\n", headers
    assert _get(base, path).status_code == 404


def test_a_listing_kept_by_the_cache_is_given_to_each_reader_as_their_own(
    site: tuple[str, str, dict[str, str]],
) -> None:
    base, reader, names = site
    generic = names["hidden"].rsplit(".", 2)[0]
    bearer = {"Authorization": f"Bearer {reader}"}
    # read with the token first: the hidden series is listed, and the answer is kept by no one
    for path in ("/api/series", f"/uri-res/N2Ls?{generic}"):
        read = _get(base, path, **bearer)
        assert read.status_code == 200 and HIDDEN in read.text, path
        assert read.headers["cache-control"] == "private, no-store", path
    anonymous, again = _get(base, "/api/series"), _get(base, "/api/series")
    assert anonymous.status_code == 200 and S in anonymous.text and HIDDEN not in anonymous.text
    assert again.headers["x-cache-status"] == "HIT" and HIDDEN not in again.text  # this nginx keeps it
    assert _get(base, f"/uri-res/N2Ls?{generic}").status_code == 404  # as if never minted
    # and the anonymous listing the cache now keeps is not given to the token's holder
    assert HIDDEN in _get(base, "/api/series", **bearer).text
    assert HIDDEN in _get(base, "/api/series", Cookie=f"pdi-token={reader}").text


def test_a_person_signed_in_through_the_cache_sees_their_own_pages(site: tuple[str, str, dict[str, str]]) -> None:
    """In Chromium, through nginx: the series page the cache keeps for everyone, then signed in, one's own."""
    base, reader, _ = site
    anonymous, again = _get(base, "/series"), _get(base, "/series")
    assert anonymous.status_code == 200 and HIDDEN not in anonymous.text and "Sign in" in anonymous.text
    assert again.headers["x-cache-status"] == "HIT"  # the anonymous page, kept
    with devtools() as pipe:
        session = open_page(pipe, f"{base}/signin?next=%2Fseries")
        pipe.call("Emulation.setDeviceMetricsOverride",
                  {"width": 1100, "height": 560, "deviceScaleFactor": 1, "mobile": False}, session,
                  time.monotonic() + 30)
        _js(pipe, session, "document.getElementById('token').focus()")
        pipe.call("Input.insertText", {"text": reader}, session, time.monotonic() + 30)
        _key(pipe, session, "Enter", 13, "\r")  # the form is posted through nginx, which keeps no POST
        _wait(pipe, session, "location.pathname === '/series' && document.readyState === 'complete'",
              "signing in did not go on to /series")
        body = _js(pipe, session, "document.body.innerText")
        assert f"signed in as clerk (read, {SEALED}, {HIDDEN})" in body, body
        assert HIDDEN in body  # listed for the token's holder, not the page kept for everyone
        SHOTS.mkdir(parents=True, exist_ok=True)
        (SHOTS / "shared-cache-signed-in.png").write_bytes(_shot(pipe, session))
    # and the signed-in page was not kept for the next anonymous reader
    assert HIDDEN not in _get(base, "/series").text
