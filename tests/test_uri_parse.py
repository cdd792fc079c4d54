"""Strict parsing (RFC 3986 Appendix A), lenient splitting (Appendix B) and the URI value."""

from __future__ import annotations

import dataclasses

import pytest

from pdi.errors import ParseError
from pdi.uri import URI, parse, split


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", URI()),
        ("#", URI(fragment="")),
        ("?", URI(query="")),
        ("//", URI(host="")),
        ("///", URI(host="", path="/")),
        ("a:", URI("a")),
        ("a:?#", URI("a", query="", fragment="")),
        ("file:///etc/hosts", URI("file", None, "", None, "/etc/hosts")),
        ("http://@h:/", URI("http", "", "h", "", "/")),
        ("http://u:p@h:8080/x", URI("http", "u:p", "h", "8080", "/x")),
        ("s://[::1]", URI("s", None, "[::1]")),
        ("s://[::1]:", URI("s", None, "[::1]", "")),
        ("s://[v7.a:b]:9/", URI("s", None, "[v7.a:b]", "9", "/")),
        ("s://[V1F.x]", URI("s", None, "[V1F.x]")),
        ("./a:b", URI(path="./a:b")),
        ("a/b:c", URI(path="a/b:c")),
        ("/a:b", URI(path="/a:b")),
        ("x:/a?b?c/d#e?f/g", URI("x", path="/a", query="b?c/d", fragment="e?f/g")),
        ("urn:pdi://oma.eop.gov.us/1997/01/27/3.txt.1", URI("urn", path="pdi://oma.eop.gov.us/1997/01/27/3.txt.1")),
        ("pdi://oma.eop.gov.us/1997/01/27/3", URI("pdi", None, "oma.eop.gov.us", None, "/1997/01/27/3")),
        ("h://%41%7e@%2F.x/%2f", URI("h", "%41%7e", "%2F.x", None, "/%2f")),
        ("A+b-C.9:x", URI("A+b-C.9", path="x")),
        ("thismessage:/images/a.gif", URI("thismessage", path="/images/a.gif")),
        ("cid:foo4*foo1@bar.net", URI("cid", path="foo4*foo1@bar.net")),
    ],
)
def test_parse_components(text: str, expected: URI) -> None:
    uri = parse(text)
    assert uri == expected
    assert str(uri) == text
    assert split(text) == expected


@pytest.mark.parametrize(
    "host",
    [
        "::",
        "::1",
        "1::",
        "1:2:3:4:5:6:7:8",
        "1:2:3:4:5:6:7::",
        "::2:3:4:5:6:7:8",
        "1::8",
        "1:2:3:4:5:6:1.2.3.4",
        "::1.2.3.4",
        "::ffff:192.0.2.128",
        "1:2:3:4:5::1.2.3.4",
        "ABCD:ef01:2345:6789:abcd:EF01:2345:6789",
        "0:0:0:0:0:0:0:0",
        "1::2:3:4:5:6:7",
        "fe80::1:255.255.255.255",
    ],
)
def test_rfc3986_3_2_2_ipv6_valid(host: str) -> None:
    uri = parse(f"http://[{host}]/")
    assert uri.host == f"[{host}]"
    assert uri.host_type == "ipv6"


@pytest.mark.parametrize(
    ("host", "rule"),
    [
        ("", "h16"),
        (":", "h16"),
        (":::", "IPv6address"),
        ("1:2:3:4:5:6:7", "IPv6address"),
        ("1:2:3:4:5:6:7:8:9", "IPv6address"),
        ("1:2:3:4:5:6:7:8::", "IPv6address"),
        ("1::2::3", "IPv6address"),
        ("1:2:3:4:5:6:7::8", "IPv6address"),
        ("12345::", "h16"),
        ("g::", "h16"),
        (":1::", "h16"),
        ("1::2:", "h16"),
        ("1:2:3:4:5:6::1.2.3.4", "IPv6address"),
        ("::1.2.3", "IPv4address"),
        ("::1.2.3.256", "IPv4address"),
        ("::01.2.3.4", "IPv4address"),
        ("::1.2.3.4:1", "IPv6address"),  # nothing follows the IPv4 address
        ("1.2.3.4::", "IPv6address"),  # an IPv4 address only at the end
        ("1:2:3:4:5:6:7:1.2.3.4", "IPv6address"),
    ],
)
def test_rfc3986_3_2_2_ipv6_invalid(host: str, rule: str) -> None:
    with pytest.raises(ParseError) as info:
        parse(f"http://[{host}]/")
    assert info.value.rule == rule
    assert info.value.offset is not None
    assert 8 <= info.value.offset <= 8 + len(host)


@pytest.mark.parametrize(("host", "rule"), [("1" * 65_536, "h16"), ("g" * 65_536, "h16"),
                                           ("::" + "9" * 65_536 + ".1.1.1", "IPv4address")])
def test_a_long_piece_of_an_ipv6_address_is_quoted_by_its_start_and_end(host: str, rule: str) -> None:
    # what a stranger wrote is named, not copied whole into the message (64 KiB of it here)
    with pytest.raises(ParseError) as info:
        parse(f"http://[{host}]/")
    assert info.value.rule == rule
    assert len(str(info.value)) < 500 and "characters left out" in str(info.value)


@pytest.mark.parametrize(
    ("host", "kind"),
    [
        ("192.0.2.16", "ipv4"),
        ("0.0.0.0", "ipv4"),
        ("255.255.255.255", "ipv4"),
        ("256.0.0.1", "reg-name"),  # §3.2.2: not an IPv4address, so a reg-name
        ("01.2.3.4", "reg-name"),
        ("1.2.3", "reg-name"),
        ("example.com", "reg-name"),
        ("", "reg-name"),
    ],
)
def test_rfc3986_3_2_2_ipv4_or_reg_name(host: str, kind: str) -> None:
    assert parse(f"http://{host}/").host_type == kind


@pytest.mark.parametrize(
    ("text", "offset", "rule"),
    [
        ("1http://a", 0, "scheme"),
        ("h_t:x", 1, "scheme"),
        (":x", 0, "path-noscheme"),
        ("a b", 1, "path"),
        ("http://a b/", 8, "reg-name"),
        ("http://a/b c", 10, "path"),
        ("http://a/%zz", 9, "path"),
        ("http://a/%4", 9, "path"),
        ("http://a?b c", 10, "query"),
        ("http://a#b#c", 10, "fragment"),
        ("http://a#b c", 10, "fragment"),
        ("http://u@v@h/", 8, "userinfo"),
        ("http://u[@h/", 8, "userinfo"),
        ("http://h:8x/", 10, "port"),
        ("http://h:1:2/", 10, "port"),
        ("http://[::1/", 11, "IP-literal"),
        ("http://[::1]x/", 12, "authority"),
        ("http://]/", 7, "reg-name"),
        ("http://[v1]/", 10, "IPvFuture"),
        ("http://[v.x]/", 9, "IPvFuture"),
        ("http://[vz.x]/", 9, "IPvFuture"),
        ("http://[v1.]/", 11, "IPvFuture"),
        ("http://[v1.x/]/", 12, "IP-literal"),
        # an IPv6 address: the character no address holds after what comes before it, not the group's start
        ("http://[12g4::]/", 10, "h16"),
        ("http://[12345::]/", 12, "h16"),  # the fifth digit
        ("http://[::1%25eth0]/", 11, "h16"),  # RFC 6874's zone identifier is no part of RFC 3986
        ("http://[:1::]/", 9, "h16"),  # a single ':' first: it may only be '::'
        ("http://[1::2::3]/", 13, "IPv6address"),  # "1::2:" may still go on; "1::2::" may not
        ("http://[1:2:3:4:5:6:7:8:9]/", 23, "IPv6address"),  # nothing after eight groups, not even ':'
        ("http://[::1.2.3.256]/", 18, "IPv4address"),  # "25" may be an octet, "256" may not
        ("http://[::01.2.3.4]/", 12, "IPv4address"),  # "01" may be a group, "01." no octet
        ("http://[1:2:3:4:5:6:7::8]/", 23, "IPv6address"),  # "::" for no group at all
        ("http://a/é", 9, "path"),
        ("x:\u0000", 2, "path"),
        ("x:[a]", 2, "path"),
        ("%", 0, "path"),
    ],
)
def test_parse_errors_name_rule_and_offset(text: str, offset: int, rule: str) -> None:
    with pytest.raises(ParseError) as info:
        parse(text)
    assert info.value.rule == rule
    assert info.value.offset == offset
    assert info.value.text == text
    assert f"offset {offset}" in str(info.value)


def test_parse_error_messages_say_what() -> None:
    with pytest.raises(ParseError, match=r"character ' ' is not allowed in path"):
        parse("a b")
    with pytest.raises(ParseError, match=r"'%' is not followed by two hexadecimal digits"):
        parse("x:%g0")
    with pytest.raises(ParseError, match=r"':' in the first segment"):
        parse(":")


def test_ip_literal_unclosed_inside_brackets_path() -> None:
    # "[v1.x/]" : the authority stops at "/", so the literal has no "]".
    with pytest.raises(ParseError) as info:
        parse("http://[v1.x/]/")
    assert info.value.rule == "IP-literal"


def test_uri_value_properties() -> None:
    uri = parse("https://user@Example.ORG:8443/a/b?x=1#frag")
    assert uri.authority == "user@Example.ORG:8443"
    assert uri.is_absolute is False
    assert uri.without_fragment().is_absolute
    assert str(uri.without_fragment()) == "https://user@Example.ORG:8443/a/b?x=1"
    assert URI.parse("x:y") == parse("x:y")
    assert URI.split("x:y") == split("x:y")
    assert parse("a").authority is None
    assert parse("a").host_type is None
    with pytest.raises(dataclasses.FrozenInstanceError):
        uri.path = "/c"  # type: ignore[misc]


def test_uri_str_rfc3986_5_3_recomposition() -> None:
    assert str(URI("s", "u", "h", "1", "/p", "q", "f")) == "s://u@h:1/p?q#f"
    assert str(URI(path="a")) == "a"
    assert str(URI(host="", path="")) == "//"
    assert str(URI("s", query="", fragment="")) == "s:?#"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("http://a b/c d?e f#g h", URI("http", None, "a b", None, "/c d", "e f", "g h")),
        ("1http://x", URI("1http", None, "x", None, "")),
        ("http://u@v@h:p:q/", URI("http", "u@v", "h:p", "q", "/")),
        ("http://[::1/", URI("http", None, "[::1", None, "/")),
        ("http://[::1]x:5", URI("http", None, "[::1]x:5")),
        ("é://ü/ö", URI("é", None, "ü", None, "/ö")),
        (":::", URI(path=":::")),
    ],
)
def test_split_appendix_b_lenient(text: str, expected: URI) -> None:
    assert split(text) == expected
    assert str(split(text)) == text
