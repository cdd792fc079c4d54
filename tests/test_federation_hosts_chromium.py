"""A resolver's host read as the reader's browser reads it: Chromium's URL parser (WHATWG URL §3.5) the oracle.

A resolver is sent readers by a ``302`` to a base URL a registry or the DNS
names; the browser then reads its host with the WHATWG host parser, in which a
host whose last label is a number is an IPv4 address (``127.1``,
``0x7f.0.0.1``, ``2130706433``, ``127.0.0.1.`` are ``127.0.0.1``) and one that is
none refuses the URL. :func:`pdi._addresses.browser_ipv4` must read each as
``new URL("http://" + host + "/").hostname`` does in Debian's Chromium (over the
DevTools protocol): the address it writes, the domain kept (``None``: no
address), or a refusal where the browser refuses.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chromium_helpers import new_tab
from pdi._addresses import browser_ipv4
from pdi.capture.browser import Pipe, devtools
from pdi.errors import ParseError

CASES = ["127.1", "0x7f.0.0.1", "2130706433", "017700000001", "0x7f000001", "127.0.0.1.", "127.1.", "0X7F.1", "0x",
         "0x.0.0.1", "1.2.3.0x", "4294967295", "4294967296", "1.16777215", "1.16777216", "1.2.3.256", "256.1.1.1",
         "1.2.3.4.5", "08", "1.2.3.09", "1..2", "a.0x1", "9" * 60, "0x" + "0" * 60 + "1", "example.org",
         "example.org.", "00x1", "127.0.0.1..", "a1", "1a"]


@pytest.fixture(scope="module")
def chromium() -> Iterator[tuple[Pipe, str]]:
    with devtools() as pipe:
        yield pipe, new_tab(pipe)


def chromium_hosts(chromium: tuple[Pipe, str], hosts: list[str]) -> list[str | None]:
    """Each host as Chromium's URL parser writes it in ``http://HOST/`` (``None``: it refuses the URL)."""
    pipe, session = chromium
    probe = f"""({json.dumps(hosts)}).map((h) => {{ try {{ return new URL("http://" + h + "/").hostname; }}
        catch (e) {{ return null; }} }})"""
    answer: Any = pipe.call("Runtime.evaluate", {"expression": probe, "returnByValue": True}, session,
                            time.monotonic() + 60)
    return list(answer["result"]["value"])


def ours(host: str) -> str | None:
    """``host`` as :func:`browser_ipv4` reads it (lower-cased first, as the browser's domain to ASCII does), written as
    the browser writes a host (``None``: refused)."""
    host = host.lower()
    try:
        address = browser_ipv4(host)
    except ParseError:
        return None
    return host if address is None else str(address)


def test_each_spelling_is_read_as_chromium_reads_it(chromium: tuple[Pipe, str]) -> None:
    for host, browser in zip(CASES, chromium_hosts(chromium, CASES), strict=True):
        assert ours(host) == browser, host


_HOSTISH = st.text(alphabet="0123456789abcdefxX.", min_size=1, max_size=20)


@settings(max_examples=10, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(_HOSTISH, min_size=100, max_size=100))
def test_property_a_host_of_digits_and_dots_is_read_as_chromium_reads_it(chromium: tuple[Pipe, str],
                                                                         hosts: list[str]) -> None:
    for host, browser in zip(hosts, chromium_hosts(chromium, hosts), strict=True):
        assert ours(host) == browser, host
