"""formats.content_type_of: a Content-Type header value read leniently (RFC 9110 §8.3), as capture and WARC
import read what a server sent. Checked against the standard library's email header parser (an independent
reading of the same grammar, RFC 2045 §5.1) for well-formed values, and for never failing on any other."""

from __future__ import annotations

from email.message import Message

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pdi import formats
from pdi.errors import UnsupportedError

# RFC 9110 §5.6.2 token characters (no "/" or ";" or "="), in both cases
_TCHAR = "!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
tokens = st.text(alphabet=_TCHAR, min_size=1, max_size=12)


def _email_reading(value: str) -> tuple[str, str | None]:
    message = Message()
    message["Content-Type"] = value
    charset = message.get_param("charset")
    assert charset is None or isinstance(charset, str)
    return message.get_content_type(), charset


@given(major=tokens, minor=tokens, charset=tokens, quoted=st.booleans(), spaces=st.sampled_from(["", " ", "  "]))
def test_rfc9110_8_3_well_formed_agrees_with_email(
    major: str, minor: str, charset: str, quoted: bool, spaces: str
) -> None:
    shown = f'"{charset}"' if quoted else charset
    value = f"{major}/{minor};{spaces}charset={shown}"
    assert formats.content_type_of(value) == _email_reading(value)


@given(major=tokens, minor=tokens, name=tokens, other=tokens)
def test_rfc9110_8_3_other_parameters_are_passed_over(major: str, minor: str, name: str, other: str) -> None:
    value = f"{major}/{minor}; {name}x={other}"  # a parameter that is not charset (its name ends in x)
    assert formats.content_type_of(value) == (f"{major}/{minor}".lower(), None)
    assert _email_reading(value)[0] == f"{major}/{minor}".lower()


def test_missing_or_empty_values_are_none() -> None:
    assert formats.content_type_of(None) == (None, None)
    assert formats.content_type_of("") == (None, None)
    assert formats.content_type_of("; charset=utf-8") == (None, "utf-8")
    assert formats.content_type_of('text/html; charset=""') == ("text/html", None)


@given(st.text(max_size=60))
def test_any_header_value_reads_without_error(value: str) -> None:
    media, charset = formats.content_type_of(value)
    assert media is None or media == media.lower()
    assert charset is None or charset


# RFC 9110 §5.6.4: qdtext is HTAB, SP, %x21, %x23-5B, %x5D-7E and obs-text; any of those or DQUOTE and "\" may
# be a quoted-pair
_QDTEXT = "\t !" + "".join(chr(c) for c in range(0x23, 0x5C)) + "".join(chr(c) for c in range(0x5D, 0x7F))


@given(value=st.text(alphabet=_QDTEXT + '"\\', max_size=20), quote_all=st.booleans())
def test_rfc9110_5_6_4_a_quoted_string_reads_back_as_written(value: str, quote_all: bool) -> None:
    quoted = "".join("\\" + c if c in '"\\' or quote_all else c for c in value)
    mt, charset = formats.split_media_type(f'text/plain; charset="{quoted}"')
    assert (mt, charset) == ("text/plain", value)
    if not quote_all:  # the standard library unquotes \" and \\ alone (email.utils.unquote)
        assert _email_reading(f'text/plain; charset="{quoted}"')[1] == value  # and reads the same


@pytest.mark.parametrize(("value", "words"), [
    ('text/plain; charset="utf-8', "is not closed"),
    ('text/plain; charset="utf-8\\"', "is not closed"),  # the last quote is quoted: no closing one
    ('text/plain; charset="utf-8"x', "text after the quoted string"),
    ("text/plain; charset=utf 8", "a token or a quoted string"),
    ('text/plain; charset=utf"8', "a token or a quoted string"),
    ("text/plain; charset=", "a token or a quoted string"),
])
def test_a_parameter_value_that_is_neither_token_nor_quoted_string_is_refused(value: str, words: str) -> None:
    with pytest.raises(UnsupportedError, match=words):
        formats.split_media_type(value)
