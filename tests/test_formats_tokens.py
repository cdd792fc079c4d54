"""pdi.formats: tokens, media types, charsets, default fragment schemes (PDI-GRAMMAR.md §2.6, §3)."""

from __future__ import annotations

import pytest

from pdi import formats
from pdi.errors import ParseError, UnsupportedError


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
