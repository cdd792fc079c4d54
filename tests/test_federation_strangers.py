"""Resolution across archives as a hostile peer meets it (issue 27 §4): DNS servers that fail, zones that loop,
registries replayed, authorities that take a connection and never answer. Each against real parts: dnsmasq on
127.0.0.1, real sockets, signed registries."""

from __future__ import annotations

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
