"""The annotation server's readers of request fields, hammered: Slug (RFC 5023 §9.7), Prefer (RFC 7240 §4.2, LDP
§7.2), Accept with a JSON-LD profile (RFC 9110 §12.5.1, RFC 6906) and If-Match (RFC 9110 §13.1.1).

Whatever a client sends, each answers a value or a :mod:`pdi.errors` error, never anything else; the values are
checked against what the RFCs say, not against our own output.
"""

from __future__ import annotations

import re

import pytest
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


# RFC 7240 §2, written out: a Prefer field is a list of preferences,
#   preference = token [ BWS "=" BWS word ] *( OWS ";" [ OWS parameter ] )
#   parameter  = token [ BWS "=" BWS word ]
# names compared without regard to case, values as written; only the first instance of a preference counts.
_IRI_LISTS = st.lists(iris, min_size=1, max_size=2, unique=True).map(" ".join)
_WORDS = st.sampled_from(["representation", "minimal", "Representation", "", "5", "lenient"])
_blank = st.sampled_from(["", " ", "\t", " \t "])


@st.composite
def _preference(draw: st.DrawFn) -> tuple[str, str, list[tuple[str, str]], str]:
    """A preference as (name, value, parameters) and as a client may write it."""
    def word(value: str) -> str:
        if value and value.isalpha() and not draw(st.booleans()):
            return value
        return '"' + "".join("\\" + c if c in '"\\' or draw(st.booleans()) else c for c in value) + '"'

    name = draw(st.sampled_from(["return", "RETURN", "Return", "wait", "handling", "respond-async", "include"]))
    value = draw(_WORDS)
    written = name + (draw(_blank) + "=" + draw(_blank) + word(value) if value or draw(st.booleans()) else "")
    parameters = []
    for _ in range(draw(st.integers(0, 2))):
        key = draw(st.sampled_from(["include", "INCLUDE", "x", "return"]))
        said = draw(_IRI_LISTS) if key.lower() == "include" else draw(_WORDS)
        parameters.append((key, said))
        written += draw(_blank) + ";" + draw(_blank) + key + draw(_blank) + "=" + draw(_blank) + word(said)
    return name, value, parameters, written


@given(st.lists(_preference(), max_size=4), st.integers(1, 3), st.booleans())
def test_prefer_is_read_by_rfc_7240s_grammar_the_first_return_counting(
        listed: list[tuple[str, str, list[tuple[str, str]], str]], cut: int, empties: bool) -> None:
    elements = [written for *_, written in listed] + ([" ", ""] if empties else [])
    fields = [", ".join(elements[i::cut]) for i in range(cut)] if cut > 1 else [", ".join(elements)]
    if cut > 1:  # the fields in order are the list in order: the elements dealt out and put back in order
        elements = [e for i in range(cut) for e in elements[i::cut]]
    first = next((p for p in (next(p for p in listed if p[3] == e) for e in elements if e.strip(" \t"))
                  if p[0].lower() == "return"), None)
    wanted = first is not None and first[1] == "representation"
    include: set[str] = set()
    if wanted and first is not None:
        include = set(next((v for k, v in first[2] if k.lower() == "include"), "").split())
    if wanted and {PREFER_IRIS, PREFER_DESCRIPTIONS} <= include:
        with pytest.raises(ParseError, match="PreferContainedIRIs"):
            preferences(fields)
        return
    assert preferences(fields) == (wanted, include)


def test_prefer_examples_of_rfc_7240_section_2() -> None:
    minimal = f'return=representation; include="{PREFER_MINIMAL}"'
    assert preferences([minimal]) == (True, {PREFER_MINIMAL})
    # only the first return counts: a later one is ignored, in the same field or the next
    assert preferences([f"return=minimal, {minimal}"]) == (False, set())
    assert preferences(["return=minimal", minimal]) == (False, set())
    assert preferences([f"{minimal}, return=minimal"]) == (True, {PREFER_MINIMAL})
    # include is a parameter of the return preference, not of another
    assert preferences([f'return=representation, wait=5; include="{PREFER_IRIS}"']) == (True, set())
    # a quoted string is a value, never a preference
    assert preferences(['handling="a, return=representation"']) == (False, set())
    assert preferences(['handling="x return=representation"']) == (False, set())
    # names without regard to case, values as written
    assert preferences(["RETURN = representation"]) == (True, set())
    assert preferences(["return=Representation"]) == (False, set())


def test_prefer_of_quotes_never_closed_is_read_in_one_pass() -> None:
    # RFC 9110 §5.6.4: '"\' opens a quoted string whose backslash quotes the next quote, so none closes; each was
    # read to the end again, quadratic: 30 s of a worker's event loop for a Prefer of 64 KB, hours for this one
    assert preferences(['"\\' * 500_000]) == (False, set())
    assert preferences(['"\\' * 500_000 + ", return=representation"]) == (True, set())
