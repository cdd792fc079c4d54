"""The annotation server's readers of request fields, hammered: Slug (RFC 5023 §9.7), Prefer (RFC 7240 §4.2, LDP
§7.2), Accept with a JSON-LD profile (RFC 9110 §12.5.1, RFC 6906) and If-Match (RFC 9110 §13.1.1).

Whatever a client sends, each answers a value or a :mod:`pdi.errors` error, never anything else; the values are
checked against what the RFCs say, not against our own output.
"""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from pdi.archive.kept_annotations import MAX_SLUG, safe_slug
from pdi.errors import ParseError, PDIError
from pdi.interop.accept import parse_accept
from pdi.server.http.conditional import if_match_holds
from pdi.server.write.annotations import (
    ANNOTATION_TYPE,
    PREFER_DESCRIPTIONS,
    PREFER_IRIS,
    PREFER_MINIMAL,
    NotAcceptable,
    negotiate,
    preferences,
)

SAFE = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9._-]*\Z")
segments = st.from_regex(r"[A-Za-z0-9_-][A-Za-z0-9._-]{0,63}", fullmatch=True)
iris = st.sampled_from([PREFER_MINIMAL, PREFER_IRIS, PREFER_DESCRIPTIONS, "http://www.w3.org/ns/ldp#PreferContainment",
                        "http://example.org/other"])
tags = st.from_regex(r'"[\x21\x23-\x7e]{0,20}"', fullmatch=True)


@given(st.text(max_size=200) | st.lists(st.sampled_from(["%", "2e", "2f", "ff", "41", "a", ".", "/", '"']),
                                         max_size=12).map("".join))
def test_any_slug_is_a_safe_last_segment_or_none(value: str) -> None:
    slug = safe_slug(value)
    assert slug is None or (SAFE.match(slug) and len(slug) <= MAX_SLUG and ".." not in slug[:2] and "/" not in slug)


@given(segments)
def test_a_safe_slug_is_used_as_sent_bare_or_quoted(slug: str) -> None:
    assert safe_slug(slug) == safe_slug(f'"{slug}"') == slug


def test_slugs_that_would_leave_the_container_are_not_used() -> None:
    for unsafe in ("..", ".", "../a", "a/b", "%2e%2e", "%2fa", "a%2fb", "", '""', " ", "a\x00b", "x" * (MAX_SLUG + 1),
                   "%ff", "a%e9"):
        assert safe_slug(unsafe) is None, unsafe


@given(st.lists(st.text(max_size=120), max_size=4))
def test_any_prefer_fields_read_or_fail_with_a_pdi_error(fields: list[str]) -> None:
    try:
        wanted, include = preferences(fields)
    except ParseError:
        return
    assert isinstance(wanted, bool) and all(isinstance(i, str) and i for i in include)


@given(st.lists(iris, min_size=1, max_size=3, unique=True), st.sampled_from(["", " ", "  "]), st.booleans())
def test_prefer_return_representation_include(listed: list[str], space: str, quoted: bool) -> None:
    value = "representation" if not quoted else '"representation"'
    field = f'return={value};{space}include="{" ".join(listed)}"'
    if {PREFER_IRIS, PREFER_DESCRIPTIONS} <= set(listed):
        try:
            preferences([field])
        except ParseError as exc:
            assert "PreferContainedIRIs" in str(exc)
        else:
            raise AssertionError("both IRIs and descriptions preferred: refused (Web Annotation Protocol §4.2.1)")
        return
    assert preferences([field]) == (True, set(listed))
    # include= without return=representation is no preference of a representation (RFC 7240 §4.2, LDP §7.2)
    assert preferences([f'include="{" ".join(listed)}"']) == (False, set())


@given(st.text(max_size=200))
def test_any_accept_negotiates_or_is_not_acceptable(accept: str) -> None:
    try:
        chosen = negotiate(accept)
    except NotAcceptable:
        return
    except PDIError as exc:
        raise AssertionError(f"{accept!r}: {exc}") from exc
    assert chosen in (ANNOTATION_TYPE, "application/json")


@given(st.lists(st.from_regex(r"https?://[a-z]{1,8}\.example/[a-z.]{0,8}", fullmatch=True), min_size=1, max_size=3))
def test_a_profile_parameter_is_read_as_sent(profiles: list[str]) -> None:
    joined = " ".join(profiles)
    (read,) = parse_accept(f'application/ld+json; profile="{joined}"; q=0.5')
    assert (read.profile, read.q) == (joined, 0.5)
    # a profile after the weight is an accept-ext, not the media type's (RFC 9110 §12.5.1)
    (ext,) = parse_accept(f'application/ld+json; q=0.5; profile="{joined}"')
    assert ext.profile is None


@given(st.lists(tags, max_size=4), tags)
def test_if_match_holds_by_strong_comparison(others: list[str], tag: str) -> None:
    assert if_match_holds(", ".join([*others, tag]), tag)
    assert if_match_holds("*", tag)
    assert not if_match_holds(", ".join([*(o for o in others if o != tag), "W/" + tag]), tag)
