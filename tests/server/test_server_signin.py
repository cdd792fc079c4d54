"""Signing in from a browser (pdi.server.pages.signin): a token in an HttpOnly cookie, read as a bearer token is.

What is checked, rule by rule: the cookie's attributes (read with the standard
library's ``http.cookies``, not our code), a bad token, ``next=`` refusing
every target off the resolver (and, in Chromium, that every ``next`` accepted
stays on the resolver's origin by the browser's own URL parser), the ``Origin``
check against login CSRF, the cookie taken by every read path and never by a
write or by the replay origin, ``private, no-store`` and nothing kept in the
resolver's cache (also through ``pdi serve``'s own HTTP protocol, which
answers from the cache before the app), a revoked token's cookie refused and
cleared at the next request, and a person signing in through the form.
"""

from __future__ import annotations

import base64
import html
import http.cookies
import json
import random
import re
import time
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import html5lib
import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st
from PIL import Image
from server_helpers import (
    SERVING,
    captured_aggregate,
    in_thread,
    sealed_archive,
    start_serve,
    stop,
    wait_answering,
)
from starlette.testclient import TestClient
from test_server_pages_screenshots import SHOTS

from chromium_helpers import open_page
from pdi.archive import Archive
from pdi.archive.tokens import ROLES
from pdi.capture.browser import Pipe, devtools
from pdi.server import ReplaySite, create_app
from pdi.server.pages.signin import BadNext, local_path
from pdi.server.process.cache import ResponseCache
from pdi.server.process.connection import answering_protocol
from pdi.server.process.run import listening_socket
from pdi.server.replay.origin import create_replay_app, replay_path

S = "library.example.us"
SEALED = "court.example.us"
PRIVATE = "private, no-store"


def _q(text: str) -> str:
    return urllib.parse.quote(text, safe="")


def _cookie(token: str) -> dict[str, str]:
    return {"Cookie": f"pdi-token={token}"}


def _set_cookie(answer: httpx.Response) -> http.cookies.Morsel[str]:
    """The one ``pdi-token`` cookie an answer sets, as the standard library reads its ``Set-Cookie``."""
    fields = answer.headers.get_list("set-cookie")
    assert len(fields) == 1, fields
    jar: http.cookies.SimpleCookie = http.cookies.SimpleCookie()
    jar.load(fields[0])
    assert list(jar) == ["pdi-token"], fields
    return jar["pdi-token"]


def _attributes(answer: httpx.Response) -> set[str]:
    """The attribute names of the one ``Set-Cookie`` of an answer, lower-cased (``httponly``, ``secure`` …)."""
    return {part.split("=", 1)[0].strip().lower() for part in answer.headers["set-cookie"].split(";")[1:]}


def _sign_in(client: TestClient, token: str, next_: str = "/", **headers: str) -> httpx.Response:
    """``POST /signin`` as a browser sends it from the resolver's page (its ``Origin``, unless ``headers`` say)."""
    if "Origin" not in headers and "Referer" not in headers:
        headers["Origin"] = "http://testserver"
    return client.post("/signin", data={"token": token, "next": next_}, headers=headers, follow_redirects=False)


def _reads(client: TestClient, name: str, headers: dict[str, str] | None = None) -> dict[str, httpx.Response]:
    """Every read path for ``name`` (a versioned text name): its answer."""
    generic = name.rsplit(".", 2)[0]
    paths = {
        "N2R": f"/uri-res/N2R?{name}", "N2R#": f"/uri-res/N2R?{name}%23char=0,4", "I2R": f"/uri-res/I2R?{name}",
        "N2C": f"/uri-res/N2C?{name}", "N2L": f"/uri-res/N2L?{name}", "N2Ls": f"/uri-res/N2Ls?{generic}",
        "N2Ns": f"/uri-res/N2Ns?{name}", "resolve": f"/api/resolve?pdi={_q(name)}", "meta": f"/api/meta?pdi={_q(name)}",
        "view": f"/view?pdi={_q(name)}", "document": f"/view?pdi={_q(generic)}",
        "series": f"/series/{SEALED}", "search": "/search?q=sealed", "api-search": "/api/search?q=sealed",
    }
    return {what: client.get(path, headers=headers or {}, follow_redirects=False) for what, path in paths.items()}


def _parse(text: str) -> Any:
    return html5lib.parse(text, namespaceHTMLElements=False)


# --- the form -------------------------------------------------------------------------------------
def test_the_sign_in_page_is_a_labelled_form_that_posts_the_token_and_where_to_go_on(tmp_path: Path) -> None:
    with Archive.init(tmp_path / "a") as archive:
        client = TestClient(create_app(str(tmp_path / "a"), archive=archive))
        answer = client.get("/signin?next=" + _q("/series?x=1"))
        assert answer.status_code == 200 and answer.headers["cache-control"] == "no-store"
        tree = _parse(answer.text)
        form = tree.find(".//form[@class='signin']")
        assert form.get("method") == "post" and form.get("action") == "/signin"
        field = form.find(".//input[@name='token']")
        assert field.get("type") == "password" and field.get("required") is not None
        label = form.find(".//label")
        assert label.get("for") == field.get("id") and label.text == "Token"
        assert form.find(".//input[@name='next']").get("value") == "/series?x=1"
        assert form.find(".//button[@type='submit']").text == "Sign in"
        assert not tree.findall(".//script")  # works without JavaScript
        # every other page links to it, coming back to where the reader was
        home = _parse(client.get(f"/series/{S}?after=3").text)
        links = [a.get("href") for a in home.iter("a") if a.text == "Sign in"]
        assert links == ["/signin?next=" + _q(f"/series/{S}?after=3")]


def test_a_live_token_sets_an_httponly_strict_session_cookie_and_goes_on_to_next(tmp_path: Path) -> None:
    with Archive.init(tmp_path / "a") as archive:
        _, token = archive.add_token("clerk", role="read")
        client = TestClient(create_app(str(tmp_path / "a"), archive=archive))
        answer = _sign_in(client, token, f"/view?pdi={_q('urn:pdi://x/2026/1')}")
        assert answer.status_code == 303
        assert answer.headers["location"] == f"/view?pdi={_q('urn:pdi://x/2026/1')}"
        cookie = _set_cookie(answer)
        assert cookie.value == token and cookie["path"] == "/" and cookie["httponly"] is True
        assert cookie["samesite"] == "Strict" and not cookie["secure"]
        assert not cookie["max-age"] and not cookie["expires"]  # a session cookie: gone when the browser closes
        assert "secure" not in _attributes(answer)
        # no next: home
        assert _sign_in(client, token, "").headers["location"] == "/"


@pytest.mark.parametrize("how", ["base-url", "scheme"])
def test_over_https_the_cookie_is_secure(tmp_path: Path, how: str) -> None:
    with Archive.init(tmp_path / "a") as archive:
        _, token = archive.add_token("clerk", role="read")
        if how == "base-url":  # behind a proxy that ends TLS: the base URL says https
            client = TestClient(create_app(str(tmp_path / "a"), archive=archive, base_url="https://pdi.example.org"))
            origin = "https://pdi.example.org"
        else:
            client = TestClient(create_app(str(tmp_path / "a"), archive=archive), base_url="https://testserver")
            origin = "https://testserver"
        answer = _sign_in(client, token, "/", Origin=origin)
        assert answer.status_code == 303 and _set_cookie(answer)["secure"] is True
        assert {"httponly", "secure", "samesite", "path"} <= _attributes(answer)
        out = client.post("/signout", headers={"Origin": origin}, follow_redirects=False)
        assert out.status_code == 303 and "secure" in _attributes(out)


def test_a_bad_token_shows_the_form_again_with_the_error_and_sets_nothing(tmp_path: Path) -> None:
    with Archive.init(tmp_path / "a") as archive:
        _, token = archive.add_token("clerk", role="read")
        client = TestClient(create_app(str(tmp_path / "a"), archive=archive))
        for wrong, says in ((token[:-1], "not known, or was revoked"), ("hunter2", "a token begins pdi_")):
            answer = _sign_in(client, wrong, "/series")
            assert answer.status_code == 401 and "set-cookie" not in answer.headers
            assert answer.headers["www-authenticate"].startswith("Bearer")
            tree = _parse(answer.text)
            error = tree.find(".//p[@id='signin-error']")
            assert error is not None and says in error.text and error.get("role") == "alert"
            field = tree.find(".//input[@name='token']")
            assert field.get("aria-invalid") == "true" and "signin-error" in field.get("aria-describedby")
            assert tree.find(".//input[@name='next']").get("value") == "/series"
        empty = _sign_in(client, "  ")
        assert empty.status_code == 400 and "No token was given" in empty.text and "set-cookie" not in empty.headers
        wrong_type = client.post("/signin", content=json.dumps({"token": token}), follow_redirects=False,
                                 headers={"Content-Type": "application/json", "Origin": "http://testserver"})
        assert wrong_type.status_code == 415 and "set-cookie" not in wrong_type.headers
        huge = _sign_in(client, token, "/" + "a" * 9000)
        assert huge.status_code == 413 and "set-cookie" not in huge.headers


OFF_SITE = [
    "https://evil.example/", "http:/evil.example", "//evil.example/", "///evil.example", "/\\evil.example",
    "\\\\evil.example", "/\t/evil.example", "/\n/evil.example", " //evil.example", "evil.example",
    "javascript:alert(1)", "data:text/html,hi", "series", "/series\\..\\x", "/a\x00b",
]


@pytest.mark.parametrize("target", OFF_SITE)
def test_next_refuses_every_target_off_the_resolver_and_sets_nothing(tmp_path: Path, target: str) -> None:
    with Archive.init(tmp_path / "a") as archive:
        _, token = archive.add_token("clerk", role="read")
        client = TestClient(create_app(str(tmp_path / "a"), archive=archive))
        answer = _sign_in(client, token, target)
        assert answer.status_code == 400 and "set-cookie" not in answer.headers and "location" not in answer.headers
        assert "next=" in _parse(answer.text).find(".//p[@id='signin-error']").text
        shown = client.get("/signin?next=" + _q(target))
        assert shown.status_code == 400 and "next=" in shown.text


# RFC 3986 §3.3 path-absolute ("/" [ segment-nz *( "/" segment ) ]) with a §3.4 query: a path on this
# resolver however it is spelled, never "//" (segment-nz is not empty), never a space or a backslash
_PCHAR = r"[A-Za-z0-9._~!$&'()*+,;=:@-]|%[0-9A-Fa-f]{2}"
_PATH_ABSOLUTE = re.compile(rf"/(({_PCHAR})+(/({_PCHAR})*)*)?(\?(({_PCHAR})|[/?])*)?")
_LOCAL_PATHS = st.from_regex(_PATH_ABSOLUTE, fullmatch=True).filter(lambda p: len(p) <= 2000)


def _is_path_absolute(target: str) -> bool:
    return len(target) <= 2000 and _PATH_ABSOLUTE.fullmatch(target) is not None


@given(st.text(alphabet=st.sampled_from("/\\:@.?#%ae \t\n\x00"), max_size=12) | st.text(max_size=20) | _LOCAL_PATHS)
def test_every_next_accepted_stays_on_the_resolver(target: str) -> None:
    base = "http://resolver.example:8000/a/b"
    try:
        accepted = local_path(target)
    except BadNext:
        assert not _is_path_absolute(target), f"{target!r} is a path on this resolver (RFC 3986 §3.3) but was refused"
        return
    joined = urllib.parse.urlsplit(urllib.parse.urljoin(base, accepted))
    assert (joined.scheme, joined.netloc) == ("http", "resolver.example:8000"), accepted
    assert accepted.startswith("/") and not accepted.startswith("//") and "\\" not in accepted


#: Paths beyond ASCII, as a person's link or a browser's address bar holds them: a euro sign, Chinese words in a
#: query, a letter with an accent, a character beyond the BMP.
NON_ASCII = ["/\u20ac", "/search?q=\u5317\u4eac", "/series/caf\u00e9.example.us", "/view?pdi=x\U0001f600"]


@pytest.mark.parametrize("target", NON_ASCII)
def test_next_beyond_ascii_goes_on_percent_encoded_as_a_browser_writes_it(tmp_path: Path, target: str) -> None:
    with Archive.init(tmp_path / "a") as archive:
        _, token = archive.add_token("clerk", role="read")
        client = TestClient(create_app(str(tmp_path / "a"), archive=archive), raise_server_exceptions=False)
        # the path as httpx writes the same URL in a request (WHATWG URL's percent-encoding, UTF-8)
        written = httpx.URL("http://testserver" + target).raw_path.decode("ascii")
        answer = _sign_in(client, token, target)
        assert answer.status_code == 303, answer.text
        assert answer.headers["location"] == written and written.isascii() and written != target
        assert _set_cookie(answer).value == token
        out = client.post("/signout", data={"next": target}, headers={"Origin": "http://testserver"},
                          follow_redirects=False)
        assert out.status_code == 303 and out.headers["location"] == written
        # the form carries it on as written, and signing in from it goes to the same place
        shown = client.get("/signin?next=" + _q(target))
        assert shown.status_code == 200
        carried = _parse(shown.text).find(".//input[@name='next']").get("value")
        assert _sign_in(client, token, carried).headers["location"] == written
        if "?q=" in target:  # gone on to, signed in: the search reads the words typed
            landed = client.post("/signin", data={"token": token, "next": target},
                                 headers={"Origin": "http://testserver"}, follow_redirects=True)
            assert landed.status_code == 200 and landed.url.raw_path.decode() == written
            assert _parse(landed.text).find(".//input[@id='search-q']").get("value") == "\u5317\u4eac"


@pytest.mark.parametrize(("origin", "allowed"), [
    ("http://testserver", True),
    ("http://TESTSERVER:80", True),  # the same origin, written another way
    ("http://evil.example", False),
    ("null", False),  # a sandboxed frame, a data: page
    ("http://testserver:8001", False),  # another port of the same host: the replay origin is one
    ("https://testserver", False),
])
def test_sign_in_and_out_take_a_post_only_from_the_resolvers_own_origin(tmp_path: Path, origin: str | None,
                                                                        allowed: bool) -> None:
    with Archive.init(tmp_path / "a") as archive:
        _, token = archive.add_token("clerk", role="read")
        client = TestClient(create_app(str(tmp_path / "a"), archive=archive))
        headers = {"Origin": origin} if origin is not None else {}
        answer = _sign_in(client, token, "/", **headers)
        out = client.post("/signout", headers=headers, follow_redirects=False)
        if allowed:
            assert answer.status_code == 303 and _set_cookie(answer).value == token
            assert out.status_code == 303 and _set_cookie(out).value == "" and _set_cookie(out)["max-age"] == "0"
        else:
            assert answer.status_code == 403 and "set-cookie" not in answer.headers
            assert "not from this resolver" in answer.text
            assert out.status_code == 403 and "set-cookie" not in out.headers


@pytest.mark.parametrize(("headers", "allowed"), [
    # a browser that sends no Origin (older ones, on a same-origin POST) still says the page the form was on
    ({"Referer": "http://testserver/signin?next=/series"}, True),
    ({"Referer": "http://TESTSERVER:80/"}, True),
    ({}, False),  # neither: a program, or a page whose Referrer-Policy says nothing; it cannot be told from CSRF
    ({"Referer": "http://evil.example/signin"}, False),
    ({"Referer": "http://testserver:8001/replay/x"}, False),  # the replay origin: same site, another origin
    ({"Referer": "http://testserver@evil.example/"}, False),  # a user name in front of another host
    ({"Referer": "http://evil.example/?http://testserver/"}, False),
    ({"Referer": "/signin"}, False),  # a relative Referer names no origin
    ({"Referer": "http://[testserver/"}, False),  # an authority urllib cannot read: refused, not a 500
    # Origin, when sent, is what counts, whatever the Referer
    ({"Origin": "http://evil.example", "Referer": "http://testserver/signin"}, False),
])
def test_without_origin_the_referer_must_be_the_resolvers_own(tmp_path: Path, headers: dict[str, str],
                                                              allowed: bool) -> None:
    with Archive.init(tmp_path / "a") as archive:
        _, token = archive.add_token("clerk", role="read")
        client = TestClient(create_app(str(tmp_path / "a"), archive=archive))
        answer = client.post("/signin", data={"token": token, "next": "/"}, headers=headers, follow_redirects=False)
        out = client.post("/signout", headers=headers, follow_redirects=False)
        if allowed:
            assert answer.status_code == 303 and _set_cookie(answer).value == token
            assert out.status_code == 303 and _set_cookie(out)["max-age"] == "0"
        else:
            assert answer.status_code == 403 and "set-cookie" not in answer.headers, answer.text
            assert out.status_code == 403 and "set-cookie" not in out.headers
            said = "neither Origin nor Referer" if not headers else "not from this resolver"
            assert said in html.unescape(answer.text)


def test_the_origin_checked_is_the_base_urls_when_the_resolver_has_one(tmp_path: Path) -> None:
    with Archive.init(tmp_path / "a") as archive:
        _, token = archive.add_token("clerk", role="read")
        client = TestClient(create_app(str(tmp_path / "a"), archive=archive, base_url="https://pdi.example.org/"))
        assert _sign_in(client, token, "/", Origin="http://testserver").status_code == 403
        assert _sign_in(client, token, "/", Origin="https://pdi.example.org").status_code == 303
        assert _sign_in(client, token, "/", Referer="https://pdi.example.org/signin").status_code == 303
        assert _sign_in(client, token, "/", Referer="http://testserver/signin").status_code == 403


# --- what the cookie reads ------------------------------------------------------------------------------
def test_every_read_path_takes_the_cookie_as_it_takes_a_bearer_token(location: str) -> None:
    archive, public, sealed, reader = sealed_archive(location)
    with archive:
        embargoed = str(archive.add(S, b"sealed judgment\n", format="text", embargo_until="2099-01-01"))
        app = create_app(location, archive=archive)
        client = TestClient(app)
        bearer = {what: a.status_code for what, a in _reads(client, sealed, {"Authorization": f"Bearer {reader}"}).items()}
        cookie = _reads(client, sealed, _cookie(reader))
        assert {what: a.status_code for what, a in cookie.items()} == bearer
        assert set(bearer.values()) <= {200, 302} and bearer["N2R"] == 200, bearer
        for what, answer in cookie.items():
            assert answer.headers["cache-control"] == PRIVATE, what
        assert cookie["N2R"].content == b"sealed minutes of the board\n"
        head = client.head(f"/uri-res/N2R?{sealed}", headers=_cookie(reader))
        assert head.status_code == 200 and head.headers["cache-control"] == PRIVATE
        assert client.head(f"/uri-res/N2R?{sealed}").status_code == 403
        assert sealed in cookie["api-search"].text and sealed in cookie["search"].text
        assert "sealed minutes" in cookie["view"].text
        assert len(app.state.cache) == 0  # nothing read with a cookie is kept
        anonymous = _reads(client, sealed)
        assert {anonymous[w].status_code for w in ("N2R", "N2C", "N2L", "resolve", "view", "series")} == {403}
        assert sealed not in anonymous["api-search"].text
        # an embargoed name: only a token covering its series reads it, by cookie as by header
        _, other = archive.add_token("shelver", role="read", series=[S])
        assert client.get(f"/uri-res/N2R?{embargoed}", headers=_cookie(reader)).status_code == 403
        assert client.get(f"/uri-res/N2R?{embargoed}", headers=_cookie(other)).content == b"sealed judgment\n"
        assert client.get(f"/uri-res/N2R?{embargoed}").status_code == 403
        # a public name read with the cookie: private too, and not kept
        read = client.get(f"/uri-res/N2R?{public}", headers=_cookie(reader))
        assert read.status_code == 200 and read.headers["cache-control"] == PRIVATE and len(app.state.cache) == 0
        again = client.get(f"/uri-res/N2R?{sealed}", headers={**_cookie(reader), "If-None-Match": cookie["N2R"].headers["etag"]})
        assert again.status_code == 304 and again.headers["cache-control"] == PRIVATE


@pytest.mark.parametrize("role", ROLES)
def test_a_token_of_every_role_reads_by_cookie(tmp_path: Path, role: str) -> None:
    archive, _, sealed, _ = sealed_archive(str(tmp_path / "a"))
    with archive:
        _, token = archive.add_token("holder", role=role, series=[SEALED])
        client = TestClient(create_app(str(tmp_path / "a"), archive=archive))
        signed = _sign_in(client, token, f"/uri-res/N2R?{sealed}")
        assert signed.status_code == 303
        read = client.get(signed.headers["location"])  # the client's jar sends the cookie, as a browser does
        assert read.status_code == 200 and read.content == b"sealed minutes of the board\n"


def test_pages_say_who_is_signed_in_with_a_sign_out_button(tmp_path: Path) -> None:
    archive, _, sealed, reader = sealed_archive(str(tmp_path / "a"))
    with archive:
        client = TestClient(create_app(str(tmp_path / "a"), archive=archive))
        for path in ("/", "/series", f"/view?pdi={_q(sealed)}", "/search?q=minutes", "/signin"):
            tree = _parse(client.get(path, headers=_cookie(reader)).text)
            who = tree.find(".//header/form[@class='who']")
            assert who is not None, path
            assert "".join(who.itertext()).startswith(f"signed in as clerk (read, {SEALED})"), path
            assert who.get("method") == "post" and who.get("action") == "/signout"
            assert who.find("button").text == "Sign out"
            assert not [a for a in tree.iter("a") if a.text == "Sign in"], path
        # with a bearer token (a program), who reads is said, with nothing to sign out of
        tree = _parse(client.get("/", headers={"Authorization": f"Bearer {reader}"}).text)
        assert tree.find(".//header/form[@class='who']") is None
        assert "signed in as clerk" in "".join(tree.find(".//header/div[@class='who']").itertext())


def test_writes_never_take_the_cookie(tmp_path: Path) -> None:
    with Archive.init(tmp_path / "a") as archive:
        archive.add_series(S)
        name = str(archive.add(S, b"kept\n", format="text"))
        _, admin = archive.add_token("chief", role="admin")
        client = TestClient(create_app(str(tmp_path / "a"), archive=archive))
        before = archive.ls(series=S)
        for path in (f"/api/deposit?series={S}&format=text", f"/api/version?pdi={_q(name.rsplit('.', 2)[0])}&format=text",
                     f"/api/withdraw?pdi={_q(name)}", f"/api/statements?pdi={_q(name)}&key=title"):
            answer = client.post(path, content=b"forged\n", headers=_cookie(admin))
            assert answer.status_code == 401 and "Authorization: Bearer" in answer.json()["detail"], path
        assert client.get("/api/audit", headers=_cookie(admin)).status_code == 401  # admin's read, by header only
        assert archive.ls(series=S) == before and client.get(f"/uri-res/N2R?{name}").content == b"kept\n"
        assert client.get("/api/audit", headers={"Authorization": f"Bearer {admin}"}).status_code == 200


def test_a_revoked_tokens_cookie_is_refused_and_cleared_at_the_next_request(tmp_path: Path) -> None:
    archive, public, sealed, reader = sealed_archive(str(tmp_path / "a"))
    with archive:
        client = TestClient(create_app(str(tmp_path / "a"), archive=archive))
        assert client.get(f"/uri-res/N2R?{sealed}", headers=_cookie(reader)).status_code == 200
        archive.revoke_token("clerk")
        machine = client.get(f"/uri-res/N2R?{public}", headers=_cookie(reader))
        assert machine.status_code == 401 and machine.headers["content-type"] == "application/problem+json"
        cleared = _set_cookie(machine)
        assert cleared.value == "" and cleared["max-age"] == "0" and cleared["path"] == "/"
        person = client.get(f"/view?pdi={_q(sealed)}", headers={**_cookie(reader), "Accept": "text/html"})
        assert person.status_code == 401 and _set_cookie(person).value == ""
        tree = _parse(person.text)
        assert "revoked" in tree.find(".//p[@id='signin-error']").text
        assert tree.find(".//input[@name='next']").get("value") == f"/view?pdi={_q(sealed)}"
        assert [a.get("href") for a in tree.iter("a") if a.text == "Go on without signing in"] == [f"/view?pdi={_q(sealed)}"]
        # the browser forgot it: the next request is anonymous
        assert client.get(f"/view?pdi={_q(sealed)}").status_code == 403


def test_an_anonymous_page_or_refusal_varies_by_cookie(tmp_path: Path) -> None:
    archive, public, sealed, _ = sealed_archive(str(tmp_path / "a"))
    with archive:
        client = TestClient(create_app(str(tmp_path / "a"), archive=archive))
        assert "Cookie" in client.get("/").headers.get_list("vary", split_commas=True)
        assert "Cookie" in client.get(f"/uri-res/N2R?{sealed}").headers.get_list("vary", split_commas=True)
        shared = client.get(f"/uri-res/N2R?{public}")  # the same for everyone, immutable: kept by any cache
        assert shared.headers["vary"] == "Accept" and "immutable" in shared.headers["cache-control"]


def test_a_page_or_refusal_read_with_the_cookie_varies_by_it_too(tmp_path: Path) -> None:
    # docs/reference/write-api.md, "Caches": pages and refusals vary by Authorization, Cookie (found by a probe,
    # 2026-11-30: read with the cookie, they said private, no-store but no Vary, or Vary: Accept alone)
    archive, public, sealed, reader = sealed_archive(str(tmp_path / "a"))
    with archive:
        client = TestClient(create_app(str(tmp_path / "a"), archive=archive))
        for target in ("/", f"/view?pdi={_q(sealed)}", f"/uri-res/N2R?{sealed}", f"/uri-res/N2C?{sealed}", "/api/ls",
                       f"/uri-res/N2R?{public.replace('.text.1', '.text.9')}", f"/uri-res/N2R?{public}"):
            answer = client.get(target, headers=_cookie(reader))
            varies = answer.headers.get_list("vary", split_commas=True)
            assert {"Authorization", "Cookie"} <= set(varies), (target, answer.status_code, varies)
            assert answer.headers["cache-control"] == "private, no-store", target


# --- replay -------------------------------------------------------------------------------------------------------
def _capture(archive: Archive) -> str:
    picture = Image.new("RGB", (4, 4), (250, 200, 0))
    import io

    png = io.BytesIO()
    picture.save(png, format="PNG")
    return str(archive.add(SEALED, captured_aggregate(png.getvalue()), format="related",
                           foreign_id="http://www.example.com/news/"))


def test_the_replay_origin_ignores_the_cookie_and_says_private_captures_are_not_replayed(tmp_path: Path) -> None:
    archive, _, _, reader = sealed_archive(str(tmp_path / "a"))
    with archive:
        archive.set_series_access(SEALED, "public")
        capture = _capture(archive)
        replay = TestClient(create_replay_app(str(tmp_path / "a"), archive=archive))
        path = f"/replay/{_q(capture)}/index.html"
        # public: a cookie that is no token at all is not even looked at (no 401), and nothing is set
        shown = replay.get(path, headers=_cookie("pdi_not-a-token"))
        assert shown.status_code == 200 and "set-cookie" not in shown.headers
        archive.set_series_access(SEALED, "private")
        refused = replay.get(path, headers=_cookie(reader))
        assert refused.status_code == 403 and refused.headers["content-type"].startswith("text/html")
        tree = _parse(refused.text)
        assert tree.find(".//h1").text == "This capture is private: it is not replayed"
        assert "reads no sign-in" in refused.text
        assert "content-security-policy" in refused.headers  # the replay origin's guard, as on every answer
        part = replay.get(f"/replay/{_q(capture)}/style.css", headers=_cookie(reader))
        assert part.status_code == 403 and part.headers["content-type"] == "application/problem+json"
        # a program's bearer token still replays it (as before)
        assert replay.get(path, headers={"Authorization": f"Bearer {reader}"}).status_code == 200
        # the resolver, for a signed-in reader, says so instead of framing a refusal, and links the source
        app = create_app(str(tmp_path / "a"), archive=archive, replay=ReplaySite(port=8001))
        page = TestClient(app).get(f"/view?pdi={_q(capture)}", headers=_cookie(reader))
        assert page.status_code == 200 and page.headers["cache-control"] == PRIVATE
        tree = _parse(page.text)
        assert tree.find(".//iframe") is None
        note = tree.find(".//section[@class='not-replayed']")
        assert note.find("h2").text == "Private captures are not replayed"
        assert note.find(".//a").get("href") == f"/view?pdi={_q(capture)}&view=source"
        source = TestClient(app).get(note.find(".//a").get("href"), headers=_cookie(reader))
        assert source.status_code == 200 and source.headers["cache-control"] == PRIVATE
        kept = _parse(source.text).find(".//main//a[.='the bytes']").get("href")
        octets = TestClient(app).get(kept, headers=_cookie(reader))
        assert octets.status_code == 200 and b"News of the day" in octets.content


# --- pdi serve's own protocol, which answers from its cache before the app --------------------------------
@pytest.fixture
def in_process(tmp_path: Path) -> Iterator[tuple[str, Archive, ResponseCache, tuple[str, str, str]]]:
    """The resolver on pdi serve's HTTP protocol with its cache, in a thread: its URL, the archive, the cache,
    a public and a private name and a read token for the private one."""
    archive, public, sealed, reader = sealed_archive(str(tmp_path / "a"))
    app = create_app(str(tmp_path / "a"), archive=archive)
    sock = listening_socket("127.0.0.1", 0)
    sock.listen()
    try:
        with in_thread(app, [sock], join=30, log_level="critical", loop="uvloop",
                       http=answering_protocol(10, app.state.cache)):
            yield f"http://127.0.0.1:{sock.getsockname()[1]}", archive, app.state.cache, (public, sealed, reader)
    finally:
        archive.close()


def test_the_cache_is_never_poisoned_by_a_signed_in_read(
    in_process: tuple[str, Archive, ResponseCache, tuple[str, str, str]],
) -> None:
    base, archive, cache, (public, sealed, reader) = in_process
    with httpx.Client(base_url=base, timeout=60) as client:
        signed = client.get(f"/uri-res/N2R?{sealed}", headers=_cookie(reader))
        assert signed.status_code == 200 and signed.headers["cache-control"] == PRIVATE
        for _ in range(2):  # the second time, the cache has had its chance to answer
            anonymous = client.get(f"/uri-res/N2R?{sealed}")
            assert anonymous.status_code == 403 and b"sealed minutes" not in anonymous.content
        # a public name, kept by the cache, then read with the cookie: the token checked first (never the
        # connection's fast path), the answer anyone may read sent private, and nothing more kept
        assert client.get(f"/uri-res/N2R?{public}").headers["cache-control"].startswith("public")
        assert client.get(f"/uri-res/N2R?{public}").headers["cache-control"].startswith("public")  # from the cache
        assert len(cache) == 1
        private = client.get(f"/uri-res/N2R?{public}", headers=_cookie(reader))
        assert private.status_code == 200 and private.headers["cache-control"] == PRIVATE
        assert private.content == b"open minutes of the board\n" and len(cache) == 1
        # revoked: the protocol never answers a request carrying the cookie from its cache
        archive.revoke_token("clerk")
        refused = client.get(f"/uri-res/N2R?{public}", headers=_cookie(reader))
        assert refused.status_code == 401 and _set_cookie(refused).value == ""
        assert client.get(f"/uri-res/N2R?{public}").status_code == 200


# --- a person, in Chromium ---------------------------------------------------------------------------------------
def _js(pipe: Pipe, session: str, expression: str) -> Any:
    answer = pipe.call("Runtime.evaluate", {"expression": expression, "awaitPromise": True, "returnByValue": True},
                       session, time.monotonic() + 30)
    assert "exceptionDetails" not in answer, answer
    return answer["result"].get("value")


def _key(pipe: Pipe, session: str, key: str, code: int, text: str = "") -> None:
    for kind in ("keyDown", "keyUp"):
        params: dict[str, Any] = {"type": kind, "key": key, "code": key, "windowsVirtualKeyCode": code}
        if text and kind == "keyDown":
            params["text"] = text
        pipe.call("Input.dispatchKeyEvent", params, session, time.monotonic() + 30)


def _shot(pipe: Pipe, session: str) -> bytes:
    png = base64.b64decode(pipe.call("Page.captureScreenshot", {"format": "png"}, session, time.monotonic() + 30)["data"])
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    return png


def _wait(pipe: Pipe, session: str, expression: str, what: str) -> None:
    deadline = time.monotonic() + 30
    while not _js(pipe, session, expression):
        assert time.monotonic() < deadline, what
        time.sleep(0.05)


def test_a_person_signs_in_through_the_form_and_reads_a_private_document(tmp_path: Path) -> None:
    location = tmp_path / "archive"
    archive, _, sealed, reader = sealed_archive(str(location))
    capture = _capture(archive)
    archive.close()
    process, port, line = start_serve(location, "--workers", "1", "--replay-port", "0", start_new_session=True)
    replay_origin = f"http://127.0.0.1:{int(SERVING.match(line)[2])}"  # type: ignore[index]
    shots: dict[str, bytes] = {}
    try:
        wait_answering(process, f"http://127.0.0.1:{port}/api/series")
        _browse_signed_in(f"http://127.0.0.1:{port}", replay_origin, sealed, capture, reader, shots)
    finally:
        stop(process, timeout=30)
    SHOTS.mkdir(parents=True, exist_ok=True)
    for label, png in shots.items():
        (SHOTS / f"{label}.png").write_bytes(png)


def _browse_signed_in(origin: str, replay_origin: str, sealed: str, capture: str, reader: str,
                      shots: dict[str, bytes]) -> None:
    rng = random.Random(2169)
    alphabet = "/\\:@.?#%a \t\n"
    samples = [("/" if rng.random() < 0.8 else "") + "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 8)))
               for _ in range(3000)]
    accepted = sorted({s for s in samples if _accepts(s)})
    assert len(accepted) > 200
    with devtools() as pipe:
        view = f"/view?pdi={_q(sealed)}"
        session = open_page(pipe, f"{origin}/signin?next={_q(view)}")
        size = {"width": 1100, "height": 560, "deviceScaleFactor": 1, "mobile": False}
        pipe.call("Emulation.setDeviceMetricsOverride", size, session, time.monotonic() + 30)
        pipe.call("Emulation.setFocusEmulationEnabled", {"enabled": True}, session, time.monotonic() + 30)
        # every next= the resolver accepts stays on its origin by the browser's own URL parser
        off = _js(pipe, session, f"JSON.stringify({json.dumps(accepted)}.filter("
                                 f"(s) => new URL(s, location.href).origin !== location.origin))")
        assert json.loads(off) == []
        # and one beyond ASCII goes on to where the browser's own URL parser takes the path as typed
        typed = _js(pipe, session, f"JSON.stringify({json.dumps(NON_ASCII)}.map((s) => {{"
                                   " const u = new URL(s, location.href); return u.pathname + u.search; }))")
        assert json.loads(typed) == [local_path(t) for t in NON_ASCII]
        shots["signin"] = _shot(pipe, session)
        # the token typed into the labelled field, Enter sends the form
        _js(pipe, session, "document.getElementById('token').focus()")
        pipe.call("Input.insertText", {"text": reader}, session, time.monotonic() + 30)
        _key(pipe, session, "Enter", 13, "\r")
        _wait(pipe, session, f"location.pathname + location.search === {json.dumps(view)}"
                             " && document.readyState === 'complete'", "the form did not go on to the document")
        body = _js(pipe, session, "document.body.innerText")
        assert "sealed minutes of the board" in body and f"signed in as clerk (read, {SEALED})" in body
        assert "pdi-token" not in _js(pipe, session, "document.cookie")  # HttpOnly: no script reads it
        shots["signed-in-document"] = _shot(pipe, session)
        # a private capture: not framed, since the replay origin reads no sign-in; the page says so
        session = _opened(pipe, f"{origin}/view?pdi={_q(capture)}")
        assert _js(pipe, session, "document.querySelector('.not-replayed h2').textContent") == \
            "Private captures are not replayed"
        assert _js(pipe, session, "document.querySelector('iframe') === null")
        shots["signed-in-private-capture"] = _shot(pipe, session)
        # the replay origin itself, opened in a tab: sent to the resolver's viewer of the capture, which says why it
        # is not replayed (its refusal of a request with the cookie: test_the_replay_origin_ignores_the_cookie_…)
        session = _opened(pipe, replay_origin + replay_path(capture))
        _wait(pipe, session, f"location.href === {json.dumps(f'{origin}/view?pdi={_q(capture)}')}"
                             " && document.readyState === 'complete'", "the tab was not sent to the viewer")
        assert _js(pipe, session, "document.querySelector('.not-replayed h2').textContent") == \
            "Private captures are not replayed"
        shots["replay-private-refused"] = _shot(pipe, session)
        session = _opened(pipe, f"{origin}/")
        # signing out: the private document is refused again
        _js(pipe, session, "document.querySelector('header form.who button').click()")
        _wait(pipe, session, "location.pathname === '/' && document.readyState === 'complete'"
                             " && [...document.querySelectorAll('a')].some((a) => a.textContent === 'Sign in')",
              "sign out did not go home")
        assert httpx.get(f"{origin}{view}").status_code == 403


def _opened(pipe: Pipe, url: str) -> str:
    """``url`` in a new tab of the same browser (its cookies too), loaded, at the screenshots' size."""
    session = open_page(pipe, url)
    size = {"width": 1100, "height": 560, "deviceScaleFactor": 1, "mobile": False}
    pipe.call("Emulation.setDeviceMetricsOverride", size, session, time.monotonic() + 30)
    return session


def _accepts(target: str) -> bool:
    try:
        local_path(target)
    except BadNext:
        return False
    return True
