"""A MIME field's parameters are cut where RFC 2045 cuts them (:mod:`pdi._mime_params`).

RFC 2045 §5.1: ``parameter := attribute "=" value``, ``value := token / quoted-string``; RFC 822 §3.3: in a
quoted-string a backslash quotes the next character (a quoted-pair). The property writes parameters as that
grammar says (each value a quoted-string, every ``\\`` and ``"`` in it quoted) and reads them back; where no
value holds a backslash, the email package's ``get_params`` (the reading everything else keeps) must agree.
"""

from __future__ import annotations

import importlib
from email import policy
from email.message import Message

from hypothesis import given
from hypothesis import strategies as st

from pdi._mime_params import header_params

parse = importlib.import_module("pdi.mhtml.parse")  # the module (pdi.mhtml's "parse" is its function)

TOKEN = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789-", min_size=1, max_size=8)
VALUE = st.text(alphabet='ab \\";=,.()<>@', max_size=10)


def _quoted(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


@given(st.lists(st.tuples(TOKEN, VALUE), max_size=5, unique_by=lambda p: p[0]))
def test_quoted_values_are_read_back_whole(params: list[tuple[str, str]]) -> None:
    field = "text/html" + "".join(f"; {name}={_quoted(value)}" for name, value in params)
    got = header_params(field)
    assert got == [("text/html", ""), *params]
    if not any("\\" in value for _, value in params):
        message = Message(policy=policy.compat32)
        message["Content-Type"] = field
        assert got == message.get_params()


def test_a_quoted_backslash_ends_its_value() -> None:
    """``charset="\\\\"`` is one backslash (the email package read the rest of the field into it, losing ``name``)."""
    assert header_params('text/html; charset="\\\\"; name="x.html"') == [
        ("text/html", ""), ("charset", "\\"), ("name", "x.html")]


def test_an_mhtml_parts_boundary_after_such_a_value_is_found() -> None:
    """An MHTML file whose Content-Type gives a parameter ending in a quoted backslash before its boundary: the
    boundary is read (the email package's reading lost it, so no part was found)."""
    media_type, params = parse._content_type('multipart/related; x="\\\\"; boundary="b1"; type="text/html"')
    assert media_type == "multipart/related"
    assert dict(params) == {"x": "\\", "boundary": "b1", "type": "text/html"}
