"""What an annotation's targets and bodies must be (W3C Web Annotation Data Model §3.2, §4, §4.2), checked as the
annotation server keeps one: what the W3C's own schemas of the Model's MUSTs (``w3c/web-annotation-tests``, copied
into ``tests/data/annotation``) find invalid is refused, naming where as an RFC 6901 JSON pointer, and nothing is
kept.

Found by a stranger's client, 2026-11-27: a target of ``5``, ``null``, ``{}``, or a ``TextPositionSelector`` of
``start: -1`` was kept (``201``) as an annotation of nothing, which no client of the Model reads back.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
import requests
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_server_annotations import ANNO, PROFILE, Server, created, note, server, w3c_musts

from pdi.archive.kept_annotations import check_annotation
from pdi.errors import ParseError, UnsupportedError

__all__ = ["server"]  # the fixture, shared with the protocol's tests

PAGE = "http://example.com/page"


def annotation(target: Any, **more: Any) -> dict[str, Any]:
    return {"@context": ANNO, "id": "http://example.org/anno/1", "type": "Annotation", "target": target, **more}


def specific(selector: Any) -> dict[str, Any]:
    return {"type": "SpecificResource", "source": PAGE, "selector": selector}


def w3c_valid(instance: dict[str, Any]) -> bool:
    try:
        w3c_musts("annotation", instance)
    except AssertionError:
        return False
    return True


@pytest.mark.parametrize(("target", "more", "pointer"), [
    (5, {}, "/target"),
    (True, {}, "/target"),
    ({}, {}, "/target"),
    ({"type": "Text"}, {}, "/target"),
    ([PAGE, None], {}, "/target/1"),
    ([PAGE, [PAGE]], {}, "/target/1"),
    ({"type": "SpecificResource", "source": 7}, {}, "/target/source"),
    ({"type": "Choice", "items": []}, {}, "/target/items"),
    (specific({"type": "TextQuoteSelector"}), {}, "/target/selector/exact"),
    (specific({"type": "TextQuoteSelector", "exact": "a", "prefix": 3}), {}, "/target/selector/prefix"),
    (specific({"type": "TextPositionSelector", "start": -1, "end": 2}), {}, "/target/selector/start"),
    (specific({"type": "TextPositionSelector", "start": 0, "end": 2.5}), {}, "/target/selector/end"),
    (specific({"type": "DataPositionSelector", "start": 0}), {}, "/target/selector/end"),
    (specific({"type": "DataPositionSelector", "start": False, "end": 1}), {}, "/target/selector/start"),
    (specific([{"type": "FragmentSelector", "value": "char=1"}, {"type": "FragmentSelector"}]), {},
     "/target/selector/1/value"),
    (specific({"type": "CssSelector", "value": None}), {}, "/target/selector/value"),
    (specific({"type": "RangeSelector", "startSelector": {"type": "XPathSelector", "value": "/a"}}), {},
     "/target/selector/endSelector"),
    (specific({"type": "RangeSelector", "startSelector": {"type": "XPathSelector", "value": "/a"},
               "endSelector": {"type": "TextPositionSelector", "start": "1", "end": 2}}), {},
     "/target/selector/endSelector/start"),
    (specific(5), {}, "/target/selector"),
    (PAGE, {"body": 5}, "/body"),
    (PAGE, {"body": [{"type": "TextualBody", "value": "ok"}, {"type": "TextualBody", "value": 3}]}, "/body/1/value"),
    (PAGE, {"bodyValue": ["a", "b"]}, "/bodyValue"),
    (PAGE, {"bodyValue": 5}, "/bodyValue"),
])
def test_a_target_or_body_that_names_no_resource_is_refused_where_it_is(
    target: Any, more: dict[str, Any], pointer: str
) -> None:
    sent = annotation(target, **more)
    assert not w3c_valid(sent)  # the W3C's schemas find it invalid too
    with pytest.raises(ParseError) as refused:
        check_annotation(sent)
    assert refused.value.details == {"pointer": pointer}
    assert f"at {pointer}" in str(refused.value)


def test_an_annotation_without_a_context_or_a_type_is_told_it_has_none() -> None:
    """A client that left @context out was told it was null ("…, not null, at /@context"), as if it had sent
    "@context": null: the refusal says that this one has none; a context or type sent wrong is quoted as sent."""
    sent = annotation(PAGE)
    del sent["@context"]
    assert not w3c_valid(sent)  # the Data Model requires it (§3.1), and so do the W3C's schemas
    with pytest.raises(UnsupportedError) as refused:
        check_annotation(sent)
    assert "and this one has none" in str(refused.value) and "null" not in str(refused.value)
    assert refused.value.details == {"pointer": "/@context"}
    with pytest.raises(UnsupportedError, match="not null, at /@context"):
        check_annotation({**annotation(PAGE), "@context": None})
    untyped = annotation(PAGE)
    del untyped["type"]
    with pytest.raises(ParseError, match="Annotation, and this one has none, at /type"):
        check_annotation(untyped)
    with pytest.raises(ParseError, match='Annotation, not "Note", at /type'):
        check_annotation({**annotation(PAGE), "type": "Note"})


def test_a_selector_refined_thousands_deep_is_checked_without_recursion() -> None:
    selector: dict[str, Any] = {"type": "TextPositionSelector", "start": -1, "end": 1}
    for _ in range(5000):
        selector = {"type": "TextQuoteSelector", "exact": "x", "refinedBy": selector}
    with pytest.raises(ParseError) as refused:
        check_annotation(annotation(specific(selector)))
    assert refused.value.details == {"pointer": "/target/selector" + "/refinedBy" * 5000 + "/start"}


@pytest.mark.parametrize("target", [
    PAGE, [PAGE, {"id": PAGE, "type": "Text"}],
    specific({"type": "TextQuoteSelector", "exact": "", "prefix": "a", "suffix": "b"}),
    specific([{"type": "TextPositionSelector", "start": 0, "end": 0}, {"type": "DataPositionSelector", "start": 3,
                                                                           "end": 9}]),
    specific({"type": "RangeSelector", "startSelector": {"type": "CssSelector", "value": "#a"},
              "endSelector": {"type": "FragmentSelector", "value": "char=1",
                              "conformsTo": "http://tools.ietf.org/rfc/rfc5147"}}),
    specific({"type": "FragmentSelector", "value": "p1",
              "refinedBy": {"type": "TextQuoteSelector", "exact": "word"}}),
    {"type": "Choice", "items": [PAGE, {"id": PAGE}]},
])
def test_what_the_model_allows_is_kept(target: Any) -> None:
    sent = annotation(target, body={"type": "TextualBody", "value": "a note"})
    assert w3c_valid(sent)
    assert check_annotation(sent)["target"] == target


_members = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.floats(allow_nan=False, allow_infinity=False),
                     st.text(max_size=3))
_selector = st.builds(
    lambda kind, members: {"type": kind, **{k: v for k, v in members.items() if v is not ...}},
    st.sampled_from(["TextQuoteSelector", "TextPositionSelector", "DataPositionSelector", "FragmentSelector",
                     "CssSelector", "XPathSelector"]),
    st.fixed_dictionaries({k: st.just(...) | _members for k in ("exact", "prefix", "suffix", "start", "end", "value")}),
)


@settings(max_examples=150, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(_selector)
def test_a_selector_is_kept_exactly_when_the_w3c_schemas_find_it_valid(selector: dict[str, Any]) -> None:
    sent = annotation(specific(selector), body=PAGE)
    try:
        check_annotation(sent)
    except ParseError:
        kept = False
    else:
        kept = True
    assert kept == w3c_valid(sent), selector


def test_the_server_refuses_it_with_a_pointer_and_keeps_nothing(server: Server) -> None:
    refused = server.post(note([server.text, {"type": "SpecificResource", "source": server.text,
                                             "selector": {"type": "TextPositionSelector", "start": -4, "end": 2}}]))
    assert refused.status_code == 400 and refused.headers["Content-Type"] == "application/problem+json"
    assert refused.json()["pointer"] == "/target/1/selector/start"
    assert "/target/1/selector/start" in refused.json()["detail"]
    assert requests.get(server.container, timeout=30).json()["total"] == 0
    made = created(server, note(server.text))
    iri, tag, state = made.headers["Location"], made.headers["ETag"], made.json()
    put = server.write("PUT", iri, body={**state, "target": None}, **{"If-Match": tag})
    assert put.status_code == 400 and put.json()["pointer"] == "/target", put.text
    put = server.write("PUT", iri, body={**state, "target": [server.text, 0]}, **{"If-Match": tag})
    assert put.status_code == 400 and put.json()["pointer"] == "/target/1", put.text
    assert requests.get(iri, timeout=30).json() == state
    assert json.loads(json.dumps(state)) == requests.get(iri, headers={"Accept": PROFILE}, timeout=30).json()


def test_a_member_named_twice_is_refused_with_its_pointer_and_nothing_kept(server: Server) -> None:
    """RFC 8259 §4: names within an object SHOULD be unique, and readers differ on which of two is meant. Found by a
    stranger's client, 2026-11-27: ``{"target": <a web page>, …, "target": <a private document>}`` was kept (``201``)
    as whichever Python read, the last, where a reader that takes the first sees an annotation of a web page."""
    text = json.dumps(note("http://example.com/a-page"))[:-1] + f', "target": {json.dumps(server.private)}}}'
    for url, headers in ((server.container, {"Authorization": f"Bearer {server.curator}", "Content-Type": PROFILE}),
                         (server.url + "/api/annotation", {"Content-Type": "application/json"})):
        refused = requests.post(url, data=text.encode(), headers=headers, timeout=30)
        assert refused.status_code == 400, refused.text
        assert refused.json()["pointer"] == "/target" and "twice" in refused.json()["detail"]
    nested = note({"type": "SpecificResource", "source": server.text,
                   "selector": {"type": "TextQuoteSelector", "exact": "quick"}})
    text = json.dumps(nested).replace('"exact": "quick"', '"exact": "quick", "exact": "brown"')
    refused = requests.post(server.container, data=text.encode(), timeout=30, headers={
        "Authorization": f"Bearer {server.curator}", "Content-Type": PROFILE})
    assert refused.status_code == 400 and refused.json()["pointer"] == "/target/selector/exact"
    assert requests.get(server.container, timeout=30).json()["total"] == 0
