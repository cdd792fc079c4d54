"""pdi's SURT key of a CDXJ line is cdxj-indexer's, octet for octet, for every URL it keys itself.

:func:`pdi.interop.surt_key.simple_key` keys the common shape of URL itself and
answers ``None`` for any other (the export then asks cdxj-indexer). Whatever it
answers besides ``None`` must be what cdxj-indexer's ``get_url_key`` (the
``surt`` package) makes of the same URL: URLs are drawn with hosts with and
without ``www``, upper case, ports (default, other, ``0``, out of range, empty),
IDNs, IPv4 in its dotted, decimal and octal forms, IPv6, userinfo, queries in
any order and with session ids, fragments, %-escapes (of letters, ``/``, ``.``,
``%`` itself, lone and broken ones), ``.`` and ``..`` segments, empty segments
and trailing dots; and then any printable text at all after ``http://``.

``surt`` looks a host of digits and dots up with ``socket.gethostbyname_ex``
(the system's resolver); the tests give it one that reads numeric forms only
(``inet_aton``, as glibc does before asking DNS), so that nothing leaves the
machine. :func:`simple_key` leaves every such host to cdxj-indexer anyway.
"""

from __future__ import annotations

import socket
import string
from collections.abc import Iterator
from contextlib import contextmanager
from unittest import mock

from cdxj_indexer.main import CDXJIndexer
from hypothesis import given, settings
from hypothesis import strategies as st

from pdi.interop.surt_key import simple_key

_INDEXER = CDXJIndexer(output=None, inputs=[])


def _numeric_only(host: str | bytes) -> tuple[str, list[str], list[str]]:
    name = host.decode("ascii", "replace") if isinstance(host, bytes) else host
    try:
        return name, [], [socket.inet_ntoa(socket.inet_aton(name))]
    except OSError:
        raise socket.gaierror(socket.EAI_NONAME, "not a numeric address (the tests ask no resolver)") from None


@contextmanager
def _no_resolver() -> Iterator[None]:
    with mock.patch("socket.gethostbyname_ex", _numeric_only):
        yield


def _reference(url: str) -> str:
    with _no_resolver():
        return str(_INDEXER.get_url_key(url))


def _agrees(url: str) -> None:
    ours = simple_key(url)
    if ours is not None:
        assert ours == _reference(url), url


_LABEL = st.text(alphabet=string.ascii_letters + string.digits + "-_", min_size=1, max_size=8)
_HOSTS = st.one_of(
    st.builds(
        lambda www, labels, tld, end: www + ".".join(labels) + "." + tld + end,
        st.sampled_from(["", "www.", "WWW.", "www2.", "www12.", "www", "wwwx.", "www.www.", ".", "..", "w."]),
        st.lists(_LABEL, min_size=0, max_size=3),
        st.sampled_from(["com", "org", "ORG", "co.uk", "de", "x"]),
        st.sampled_from(["", ".", "..", "...", ".."]),
    ),
    st.sampled_from([
        "bücher.de", "www.bücher.de", "例え.テスト", "xn--bcher-kva.de", "ex%41mple.com", "ex%2Eample.com",
        "a..b.com", "...", "localhost", "[::1]", "[2001:db8::1]", "-", "_.x", "a.b.c.d.e.f",
    ]),
    st.builds(lambda a, b, c, d: f"{a}.{b}.{c}.{d}", *(st.integers(0, 255) for _ in range(4))),
    st.sampled_from(["127.0.0.1", "0177.0.0.1", "3232235777", "010.1", "192.168.1", "1.2.3.4.", "0"]),
)
_PORTS = st.sampled_from(["", "", ":80", ":443", ":8080", ":0080", ":0", ":", ":99999", ":65535", ":1", ":x"])
_SEGMENTS = st.one_of(
    st.sampled_from([
        "", ".", "..", "%2e", "%2e%2e", "%2F", "%2f", "%7E", "%7e", "%25", "%2525", "%", "%zz", "%4", "a b", "A",
        "Index.HTML", "ü", "%C3%BC", "index.aspx", "(S(abcdefghijklmnopqrstuvwx))", "(abcdefghijklmnopqrstuvwx)",
        "%23", "%3F", "%20", ";p=1", "~user", "a'b\"c", "[x]", "{y}", "|", "^", "`",
    ]),
    st.text(alphabet=string.ascii_letters + string.digits + "-._~!$&'()*+,;=:@%", max_size=6),
)
_PATHS = st.builds(lambda s, end: "/" + "/".join(s) + end if s or end else "",
                   st.lists(_SEGMENTS, max_size=5), st.sampled_from(["", "/", "//"]))
_ARGUMENTS = st.one_of(
    st.sampled_from([
        "a=1", "b=2", "B=2", "a", "a=", "=", "", "a=1=2", "x=%41", "x=%2526", "y=%zz", "q=a+b", "q=a%20b", "Z",
        "jsessionid=0123456789abcdef0123456789ABCDEF", "phpsessid=0123456789abcdef0123456789abcdef",
        "sid=0123456789abcdef0123456789abcdef", "ASPSESSIONIDabcdefgh=abcdefghijklmnopqrstuvwx",
        "cfid=1&cftoken=2", "sid=short", "é=1", "k=v?w",
    ]),
    st.builds(lambda k, v: k + "=" + v, _LABEL, st.text(alphabet=string.ascii_letters + string.digits + "%", max_size=4)),
)
_QUERIES = st.one_of(st.just(""), st.just("?"), st.builds(lambda a: "?" + "&".join(a), st.lists(_ARGUMENTS, max_size=5)))
_FRAGMENTS = st.sampled_from(["", "#", "#top", "#a?b=1", "#x#y", "#%41", "#:~:text=a"])


@settings(max_examples=1500, deadline=None)
@given(
    st.sampled_from(["http", "https", "http", "https", "HTTP", "Https", "ftp", "http://http", "https://https"]),
    st.sampled_from(["", "", "", "user@", "u:p@", "@", "a:b:c@"]),
    _HOSTS, _PORTS, _PATHS, _QUERIES, _FRAGMENTS,
)
def test_the_key_of_a_url_of_any_shape_is_cdxj_indexers(
    scheme: str, userinfo: str, host: str, port: str, path: str, query: str, fragment: str
) -> None:
    _agrees(f"{scheme}://{userinfo}{host}{port}{path}{query}{fragment}")


_PLAIN = string.ascii_letters + string.digits + "-._~!$&'()*+,;=:@"
_ESCAPES = st.builds(lambda h: "%" + h, st.text(alphabet="0123456789abcdefABCDEFxz%", min_size=0, max_size=2))
_PLAIN_SEGMENTS = st.lists(st.one_of(st.text(alphabet=_PLAIN, max_size=4), _ESCAPES,
                                     st.sampled_from(["", ".", "..", "%2e", "%2F", "%25", "A.aspx"])), max_size=4)
_PLAIN_ARGUMENTS = st.lists(st.one_of(
    st.text(alphabet=_PLAIN.replace("&", ""), max_size=4), _ESCAPES,
    st.sampled_from(["jsessionid=0123456789abcdef0123456789ABCDEF", "PHPSESSID=0123456789abcdef0123456789abcdef",
                     "sid=x", "cfid=1", "b=1", "a=1", "a", "=", "%26", "%3D"]),
), max_size=4)


@settings(max_examples=2000, deadline=None)
@given(
    st.sampled_from(["http", "https"]),
    st.sampled_from(["", "www.", "WWW.", "www2.", "www.www.", ".", "sub."]),
    st.lists(_LABEL, min_size=1, max_size=3),
    st.sampled_from(["", ".", "..", ".com", ".Org", ".co.uk"]),
    st.one_of(st.just(""), st.integers(0, 99999).map(lambda n: f":{n}"), st.sampled_from([":80", ":443", ":0443"])),
    st.one_of(st.just(""), st.builds(lambda s, end: "/" + "/".join(s) + end, _PLAIN_SEGMENTS,
                                     st.sampled_from(["", "/"]))),
    st.one_of(st.just(""), st.builds(lambda a: "?" + "&".join(a), _PLAIN_ARGUMENTS)),
    st.sampled_from(["", "#", "#a", "#a?b/c"]),
)
def test_the_key_of_a_plain_url_is_cdxj_indexers(
    scheme: str, www: str, labels: list[str], end: str, port: str, path: str, query: str, fragment: str
) -> None:
    """URLs of the shape :func:`simple_key` keys itself (most of them are: this is where it must be right)."""
    _agrees(f"{scheme}://{www}{'.'.join(labels)}{end}{port}{path}{query}{fragment}")


@settings(max_examples=1500, deadline=None)
@given(st.sampled_from(["http://", "https://", "http://www.", ""]), st.text(alphabet=st.characters(
    min_codepoint=0, max_codepoint=0x2FF), max_size=40))
def test_the_key_of_any_text_after_a_scheme_is_cdxj_indexers(scheme: str, rest: str) -> None:
    _agrees(scheme + rest)


@settings(max_examples=800, deadline=None)
@given(st.text(alphabet=string.printable, max_size=60))
def test_the_key_of_printable_text_is_cdxj_indexers(rest: str) -> None:
    _agrees("http://" + rest)


def test_the_common_shapes_are_keyed_here_not_left_to_cdxj_indexer() -> None:
    """The URLs an export meets most are keyed by :func:`simple_key` (the export's speed depends on it)."""
    for url in [
        "http://example.org/", "https://www.example.org/a/b.png", "http://site3.example.org/p3/i1.png?v=2&a=1",
        "https://Example.ORG:8443/%7Euser/../x%20y/#top", "http://www.example.com", "https://a.b.example.co.uk/?",
        "http://example.org/a//b/./c/", "https://example.org:443/q?b=2&a=1&a=0",
    ]:
        key = simple_key(url)
        assert key is not None, url
        assert key == _reference(url), url


def test_known_keys() -> None:
    """Keys worked out by hand from surt's rules (and what cdxj-indexer gives for them)."""
    assert simple_key("http://www.Example.com/A/b/../C/?b=2&a=1#x") == "com,example)/a/c?a=1&b=2"
    assert simple_key("https://example.org:443") == "org,example)/"
    assert simple_key("http://example.org:8080/%7Euser") == "org,example:8080)/~user"
    assert simple_key("http://www2.x.com./a//b/") == "com,x)/a/b"
    for url in ["http://user@example.org/", "http://127.0.0.1/", "http://[::1]/", "http://bücher.de/",
                "http://example.org/x.aspx", "http://example.org/?jsessionid=1", "http://example.org:0/",
                "http://example.org:70000/", "http://https://example.org/", "http://example.org/a b"]:
        assert simple_key(url) is None, url
        assert isinstance(_reference(url), str)
