"""Resolvers whose registries send a series back and forth (issue 27 §4), over real ``pdi serve`` processes.

Found by a review (2026-11-28): resolver A's registry sends a series to B and B's sends it back to A (or A → B
→ C → A), none of them holding it; each only kept from redirecting to itself, so a reader's N2R, N2L or view
bounced between them until the client gave up (a browser after some twenty redirects). Now a resolver asks a
candidate what it answers for the series first (pdi.federation.routes) and never sends a reader round a loop:
``508 Loop Detected`` (RFC 5842 §7.2) naming the resolvers, while a chain that ends at a resolver holding the
series (A → B → C) still resolves.

Three SQLite archives, A, B and C, each served with its own registry.json (re-read when it changes); C holds
the series ``chain.example.us`` and ``skip.example.us``.
"""

from __future__ import annotations

import http.server
import socket
import threading
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar
from urllib.parse import quote

import httpx
import pytest
from server_helpers import serving

from pdi.archive import Archive, Content
from pdi.federation.registry import Registry, write_registry_file


@dataclass
class Three:
    a: str
    b: str
    c: str
    chain_name: str
    skip_name: str
    over_name: str
    dead: str


def _name(series: str) -> str:
    return f"urn:pdi://{series}/2026/11/20/1.text.1"


@pytest.fixture(scope="module")
def three(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Three]:
    root = tmp_path_factory.mktemp("loops")
    for name in "ab":
        with Archive.init(str(root / name)) as archive:
            archive.add_series(f"{name}.example.us")
    with Archive.init(str(root / "c")) as c:
        names = []
        for series in ("chain.example.us", "skip.example.us", "over.example.us"):
            c.add_series(series)
            names.append(str(c.deposit(series, [Content(f"held by C: {series}\n".encode(), "text")])[0]))
    with ExitStack() as stack:
        a, b, c_ = (f"http://127.0.0.1:{stack.enter_context(serving(root / n))[1]}/" for n in "abc")
        closed = stack.enter_context(socket.socket())  # bound, never listening: an authority that is down
        closed.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{closed.getsockname()[1]}/"
        # loop: A → B → A; tri: A → B → C → A; chain: A → B → C, which holds it; skip: A → B (→ A), then C
        write_registry_file(root / "a" / "registry.json", Registry({
            "loop.example.us": (b,), "tri.example.us": (b,), "chain.example.us": (b,),
            "skip.example.us": (b, c_), "over.example.us": (dead, c_), "fail.example.us": (dead, b)}))
        write_registry_file(root / "b" / "registry.json", Registry({
            "loop.example.us": (a,), "tri.example.us": (c_,), "chain.example.us": (c_,), "skip.example.us": (a,),
            "fail.example.us": (a,)}))
        write_registry_file(root / "c" / "registry.json", Registry({"tri.example.us": (a,)}))
        yield Three(a, b, c_, names[0], names[1], names[2], dead)


def get(url: str, **headers: str) -> httpx.Response:
    return httpx.get(url, headers=headers, timeout=60, follow_redirects=False)


@pytest.mark.parametrize("service", ["N2R", "N2L", "N2C", "I2R"])
def test_two_resolvers_sending_a_series_to_each_other_refuse_it_508_naming_both(three: Three, service: str) -> None:
    name = _name("loop.example.us")
    for here, there in ((three.a, three.b), (three.b, three.a)):
        answer = get(f"{here}uri-res/{service}?{name}")
        assert answer.status_code == 508, (here, answer.status_code, answer.headers.get("location"))
        assert "location" not in answer.headers
        assert answer.headers["content-type"] == "application/problem+json"
        detail = answer.json()["detail"]
        assert f"{there} → {here}" in detail and "loop.example.us" in detail, detail


def test_a_reader_following_every_redirect_stops_at_the_first_resolver(three: Three) -> None:
    """No bounce: a client that follows redirects (as a browser does) gets the refusal at once."""
    answer = httpx.get(f"{three.a}uri-res/N2R?{_name('loop.example.us')}", timeout=60, follow_redirects=True)
    assert answer.status_code == 508 and answer.history == []


def test_a_loop_of_three_is_refused_too(three: Three) -> None:
    answer = get(f"{three.a}uri-res/N2L?{_name('tri.example.us')}")
    assert answer.status_code == 508, answer.headers.get("location")
    assert f"{three.b} → {three.c} → {three.a}" in answer.json()["detail"]


def test_the_viewer_says_the_names_resolvers_send_it_back_and_forth(three: Three) -> None:
    name = _name("loop.example.us")
    page = httpx.get(f"{three.a}view?pdi={quote(name, safe='')}", headers={"Accept": "text/html"}, timeout=60)
    assert page.status_code == 508 and page.headers["content-type"].startswith("text/html")
    assert "location" not in page.headers
    assert 'id="loop"' in page.text and "Not in this archive" not in page.text
    assert f"{three.b} → {three.a}" in page.text


def test_a_chain_that_ends_at_a_resolver_holding_the_series_still_resolves(three: Three) -> None:
    answer = get(f"{three.a}uri-res/N2R?{three.chain_name}")
    assert answer.status_code == 302 and answer.headers["location"] == f"{three.b}uri-res/N2R?{three.chain_name}"
    followed = httpx.get(answer.headers["location"], timeout=60, follow_redirects=True)
    assert followed.status_code == 200 and followed.content == b"held by C: chain.example.us\n"
    assert [str(r.url) for r in followed.history] == [f"{three.b}uri-res/N2R?{three.chain_name}"]
    shown = get(f"{three.a}view?pdi={quote(three.chain_name, safe='')}")
    assert shown.status_code == 302 and shown.headers["location"].startswith(f"{three.b}view?pdi=")


def test_a_candidate_that_sends_a_series_back_is_skipped_for_the_next(three: Three) -> None:
    answer = get(f"{three.a}uri-res/N2R?{three.skip_name}")
    assert answer.status_code == 302 and answer.headers["location"] == f"{three.c}uri-res/N2R?{three.skip_name}"
    assert httpx.get(answer.headers["location"], timeout=60).content == b"held by C: skip.example.us\n"



def test_n2ls_lists_no_resolver_that_sends_the_name_back_and_says_why_in_a_comment(three: Three) -> None:
    """RFC 2169 §4.2: N2Ls answers the URLs of the resource; B's only sends the reader back to A, so it is none of
    them. It is said in a comment line (text/uri-list, RFC 2483 §5: a line starting with '#'), never listed."""
    answer = get(f"{three.a}uri-res/N2Ls?{three.skip_name}")
    assert answer.status_code == 200 and answer.headers["content-type"].startswith("text/uri-list")
    lines = answer.text.split("\r\n")
    urls = [line for line in lines if line and not line.startswith("#")]
    assert urls == [f"{three.c}uri-res/N2R?{three.skip_name}"]
    comments = [line for line in lines if line.startswith("#")]
    assert any(f"{three.b} → {three.a}" in line for line in comments), comments


def test_n2ls_of_a_series_every_resolver_sends_back_is_508_as_n2r_is(three: Three) -> None:
    answer = get(f"{three.a}uri-res/N2Ls?{_name('loop.example.us')}")
    assert answer.status_code == 508 and answer.headers["content-type"] == "application/problem+json"
    assert f"{three.b} → {three.a}" in answer.json()["detail"]


def test_the_mirror_is_still_chosen_when_the_authority_is_down(three: Three) -> None:
    answer = get(f"{three.a}uri-res/N2R?{three.over_name}")
    assert answer.status_code == 302 and answer.headers["location"] == f"{three.c}uri-res/N2R?{three.over_name}"
    assert httpx.get(answer.headers["location"], timeout=60).content == b"held by C: over.example.us\n"


def test_the_authority_down_and_the_mirror_sending_it_back_is_a_503_saying_both(three: Three) -> None:
    """The authority may come back: 503 with Retry-After (not 508), the loop said too."""
    answer = get(f"{three.a}uri-res/N2R?{_name('fail.example.us')}")
    assert answer.status_code == 503 and answer.headers["retry-after"] == "30" and "location" not in answer.headers
    detail = answer.json()["detail"]
    assert f"every resolver known for fail.example.us is down ({three.dead})" in detail, detail
    assert f"send its names back ({three.b} → {three.a})" in detail, detail


def test_a_route_probe_is_answered_where_a_reader_would_go_never_stored(three: Three) -> None:
    """Asked with PDI-Route-Probe, a resolver answers as it would a reader, without probing onward (else A and B
    would probe each other for ever), and says no cache may keep it."""
    answer = get(f"{three.b}uri-res/N2L?{_name('loop.example.us')}", **{"PDI-Route-Probe": "1"})
    assert answer.status_code == 302 and answer.headers["location"] == f"{three.a}uri-res/N2L?{_name('loop.example.us')}"
    assert answer.headers["cache-control"] == "no-store"


class _Counting(http.server.BaseHTTPRequestHandler):
    """A resolver that holds every series (404 for the names it is asked) and counts the probes (PDI-Route-Probe)."""

    probes: ClassVar[list[str]] = []

    def do_HEAD(self) -> None:
        if self.headers.get("PDI-Route-Probe"):
            type(self).probes.append(self.path)
        self.send_response(404 if self.path.startswith("/uri-res/") else 200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


def test_what_a_resolver_answers_for_a_series_is_probed_once_and_kept(tmp_path: Path) -> None:
    location = tmp_path / "d"
    with Archive.init(str(location)) as archive:
        archive.add_series("d.example.us")
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Counting)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        holder = f"http://127.0.0.1:{server.server_address[1]}/"
        write_registry_file(location / "registry.json", Registry({"e.example.us": (holder,)}))
        with serving(location, "--workers", "1") as (_, port):  # each worker keeps its own
            for service in ("N2R", "N2L", "N2R"):
                answer = get(f"http://127.0.0.1:{port}/uri-res/{service}?{_name('e.example.us')}")
                assert answer.status_code == 302 and answer.headers["location"].startswith(holder)
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
    # whether it is up (HEAD of its base URL, with the header too: the answer says whether it is this resolver
    # itself, pdi.federation.authorities), then what it answers for the series: each once, then kept
    assert _Counting.probes == ["/", "/uri-res/N2L?urn:pdi://e.example.us/1900/01/01/pdi-route-probe.text.1"]
