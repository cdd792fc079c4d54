"""pdi.mhtml.headers.served_content_type: an MHTML file's Content-Type as HTTP serves it (RFC 2046 §5.1.1, RFC 2387 §3.1).

Checked with the standard library's MIME parser: the file's body read with the
served Content-Type must give the parts the parser finds in the whole file.
"""

from __future__ import annotations

import email
import email.policy
from pathlib import Path

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from pdi.mhtml.headers import SERVED_TYPE_OCTETS, served_content_type

CORPUS = Path(__file__).parent / "data" / "corpus" / "mhtml"


def _parts(message: email.message.Message) -> list[tuple[str, bytes | None]]:
    return [(p.get_content_type(), p.get_payload(decode=True)) for p in message.walk() if not p.is_multipart()]


def _served(content_type: str, body: bytes) -> email.message.Message:
    return email.message_from_bytes(b"Content-Type: " + content_type.encode("latin-1") + b"\r\n\r\n" + body,
                                    policy=email.policy.default)


@pytest.mark.parametrize("path", sorted(CORPUS.glob("*.mhtml")), ids=lambda p: p.name)
def test_rfc2046_5_1_1_corpus_files_served_read_as_the_files_themselves(path: Path) -> None:
    data = path.read_bytes()
    whole = email.message_from_bytes(data, policy=email.policy.default)
    served = served_content_type(data[:SERVED_TYPE_OCTETS])
    if not whole.is_multipart() or whole.get_boundary() is None:
        assert served is None or "boundary=" in served  # nothing the file's own reader finds either
        return
    assert served is not None and "\r" not in served and "\n" not in served
    got = _served(served, data)
    assert got.get_boundary() == whole.get_boundary()
    assert got.get_content_type() == whole.get_content_type()
    assert _parts(got) == _parts(whole)
    if whole.get_param("type") is not None:
        assert got.get_param("type") == whole.get_param("type")


#: RFC 2046 §5.1.1 bchars (a space is one, but never the last).
BCHARS = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ'()+_,-./:=? "
boundaries = st.text(BCHARS, min_size=1, max_size=70).filter(lambda b: not b.endswith(" "))
root_types = st.sampled_from(["text/html", "application/xhtml+xml", "image/svg+xml", "text/plain"])


@given(boundary=boundaries, root=root_types, given_type=st.booleans(), folded=st.booleans(), lf=st.booleans())
def test_rfc2387_3_1_boundary_and_type_survive(boundary: str, root: str, given_type: bool, folded: bool,
                                               lf: bool) -> None:
    eol = "\n" if lf else "\r\n"
    separator = ";" + eol + "\t" if folded else "; "
    field = "Content-Type: multipart/related" + (separator + f'type="{root}"' if given_type else "")
    field += separator + f'boundary="{boundary}"'
    data = eol.join(["MIME-Version: 1.0", field, "", f"--{boundary}", f"Content-Type: {root}", "", "<p>root</p>",
                     f"--{boundary}--", ""]).encode("ascii")
    served = served_content_type(data)
    assert served is not None
    got = _served(served, data)
    assert not got.defects
    assert got.get_boundary() == boundary
    assert got.get_param("type") == root  # given, or the first part's (the root when no start names one)
    assert [p.get_content_type() for p in got.iter_parts()] == [root]


@given(st.binary(max_size=2000))
def test_any_octets_give_one_line_or_none(data: bytes) -> None:
    served = served_content_type(data)
    assert served is None or (served.startswith("multipart/") and served.isprintable() and served.isascii())


def test_start_keeps_its_angle_brackets() -> None:
    served = served_content_type(b'Content-Type: multipart/related; boundary=b; start="<root@x>"\r\n\r\n')
    assert served is not None
    assert _served(served, b"").get_param("start") == "<root@x>"
    assert "type=" not in served  # the start part is not the first: its type is not guessed


#: RFC 9110 §5.6.2: a token's characters
_TCHAR = "!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


@given(st.text(alphabet=st.sampled_from("relatd-+.!~" + '"\\()[]<>@,:?=' + "\x01\x0b\x7f\u00e9\u0085"), min_size=1,
               max_size=8))
def test_a_file_whose_type_is_no_media_type_is_served_no_type_of_its_own(subtype: str) -> None:
    """Found by an attack: compat32 keeps any octets of a Content-Type but a second ``/``, and the file's own
    ``multipart/rel<U+0001>ated`` was served, a field no HTTP parser takes (h11 refuses a control character); the
    property above, one printable line or none, did not hold. None, when the subtype is no token."""
    data = ("Content-Type: multipart/" + subtype + "; boundary=b\r\n\r\n--b\r\n\r\nx\r\n--b--\r\n").encode("latin-1")
    served = served_content_type(data)
    token = subtype.split(";")[0].strip(" \t")
    if token and all(ch in _TCHAR for ch in token) and ";" not in subtype:
        assert served is not None and served.startswith(f'multipart/{token.lower()}; boundary="b"')
    else:
        assert served is None or (served.isprintable() and served.isascii()), served


#: What a field's value may hold that str.splitlines() takes for a line end and a mail parser does not: NEL (a
#: Windows-1252 ellipsis read as Latin-1), VT, FF and the information separators.
_NOT_LINE_ENDS = ["\x85", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e"]
_VALUES = st.lists(st.sampled_from([*_NOT_LINE_ENDS, "a", " ", ":", "Content-Type: text/plain", "X: y",
                                    "\xe9"]), max_size=6).map("".join)


@given(st.lists(_VALUES, max_size=3), st.lists(_VALUES, max_size=2), boundaries)
@example(["Wait\x85Content-Type: text/plain"], [], "b")
@example([], ["a\x0cContent-Type: image/png"], "b")
def test_fields_are_cut_into_lines_as_the_mail_parser_cuts_them(top: list[str], part: list[str],
                                                                 boundary: str) -> None:
    """A field's value holding an octet that str.splitlines() reads as a line end (0x85 is one, and a Windows-1252
    ellipsis) is one field still: the file's type and its root's are those Python's mail parser reads."""
    head = "".join(f"X-Note-{n}: {value}\r\n" for n, value in enumerate(top))
    part_head = "".join(f"X-Part-{n}: {value}\r\n" for n, value in enumerate(part))
    data = (f'{head}Content-Type: multipart/related; boundary="{boundary}"\r\n\r\n--{boundary}\r\n{part_head}'
            f"Content-Type: text/html\r\n\r\n<p>root</p>\r\n--{boundary}--\r\n").encode("latin-1")
    whole = email.message_from_bytes(data, policy=email.policy.compat32)
    assert whole.get_content_type() == "multipart/related"
    served = served_content_type(data)
    assert served is not None
    got = _served(served, data)
    assert got.get_boundary() == boundary
    assert got.get_param("type") == "text/html"
