"""PDI-GRAMMAR.md §1 (line 217): a reserved character inside a unique id MUST be %-escaped; a name that does not
parse because its unique id holds one unescaped (an e-mail's Message-ID, ``mid:a@b.org``) is refused naming the
character, where it is, its escape and the name meant."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pdi.errors import ParseError
from pdi.identifier import PDI

BASE = "urn:pdi://example.us/2026/12/01/"


def err(text: str) -> ParseError:
    with pytest.raises(ParseError) as info:
        PDI.parse(text)
    return info.value


def escaped(ch: str) -> str:
    """The %-escape of ``ch`` by RFC 3986 §2.1: each UTF-8 octet as ``%`` and two upper-case hex digits."""
    return "".join(f"%{octet:02X}" for octet in ch.encode("utf-8"))


def meant(error: ParseError) -> str:
    found = re.search(r"did you mean '([^']*)'\?", error.reason)
    assert found is not None, error.reason
    return found.group(1)


def test_grammar_1_a_message_id_written_as_it_reads_is_refused_at_its_at_sign_with_its_escape() -> None:
    text = BASE + "mid:minutes-42@example.org.rfc822.1#line=1,2"
    e = err(text)
    at = text.index("@")
    assert (e.rule, e.offset) == ("unique-id", at)
    assert e.reason.startswith(f"'@' at offset {at} inside the unique id must be written %40, and '.' %2E: ")
    assert meant(e) == BASE + "mid:minutes-42%40example%2Eorg.rfc822.1#line=1,2"


def test_grammar_1_a_message_id_with_its_at_sign_escaped_is_refused_at_its_full_stop() -> None:
    text = BASE + "mid:minutes-42%40example.org.rfc822.1#line=1,2"
    e = err(text)
    dot = text.index(".", len(BASE))
    assert (e.rule, e.offset) == ("unique-id", dot)
    assert e.reason.startswith(f"'.' at offset {dot} inside the unique id must be written %2E: ")


def test_grammar_1_a_citation_whose_cited_name_is_wrong_is_not_read_as_a_unique_id() -> None:
    # '@' origin '=' pdi (line 168): the cited name's own error stands, not an escape of the whole as one id
    e = err("urn:pdi://a.us/2000/01/01/5.html.1@120=pdi://b.us/2000/01/01/1.text.1#char=37,51x")
    assert "did you mean" not in e.reason and "cited PDI" in e.reason


_ATOM = st.text(alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_$!", min_size=1, max_size=8)


@given(
    st.lists(_ATOM, min_size=1, max_size=3),
    st.lists(_ATOM, min_size=1, max_size=3),
    st.sampled_from(["", "#line=1,2", "#part=0", "#char=3"]),
)
def test_grammar_1_every_message_id_written_unescaped_is_refused_naming_its_first_reserved_character(
    local: list[str], domain: list[str], fragment: str
) -> None:
    message_id = ".".join(local) + "@" + ".".join(domain)
    text = f"{BASE}mid:{message_id}.rfc822.1{fragment}"
    e = err(text)
    first = next(i for i in range(len(BASE), len(text)) if text[i] in ".@")
    assert (e.rule, e.offset) == ("unique-id", first)
    assert f"inside the unique id must be written {escaped(text[first])}" in e.reason
    named = PDI.parse(meant(e))
    assert named.unique_id == "mid:" + message_id
    assert (named.format, named.version) == ("rfc822", 1)
    assert str(named.fragment or "") == fragment.lstrip("#")
