"""pdi's own connections to other archives look a host name up within their time (pdi._lookups.look_up_within):
``socket.getaddrinfo`` waits as long as a zone's name servers leave it unanswered (the system resolver's 30 s and
more), and the resolver's probe of another resolver (``PROBE_SECONDS``), a stranger's checked connection
(pdi._public_connect) and the answer-head client (pdi._answer_head) each waited that long.

A name server that never answers cannot be had on demand (the system resolver is the machine's, not the test's),
so ``socket.getaddrinfo`` is replaced for one name, ``slow.example``, by a lookup that waits until the test lets
it go, as tests/capture/test_capture_hostile_server.py does; every other name is looked up as it is."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator

import httpx
import pytest

from pdi import _answer_head as answer_head
from pdi import _lookups
from pdi._public_connect import addresses_within, public_addresses
from pdi.federation import authorities
from pdi.federation.authorities import Authorities, Candidate

SLOW = "slow.example"


class Slow:
    """The lookups of ``slow.example`` begun, and whether any has ended (only once the test lets them go)."""

    def __init__(self) -> None:
        self.let_go, self.ended = threading.Event(), threading.Event()
        self.begun = 0


@pytest.fixture
def slow(monkeypatch: pytest.MonkeyPatch) -> Iterator[Slow]:
    real = socket.getaddrinfo
    state = Slow()

    def lookup(host: str, *args: object, **kwargs: object) -> object:
        if host != SLOW:
            return real(host, *args, **kwargs)  # type: ignore[arg-type]
        state.begun += 1
        state.let_go.wait(timeout=30)
        state.ended.set()
        raise socket.gaierror(socket.EAI_AGAIN, "no answer")

    monkeypatch.setattr(socket, "getaddrinfo", lookup)
    try:
        yield state
    finally:
        state.let_go.set()


@pytest.fixture
def listening() -> Iterator[int]:
    with socket.create_server(("127.0.0.1", 0)) as server:
        yield int(server.getsockname()[1])


@pytest.fixture
def answering() -> Iterator[str]:
    """A resolver that answers (a probe asks for an answer, not a connection alone): its base URL."""
    import http.server

    from support.handler_server import handler_server

    class Answers(http.server.BaseHTTPRequestHandler):
        def do_HEAD(self) -> None:
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    with handler_server(Answers) as url:
        yield url


def test_a_probe_of_a_resolver_whose_name_is_never_answered_is_down_within_the_probe_s_time(
        slow: Slow, answering: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Found by an attack (2026-11-27): ``is_up`` connected with ``socket.create_connection(host)``, whose lookup
    took no time limit: a registry's (or a stranger's zone's) resolver at a name nobody answers held each request
    that probed it for the system resolver's whole timeout, past ``PROBE_SECONDS``. The next candidate, up, is
    the answer while the lookup still waits."""
    monkeypatch.setattr(authorities, "PROBE_SECONDS", 0.5)
    found = Authorities(None, [], None).first_up([Candidate(f"http://{SLOW}/", "registry"),
                                                  Candidate(answering, "registry")])
    assert found == Candidate(answering, "registry")
    assert slow.begun == 1 and not slow.ended.is_set()  # given up on, still waiting for its name server
    # a stranger's (DNS) resolver, connected to at public addresses only: the same
    assert Authorities(None, [], None).is_up(f"http://{SLOW}/", public_only=True) is False
    assert not slow.ended.is_set()


def test_a_checked_connection_gives_a_lookup_up_at_its_time_saying_so(slow: Slow) -> None:
    with pytest.raises(OSError, match=rf"^looking up {SLOW} took more than 0\.3 s$"):
        public_addresses(SLOW, 80, 0.3)
    with pytest.raises(OSError, match=rf"^looking up {SLOW} took more than 0\.3 s$"):
        addresses_within(SLOW, 80, 0.3)
    assert not slow.ended.is_set()


def test_the_answer_head_client_gives_a_lookup_up_at_its_connection_s_time(slow: Slow) -> None:
    """A registry, a key set or a peer at a name nobody answers: a connection error within the client's time."""
    for public_only in (False, True):
        with answer_head.client(5, timeout=0.3, public_only=public_only) as client, pytest.raises(
                httpx.ConnectError, match=rf"cannot resolve {SLOW}: looking up {SLOW} took more than 0\.3 s"):
            client.get(f"http://{SLOW}/")
    assert not slow.ended.is_set()


def test_lookups_given_up_on_are_let_run_but_so_many_at_once_only(
        slow: Slow, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each lookup given up on holds a thread until its name server answers or the system resolver gives up: past
    :data:`~pdi._lookups.MAX_WAITING` of them (two here), the next is refused at once, not begun."""
    monkeypatch.setattr(_lookups, "MAX_WAITING", 2)
    monkeypatch.setattr(_lookups, "_waiting", threading.BoundedSemaphore(2))
    for _ in range(2):
        with pytest.raises(OSError, match="took more than"):
            _lookups.look_up_within(SLOW, 80, 0.1)
    with pytest.raises(OSError, match=r"^cannot look up slow\.example now: as many lookups as are let run \(2\)"):
        _lookups.look_up_within(SLOW, 80, 5)
    assert slow.begun == 2
    slow.let_go.set()
    assert slow.ended.wait(10)
    # their places are given back as they end (each thread's last step): a lookup is begun again
    for _ in range(100):
        try:
            assert _lookups.look_up_within("127.0.0.1", 80, 5)[0][4][0] == "127.0.0.1"
            break
        except OSError:
            threading.Event().wait(0.05)
    else:
        raise AssertionError("the places of the lookups that ended were not given back")


def test_a_name_that_is_answered_is_looked_up_as_getaddrinfo_answers_it(listening: int) -> None:
    host = socket.gethostname()
    expected = {info[4][0] for info in socket.getaddrinfo(host, 80, type=socket.SOCK_STREAM)}
    assert {info[4][0] for info in _lookups.look_up_within(host, 80, 10)} == expected
    assert addresses_within("127.0.0.1", listening, 5) == ["127.0.0.1"]
    with pytest.raises(OSError, match="is not a host name that can be looked up"):
        _lookups.look_up_within("a..b", 80, 5)  # an empty label: the idna codec's UnicodeError, said as an OSError
