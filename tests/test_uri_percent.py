"""Percent-encoding (RFC 3986 §2.1-§2.5) and IRI to URI mapping (RFC 3987 §3.1)."""

from __future__ import annotations

import urllib.parse

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pdi.errors import ParseError, UnsupportedError
from pdi.uri import (
    UNRESERVED,
    iri_to_uri,
    parse,
    percent_decode,
    percent_decode_bytes,
    percent_encode,
    url_meant,
)


def test_rfc3986_2_3_unreserved_set() -> None:
    assert len(UNRESERVED) == 26 + 26 + 10 + 4
    assert set("-._~") <= UNRESERVED
    assert not set("!$&'()*+,;=:/?#[]@%") & UNRESERVED


@pytest.mark.parametrize(
    ("text", "safe", "expected"),
    [
        ("", "", ""),
        ("AZaz09-._~", "", "AZaz09-._~"),
        ("a b", "", "a%20b"),
        ("a/b?c", "", "a%2Fb%3Fc"),
        ("a/b?c", "/", "a/b%3Fc"),
        ("100%", "", "100%25"),
        ("100%", "%", "100%"),
        ("é", "", "%C3%A9"),  # UTF-8, upper-case hexadecimal digits (§2.1)
        ("€", "", "%E2%82%AC"),
        ("😀", "", "%F0%9F%98%80"),
        ("!$&'()*+,;=", "", "%21%24%26%27%28%29%2A%2B%2C%3B%3D"),
        ("!$&'()*+,;=", "!$&'()*+,;=", "!$&'()*+,;="),
        ("é/ü", "é", "é%2F%C3%BC"),  # a non-ASCII safe character is kept
        ("\x00\x7f", "", "%00%7F"),
    ],
)
def test_percent_encode(text: str, safe: str, expected: str) -> None:
    assert percent_encode(text, safe) == expected


def test_percent_encode_lone_surrogate() -> None:
    with pytest.raises(ParseError) as info:
        percent_encode("ab\ud800c")
    assert info.value.offset == 2
    with pytest.raises(ParseError) as info:
        percent_encode("ab\ud800c", safe="é")
    assert info.value.offset == 2


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", ""),
        ("abc", "abc"),
        ("a%20b", "a b"),
        ("%C3%A9", "é"),
        ("%c3%a9", "é"),
        ("%E2%82%ACx%41", "€xA"),
        ("é%2F", "é/"),
        ("%25", "%"),
        ("%2525", "%25"),
    ],
)
def test_percent_decode(text: str, expected: str) -> None:
    assert percent_decode(text) == expected


def test_percent_decode_other_encodings_and_errors() -> None:
    assert percent_decode("%E9t%E9", encoding="latin-1") == "été"
    assert percent_decode("a%FFb", errors="replace") == "a\ufffdb"
    assert percent_decode("a%FFb", errors="surrogateescape") == "a\udcffb"
    with pytest.raises(ParseError) as info:
        percent_decode("ab%C3%28")
    assert info.value.offset == 2
    assert info.value.rule == "pct-encoded"
    with pytest.raises(ParseError) as info:
        percent_decode("x%41%41%FF")
    assert info.value.offset == 7  # the third triple of the run
    with pytest.raises(UnsupportedError):
        percent_decode("%41", encoding="no-such-codec")
    with pytest.raises(UnsupportedError):
        percent_decode("%FF", errors="no-such-handler")


@pytest.mark.parametrize(("text", "offset"), [("%", 0), ("a%4", 1), ("a%zz", 1), ("%41%", 3), ("%%41", 0)])
def test_percent_decode_malformed(text: str, offset: int) -> None:
    for function in (percent_decode, percent_decode_bytes):
        with pytest.raises(ParseError) as info:
            function(text)
        assert info.value.offset == offset
        assert info.value.rule == "pct-encoded"


def test_percent_decode_bytes() -> None:
    assert percent_decode_bytes("") == b""
    assert percent_decode_bytes("%FFa%00") == b"\xffa\x00"
    assert percent_decode_bytes("é%C3%A9") == b"\xc3\xa9\xc3\xa9"
    with pytest.raises(ParseError) as info:
        percent_decode_bytes("%41\udc80")
    assert info.value.offset == 3


@pytest.mark.parametrize(
    ("iri", "uri"),
    [
        ("http://example.org/", "http://example.org/"),
        # RFC 3987 §3.1's example: "http://www.example.org/red%09ros\u00E9#red" (with é).
        ("http://www.example.org/red%09ros\u00e9#red", "http://www.example.org/red%09ros%C3%A9#red"),
        # RFC 3987 §3.1 example 2: U+10300 OLD ITALIC LETTER A etc.
        (
            "http://example.com/\U00010300\U00010301\U00010302",
            "http://example.com/%F0%90%8C%80%F0%90%8C%81%F0%90%8C%82",
        ),
        # a web host beyond ASCII in IDNA's ASCII form (§3.1's ToASCII for "schemes known to use domain names"),
        # as Chromium's new URL() writes it; another scheme's host is percent-encoded (step 2), as in Chromium too
        ("http://r\u00e9sum\u00e9.example.org", "http://xn--rsum-bpad.example.org"),
        ("HTTPS://u:\u00fc@B\u00dcCHER.example:81/\u00e9", "HTTPS://u:%C3%BC@xn--bcher-kva.example:81/%C3%A9"),
        ("http://stra\u00dfe.de/", "http://xn--strae-oqa.de/"),  # UTS #46 nontransitional: not strasse.de
        ("foo://r\u00e9sum\u00e9.example.org", "foo://r%C3%A9sum%C3%A9.example.org"),
        ("//b\u00fccher.example/", "//b%C3%BCcher.example/"),  # no scheme: not known to use domain names
        ("x:?q=\ue000", "x:?q=%EE%80%80"),  # iprivate
        ("a b", "a b"),  # ASCII is left alone, valid or not
    ],
)
def test_rfc3987_3_1_iri_to_uri(iri: str, uri: str) -> None:
    assert iri_to_uri(iri) == uri


def test_rfc3987_3_1_iri_to_uri_results_parse() -> None:
    assert parse(iri_to_uri("http://r\u00e9sum\u00e9.example.org/d\u00e9j\u00e0?\u00e9#\u00e9")).host == (
        "xn--rsum-bpad.example.org"
    )
    assert parse(iri_to_uri("x://r\u00e9sum\u00e9.example.org/")).host == "r%C3%A9sum%C3%A9.example.org"


@pytest.mark.parametrize(
    ("iri", "offset"),
    [
        ("http://xn--a.\u00fc/", 7),  # an xn-- label that is no Punycode of a label beyond ASCII
        ("http://\u00fc.xn--/", 9),
        ("http://\u00fc%C3.ex/", 7),  # escapes that are not UTF-8
        ("http://\u00fc<.ex/", 8),  # no room for "<" in RFC 3986's host
        ("http://a\u200db.\u00fc/", 7),  # a zero-width joiner where RFC 5892 allows none
        ("http://\u05d0.1\u00fc/", 9),  # RFC 5893: a label of a right-to-left domain that starts with a digit
        ("http://\u0301\u00fc/", 7),  # a combining mark first
        ("http://\u00ad/", 7),  # nothing left: a soft hyphen is dropped
        ("http://\u00fc.1.2.3/", 7),  # ends in a number and is no IPv4 address
        ("http://\u2488x/", 7),  # a code point UTS #46 disallows
        ("http://a.\u00fc%25/", 7),  # escapes are decoded first: "%" left, in no host name
        ("http://" + "\u00fc" * 1025 + "/", 7),  # more than 1,024 characters, four times the DNS's most: unread
    ],
)
def test_rfc3987_3_1_a_web_host_that_is_no_domain_name_is_refused(iri: str, offset: int) -> None:
    # Chromium refuses each of these URLs (tests/test_uri_iri_hosts_chromium.py); a percent-encoded host would name
    # no host either
    with pytest.raises(ParseError) as info:
        iri_to_uri(iri)
    assert (info.value.rule, info.value.offset) == ("ireg-name", offset)
    assert "is no domain name" in str(info.value)


@pytest.mark.parametrize(
    ("iri", "offset"),
    [
        ("x:\u0085", 2),  # C1 control
        ("x:a\ud800", 3),  # surrogate
        ("x:\ufdd0", 2),  # non-character
        ("x:\ufffe", 2),
        ("x:\U0001fffe", 2),
        ("x:\U000e0001", 2),  # tag characters (E0000-E0FFF) are not ucschar
        ("x:é\u0080", 3),
        ("http://example.org/\u202egnp.exe", 19),  # RFC 3987 §4.1: no bidirectional formatting characters
        ("x:?a=\u05d0\u200f", 6),  # RLM
        ("x:#\u202a", 3),  # LRE
    ],
)
def test_rfc3987_3_1_iri_to_uri_rejects_non_iri_characters(iri: str, offset: int) -> None:
    with pytest.raises(ParseError) as info:
        iri_to_uri(iri)
    assert info.value.offset == offset
    assert info.value.rule == "ucschar"


@pytest.mark.parametrize(
    ("iri", "offset"),
    [
        ("x:/p\ue000", 4),  # a path
        ("http://h\U000f0000/", 8),  # a host
        ("x:?q#\U00100000", 5),  # a fragment: the query ended at "#"
        ("x:#a?\ue000", 5),  # a "?" after the "#" opens no query
    ],
)
def test_rfc3987_2_2_private_use_characters_only_in_the_query(iri: str, offset: int) -> None:
    # iquery = *( ipchar / iprivate / "/" / "?" ): nowhere else may iprivate stand
    with pytest.raises(ParseError) as info:
        iri_to_uri(iri)
    assert (info.value.offset, info.value.rule) == (offset, "iprivate")
    assert iri_to_uri("x:?a#b".replace("a", "\uf8ff")) == "x:?%EF%A3%BF#b"


#: RFC 3987 §2.2 ``ucschar``, as the RFC lists it: the characters beyond ASCII an IRI's path may hold.
_UCSCHAR = [(0xA0, 0xD7FF), (0xF900, 0xFDCF), (0xFDF0, 0xFFEF),
            *((plane * 0x10000, plane * 0x10000 + 0xFFFD) for plane in range(1, 14)), (0xE1000, 0xEFFFD)]
#: RFC 3987 §4.1: "IRIs MUST NOT contain bidirectional formatting characters (LRM, RLM, LRE, RLE, LRO, RLO, and PDF)".
_BIDI = "\u200e\u200f\u202a\u202b\u202d\u202e\u202c"
_PATH_TEXT = st.text(st.characters(blacklist_categories=("Cs", "Cc"), blacklist_characters="%" + _BIDI).filter(
    lambda c: c.isascii() or any(a <= ord(c) <= b for a, b in _UCSCHAR)), max_size=20)


@given(path=_PATH_TEXT)
def test_rfc3986_2_1_url_meant_is_what_a_percent_encoder_writes(path: str) -> None:
    # urllib's quote, UTF-8, keeping RFC 3986's reserved and unreserved characters: an independent writer
    expected = "http://example.org/" + urllib.parse.quote(path, safe="!#$&'()*+,/:;=?@[]~")
    assert url_meant("http://example.org/" + path) == expected
    assert url_meant(expected) == expected  # written so already: taken as it is


@pytest.mark.parametrize(("typed", "meant"), [
    ("http://h/100%.html", "http://h/100%25.html"),  # a lone "%"; a triple is kept: %41 stays
    ("http://h/%41%g1", "http://h/%41%25g1"),
    ("http://h/a\tb|c", "http://h/a%09b%7Cc"),
    ("http://Bücher.example/ü", "http://xn--bcher-kva.example/%C3%BC"),  # IDNA's form of the host: RFC 3987 §3.1
])
def test_rfc3986_2_1_url_meant_escapes_a_lone_percent_and_what_no_uri_holds(typed: str, meant: str) -> None:
    assert url_meant(typed) == meant
