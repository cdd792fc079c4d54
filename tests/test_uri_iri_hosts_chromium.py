"""An IRI's web host beyond ASCII becomes the host Chromium's URL parser writes: IDNA's ASCII form (RFC 3987 §3.1).

``iri_to_uri("http://bücher.example/")`` gave ``http://b%C3%BCcher.example/``, a host no DNS resolver knows; a
browser asks for ``xn--bcher-kva.example``. Each IRI here is read by Chromium (``new URL(iri).hostname``, Debian's
Chromium over the DevTools protocol) and by :func:`pdi.uri.iri_to_uri`: the same host, and a host Chromium refuses
is a :class:`~pdi.errors.ParseError` (rule ``ireg-name``). Where the URL Standard keeps what RFC 3986 has no room for
in a host name (a space, ``"``, ``{``) pdi refuses it: those characters are left out of the property's alphabet.
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
from pdi.capture.browser import Pipe, devtools
from pdi.errors import ParseError
from pdi.uri import iri_to_uri, parse

CASES = [
    "http://bücher.example/", "http://BÜCHER.Example:8080/x", "https://straße.de/", "http://ПРИМЕР.рф/",
    "http://例え.jp/", "http://😀.example/", "ws://bücher.example/", "wss://u:p@bücher.example/", "ftp://ü/",
    "file://bücher/x", "http://résumé.example.org", "http://a_b.ü/", "http://-ü-.ex/", "http://ab--ü.ex/",
    "http://ü%41.ex/", "http://ü\u00ad.x/", "http://a.b\u3002ü/", "http://ü./", "http://xn--zca.ü/",
    "http://XN--ZCA.ü/", "http://１２７.０.０.１/", "http://１２７.0.0.1ü/", "http://ü!$&.x/", "http://é.example:/",
    # refused by Chromium
    "http://xn--a.ü/", "http://xn--ss-.ü/", "http://ü.xn--/", "http://ü%zz.ex/", "http://ü%C3.ex/", "http://ü%25x/",
    "http://ü<.ex/", "http://ü\u200d.ex/", "http://a\u200db.ü/", "http://\u05d0.1ü/", "http://1.\u05e2\u05d1/",
    "http://\u0301ü/", "http://\u00ad/", "http://ü.1.2.3/", "http://ü.0x/", "http://⒈x/",
]


@pytest.fixture(scope="module")
def chromium() -> Iterator[tuple[Pipe, str]]:
    with devtools() as pipe:
        yield pipe, new_tab(pipe)


def chromium_hosts(chromium: tuple[Pipe, str], iris: list[str]) -> list[str | None]:
    """Each IRI's host as Chromium's URL parser writes it (``None``: it refuses the URL)."""
    pipe, session = chromium
    probe = f"""({json.dumps(iris)}).map((r) => {{ try {{ return new URL(r).hostname; }}
        catch (e) {{ return null; }} }})"""
    answer: Any = pipe.call("Runtime.evaluate", {"expression": probe, "returnByValue": True}, session,
                            time.monotonic() + 60)
    return list(answer["result"]["value"])


def ours(iri: str) -> str | None:
    try:
        uri = iri_to_uri(iri)
    except ParseError as exc:
        assert exc.rule == "ireg-name", exc
        return None
    assert uri.isascii()
    return parse(uri).host


def test_hosts_beyond_ascii_are_written_as_chromium_writes_them(chromium: tuple[Pipe, str]) -> None:
    for iri, browser in zip(CASES, chromium_hosts(chromium, CASES), strict=True):
        assert ours(iri) == browser, iri


_PIECE = st.sampled_from(["a", "z", "0", "1", "-", "ü", "ß", "Ü", "é", "e\u0301", "\u0301", "Д", "я", "日本", "π", "Σ",
                          "ς", "\u05d0", "\u05d1", "\u0627", "\u0661", "\u200c", "\u200d", "\u00ad", "😀", "ﬁ", "Ａ",
                          "１", "%C3%BC", "%41", "%C3", "xn--", "xn--zca", "_", "~", "!", "\u0915\u094d"])
_LABEL = st.lists(_PIECE, min_size=0, max_size=4).map("".join)
_DOT = st.sampled_from([".", ".", ".", "\u3002", "\uff0e"])


@st.composite
def _hosts(draw: st.DrawFn) -> str:
    labels = draw(st.lists(_LABEL, min_size=1, max_size=4))
    host = labels[0]
    for label in labels[1:]:
        host += draw(_DOT) + label
    return host if not host.isascii() else host + "ü"


@settings(max_examples=10, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(_hosts(), min_size=50, max_size=50), st.sampled_from(["http", "https", "ws", "ftp"]))
def test_property_iri_to_uri_reads_a_web_host_as_chromium(
    chromium: tuple[Pipe, str], hosts: list[str], scheme: str,
) -> None:
    iris = [f"{scheme}://{host}/p" for host in hosts]
    for iri, browser in zip(iris, chromium_hosts(chromium, iris), strict=True):
        assert ours(iri) == browser, iri


def chromium_hrefs(chromium: tuple[Pipe, str], iris: list[str]) -> list[str | None]:
    """Each IRI as Chromium's URL parser writes it whole (``None``: it refuses it)."""
    pipe, session = chromium
    probe = f"""({json.dumps(iris)}).map((r) => {{ try {{ return new URL(r).href; }}
        catch (e) {{ return null; }} }})"""
    answer: Any = pipe.call("Runtime.evaluate", {"expression": probe, "returnByValue": True}, session,
                            time.monotonic() + 60)
    return list(answer["result"]["value"])


_BEYOND = st.sampled_from(["é", "ß", "日本", "Д", "π", "😀", "\u05d0", "\U00010300", "\u3000", "\u00a0"])
_CHAR = st.one_of(st.sampled_from(list("abcxyz019-_~!$&()*+,;=:@")), _BEYOND, st.sampled_from(["%41", "%C3%A9"]))
_SEGMENT = st.lists(_CHAR, min_size=1, max_size=5).map("".join)


@st.composite
def _web_iris(draw: st.DrawFn) -> str:
    """An http(s) or ws IRI where the URL Standard and RFC 3986 agree: a host of letters first (no label a number),
    no dot segments, a path, and in the query no "'" (which the URL Standard escapes there)."""
    labels = st.lists(st.sampled_from(["a", "x", "b\u00fc", "\u00e9", "\u65e5\u672c", "\u0434", "z9"]), min_size=1,
                      max_size=3).map(".".join)
    out = draw(st.sampled_from(["http", "https", "ws"])) + "://" + draw(labels)
    out += "".join("/" + segment for segment in draw(st.lists(_SEGMENT, min_size=1, max_size=3)))
    if draw(st.booleans()):
        out += "?" + draw(st.lists(st.one_of(_CHAR, st.sampled_from(["/", "?", "\ue000"])), max_size=6).map("".join))
    if draw(st.booleans()):
        out += "#" + draw(st.lists(st.one_of(_CHAR, st.sampled_from(["/", "?", "#"])), max_size=6).map("".join))
    return out


@settings(max_examples=10, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(_web_iris(), min_size=50, max_size=50))
def test_property_a_web_iri_maps_to_the_url_chromium_writes(chromium: tuple[Pipe, str], iris: list[str]) -> None:
    """Where the URL Standard and RFC 3986 agree, iri_to_uri writes the URL a browser asks for: each character
    beyond ASCII of the path, query and fragment its UTF-8 escaped in upper case, the host IDNA's (hunted with
    20,000 IRIs of a wider alphabet)."""
    for iri, browser in zip(iris, chromium_hrefs(chromium, iris), strict=True):
        assert browser is not None, iri
        assert iri_to_uri(iri) == browser, iri
