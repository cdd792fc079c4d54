"""Every example of RFC 3986 §1.1.2, §3, §5.2.4, §5.4 and §6, and of RFC 2396 Appendix C.

Expected values are copied from the RFC texts (RFC 2396 from
docs/specs/004_…txt, RFC 3986 from its published text), not from the code.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest

from pdi.errors import ParseError, UnsupportedError
from pdi.uri import URI, equivalent, normalize, parse, remove_dot_segments, resolve

BASE = "http://a/b/c/d;p?q"

# RFC 3986 §5.4.1.
RFC3986_NORMAL = [
    ("g:h", "g:h"),
    ("g", "http://a/b/c/g"),
    ("./g", "http://a/b/c/g"),
    ("g/", "http://a/b/c/g/"),
    ("/g", "http://a/g"),
    ("//g", "http://g"),
    ("?y", "http://a/b/c/d;p?y"),
    ("g?y", "http://a/b/c/g?y"),
    ("#s", "http://a/b/c/d;p?q#s"),
    ("g#s", "http://a/b/c/g#s"),
    ("g?y#s", "http://a/b/c/g?y#s"),
    (";x", "http://a/b/c/;x"),
    ("g;x", "http://a/b/c/g;x"),
    ("g;x?y#s", "http://a/b/c/g;x?y#s"),
    ("", "http://a/b/c/d;p?q"),
    (".", "http://a/b/c/"),
    ("./", "http://a/b/c/"),
    ("..", "http://a/b/"),
    ("../", "http://a/b/"),
    ("../g", "http://a/b/g"),
    ("../..", "http://a/"),
    ("../../", "http://a/"),
    ("../../g", "http://a/g"),
]

# RFC 3986 §5.4.2 (the last one, "http:g", has two answers; see below).
RFC3986_ABNORMAL = [
    ("../../../g", "http://a/g"),
    ("../../../../g", "http://a/g"),
    ("/./g", "http://a/g"),
    ("/../g", "http://a/g"),
    ("g.", "http://a/b/c/g."),
    (".g", "http://a/b/c/.g"),
    ("g..", "http://a/b/c/g.."),
    ("..g", "http://a/b/c/..g"),
    ("./../g", "http://a/b/g"),
    ("./g/.", "http://a/b/c/g/"),
    ("g/./h", "http://a/b/c/g/h"),
    ("g/../h", "http://a/b/c/h"),
    ("g;x=1/./y", "http://a/b/c/g;x=1/y"),
    ("g;x=1/../y", "http://a/b/c/y"),
    ("g?y/./x", "http://a/b/c/g?y/./x"),
    ("g?y/../x", "http://a/b/c/g?y/../x"),
    ("g#s/./x", "http://a/b/c/g#s/./x"),
    ("g#s/../x", "http://a/b/c/g#s/../x"),
]

# RFC 2396 Appendix C.1; "#s" is "(current document)#s".
RFC2396_NORMAL = [
    ("g:h", "g:h"),
    ("g", "http://a/b/c/g"),
    ("./g", "http://a/b/c/g"),
    ("g/", "http://a/b/c/g/"),
    ("/g", "http://a/g"),
    ("//g", "http://g"),
    ("?y", "http://a/b/c/?y"),
    ("g?y", "http://a/b/c/g?y"),
    ("#s", "http://a/b/c/d;p?q#s"),
    ("g#s", "http://a/b/c/g#s"),
    ("g?y#s", "http://a/b/c/g?y#s"),
    (";x", "http://a/b/c/;x"),
    ("g;x", "http://a/b/c/g;x"),
    ("g;x?y#s", "http://a/b/c/g;x?y#s"),
    (".", "http://a/b/c/"),
    ("./", "http://a/b/c/"),
    ("..", "http://a/b/"),
    ("../", "http://a/b/"),
    ("../g", "http://a/b/g"),
    ("../..", "http://a/"),
    ("../../", "http://a/"),
    ("../../g", "http://a/g"),
]

# RFC 2396 Appendix C.2; "<>" is "(current document)".
RFC2396_ABNORMAL = [
    ("", "http://a/b/c/d;p?q"),
    ("../../../g", "http://a/../g"),
    ("../../../../g", "http://a/../../g"),
    ("/./g", "http://a/./g"),
    ("/../g", "http://a/../g"),
    ("g.", "http://a/b/c/g."),
    (".g", "http://a/b/c/.g"),
    ("g..", "http://a/b/c/g.."),
    ("..g", "http://a/b/c/..g"),
    ("./../g", "http://a/b/g"),
    ("./g/.", "http://a/b/c/g/"),
    ("g/./h", "http://a/b/c/g/h"),
    ("g/../h", "http://a/b/c/h"),
    ("g;x=1/./y", "http://a/b/c/g;x=1/y"),
    ("g;x=1/../y", "http://a/b/c/y"),
    ("g?y/./x", "http://a/b/c/g?y/./x"),
    ("g?y/../x", "http://a/b/c/g?y/../x"),
    ("g#s/./x", "http://a/b/c/g#s/./x"),
    ("g#s/../x", "http://a/b/c/g#s/../x"),
]


@pytest.mark.parametrize(("reference", "expected"), RFC3986_NORMAL)
def test_rfc3986_5_4_1_normal_examples(reference: str, expected: str) -> None:
    assert resolve(BASE, reference) == expected
    assert resolve(BASE, reference, rfc=3986) == expected


@pytest.mark.parametrize(("reference", "expected"), RFC3986_ABNORMAL)
def test_rfc3986_5_4_2_abnormal_examples(reference: str, expected: str) -> None:
    assert resolve(BASE, reference) == expected


def test_rfc3986_5_4_2_abnormal_examples_scheme_in_reference() -> None:
    # "http:g" = "http:g" for strict parsers, "http://a/b/c/g" for backward compatibility.
    assert resolve(BASE, "http:g") == "http:g"
    assert resolve(BASE, "http:g", strict=True) == "http:g"
    assert resolve(BASE, "http:g", strict=False) == "http://a/b/c/g"
    assert resolve(BASE, "HTTP:g", strict=False) == "http://a/b/c/g"  # schemes are case-insensitive


@pytest.mark.parametrize(("reference", "expected"), RFC2396_NORMAL)
def test_rfc2396_c_1_normal_examples(reference: str, expected: str) -> None:
    assert resolve(BASE, reference, rfc=2396) == expected


@pytest.mark.parametrize(("reference", "expected"), RFC2396_ABNORMAL)
def test_rfc2396_c_2_abnormal_examples(reference: str, expected: str) -> None:
    assert resolve(BASE, reference, rfc=2396) == expected


def test_rfc2396_c_2_abnormal_examples_scheme_in_reference() -> None:
    # "http:g" = "http:g" for validating parsers, "http://a/b/c/g" for backwards compatibility.
    assert resolve(BASE, "http:g", rfc=2396) == "http:g"
    assert resolve(BASE, "http:g", rfc=2396, strict=False) == "http://a/b/c/g"


# The differences between the two RFCs (listed in resolve's docstring), each worked out from both texts.
DIFFERENCES = [
    # (base, reference, RFC 3986, RFC 2396)
    (BASE, "?y", "http://a/b/c/d;p?y", "http://a/b/c/?y"),
    (BASE, "../../../g", "http://a/g", "http://a/../g"),
    (BASE, "../../../../g", "http://a/g", "http://a/../../g"),
    ("http://a/../b/c", "g", "http://a/b/g", "http://a/../b/g"),
    (BASE, "/./g", "http://a/g", "http://a/./g"),
    (BASE, "/../g", "http://a/g", "http://a/../g"),
    (BASE, "//g/./h", "http://g/h", "http://g/./h"),
    (BASE, "foo:a/../b", "foo:/b", "foo:a/../b"),
    ("foo:a/b", "../c", "foo:/c", "foo:c"),
    ("zz:abc", "foo/../bar", "zz:/bar", "zz:bar"),
    (
        "http://www.example.com/data/limit/..",
        "test.xml",
        "http://www.example.com/data/test.xml",
        "http://www.example.com/data/limit/test.xml",
    ),
]


@pytest.mark.parametrize(("base", "reference", "rfc3986", "rfc2396"), DIFFERENCES)
def test_rfc2396_and_rfc3986_differ_as_their_texts_say(
    base: str, reference: str, rfc3986: str, rfc2396: str
) -> None:
    assert resolve(base, reference) == rfc3986
    assert resolve(base, reference, rfc=2396) == rfc2396


def test_rfc2396_and_3986_repair_empty_base_path_with_authority() -> None:
    # RFC 3986 §5.2.3: a base with an authority and an empty path merges as "/" + reference.
    assert resolve("http://a", "g") == "http://a/g"
    assert resolve("http://a", "g", rfc=2396) == "http://a/g"
    assert resolve("http://a?q", "?y", rfc=2396) == "http://a/?y"


def test_rfc3986_5_2_4_remove_dot_segments_examples() -> None:
    assert remove_dot_segments("/a/b/c/./../../g") == "/a/g"
    assert remove_dot_segments("mid/content=5/../6") == "mid/6"


def test_rfc3986_5_2_1_base_must_be_absolute() -> None:
    with pytest.raises(ParseError) as info:
        resolve("/relative/base", "g")
    assert info.value.rule == "absolute-URI"
    assert info.value.offset == 0
    with pytest.raises(ParseError):
        resolve("", "g", rfc=2396)


def test_resolve_unknown_rfc_is_unsupported() -> None:
    with pytest.raises(UnsupportedError):
        resolve(BASE, "g", rfc=1808)


def test_rfc3986_5_2_2_base_fragment_is_ignored() -> None:
    assert resolve("http://a/b/c#frag", "") == "http://a/b/c"
    assert resolve("http://a/b/c#frag", "#x") == "http://a/b/c#x"
    assert resolve("http://a/b/c#frag", "d") == "http://a/b/d"


# Resolution against the bases RFC 2557 and PDIs need, by hand from §5.2.
@pytest.mark.parametrize(
    ("base", "reference", "expected"),
    [
        ("thismessage:/", "images/a.gif", "thismessage:/images/a.gif"),
        ("thismessage:/", "/images/a.gif", "thismessage:/images/a.gif"),
        ("thismessage:/", "./a.gif", "thismessage:/a.gif"),
        ("thismessage:/", "../a.gif", "thismessage:/a.gif"),
        ("thismessage:/", "#top", "thismessage:/#top"),
        ("thismessage:/", "", "thismessage:/"),
        ("thismessage:/pages/index.html", "img/a.gif", "thismessage:/pages/img/a.gif"),
        ("thismessage:/pages/index.html", "../style.css", "thismessage:/style.css"),
        ("thismessage:/pages/index.html", "?q=1", "thismessage:/pages/index.html?q=1"),
        ("thismessage:/pages/index.html", "cid:part1@x", "cid:part1@x"),
        ("thismessage:/pages/index.html", "http://e.org/a/./b", "http://e.org/a/b"),
        ("pdi://oma.eop.gov.us/1997/01/27/3.txt.1", "4.txt.1", "pdi://oma.eop.gov.us/1997/01/27/4.txt.1"),
        ("pdi://oma.eop.gov.us/1997/01/27/3.txt.1", "../28/1.html", "pdi://oma.eop.gov.us/1997/01/28/1.html"),
        ("pdi://oma.eop.gov.us/1997/01/27/3.txt.1", "#line=10,20", "pdi://oma.eop.gov.us/1997/01/27/3.txt.1#line=10,20"),
        ("pdi://oma.eop.gov.us/1997/01/27/3.txt.1", "/1998/", "pdi://oma.eop.gov.us/1998/"),
        ("pdi://oma.eop.gov.us/1997/01/27/3.txt.1", "//other.fr/2000/01/01/1", "pdi://other.fr/2000/01/01/1"),
        ("urn:pdi://oma.eop.gov.us/1997/01/27/3.txt", "#char=5", "urn:pdi://oma.eop.gov.us/1997/01/27/3.txt#char=5"),
        # urn:pdi:… has a rootless path "pdi://…": merging keeps up to its last "/".
        ("urn:pdi://oma.eop.gov.us/1997/01/27/3.txt", "4.txt", "urn:pdi://oma.eop.gov.us/1997/01/27/4.txt"),
        ("cid:root@example", "a.gif", "cid:a.gif"),
        ("file:///home/u/doc.html", "../pics/a.png", "file:///home/pics/a.png"),
        ("made-up+scheme.1:/x/y", "z", "made-up+scheme.1:/x/z"),
    ],
)
def test_resolution_against_thismessage_pdi_and_other_bases(base: str, reference: str, expected: str) -> None:
    assert resolve(base, reference) == expected


def test_rfc3986_1_1_2_examples() -> None:
    cases = {
        "ftp://ftp.is.co.za/rfc/rfc1808.txt": URI("ftp", None, "ftp.is.co.za", None, "/rfc/rfc1808.txt"),
        "http://www.ietf.org/rfc/rfc2396.txt": URI("http", None, "www.ietf.org", None, "/rfc/rfc2396.txt"),
        "ldap://[2001:db8::7]/c=GB?objectClass?one": URI(
            "ldap", None, "[2001:db8::7]", None, "/c=GB", "objectClass?one"
        ),
        "mailto:John.Doe@example.com": URI("mailto", path="John.Doe@example.com"),
        "news:comp.infosystems.www.servers.unix": URI("news", path="comp.infosystems.www.servers.unix"),
        "tel:+1-816-555-1212": URI("tel", path="+1-816-555-1212"),
        "telnet://192.0.2.16:80/": URI("telnet", None, "192.0.2.16", "80", "/"),
        "urn:oasis:names:specification:docbook:dtd:xml:4.1.2": URI(
            "urn", path="oasis:names:specification:docbook:dtd:xml:4.1.2"
        ),
    }
    for text, expected in cases.items():
        assert parse(text) == expected
        assert str(parse(text)) == text
    assert parse("ldap://[2001:db8::7]/c=GB?objectClass?one").host_type == "ipv6"
    assert parse("telnet://192.0.2.16:80/").host_type == "ipv4"


def test_rfc3986_3_examples() -> None:
    uri = parse("foo://example.com:8042/over/there?name=ferret#nose")
    assert uri == URI("foo", None, "example.com", "8042", "/over/there", "name=ferret", "nose")
    assert uri.authority == "example.com:8042"
    assert parse("urn:example:animal:ferret:nose") == URI("urn", path="example:animal:ferret:nose")


def test_rfc3986_6_2_2_syntax_based_normalization() -> None:
    assert equivalent("example://a/b/c/%7Bfoo%7D", "eXAMPLE://a/./b/../b/%63/%7bfoo%7d")
    assert normalize("eXAMPLE://a/./b/../b/%63/%7bfoo%7d") == "example://a/b/c/%7Bfoo%7D"


def test_rfc3986_6_2_2_1_case_normalization() -> None:
    assert normalize("HTTP://www.EXAMPLE.com/") == "http://www.example.com/"
    assert equivalent("HTTP://www.EXAMPLE.com/", "http://www.example.com/")
    assert equivalent("x:%3a", "x:%3A")
    assert normalize("x:%3a") == "x:%3A"
    # The other components are case-sensitive.
    assert not equivalent("http://a/PATH", "http://a/path")
    assert not equivalent("http://a/?Q", "http://a/?q")


def test_rfc3986_6_2_2_2_percent_encoding_normalization() -> None:
    # ALPHA (%41-%5A, %61-%7A), DIGIT (%30-%39), "-" %2D, "." %2E, "_" %5F, "~" %7E.
    assert normalize("http://a/%41%5A%61%7A%30%39%2D%2E%5F%7E") == "http://a/AZaz09-._~"
    assert normalize("http://a/%7esmith/") == "http://a/~smith/"
    assert equivalent("http://a/~smith/", "http://a/%7Esmith/")
    # Reserved and other octets stay encoded (with upper-case digits).
    assert normalize("http://a/%2f%3F%c3%a9") == "http://a/%2F%3F%C3%A9"


def test_rfc3986_6_2_2_3_path_segment_normalization() -> None:
    assert normalize("http://a/b/c/./../../g") == "http://a/g"
    assert normalize("http://a/b/%2E%2E/c") == "http://a/c"  # %2E is "." (§2.3)
    # A relative path keeps its dot segments; they only mean something against a base.
    assert normalize("../a/./b") == "../a/./b"
    assert normalize("/a/../b") == "/b"


def test_rfc3986_6_2_3_scheme_based_normalization() -> None:
    four = ["http://example.com", "http://example.com/", "http://example.com:/", "http://example.com:80/"]
    for text in four:
        assert normalize(text) == "http://example.com/"  # "the second URI above is the normal form"
        for other in four:
            assert equivalent(text, other)
    # "http://example.com/?" cannot be assumed to be equivalent to any of the examples above.
    for text in four:
        assert not equivalent("http://example.com/?", text)
    # URIs that differ only by the suffix "#" are different.
    assert not equivalent("http://example.com/#", "http://example.com/")
    # "mailto:Joe@Example.COM" is equivalent to "mailto:Joe@example.com".
    assert equivalent("mailto:Joe@Example.COM", "mailto:Joe@example.com")
    assert not equivalent("mailto:Joe@example.com", "mailto:joe@example.com")
    # An empty authority for a scheme with a default host (file: "localhost").
    assert equivalent("file://localhost/etc/hosts", "file:///etc/hosts")
    assert normalize("file:/etc/hosts") == "file:///etc/hosts"
    # userinfo or port given: the host stays explicit.
    assert normalize("file://u@localhost/x") == "file://u@localhost/x"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("https://A.example:443", "https://a.example/"),
        ("https://a.example:8443/x", "https://a.example:8443/x"),
        ("ws://a:80/chat", "ws://a/chat"),
        ("wss://a:443", "wss://a/"),
        ("ftp://a:21/f.txt", "ftp://a/f.txt"),
        ("ftp://a:0021/f.txt", "ftp://a/f.txt"),
        ("http://a:0080/", "http://a/"),
        ("http://a:08080/", "http://a:8080/"),
        ("http://a:443/", "http://a:443/"),
        ("other://a:80", "other://a:80"),  # no scheme-based rule for unknown schemes
        ("other://a:", "other://a"),  # §3.2.3: an empty port is omitted with its ":" (the WHATWG URL parser too)
        ("http://[2001:DB8::7]/", "http://[2001:db8::7]/"),
        ("http://%7Euser@A%2dB.example/", "http://~user@a-b.example/"),
        ("http://a/b?%7e=%7E#%7e", "http://a/b?~=~#~"),
        ("http://a.EXAMPLE/%c3%A9", "http://a.example/%C3%A9"),
        ("HTTP://%C3%89.example/", "http://%C3%89.example/"),  # no case folding inside octets
    ],
)
def test_rfc3986_6_2_3_scheme_based_normalization_more(text: str, expected: str) -> None:
    assert normalize(text) == expected


def test_rfc3986_6_2_4_protocol_based_normalization_is_not_done() -> None:
    # Only a redirect could show these to be the same; normalize never guesses.
    assert not equivalent("http://example.com/data", "http://example.com/data/")


def test_normalize_rejects_invalid_references() -> None:
    with pytest.raises(ParseError):
        normalize("http://a b/")
    with pytest.raises(ParseError):
        equivalent("http://a/", "http://[::1/")


def test_resolve_many_distinct_bases() -> None:
    # More distinct bases than resolve keeps prepared: every one still resolves by §5.2.
    for n in range(700):
        base = f"http://h{n}.example/a/{n}/b"
        assert resolve(base, "../c?x") == f"http://h{n}.example/a/c?x"
        assert resolve(base, "") == base
    for _ in range(2):  # a bad base is refused every time, never remembered
        with pytest.raises(ParseError):
            resolve("no-scheme/a", "b")


def _best_time(work: Callable[[], object], rounds: int = 5) -> float:
    # CPU time of this process, the best of a few rounds: what another process on a
    # busy machine does to the wall clock is not the code's doing
    best = float("inf")
    for _ in range(rounds):
        start = time.process_time()
        work()
        best = min(best, time.process_time() - start)
    return best


def test_long_inputs_resolve_in_linear_time() -> None:
    # A stranger's reference must not make resolution quadratic (RFC 2396 6e included):
    # eight times the input may take about eight times as long, not sixty-four.
    def reference(n: int) -> str:
        return "x/" * n + "../" * n + "g"

    n = 20_000  # large enough that the small run is not all fixed cost or cache effects
    for rfc in (3986, 2396):
        assert resolve("http://a/b", reference(8 * n), rfc=rfc) == "http://a/g"
        small = _best_time(lambda rfc=rfc: resolve("http://a/b", reference(n), rfc=rfc))
        large = _best_time(lambda rfc=rfc: resolve("http://a/b", reference(8 * n), rfc=rfc))
        assert large < 24 * small, f"RFC {rfc}: {large / small:.1f}x the time for 8x the input"
    assert normalize("http://a/" + reference(8 * n)) == "http://a/g"
    small = _best_time(lambda: normalize("http://a/" + reference(n)))
    large = _best_time(lambda: normalize("http://a/" + reference(8 * n)))
    assert large < 24 * small, f"normalize: {large / small:.1f}x the time for 8x the input"
