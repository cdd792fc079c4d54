"""A resolver that comes back up is found so by every worker of ``pdi serve --workers 2`` within a few seconds.

Found by a new user (2026-11-28): right after a mirror came back, the two
workers of one ``pdi serve`` answered a name of its series differently, one
``503`` (no resolver up), the other ``302`` (there), for some twenty
seconds: each worker keeps its own memory of which resolvers are down
(:mod:`pdi.federation.authorities`), and kept a ``down`` 30 s. A ``down`` is
now looked at again after :data:`~pdi.federation.authorities.DOWN_SECONDS`
(a few seconds), by one request at a time: the others go on with what is
known, so a resolver that stays down is not asked by every request.

The resolver here is a few lines of ``http.server`` that answers ``503`` to
everything while "down" and, once "up", ``200`` to ``HEAD /`` (the up/down
probe) and ``404`` to everything else (a route probe's name it does not
hold: it answers for the series itself). Which worker serves a connection
is read from ``/proc`` (``test_server_workers``'s helpers).
"""

from __future__ import annotations

import concurrent.futures
import http.server
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from server_helpers import serving

from pdi.archive import Archive
from pdi.federation import authorities, routes
from pdi.federation.authorities import DOWN_SECONDS, Authorities
from pdi.federation.routes import Routes
from support.handler_server import handler_server
from support.procnet import children, owner_of_server_end, response, wait_for, waits_for_connections

HELD = "here.example.us"
ELSEWHERE = "there.example.us"
NAME = f"urn:pdi://{ELSEWHERE}/2026/11/20/1.text.1"
#: Seconds after it came back by which every worker sends readers to it: "within a few seconds".
AGREED = 6.0


class _Resolver(http.server.BaseHTTPRequestHandler):
    """Another resolver of ``ELSEWHERE``: down (``503``) or up, as the class's ``up`` says; counts the probes."""

    up = False
    probes = 0
    lock = threading.Lock()

    def do_HEAD(self) -> None:
        if self.path == "/":
            with self.lock:
                type(self).probes += 1
        self._answer()

    def do_GET(self) -> None:
        self._answer()

    def _answer(self) -> None:
        status = (200 if self.path == "/" else 404) if self.up else 503
        self.send_response(status)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


def _one_connection_each(port: int, workers: set[int]) -> dict[int, socket.socket]:
    """A kept-alive connection to each of ``workers`` (by its pid): connections are made until each has one."""
    held: dict[int, socket.socket] = {}
    spare: list[socket.socket] = []
    try:
        for _ in range(200):
            conn = socket.create_connection(("127.0.0.1", port), timeout=30)
            conn.sendall(b"GET /api/series HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            assert response(conn)[0] == 200
            owner = owner_of_server_end(conn, workers)
            if owner in held:
                spare.append(conn)
            else:
                held[owner] = conn
            if len(held) == len(workers):
                return held
        raise AssertionError(f"the kernel gave every connection to {set(held)}")
    finally:
        for conn in spare:
            conn.close()


def _status(conn: socket.socket) -> int:
    conn.sendall(f"GET /uri-res/N2R?{NAME} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode())
    return response(conn)[0]


def test_every_worker_finds_a_resolver_back_up_within_a_few_seconds(tmp_path: Path) -> None:
    _Resolver.up, _Resolver.probes = False, 0
    location = tmp_path / "archive"
    with Archive.init(location) as archive:
        archive.add_series(HELD)
    with handler_server(_Resolver) as there:
        added = subprocess.run([sys.executable, "-m", "pdi", "registry", "add", ELSEWHERE, there,
                                "--archive", str(location)], capture_output=True, text=True, timeout=120)
        assert added.returncode == 0, added.stderr
        with serving(location, "--workers", "2") as (process, port):
            workers = children(process.pid)
            assert len(workers) == 2
            wait_for(lambda: all(waits_for_connections(pid, port) for pid in workers))
            conns = _one_connection_each(port, workers)
            try:
                # down: each worker probes it once and says so; asked again at once, it remembers (no probe each)
                assert [_status(conn) for conn in conns.values()] == [503, 503]
                assert _Resolver.probes == 2
                began = time.monotonic()
                for _ in range(10):
                    assert [_status(conn) for conn in conns.values()] == [503, 503]
                # asked 20 times: probed again only once DOWN_SECONDS have run out (by each worker), not each time
                most = 2 * (1 + int((time.monotonic() - began) // DOWN_SECONDS))
                assert _Resolver.probes <= most, (_Resolver.probes, "a resolver known to be down probed each time")
                _Resolver.up = True
                back = time.monotonic()
                found: dict[int, float] = {}
                while len(found) < len(conns) and time.monotonic() - back < 40:
                    for pid, conn in conns.items():
                        status = _status(conn)
                        assert status in (302, 503), status
                        if status == 302:
                            found.setdefault(pid, time.monotonic() - back)
                        else:
                            assert pid not in found, "a worker that found it up answered 503 again"
                    time.sleep(0.1)
                # each within a few seconds: DOWN_SECONDS after its last probe (made before it came back), its
                # probe's time, and a second for a loaded machine
                assert len(found) == 2 and max(found.values()) < AGREED, found
            finally:
                for conn in conns.values():
                    conn.close()


class _Slow(http.server.BaseHTTPRequestHandler):
    """A resolver that is down, slowly: every ``HEAD`` waits a second, then ``503``; counts them."""

    asked = 0
    lock = threading.Lock()

    def do_HEAD(self) -> None:
        with self.lock:
            type(self).asked += 1
        time.sleep(1.0)
        self.send_response(503)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


def test_a_down_looked_at_again_is_probed_by_one_request_the_others_take_what_is_known(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A ``down`` is kept a short while only; once it has run out, one request probes it again, and the others
    asking meanwhile are answered at once with what was found (down), not each held for the probe's time: a
    resolver that stays down, or hangs, costs one request's wait every DOWN_SECONDS, not every request's."""
    monkeypatch.setattr(authorities, "DOWN_SECONDS", 0.2)
    _Slow.asked = 0
    with handler_server(_Slow) as there:
        known = Authorities(None, [], None)
        assert known.is_up(there) is False and _Slow.asked == 1
        time.sleep(0.3)  # run out
        took: list[float] = []

        def ask() -> bool:
            began = time.monotonic()
            try:
                return known.is_up(there)
            finally:
                took.append(time.monotonic() - began)

        with concurrent.futures.ThreadPoolExecutor(5) as pool:
            first = pool.submit(ask)
            time.sleep(0.3)  # its probe under way
            others = [pool.submit(ask) for _ in range(4)]
            assert [f.result(timeout=30) for f in others] == [False] * 4
            assert first.result(timeout=30) is False
    assert _Slow.asked == 2, _Slow.asked
    assert len(took) == 5 and sorted(took)[3] < 0.5 and sorted(took)[4] >= 0.9, took  # four at once, one probed


def test_a_route_found_down_is_asked_again_after_down_seconds(monkeypatch: pytest.MonkeyPatch) -> None:
    """A resolver whose route probe answered ``5xx`` (a pdi resolver whose own resolvers of the series were down
    answers ``503``) is kept down DOWN_SECONDS, as a resolver found down is, not ROUTE_SECONDS: back, it is found
    so within a few seconds; a hop that answers is kept the longer time."""
    monkeypatch.setattr(routes, "DOWN_SECONDS", 0.2)
    _Resolver.up = False
    with handler_server(_Resolver) as there:
        probe = Routes(Authorities(None, [], None))
        assert probe.route(there, ELSEWHERE, (), False).down
        _Resolver.up = True
        assert probe.route(there, ELSEWHERE, (), False).down  # kept a while
        time.sleep(0.3)
        back = probe.route(there, ELSEWHERE, (), False)
        assert not back.down and not back.loops and back.resolvers == (there,)
        _Resolver.up = False
        assert not probe.route(there, ELSEWHERE, (), False).down  # an answer is kept ROUTE_SECONDS
        assert routes.ROUTE_SECONDS >= 10 * authorities.DOWN_SECONDS
