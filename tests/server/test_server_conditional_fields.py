"""``If-None-Match`` (RFC 9110 §13.1.2) and the ``Accept`` fields the answer cache leaves to the resolver.

:func:`pdi.server.http.conditional.tag_matches` is checked against a reading
of the field written here from RFC 9110's grammar (§8.8.3: ``entity-tag =
[ weak ] opaque-tag``, ``opaque-tag = DQUOTE *etagc DQUOTE``; §13.1.2:
``If-None-Match = "*" / #entity-tag``, compared weakly: ``W/`` aside, the
same opaque tag), character by character rather than by a pattern, and
:func:`pdi.server.process.cache.accept_negotiates` against the plain
definition it keeps (any of the types it names, anywhere in the field).
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from pdi.server.http.conditional import if_match_holds, tag_matches
from pdi.server.process.cache import _NEGOTIATED, accept_negotiates

_ETAGC = [chr(0x21), *map(chr, range(0x23, 0x7F)), *map(chr, range(0x80, 0x100))]


def _opaque_tags(field: str) -> list[str] | None:
    """The opaque tags of an ``If-None-Match`` list (RFC 9110 §5.6.1: elements separated by commas and optional
    white space, empty elements allowed: ``"a" "b"`` is none), each with its quotes; ``None`` when the field is not
    such a list."""
    tags: list[str] = []
    at = 0
    while at < len(field):
        if field[at] in " \t,":
            at += 1
            continue
        if field.startswith("W/", at):
            at += 2
        if at >= len(field) or field[at] != '"':
            return None
        end = at + 1
        while end < len(field) and field[end] != '"':
            if field[end] not in _ETAGC:
                return None
            end += 1
        if end >= len(field):
            return None
        tags.append(field[at : end + 1])
        at = end + 1
        while at < len(field) and field[at] in " \t":
            at += 1
        if at < len(field) and field[at] != ",":  # OWS "," OWS between elements: a comma, not a blank alone
            return None
    return tags


_OPAQUE = st.text(alphabet=st.sampled_from(_ETAGC[:95]), max_size=12).map(lambda t: f'"{t}"')
_ELEMENT = st.tuples(st.booleans(), _OPAQUE).map(lambda w: ("W/" if w[0] else "") + w[1])
_LIST = st.lists(_ELEMENT, min_size=1, max_size=4).flatmap(
    lambda tags: st.lists(st.sampled_from([",", ", ", " ,", ",\t"]), min_size=len(tags) - 1,
                          max_size=len(tags) - 1).map(lambda seps: "".join(
                              t + (seps[i] if i < len(seps) else "") for i, t in enumerate(tags))))


@given(_LIST, _OPAQUE)
def test_if_none_match_holds_exactly_when_a_listed_opaque_tag_is_the_tag(field: str, tag: str) -> None:
    tags = _opaque_tags(field)
    assert tags is not None
    assert tag_matches(field, tag) == (tag in tags)


@given(_LIST)
def test_each_tag_listed_matches_itself_and_a_star_matches_all(field: str) -> None:
    for opaque in _opaque_tags(field) or []:
        assert tag_matches(field, opaque)
        assert tag_matches(opaque, opaque)  # the field a cache sends back: the one tag it kept
        assert tag_matches("W/" + opaque, opaque)  # weak comparison
        assert tag_matches(" * ", opaque)


def _entity_tags(field: str) -> list[tuple[bool, str]] | None:
    """Each entity tag of an ``If-Match`` or ``If-None-Match`` list as (weak, its opaque tag), by the steps of
    :func:`_opaque_tags`; ``None`` when the field is no such list."""
    tags: list[tuple[bool, str]] = []
    at = 0
    while at < len(field):
        if field[at] in " \t,":
            at += 1
            continue
        weak = field.startswith("W/", at)
        at += 2 if weak else 0
        end = at + 1
        while end < len(field) and field[end] != '"':
            end += 1
        tags.append((weak, field[at : end + 1]))
        at = end + 1
    return tags if _opaque_tags(field) is not None else None


#: Any field of the characters that make a list, and some that make none (a small w/, a bare word, a quote).
_ANY_FIELD = st.lists(st.sampled_from(['"a"', '"b"', '"a,b"', "W/", "w/", ",", " ", "\t", '"', "x", "*"]),
                      max_size=8).map("".join)


@given(_ANY_FIELD, st.sampled_from(['"a"', '"b"', '"a,b"', '""']))
def test_a_field_that_is_no_list_of_entity_tags_holds_none(field: str, tag: str) -> None:
    # §13.1.2: "*" / #entity-tag; what is neither names no tag, however like one a piece of it looks: w/"a" is no
    # weak tag (weak = %s"W/", case-sensitive: §8.8.3) and no strong "a", so If-Match holds no tag of it (no write
    # is made on it) and If-None-Match matches none
    listed = _entity_tags(field)
    if field.strip(" \t") == "*":
        assert tag_matches(field, tag) and if_match_holds(field, tag)
    elif listed is None:
        assert not tag_matches(field, tag) and not if_match_holds(field, tag), field
    else:
        assert tag_matches(field, tag) == any(opaque == tag for _, opaque in listed), field
        assert if_match_holds(field, tag) == any(opaque == tag and not weak for weak, opaque in listed), field


def test_a_small_w_is_no_weak_tag_and_no_strong_one() -> None:
    assert not if_match_holds('w/"a"', '"a"') and not tag_matches('w/"a"', '"a"')
    assert not if_match_holds('x"a"', '"a"') and not if_match_holds('"b" "a"', '"a"')
    assert if_match_holds('"b", "a"', '"a"') and not if_match_holds('"b", W/"a"', '"a"')


@given(st.binary(max_size=80) | st.lists(st.sampled_from(
    [*_NEGOTIATED, b"text/html", b"*/*", b"application/", b"json", b",", b";q=0.5", b" "])).map(b"".join))
def test_an_accept_negotiates_when_it_names_a_type_the_resolver_may_answer_instead(accept: bytes) -> None:
    assert accept_negotiates(accept) == any(kind in accept for kind in _NEGOTIATED)


def test_the_usual_accept_fields() -> None:
    assert not accept_negotiates(b"")
    assert not accept_negotiates(b"text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8")
    assert accept_negotiates(b"application/json")
    assert accept_negotiates(b"text/html, application/*;q=0.1")
