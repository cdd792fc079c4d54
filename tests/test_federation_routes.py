"""The route probe (pdi.federation.routes, issue 27 §4) against real HTTP servers on loopback: what a resolver
answers for a series, read as the module's docstring says; chains followed to a resolver that answers, loops
and chains too long refused; each answer kept a while and then asked again."""

from __future__ import annotations

import http.server
import threading
import time
import types
from collections.abc import Iterator
from itertools import pairwise
from typing import ClassVar

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from pdi.federation import routes
from pdi.federation.authorities import Authorities
from pdi.federation.routes import (
    MAX_CHAIN,
    PROBE_HEADER,
    ROUTE_SECONDS,
    Hop,
    Routes,
    _hop,
    probe_name,
)

SERIES = "s.example.us"


class _Fake(http.server.BaseHTTPRequestHandler):
    """Answers a route probe as ``answers[port]`` says: ``(status, Location or None)``; counts the probes."""

    answers: ClassVar[dict[int, tuple[int, str | None]]] = {}
    asked: ClassVar[list[tuple[int, str, str | None]]] = []

    def do_HEAD(self) -> None:
        port = self.server.server_address[1]
        type(self).asked.append((port, self.path, self.headers.get(PROBE_HEADER)))
        status, location = type(self).answers.get(port, (404, None))
        self.send_response(status)
        if location is not None:
            self.send_header("Location", location)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture(autouse=True)
def _patient_probes(monkeypatch: pytest.MonkeyPatch) -> None:
    """The fakes answer at once, but a loaded machine (a CI run beside others) can keep a probe waiting past the
    resolver's 1.5 s, which would read as "down" mid-chain; what is tested here is reading answers, not the
    deadline (a refused connection is still down: test_one_that_does_not_answer_is_down)."""
    monkeypatch.setattr(routes, "PROBE_SECONDS", 30.0)


@pytest.fixture
def fakes() -> Iterator[list[str]]:
    """Six resolvers on loopback, answering 404 (holding the series) until told otherwise."""
    servers = [http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Fake) for _ in range(6)]
    threads = [threading.Thread(target=s.serve_forever, args=(0.05,), daemon=True) for s in servers]
    for thread in threads:
        thread.start()
    _Fake.answers, _Fake.asked = {}, []
    try:
        yield [f"http://127.0.0.1:{s.server_address[1]}/" for s in servers]
    finally:
        for server, thread in zip(servers, threads, strict=True):
            server.shutdown()
            server.server_close()
            thread.join()


def _port(base: str) -> int:
    return int(base.rstrip("/").rsplit(":", 1)[1])


def _sends(base: str, to: str) -> None:
    """``base`` sends the series on to ``to``, as a pdi resolver's registry would."""
    _Fake.answers[_port(base)] = (302, f"{to}uri-res/N2L?{probe_name(SERIES)}")


def _routes() -> Routes:
    return Routes(Authorities(None, [], None))


def test_a_resolver_holding_the_series_answers_itself_asked_with_the_probe_header(fakes: list[str]) -> None:
    chain = _routes().route(fakes[0], SERIES, ("http://here.example/",), public_only=False)
    assert chain.resolvers == (fakes[0],) and not chain.loops and not chain.down
    assert _Fake.asked == [(_port(fakes[0]), f"/uri-res/N2L?urn:pdi://{SERIES}/1900/01/01/pdi-route-probe.text.1",
                            "1")]


def test_a_chain_to_a_holder_within_max_chain_is_followed_one_further_is_a_loop(fakes: list[str]) -> None:
    for one, next_ in pairwise(fakes[:MAX_CHAIN]):
        _sends(one, next_)
    chain = _routes().route(fakes[0], SERIES, (), public_only=False)
    assert chain.resolvers == tuple(fakes[:MAX_CHAIN]) and not chain.loops
    _sends(fakes[MAX_CHAIN - 1], fakes[MAX_CHAIN])  # the last of them leads on too
    chain = _routes().route(fakes[0], SERIES, (), public_only=False)
    assert chain.loops and chain.resolvers == tuple(fakes[:MAX_CHAIN + 1])


def test_a_chain_back_to_this_resolver_or_round_among_others_is_a_loop(fakes: list[str]) -> None:
    here = "http://LOCALHOST:8000"  # one of this resolver's own base URLs, in another spelling
    _sends(fakes[0], fakes[1])
    _sends(fakes[1], "http://localhost:8000/")
    chain = _routes().route(fakes[0], SERIES, (here,), public_only=False)
    assert chain.loops and str(chain) == f"{fakes[0]} → {fakes[1]} → http://localhost:8000/"
    _sends(fakes[1], fakes[2])
    _sends(fakes[2], fakes[1])  # B → C → B: never back here, still round for ever
    chain = _routes().route(fakes[0], SERIES, (here,), public_only=False)
    assert chain.loops and chain.resolvers == (fakes[0], fakes[1], fakes[2], fakes[1])


@pytest.mark.parametrize(("status", "location", "kind"), [
    (508, None, "loops"),
    (503, None, "down"),
    (502, None, "down"),
    (200, None, "answers"),
    (400, None, "answers"),
    (302, "/blobs/abc", "answers"),  # to its own blobs
    (302, "/uri-res/N2R?urn:pdi://s.example.us/1900/01/01/pdi-route-probe.text.1", "answers"),  # its own N2R
    (302, "ftp://elsewhere.example/uri-res/N2L?x", "answers"),  # no resolver's URL
])
def test_what_one_answer_says(fakes: list[str], status: int, location: str | None, kind: str) -> None:
    _Fake.answers[_port(fakes[0])] = (status, location)
    chain = _routes().route(fakes[0], SERIES, (), public_only=False)
    assert chain.loops == (kind == "loops") and chain.down == (kind == "down"), chain
    assert chain.resolvers == (fakes[0],)


def test_a_resolver_that_redirects_the_probe_to_itself_as_asked_loops(fakes: list[str]) -> None:
    _sends(fakes[0], fakes[0])
    assert _routes().route(fakes[0], SERIES, (), public_only=False).loops


def test_one_that_does_not_answer_is_down(fakes: list[str]) -> None:
    import socket

    with socket.socket() as closed:  # bound, never listening: refused
        closed.bind(("127.0.0.1", 0))
        base = f"http://127.0.0.1:{closed.getsockname()[1]}/"
        chain = _routes().route(base, SERIES, (), public_only=False)
    assert chain.down and not chain.loops


def test_each_answer_is_kept_route_seconds_then_asked_again(fakes: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    ahead = [0.0]
    monkeypatch.setattr(routes, "time", types.SimpleNamespace(monotonic=lambda: time.monotonic() + ahead[0]))
    probe = _routes()
    _sends(fakes[0], fakes[1])
    for _ in range(3):
        assert probe.route(fakes[0], SERIES, (), public_only=False).resolvers == (fakes[0], fakes[1])
    assert [port for port, _, _ in _Fake.asked] == [_port(fakes[0]), _port(fakes[1])]
    _Fake.answers.clear()  # now fakes[0] holds the series itself: not seen until what was kept runs out
    assert probe.route(fakes[0], SERIES, (), public_only=False).resolvers == (fakes[0], fakes[1])
    ahead[0] = ROUTE_SECONDS + 1
    assert probe.route(fakes[0], SERIES, (), public_only=False).resolvers == (fakes[0],)
    assert len(_Fake.asked) == 3


def test_what_is_kept_is_bounded(fakes: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(routes, "MAX_KEPT", 2)
    probe = _routes()
    for n in range(5):
        probe.route(fakes[0], f"s{n}.example.us", (), public_only=False)
        assert len(probe._kept) <= 2


def test_one_answer_probes_at_most_its_budget(fakes: list[str]) -> None:
    """A chain not known to its end within the budget is followed as it is (not taken for a loop)."""
    for one, next_ in pairwise(fakes[:4]):
        _sends(one, next_)
    chain = _routes().route(fakes[0], SERIES, (), public_only=False, budget=[2])
    assert chain.resolvers == (fakes[0], fakes[1], fakes[2]) and not chain.loops
    assert len(_Fake.asked) == 2


_URLISH = st.text(alphabet=st.sampled_from("htps:/[]@?#%.0123456789abx -\\\r"), max_size=30)


@given(status=st.integers(100, 599), location=st.one_of(
    st.none(), st.text(max_size=80), _URLISH, st.builds("{}/uri-res/{}".format, _URLISH, _URLISH)))
@example(status=302, location="http://[")
@example(status=302, location="http://[x]/uri-res/N2L")
@example(status=301, location="//[::1/uri-res/N2L")
def test_any_answer_is_read_as_one_hop_never_an_error(status: int, location: str | None) -> None:
    base = "http://r.example/"
    hop = _hop(base, f"{base}uri-res/N2L?{probe_name(SERIES)}", status, location)
    assert isinstance(hop, Hop) and hop.kind in ("answers", "onward", "down", "loops")
    if hop.kind == "onward":
        assert hop.to.startswith(("http://", "https://")) and hop.to.endswith("/") and "/uri-res/" not in hop.to
