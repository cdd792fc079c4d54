"""The resolver's cache of whole N2R answers (pdi.server.process.cache): what it keeps, what it answers, what it forgets.

An answer from the cache must be the answer: each request is made of an app
without a cache (the reference) and, once warmed, of an app with one whose
archive has since lost its blob files, so only the cache can answer it.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
import uvicorn
from hypothesis import given, settings
from hypothesis import strategies as st
from starlette.applications import Starlette

from pdi.archive import Archive, Content
from pdi.server import create_app
from pdi.server.process.cache import Entity, ResponseCache
from pdi.server.protocol.rfc2169 import rfc2169_query
from support.stored_blobs import delete_every_blob

S = "cache.example.us"
TEXT = b"Hello, world.\nSecond line.\n"  # stored CRLF-canonical: 29 bytes


@pytest.fixture
def names(tmp_path: Path) -> dict[str, str]:
    with Archive.init(tmp_path / "archive") as archive:
        archive.add_series(S)
        text = str(archive.add(S, TEXT, format="text"))
        page = str(archive.add(S, b"<p id=a>one<p>two</p>", format="html"))
        first = archive.deposit(S, [Content(b"one\n", "text")], foreign_id="versions")
        generic = str(first[0]).rsplit(".", 2)[0]
    return {"text": text, "page": page, "generic": generic, "location": str(tmp_path / "archive")}


@contextmanager
def _live(app: Starlette) -> Iterator[httpx.Client]:
    """A client of ``app`` served by uvicorn on a free loopback port, in a thread."""
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.02)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30) as client:
            yield client
    finally:
        server.should_exit = True
        thread.join(timeout=10)


def _get(client: httpx.Client, name: str, method: str = "GET", **headers: str) -> tuple[int, list[tuple[str, str]], bytes]:
    response = client.request(method, f"/uri-res/N2R?{rfc2169_query(name)}", headers=headers)
    # uvicorn's Date changes with the second; everything else must be the same
    return response.status_code, [h for h in response.headers.multi_items() if h[0] != "date"], response.content


def _delete_blobs(location: str) -> None:
    assert delete_every_blob(location)  # rows (small blobs) and files


def test_an_answer_from_the_cache_is_the_resolvers_answer(names: dict[str, str]) -> None:
    text, page = names["text"], names["page"]
    # one base URL for both: a memento's Link names its TimeGate by an absolute URL
    base = "http://resolver.example.org"
    with _live(create_app(names["location"], cache_bytes=0, base_url=base)) as reference:
        tag = reference.get(f"/uri-res/N2R?{text}").headers["etag"]
        cases: list[tuple[str, str, dict[str, str]]] = [
            (text, "GET", {}),
            (text, "HEAD", {}),
            (text, "GET", {"range": "bytes=0-4"}),
            (text, "GET", {"range": "bytes=-3"}),
            (text, "GET", {"range": "bytes=999-"}),  # 416
            (text, "GET", {"if-none-match": tag}),  # 304
            (text, "GET", {"if-none-match": '"other"'}),
            (text, "GET", {"range": "bytes=0-4", "if-range": '"other"'}),  # the whole body
            (text + "#char=0,5", "GET", {}),
            (text + "#char=20,500", "GET", {}),  # reaches past the end: the Warning header
            (page + "#char=8,11", "GET", {}),
            (page, "HEAD", {}),
        ]
        expected = [_get(reference, name, method, **headers) for name, method, headers in cases]
    assert [e[0] for e in expected] == [200, 200, 206, 206, 416, 304, 200, 200, 200, 200, 200, 200]
    assert expected[2][2] == b"Hello" and expected[8][2] == b"Hello"

    app = create_app(names["location"], base_url=base)
    with _live(app) as cached:
        for name, _, _ in cases:
            assert _get(cached, name)[0] == 200  # now kept
        _delete_blobs(names["location"])
        assert _get(cached, text + "#char=1,2")[0] == 500  # not kept: the store answers, without its bytes
        answers = [_get(cached, name, method, **headers) for name, method, headers in cases]
    assert answers == expected
    assert len(app.state.cache) == 5  # the text, two of its fragments, the page and one of its fragments


def test_a_generic_name_is_never_kept(names: dict[str, str]) -> None:
    app = create_app(names["location"])
    with _live(app) as client:
        status, _, body = _get(client, names["generic"])
        assert status == 300 and body.decode().count("/uri-res/N2R?") == 1
        assert len(app.state.cache) == 0
        with Archive.open(names["location"]) as archive:
            archive.add_version(names["generic"], [Content(b"two\n", "text")])
        status, _, body = _get(client, names["generic"])
        assert status == 300 and body.decode().count("/uri-res/N2R?") == 2  # the new version is listed
        assert len(app.state.cache) == 0
        # I2R is N2R: the same entry serves both
        assert _get(client, names["generic"] + ".text.2")[2] == b"two\n"
        assert client.get(f"/uri-res/I2R?{names['generic']}.text.2").content == b"two\n"
        assert len(app.state.cache) == 1


def test_forget_drops_every_answer_about_a_name(names: dict[str, str]) -> None:
    text, page = names["text"], names["page"]
    app = create_app(names["location"])
    cache: ResponseCache = app.state.cache
    with _live(app) as client:
        for name in (text, text + "#char=0,5", text + "#line=1,2", page):
            assert _get(client, name)[0] == 200
        assert len(cache) == 4
        # another spelling of the same name, with a fragment of its own: the text and its fragments go
        assert cache.forget(text.upper().replace("URN:PDI://", "urn:pdi://") + "#char=1,2") == 3
        assert len(cache) == 1
        assert cache.forget(text) == 0
        assert cache.forget(page.rsplit(".", 2)[0]) == 1  # the generic name takes every format and version
        assert len(cache) == 0 and cache.bytes == 0


def test_an_answer_larger_than_an_entry_may_be_is_not_kept(names: dict[str, str]) -> None:
    with Archive.open(names["location"]) as archive:
        big = str(archive.add(S, b"x" * 3000 + b"\n", format="text"))
    app = create_app(names["location"], cache_bytes=4096)  # an entry is at most the whole cache (a small text, its header lines twice, fits)
    with _live(app) as client:
        assert _get(client, big)[0] == 200 and len(app.state.cache) == 0
        assert _get(client, names["text"])[0] == 200 and len(app.state.cache) == 1
        assert app.state.cache.bytes <= 4096


def _entity(size: int, name: str) -> Entity:
    return Entity(b"x" * size, b"text/plain", '"t"', (), (name,))


_NAMES = [f"urn:pdi://cache.example.us/2026/11/23/{n}.text.1" for n in range(1, 4)]


@settings(max_examples=200, deadline=None)
@given(
    max_bytes=st.integers(0, 6000),
    operations=st.lists(
        st.tuples(st.sampled_from(["put", "get", "forget"]), st.integers(0, 7), st.integers(0, 3000),
                  st.integers(0, 2)),
        max_size=60,
    ),
)
def test_the_cache_is_a_least_recently_used_list_within_its_bytes(
    max_bytes: int, operations: list[tuple[str, int, int, int]]
) -> None:
    # the reference: a list, oldest use first, emptied from the front while it holds too much
    cache = ResponseCache(max_bytes, max_entry_bytes=4000)
    model: list[tuple[bytes, Entity]] = []
    for operation, k, size, n in operations:
        key = b"k%d" % k
        if operation == "put":
            entity = _entity(size, _NAMES[n])
            kept = cache.put(key, entity)
            assert kept == (entity.size + len(key) <= min(4000, max_bytes))
            if kept:
                model = [(mk, me) for mk, me in model if mk != key] + [(key, entity)]
                while sum(me.size + len(mk) for mk, me in model) > max_bytes:
                    model.pop(0)
        elif operation == "get":
            found = [me for mk, me in model if mk == key]
            assert cache.get(key) == (found[0] if found else None)
            if found:
                model = [(mk, me) for mk, me in model if mk != key] + [(key, found[0])]
        else:
            gone = [mk for mk, me in model if _NAMES[n] in me.names]
            assert cache.forget(_NAMES[n]) == len(gone)
            model = [(mk, me) for mk, me in model if mk not in gone]
        assert len(cache) == len(model)
        assert cache.bytes == sum(me.size + len(mk) for mk, me in model) <= max_bytes
    for key, entity in model:
        assert cache.get(key) == entity


def test_forget_in_a_large_cache_empties_it_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Past ``FORGET_SCAN`` answers a withdrawal's ``forget`` empties the cache instead of looking through it on the
    event loop (every worker's cache is emptied within ``revalidate_seconds`` anyway); below, only the name's go."""
    import pdi.server.process.cache as cache_module

    monkeypatch.setattr(cache_module, "FORGET_SCAN", 3)
    cache = ResponseCache(1 << 20, max_entry_bytes=4000)
    for k in range(3):
        assert cache.put(b"k%d" % k, _entity(10, _NAMES[k % len(_NAMES)]))
    assert cache.forget(_NAMES[0]) == 1 and len(cache) == 2  # three kept: looked through
    for k in range(3, 6):
        assert cache.put(b"k%d" % k, _entity(10, _NAMES[k % len(_NAMES)]))
    assert len(cache) == 5
    assert cache.forget(_NAMES[1]) == 5 and len(cache) == 0 and cache.bytes == 0


@pytest.mark.parametrize(("service", "made_by", "revalidating"), [
    ("N2R", "representation", False), ("N2R", "validator", True), ("N2L", "location", False)])
def test_an_answer_made_before_its_series_was_hidden_is_not_kept_once_the_cache_forgot(
    names: dict[str, str], monkeypatch: pytest.MonkeyPatch, service: str, made_by: str, revalidating: bool,
) -> None:
    """A public name's answer whose making began before its series was made hidden (by another process), and ended
    after this resolver's cache had forgotten all it held for that change, was kept all the same and given to every
    stranger after (200, 302 or 304 for a name now answered 404), until the next change. Found by a security
    review, 2026-11-27: the cache now keeps no answer made from what the catalog said before it last forgot."""
    from pdi.server.protocol.resolver import Resolver

    made, release = threading.Event(), threading.Event()
    original = getattr(Resolver, made_by)

    def held_back(self: Resolver, *args: object, **kwargs: object) -> object:
        answer = original(self, *args, **kwargs)
        if not release.is_set():  # the first request's answer, made before the change, waits here
            made.set()
            release.wait(20)
        return answer

    monkeypatch.setattr(Resolver, made_by, held_back)
    app = create_app(names["location"])
    app.state.cache.revalidate_seconds = 0.05  # the 2 s a resolver trusts its cache, made short
    target = f"/uri-res/{service}?{rfc2169_query(names['text'])}"
    headers = {"If-None-Match": "*"} if revalidating else {}
    with _live(app) as client:
        first: list[httpx.Response] = []
        asking = threading.Thread(target=lambda: first.append(client.get(target, headers=headers)))
        asking.start()
        assert made.wait(20)
        with Archive.open(names["location"]) as other:  # pdi series access, from another process
            other.set_series_access(S, "hidden")
        time.sleep(0.1)
        assert client.get("/uri-res/N2R?urn:pdi://elsewhere.example.us/2026/11/27/1.text.1").status_code == 404
        release.set()
        asking.join(20)
        assert first[0].status_code in (200, 302, 304)  # made before the change: what the catalog said then
        for _ in range(3):
            after = client.get(target, headers=headers)
            assert after.status_code == 404, (after.status_code, after.headers)
