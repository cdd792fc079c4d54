"""Resolution across archives as a hostile peer meets it (issue 27 §4): DNS servers that fail, zones that loop,
registries replayed, authorities that take a connection and never answer. Each against real parts: dnsmasq on
127.0.0.1, real sockets, signed registries."""

from __future__ import annotations

import http.server
import socket

import pytest

from pdi.errors import RemoteError
from pdi.federation.naptr import NaptrFinder
from support.dnsnode import dnsmasq

URN = "urn:pdi://a.example.us/2026/11/20/1.text.1"


def _dead_port() -> int:
    """A UDP and TCP port of 127.0.0.1 nothing listens on (bound, then let go)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as udp:
        udp.bind(("127.0.0.1", 0))
        return int(udp.getsockname()[1])


def test_a_dns_server_that_cannot_answer_is_a_remote_error_never_kept_as_no_records() -> None:
    """Found by an attack (2026-11-28): a DNS server that could not answer (its upstream dead: dnsmasq forwarding
    the series' domain to a port nothing listens on, so the query times out) was read as "no NAPTR records" and kept
    so for 60 s: the resolver answered ``404`` (known nowhere) for every name of the series, a minute after the DNS
    was back. A failure is a :class:`RemoteError` naming the DNS server and the domain, each time it is asked
    (kept as a failure, never as an answer); a domain the server says it has nothing for is still no records."""
    with dnsmasq([f"--server=/a.example.us/127.0.0.1#{_dead_port()}",
                  "--naptr-record=b.example.us,100,10,U,THTTP+N2R,!^.*$!http://r.example.org/!"]) as node:
        finder = NaptrFinder(node.server, timeout=0.5)
        for _ in range(2):  # asked again: still the failure, not an empty answer kept
            with pytest.raises(RemoteError) as caught:
                finder.services("a.example.us", URN)
            said = str(caught.value)
            assert "a.example.us" in said and node.server in said and "NAPTR" in said
        assert [s.base for s in finder.services("b.example.us", URN)] == ["http://r.example.org/"]
        assert finder.services("nobody.example.us", URN) == []  # REFUSED: nothing there, no failure


def _answering(status: int) -> type:
    import http.server

    class Answers(http.server.BaseHTTPRequestHandler):
        def do_HEAD(self) -> None:
            self.send_response(status)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    return Answers


def test_a_resolver_that_takes_a_connection_and_says_nothing_or_502_is_down() -> None:
    """Found by an attack (2026-11-28): a resolver was up when a TCP connection opened, so one that takes the
    connection and never answers (a socket listening, never accepting) and a proxy whose resolver behind it is down
    (``502``) were up, and the reader was sent there. Up is an answer other than ``5xx`` within the probe's time."""
    from pdi.federation.authorities import Authorities, Candidate
    from support.handler_server import handler_server

    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as hung, handler_server(_answering(502)) as proxy, \
            handler_server(_answering(404)) as mirror:
        hung.bind(("127.0.0.1", 0))
        hung.listen(8)
        silent = f"http://127.0.0.1:{hung.getsockname()[1]}/"
        authorities = Authorities(None, [], None)
        assert authorities.is_up(silent) is False
        assert authorities.is_up(proxy) is False
        assert authorities.is_up(mirror) is True  # it answers: a resolver may say 404 of its base URL
        assert authorities.first_up([Candidate(silent, "registry"), Candidate(proxy, "registry"),
                                     Candidate(mirror, "registry")]) == Candidate(mirror, "registry")


def test_a_registry_replayed_older_than_the_one_held_is_refused_and_the_held_one_kept(
        tmp_path: object, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    """Found by an attack (2026-11-28): a registry loaded again took any document the key had ever signed, so
    whoever serves the registry's URL (its host, or anyone on the path of an ``http:`` one) could send an older
    one, signed and all, and point a series back at a resolver its authority had left. One ``issued`` before the
    one held is refused (the one held kept, the refusal logged naming both times); one issued later is taken."""
    from pathlib import Path

    from pdi.federation import authorities
    from pdi.federation.authorities import RegistrySource
    from pdi.federation.registry import Registry, sign_registry
    from pdi.signing import SigningKey

    assert isinstance(tmp_path, Path)
    monkeypatch.setattr(authorities, "MIN_RELOAD", 0.0)  # each current() looks at the file again
    key = SigningKey.generate()
    old = sign_registry(key, Registry({"a.example.us": ("https://left.example/",)}), "2026-11-20T10:00:00Z")
    held = sign_registry(key, Registry({"a.example.us": ("https://now.example/",)}), "2026-11-25T10:00:00Z")
    newer = sign_registry(key, Registry({"a.example.us": ("https://next.example/",)}), "2026-11-26T10:00:00Z")
    where = tmp_path / "registry.jws"
    where.write_text(held)
    source = RegistrySource(str(where), [key.public])
    assert source.current().resolvers("a.example.us") == ("https://now.example/",)
    where.write_text(old + "\n")  # another size: seen as changed
    with caplog.at_level("WARNING", logger="pdi.federation"):
        assert source.current().resolvers("a.example.us") == ("https://now.example/",)
    assert "2026-11-20T10:00:00Z" in caplog.text and "2026-11-25T10:00:00Z" in caplog.text
    where.write_text(newer)
    assert source.current().resolvers("a.example.us") == ("https://next.example/",)


def test_naptr_rules_that_lead_round_in_a_loop_are_a_remote_error_saying_so() -> None:
    """Found by an attack (2026-11-28): non-terminal NAPTR records (RFC 3404 §4, empty flags) that lead from one
    domain to another and back were followed 4 times and then dropped without a word: the resolver answered
    ``404`` (known nowhere), as if the zone had said nothing. Now the walk's end is a :class:`RemoteError` naming the
    domain that led on and how far; a chain that ends in a resolver within the hops is still followed."""
    records = ["--naptr-record=a.example.us,100,10,,,,b.example.us",
               "--naptr-record=b.example.us,100,10,,,,a.example.us",
               "--naptr-record=c.example.us,100,10,,,,d.example.us",
               "--naptr-record=d.example.us,100,10,U,THTTP+N2R,!^.*$!http://r.example.org/!"]
    with dnsmasq(records) as node:
        finder = NaptrFinder(node.server)
        with pytest.raises(RemoteError, match=r"lead on more than 4 times") as caught:
            finder.services("a.example.us", URN)
        assert "a.example.us" in str(caught.value) and "b.example.us" in str(caught.value)
        assert [s.base for s in finder.services("c.example.us", URN)] == ["http://r.example.org/"]


def test_a_registry_redirected_is_refused_saying_where_it_was_sent_and_that_it_is_not_followed() -> None:
    """Found by an attack (2026-11-28): a registry URL answering ``302`` (to itself, on and on, or anywhere) was
    refused as ``…: HTTP 302``, which says neither where it was sent nor that a registry's redirects are never
    followed. The refusal names both; nothing is fetched from the place it points to."""
    import http.server

    from pdi.federation.authorities import RegistrySource
    from support.handler_server import handler_server

    asked: list[str] = []

    class Redirects(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            asked.append(self.path)
            self.send_response(302)
            self.send_header("Location", "/elsewhere/registry.jws")
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    with handler_server(Redirects) as url, pytest.raises(RemoteError) as caught:
        RegistrySource(f"{url}registry.jws", [])
    said = str(caught.value)
    assert f"{url}registry.jws" in said and "/elsewhere/registry.jws" in said and "not followed" in said
    assert asked == ["/registry.jws"]


def test_a_registry_held_from_a_clock_far_ahead_does_not_hold_back_the_next(
        tmp_path: object, monkeypatch: pytest.MonkeyPatch) -> None:
    """An older registry replayed is refused (above); but one signed by a clock years ahead (2099) would then have
    held back every registry after it until 2099. One held that was issued more than a day ahead of this clock
    holds nothing back: the next registry, issued now, is taken."""
    from pathlib import Path

    from pdi.federation import authorities
    from pdi.federation.authorities import RegistrySource
    from pdi.federation.registry import Registry, sign_registry
    from pdi.signing import SigningKey

    assert isinstance(tmp_path, Path)
    monkeypatch.setattr(authorities, "MIN_RELOAD", 0.0)
    key = SigningKey.generate()
    ahead = sign_registry(key, Registry({"a.example.us": ("https://ahead.example/",)}), "2099-01-01T00:00:00Z")
    now = sign_registry(key, Registry({"a.example.us": ("https://now.example/",)}))
    where = tmp_path / "registry.jws"
    where.write_text(ahead)
    source = RegistrySource(str(where), [key.public])
    where.write_text(now + "\n")
    assert source.current().resolvers("a.example.us") == ("https://now.example/",)


class _RedirectToNoHost(http.server.BaseHTTPRequestHandler):
    """A stranger's server answering every request with a redirect to ``http://xn--/``: an A-label of no Punycode."""

    def _redirect(self) -> None:
        self.send_response(302)
        self.send_header("Location", "http://xn--/uri-res/N2R?x")
        self.send_header("Content-Length", "0")
        self.end_headers()

    do_GET = do_HEAD = _redirect

    def log_message(self, *args: object) -> None:
        pass


def test_a_redirect_to_a_host_no_a_label_decodes_is_the_stranger_s_failure_not_a_traceback() -> None:
    """Found by a hunt (2026-12-01): httpx reads a redirect's ``Location`` whether it follows it or not, and a host
    ``xn--`` (an A-label of no Punycode) is idna's ``IDNAError`` there, not httpx's ``InvalidURL``: a registry, key
    set, manifest or resolver answering so ended the fetch in a traceback (a 500 from a resolver probing it, a
    sync's end). It is the server's failure: a RemoteError naming it, a resolver that is down."""
    import httpx

    from pdi.federation.authorities import Authorities, fetch_bounded
    from pdi.network.peers import Peer
    from pdi.signing import SigningKey
    from support.handler_server import handler_server

    with handler_server(_RedirectToNoHost) as url:
        for follow in (False, True):
            with pytest.raises(RemoteError, match="cannot fetch the registry"):
                fetch_bounded(url + "registry", 1000, "the registry", follow_redirects=follow)
        assert Authorities(None, [], None).is_up(url) is False
        with httpx.Client() as client:
            peer = Peer(url, [SigningKey.generate().public], client)
            with pytest.raises(RemoteError, match="cannot fetch the manifest"):
                next(peer.manifest("a.example.us"))
