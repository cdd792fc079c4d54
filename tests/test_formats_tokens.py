"""pdi.formats: tokens, media types, charsets, default fragment schemes (PDI-GRAMMAR.md §2.6, §3)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pdi import formats
from pdi.errors import ParseError, UnsupportedError
from pdi.identifier import PDI


def test_draft_2_5_special_tokens() -> None:
    # Lines 379-385, 593, 668-671 and PDI-GRAMMAR.md §2.6.
    assert formats.media_type_for("text") == "text/plain"
    assert formats.media_type_for("header") == "message/rfc822"
    assert formats.media_type_for("html") == "text/html"
    assert formats.media_type_for("xml") == "text/xml"
    assert formats.media_type_for("sgml") == "text/sgml"
    assert formats.token_for("text/plain") == "text"
    assert formats.token_for("text/html") == "html"
    assert formats.token_for("text/xml") == "xml"
    assert formats.token_for("text/sgml") == "sgml"


def test_grammar_2_6_unique_minor_types() -> None:
    for token, media_type in [
        ("gif", "image/gif"),
        ("png", "image/png"),
        ("wav", "audio/wav"),
        ("pdf", "application/pdf"),
    ]:
        assert formats.media_type_for(token) == media_type
        assert formats.token_for(media_type) == token


def test_grammar_2_6_shared_minor_types_take_the_major_type() -> None:
    # mpeg is registered as audio/mpeg and video/mpeg; mp4 under three major types.
    assert formats.token_for("audio/mpeg") == "audio+mpeg"
    assert formats.token_for("video/mpeg") == "video+mpeg"
    assert formats.media_type_for("audio+mpeg") == "audio/mpeg"
    assert formats.media_type_for("Video+MPEG") == "video/mpeg"
    assert formats.token_for("application/mp4") == "application+mp4"
    assert formats.token_for("application/xml") == "application+xml"
    # video/JPEG (RFC 3555) is registered too, so JPEG images are image+jpeg.
    assert formats.token_for("image/jpeg") == "image+jpeg"
    with pytest.raises(UnsupportedError, match="ambiguous"):
        formats.media_type_for("mpeg")


def test_grammar_2_6_rule_is_computed_over_the_shipped_registry() -> None:
    registry = formats.registered_media_types()
    assert len(registry) > 1500
    lower = [t.lower() for t in registry]
    assert len(lower) == len(set(lower))
    assert all("/x-" not in t for t in lower)
    by_minor: dict[str, set[str]] = {}
    for t in lower:
        major, _, minor = t.partition("/")
        by_minor.setdefault(minor, set()).add(major)
    special = {"text/plain", "text/html", "text/xml", "text/sgml"}
    for t in lower:
        if t in special:
            continue
        major, _, minor = t.partition("/")
        token = formats.token_for(t)
        # Reserved characters in the minor type are %-escaped; the rule is otherwise literal.
        unescaped = token.replace("%2E", ".").replace("%2B", "+")
        expected = minor if len(by_minor[minor]) == 1 else f"{major}+{minor}"
        assert unescaped == expected, t
        assert formats.media_type_for(token) == t


def test_grammar_2_6_reserved_characters_in_tokens_are_escaped() -> None:
    assert formats.token_for("image/svg+xml") == "svg%2Bxml"
    assert formats.media_type_for("svg%2bxml") == "image/svg+xml"
    assert formats.token_for("application/vnd.ms-excel") == "vnd%2Ems-excel"
    assert formats.media_type_for("VND%2EMS-EXCEL") == "application/vnd.ms-excel"


def test_grammar_2_6_tokens_that_are_not_the_rules() -> None:
    with pytest.raises(UnsupportedError, match="'text'"):
        formats.media_type_for("plain")
    with pytest.raises(UnsupportedError, match="'gif'"):
        formats.media_type_for("image+gif")
    for bad in ("mp3", "foo", "*", "", "a.b", "image+", "+gif", "%FF"):
        with pytest.raises(UnsupportedError):
            formats.media_type_for(bad)
        assert not formats.is_known_token(bad)
    assert formats.is_known_token("GIF")


def test_draft_3_4_1_charset_tokens() -> None:
    # Line 586: text/plain in a multi-byte charset takes the IANA charset name.
    assert formats.token_for("text/plain", charset="UTF-8") == "utf-8"
    assert formats.token_for("text/plain; charset=Shift_JIS") == "shift_jis"
    assert formats.token_for('text/plain;charset="utf-16"') == "utf-16"
    assert formats.token_for("text/plain", charset="csShiftJIS") == "shift_jis"
    assert formats.token_for("text/plain", charset="iso-8859-1") == "text"
    assert formats.token_for("text/plain", charset="US-ASCII") == "text"
    assert formats.token_for("text/html", charset="utf-8") == "html"
    assert formats.media_type_for("UTF-8") == "text/plain"
    assert formats.media_type_for("shift_jis") == "text/plain"
    assert formats.charset_for("utf-8") == "utf-8"
    assert formats.charset_for("Shift_JIS") == "shift_jis"
    assert formats.charset_for("iso-8859-1") == "iso-8859-1"
    assert formats.charset_for("text") is None
    assert formats.charset_for("html") is None
    assert formats.charset_for("gif") is None
    with pytest.raises(UnsupportedError):
        formats.charset_for("nope")
    with pytest.raises(UnsupportedError):
        formats.token_for("text/plain", charset="klingon-8")


def test_grammar_3_default_fragment_schemes() -> None:
    for token, scheme in [
        ("text", "char"),
        ("utf-8", "char"),
        ("html", "char"),
        ("xml", "char"),
        ("sgml", "char"),
        ("header", "char"),
        ("css", "char"),
        ("gif", "rect"),
        ("png", "rect"),
        ("wav", "sec"),
        ("audio+mpeg", "sec"),
        ("video+mpeg", "sec"),
    ]:
        assert formats.default_fragment_scheme(token) == scheme, token
    assert formats.default_fragment_scheme("image/tiff") == "rect"
    assert formats.default_fragment_scheme("text/plain; charset=utf-8") == "char"
    for no_default in ("pdf", "application/zip", "application+xml"):
        with pytest.raises(UnsupportedError):
            formats.default_fragment_scheme(no_default)
    with pytest.raises(UnsupportedError):
        formats.default_fragment_scheme("unknowntoken")


def test_media_families() -> None:
    assert formats.media_family("text/html") == "html"
    assert formats.media_family("application/xhtml+xml") == "html"
    assert formats.media_family("text/xml") == "xml"
    assert formats.media_family("image/svg+xml") == "xml"
    assert formats.media_family("text/css") == "text"
    assert formats.media_family("message/rfc822") == "text"
    assert formats.media_family("image/gif") == "image"
    assert formats.media_family("video/mp4") == "timed"
    assert formats.media_family("application/pdf") == "other"


def test_token_for_rejects_unregistered_types() -> None:
    for bad in ("image/x-foo", "nonsense", "a/b/c d", "text/"):
        with pytest.raises(UnsupportedError):
            formats.token_for(bad)


def test_canonical_token_and_check() -> None:
    assert formats.canonical_token("SVG%2bXML") == "svg%2Bxml"
    assert formats.check_token("GIF") == "gif"
    with pytest.raises(ParseError):
        formats.check_token("a.b")
    assert formats.is_valid_token("audio+mpeg")
    assert not formats.is_valid_token("a b")


@pytest.mark.parametrize("value", [None, b"gif", 3, ["gif"]])
def test_a_token_that_is_not_text(value: object) -> None:
    # No input raises anything but a pdi error: a value that is not a string is
    # not a valid token, and the functions that need one say so.
    assert formats.is_valid_token(value) is False  # type: ignore[arg-type]
    assert formats.is_known_token(value) is False  # type: ignore[arg-type]
    for call in (formats.canonical_token, formats.check_token):
        with pytest.raises(ParseError):
            call(value)  # type: ignore[arg-type]


def test_registered_charset_names_a_label_by_its_iana_name() -> None:
    from pdi.formats import registered_charset

    assert registered_charset(" ISO_8859-1 ") == "iso-8859-1"  # a registered alias
    assert registered_charset("latin-1") == "iso-8859-1"  # Python's label, the same codec
    assert registered_charset("cp1252") == "windows-1252"
    assert registered_charset("UTF8") == "utf-8"
    assert registered_charset("MAC-CYRILLIC") == "mac-cyrillic"  # a text codec the registry lacks: as written
    for not_a_charset in ("klingon", "zlib_codec", "punycode"):
        with pytest.raises(UnsupportedError, match=not_a_charset):
            registered_charset(not_a_charset)


# --------------------------------------------------------------------------- the token's characters
# docs/reference/identifiers.md "Format tokens": a token carries unescaped the characters that media-type names
# (RFC 6838 §4.2 restricted-name-chars) and charset names (RFC 2978 §2.3 mime-charset-chars) may
# hold, less the PDI's reserved characters (draft line 217, which must be %-escaped), plus one "+"
# between the major and the minor type. Worked out here from the three lists, not from the code.
_ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
_RFC6838 = set(_ALNUM + "!#$&-^_.+")
_RFC2978 = set(_ALNUM + "!#$%&'+-^_`{}~")
_RFC2045_TSPECIALS = set('()<>@,;:\\"/[]?=')
_RESERVED = set("%.,/#*@=?+")
TOKEN_CHARS = sorted((_RFC6838 | _RFC2978) - _RESERVED)
_BASE = "urn:pdi://oma.eop.gov.us/1997/09/01/1."


def test_token_characters_are_rfc2045_token_characters() -> None:
    for ch in TOKEN_CHARS:
        assert 0x20 < ord(ch) < 0x7F and ch not in _RFC2045_TSPECIALS
    assert set("~^&{}`") <= set(TOKEN_CHARS)
    assert not set("():;") & set(TOKEN_CHARS)  # tspecials no media-type or charset name holds


def test_token_characters_exactly() -> None:
    # both sides, every ASCII character and a few others, inside a token and at its ends
    for code in [*range(128), 0xE9, 0x2014, 0x1F600]:
        ch = chr(code)
        if ch == "+":
            continue  # below: one "+", between two names
        for token in (f"a{ch}b", f"{ch}b", f"a{ch}"):
            assert formats.is_valid_token(token) is (ch in TOKEN_CHARS), repr(token)
    assert formats.is_valid_token("audio+mpeg")
    for token in ("+mpeg", "audio+", "a+b+c", "a++b", "+"):
        assert not formats.is_valid_token(token), token


def test_the_issues_examples() -> None:
    with pytest.raises(ParseError) as info:
        PDI.parse(_BASE + "te:xt.1")
    assert (info.value.rule, info.value.offset) == ("format", len(_BASE) + 2)
    for bad in ("te;xt", "(text)", "a+b+c"):
        with pytest.raises(ParseError) as info:
            PDI.parse(_BASE + bad + ".1")
        assert info.value.rule == "format"
    assert PDI.parse(_BASE + "x~y^z&w{v}`u.1").format == "x~y^z&w{v}`u"
    # what is not a token character can be written %-escaped
    assert PDI.parse(_BASE + "te%3Axt.1").format == "te%3Axt"


_PART = st.lists(
    st.one_of(st.sampled_from(TOKEN_CHARS), st.integers(0, 255).map(lambda b: f"%{b:02x}")), min_size=1, max_size=8
).map("".join)


@settings(max_examples=300, deadline=None)
@given(_PART, st.one_of(st.none(), _PART))
def test_every_token_of_the_rule_is_accepted(minor: str, major: str | None) -> None:
    token = minor if major is None else f"{major}+{minor}"
    assert formats.is_valid_token(token)
    assert formats.check_token(token) == formats.canonical_token(token)
    parsed = PDI.parse(_BASE + token + ".1")
    assert parsed.format == token
    again = PDI.parse(str(parsed))
    assert again.format == formats.canonical_token(token)


# characters that are neither token characters nor structure of the PDI around the token
_REFUSED = [chr(c) for c in range(0x21, 0x7F) if chr(c) not in TOKEN_CHARS and chr(c) not in "%+./#@*"] + [
    " ", "\t", "é", "—", "😀", "\x00", "\x7f"
]


@settings(max_examples=300, deadline=None)
@given(_PART, st.sampled_from(_REFUSED), _PART)
def test_a_token_with_any_other_character_is_refused(left: str, bad: str, right: str) -> None:
    token = left + bad + right
    assert not formats.is_valid_token(token)
    with pytest.raises(ParseError) as info:
        PDI.parse(_BASE + token + ".1")
    assert info.value.rule == "format"
    assert info.value.offset == len(_BASE) + len(left)


def test_rfc6838_4_3_a_charset_given_twice_is_refused_not_guessed() -> None:
    """Over HTTP, ``text/plain; charset=utf-8; charset=latin1`` was deposited as Latin-1 without a word."""
    assert formats.split_media_type("text/plain; charset=utf-8") == ("text/plain", "utf-8")
    for value in ("text/plain; charset=utf-8; charset=latin1", "text/plain; charset=utf-8; CHARSET=utf-8"):
        with pytest.raises(UnsupportedError, match=r"gives its charset twice: a parameter is given once"):
            formats.split_media_type(value)
