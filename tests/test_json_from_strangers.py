"""JSON that others wrote is read or refused with a ParseError, never an interpreter error (``pdi.untrusted_json``).

What a stranger may send (found by a tester: a batch's manifest nested 100,000 deep was a ``500`` with a
``RecursionError``): each place that reads another's JSON — a JWS header and payload, a JWK set, a registry —
refuses it naming what was read. The values are worked out by the JSON grammar (RFC 8259): ``[`` opens an array
that ``]`` closes, so ``[[…]]`` is JSON at any depth, which Python's reader stops at; ``{]`` is not JSON.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pdi import untrusted_json
from pdi.errors import ParseError
from pdi.federation.registry import Registry
from pdi.signing import (
    SigningKey,
    b64url,
    parse_jwks,
    sign_manifest,
    verify_compact,
    verify_manifest,
)

DEEP = "[" * 100_000 + "]" * 100_000


@given(st.recursive(st.none() | st.booleans() | st.integers() | st.text(),
                    lambda inner: st.lists(inner) | st.dictionaries(st.text(), inner), max_leaves=20))
def test_json_within_depth_is_read_as_json_reads_it(value: object) -> None:
    assert untrusted_json.loads(json.dumps(value), "it", rule="r") == value


@pytest.mark.parametrize(("text", "said"), [
    (DEEP, "it is not JSON pdi reads: it is nested too deep"),
    ("{]", "it is not JSON: "),
    (b"\xff[]", "it is not JSON: "),
])
def test_what_is_not_json_pdi_reads_is_a_parse_error_naming_it(text: str | bytes, said: str) -> None:
    with pytest.raises(ParseError, match="^" + said) as caught:
        untrusted_json.loads(text, "it", rule="r")
    assert caught.value.rule == "r"


def test_a_jws_a_jwk_set_and_a_manifest_nested_too_deep_are_refused_in_words() -> None:
    key = SigningKey.generate()
    with pytest.raises(ParseError, match="the JWS header is not JSON pdi reads"):
        verify_compact(b64url(DEEP.encode()) + "." + b64url(b"{}") + ".", [key.public])
    with pytest.raises(ParseError, match=r"keys\.json is not JSON pdi reads"):
        parse_jwks(DEEP, "keys.json")
    with pytest.raises(ParseError, match="the manifest's payload is not JSON pdi reads"):
        verify_manifest(sign_manifest(key, DEEP.encode()), [key.public])


def test_a_registry_nested_too_deep_is_refused_naming_it() -> None:
    with pytest.raises(ParseError, match=r"registry\.json is not JSON pdi reads"):
        Registry.from_json(DEEP.encode(), "registry.json")


def test_a_peers_manifest_page_nested_too_deep_has_no_next_page() -> None:
    """``pdi manifest check URL`` reads a page's ``next`` before checking its signature: a payload nested too deep
    has none (the signature check then refuses the page), rather than stopping the command with a RecursionError."""
    from pdi.cli.manifest_check import _next_of

    assert _next_of("e30." + b64url(DEEP.encode()) + ".") is None
    assert _next_of("e30." + b64url(b'{"next": "2026-11-26"}') + ".") == "2026-11-26"
