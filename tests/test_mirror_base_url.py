"""A mirror's or announcing peer's base URL (:func:`pdi.archive.mirroring.base_url`), from text a stranger sends
(``POST /api/mirrors``' ``base_url``, a ``DELETE``'s) or an operator types: read, or refused with a ParseError.

What is read is a URL httpx (which sends every request) can make a request to: its host read, A-labels and all
(by the ``idna`` package, IDNA 2008, RFC 5891)."""

from __future__ import annotations

import httpx
import idna
import pytest
from hypothesis import given
from hypothesis import strategies as st

from pdi.archive.mirroring import base_url, recorded_url
from pdi.errors import ParseError

_PIECES = st.sampled_from(["http://", "https://", "xn--", "xn--bcher-kva", "xn--ls8h", "a", "-", ".", ":", ":8080",
                           "/", "ß", "é", "\u212a", "Bücher", "example", "?", "#", "@", "[", "]", "%41"])


@pytest.mark.parametrize("text", ["http://xn--", "http://xn--/", "https://xn--xn--.example/", "http://xn--ls8h/",
                                  "http://xn--a/pdi"])
def test_a_host_of_an_a_label_that_decodes_to_nothing_is_refused_not_a_traceback(text: str) -> None:
    """Found by a hunt (2026-12-01): httpx decodes a host's A-labels when its host is first asked for, not when the
    URL is made, so ``http://xn--/`` (an A-label of no Punycode) announced by a peer ended ``POST /api/mirrors`` in
    idna's ``IDNAError`` (a 500), and ``pdi mirror add`` in a traceback."""
    with pytest.raises(ParseError, match="base URL is http"):
        base_url(text)
    assert recorded_url(text)  # what an earlier pdi recorded is still found to forget it


@given(st.lists(_PIECES, max_size=8).map("".join))
def test_any_text_is_a_base_url_httpx_can_ask_or_a_parse_error(text: str) -> None:
    try:
        made = base_url(text)
    except ParseError:
        return
    url = httpx.URL(made)
    assert url.scheme in ("http", "https") and url.host and not url.query and not url.fragment
    if not url.host.isascii():  # an IDN: its A-label form is what a request sends (RFC 5891 §4.2)
        idna.encode(url.host)
