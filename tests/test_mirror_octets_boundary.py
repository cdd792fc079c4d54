"""The boundary of a ``POST /api/octets`` answer, read from its ``Content-Type`` as RFC 9110 §5.6.6 writes a media
type's parameters (``;``-separated, each name in any case, each value a token or a quoted-string) and RFC 2046
§5.1.1 a boundary (1 to 70 ``bchars``, the last not a space). The header fields are written here from parameters
the test chose, so the boundary expected is the one put in, not one read back."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pdi.errors import ParseError
from pdi.network.peers import _boundary

_TOKEN = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")  # RFC 9110 §5.6.2 tchar
_BCHARS = re.compile(r"[0-9A-Za-z'()+_,./:=? -]{0,69}[0-9A-Za-z'()+_,./:=?-]")  # RFC 2046 §5.1.1


def _written(value: str) -> str:
    """A parameter's value as RFC 9110 §5.6.6 writes it: a token as it is, else a quoted-string (§5.6.4)."""
    if _TOKEN.fullmatch(value):
        return value
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


_OTHER = st.tuples(st.sampled_from(["charset", "x", "foo"]),
                   st.text(st.sampled_from("!#$%&'*+-.^_`|~09azAZ \";\\boundary="), max_size=12))


@given(st.lists(st.one_of(_OTHER.map(lambda t: (False, *t)),
                          st.text(st.sampled_from("0123456789abcXYZ'()+_,-./:=? "), min_size=1, max_size=75)
                          .map(lambda b: (True, "boundary", b))), max_size=4),
       st.sampled_from(["boundary", "Boundary", "BOUNDARY"]), st.sampled_from(["multipart/mixed", "Multipart/Mixed",
                                                                            "multipart/mixedx", "text/plain"]),
       st.sampled_from([";", " ; ", ";\t"]))
def test_rfc9110_5_6_6_the_boundary_parameter_is_read_in_any_case_and_only_as_a_parameter(
        parameters: list[tuple[bool, str, str]], spelt: str, media_type: str, separator: str) -> None:
    """Found by a property (2026-12-01): ``Boundary=`` (a parameter's name is case-insensitive) was refused, and
    ``boundary=`` was found inside another parameter's quoted value (``x="boundary=evil"``) and taken."""
    text = media_type + "".join(f"{separator}{spelt if is_boundary else name}={_written(value)}"
                                for is_boundary, name, value in parameters)
    boundaries = [value for is_boundary, _, value in parameters if is_boundary]
    good = (media_type.lower() == "multipart/mixed" and len(boundaries) == 1
            and _BCHARS.fullmatch(boundaries[0]) is not None)
    if good:
        assert _boundary(text, "http://o.example/api/octets") == boundaries[0].encode("ascii")
    else:
        with pytest.raises(ParseError, match="not multipart/mixed with a boundary"):
            _boundary(text, "http://o.example/api/octets")


@pytest.mark.parametrize(("content_type", "boundary"), [
    ("multipart/mixed; boundary=B", b"B"),
    ("multipart/mixed; Boundary=B", b"B"),
    ('multipart/mixed; boundary="a b"', b"a b"),
    ('multipart/mixed; x="boundary=evil"; boundary=B', b"B"),
])
def test_rfc2046_5_1_1_boundaries_read(content_type: str, boundary: bytes) -> None:
    assert _boundary(content_type, "u") == boundary


@pytest.mark.parametrize("content_type", [
    "multipart/mixed", "multipart/mixed; boundary=", "multipart/mixed; boundary=" + "b" * 71,
    'multipart/mixed; boundary="b "', "multipart/mixed; boundary=a; boundary=b", "multipart/mixedx; boundary=B",
    'multipart/mixed; x="boundary=evil"', "multipart/mixed; xboundary=B",
])
def test_rfc2046_5_1_1_no_boundary_or_another_is_refused(content_type: str) -> None:
    with pytest.raises(ParseError, match="not multipart/mixed with a boundary"):
        _boundary(content_type, "u")
