"""What tells a malformed request line (RFC 9112 §3: ``400``) from an unknown method (RFC 9110 §9.1: ``501``), once
llhttp has refused a request at its method: the octets it began with, read against RFC 9110 §5.6.2's ``token``."""

from __future__ import annotations

import string

from hypothesis import given
from hypothesis import strategies as st

from pdi.server.process.guarded import _method_refused

#: RFC 9110 §5.6.2: ``tchar = "!" / "#" / "$" / "%" / "&" / "'" / "*" / "+" / "-" / "." / "^" / "_" / "`" / "|" /
#: "~" / DIGIT / ALPHA``.
TCHAR = frozenset((string.ascii_letters + string.digits + "!#$%&'*+-.^_`|~").encode())


def _grammar_status(line: bytes) -> int:
    """``501`` where the line begins ``method SP`` (or all that came is a method's octets), else ``400``."""
    line = line.lstrip(b"\r\n")
    n = 0
    while n < len(line) and line[n] in TCHAR:
        n += 1
    return 501 if n and (n == len(line) or line[n] == 0x20) else 400


@given(st.binary(max_size=40) | st.builds(lambda m, rest: m + rest, st.sampled_from(
    [b"GET", b"POST", b"BREW", b"get", b"M-SEARCH", b"\r\nGET"]), st.binary(max_size=8)))
def test_a_line_is_501_exactly_when_it_starts_with_a_token_and_a_space(line: bytes) -> None:
    status, detail = _method_refused(line)
    assert status == _grammar_status(line), line
    assert ("RFC 9110 §9.1" if status == 501 else "RFC 9112 §3") in detail


def test_the_detail_says_what_came_where_the_space_goes() -> None:
    status, detail = _method_refused(b"GET\t/ HTTP/1.1")
    assert status == 400 and "after the method 'GET' comes '\\t'" in detail
    status, detail = _method_refused(b" GET / HTTP/1.1")
    assert status == 400 and "it starts with ' '" in detail


@given(st.integers(0, 500), st.sampled_from([b"BREW / HTTP/1.1", b"GET\t/ HTTP/1.1", b"get /", b" GET /"]))
def test_empty_lines_before_the_line_however_many_are_not_what_it_starts_with(empty: int, line: bytes) -> None:
    """A request may follow more empty lines than the peek's length (RFC 9112 §2.2): the status is the line's own."""
    assert _method_refused(b"\r\n" * empty + line)[0] == _grammar_status(line)
