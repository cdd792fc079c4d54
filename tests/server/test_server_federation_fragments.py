"""A DNS rule (RFC 3404) is applied to the URN, never to the fragment a reader put after it.

RFC 3404 §3 applies a NAPTR rule's regexp to the Application Unique
String, which for URN resolution is the URN; a fragment is no part of a URN
(RFC 8141 §2.3.3: the f-component "is not to be taken into account" by
resolution; RFC 3986 §3.5: it is the client's, never the server's). So a
series whose rule is anchored at the end of the name (``…[0-9]+$``) sends
``…/1.text.1#line=0,1`` where it sends ``…/1.text.1``. One SQLite archive A
holds the series; C holds nothing and finds A in a dnsmasq on 127.0.0.1. And the
records are taken in their order and preference, the next one when the preferred resolver is down.
"""

from __future__ import annotations

from pathlib import Path

import httpx
from server_helpers import serving

from pdi.archive import Archive, Content
from support.dnsnode import dnsmasq

SERIES = "f.example.us"


def test_a_naptr_rule_is_applied_to_the_urn_without_its_fragment(tmp_path: Path) -> None:
    a_dir, c_dir = tmp_path / "a", tmp_path / "c"
    with Archive.init(str(a_dir)) as a:
        a.add_series(SERIES)
        name = str(a.deposit(SERIES, [Content(b"first line\r\nsecond line\r\n", "text")])[0])
    Archive.init(str(c_dir)).close()
    assert name.endswith("/1.text.1")  # a versioned name, as the rule below reads it
    with serving(a_dir) as (_, a_port):
        a_url = f"http://127.0.0.1:{a_port}/"
        # the rule matches a whole versioned name of the series, and nothing after it ($)
        rule = f"!^urn:pdi://f[.]example[.]us/[0-9/]+/[0-9]+[.][a-z-]+[.][0-9]+$!{a_url}!"
        with dnsmasq([f"--naptr-record={SERIES},100,10,U,THTTP+N2R+N2Ls,{rule}"]) as node, \
                serving(c_dir, "--dns", node.server, "--dns-private") as (_, c_port):
            c_url = f"http://127.0.0.1:{c_port}/"
            bare = httpx.get(f"{c_url}uri-res/N2R?{name}", timeout=30)
            assert bare.status_code == 302 and bare.headers["location"] == f"{a_url}uri-res/N2R?{name}"
            # the same name with a fragment (#, sent as %23): the same resolver, the fragment carried on to it
            passage = f"{name}%23line=1,2"
            answer = httpx.get(f"{c_url}uri-res/N2R?{passage}", timeout=30)
            assert answer.status_code == 302, answer.text
            assert answer.headers["location"] == f"{a_url}uri-res/N2R?{passage}"
            assert httpx.get(answer.headers["location"], timeout=30).content == b"second line\r\n"
            listed = httpx.get(f"{c_url}uri-res/N2Ls?{passage}", timeout=30)
            assert listed.status_code == 200, listed.text
            assert f"{a_url}uri-res/N2R?{name}%23line=1,2" in listed.text.splitlines()


def test_naptr_order_and_preference_and_fallover_to_the_next_resolver_when_the_first_is_down(tmp_path: Path) -> None:
    """RFC 3403 §4.1: records are taken lowest order first and, within the order that matched, lowest preference
    first; a record of a later order is never considered once one matched (the order-200 resolver below is never
    named). The preferred resolver is down (nothing listens at its port): N2R sends the reader to the next one
    of the same order, and N2Ls lists both, the preferred first."""
    import socket

    a_dir, c_dir = tmp_path / "a", tmp_path / "c"
    with Archive.init(str(a_dir)) as a:
        a.add_series(SERIES)
        name = str(a.deposit(SERIES, [Content(b"minutes\r\n", "text")])[0])
    Archive.init(str(c_dir)).close()
    later = "http://later.invalid/"
    # a port bound and never listened on: refused, and taken by no server the test starts meanwhile
    with socket.socket() as unused, serving(a_dir) as (_, a_port):
        unused.bind(("127.0.0.1", 0))
        down = f"http://127.0.0.1:{unused.getsockname()[1]}/"
        a_url = f"http://127.0.0.1:{a_port}/"
        with dnsmasq([f"--naptr-record={SERIES},200,1,U,THTTP+N2R+N2Ls,!^.*$!{later}!",
                      f"--naptr-record={SERIES},100,20,U,THTTP+N2R+N2Ls,!^.*$!{a_url}!",
                      f"--naptr-record={SERIES},100,10,U,THTTP+N2R+N2Ls,!^.*$!{down}!"]) as node, \
                serving(c_dir, "--dns", node.server, "--dns-private") as (_, c_port):
            c_url = f"http://127.0.0.1:{c_port}/"
            answer = httpx.get(f"{c_url}uri-res/N2R?{name}", timeout=30)
            assert answer.status_code == 302 and answer.headers["location"] == f"{a_url}uri-res/N2R?{name}"
            listed = httpx.get(f"{c_url}uri-res/N2Ls?{name}", timeout=30)
            urls = [line for line in listed.text.splitlines() if line and not line.startswith("#")]
            assert urls == [f"{down}uri-res/N2R?{name}", f"{a_url}uri-res/N2R?{name}"], listed.text
