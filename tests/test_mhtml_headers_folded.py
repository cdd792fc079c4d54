"""A folded header field of an MHTML file shown unfolded (RFC 5322 §2.2.3: unfolding removes each CRLF that is
followed by white space), past the bound of RFC 2047 encoded words decoded too
(:data:`pdi.charsets.rfc2047.MAX_ENCODED_WORDS`), where the rest of the field is shown as written
(:func:`pdi.mhtml.headers.decode_words`)."""

from __future__ import annotations

import json
from pathlib import Path
from unittest import mock

from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from pdi.charsets import rfc2047
from pdi.cli import cli
from pdi.mhtml.headers import decode_words


def _file(subject: str) -> bytes:
    return ("From: <x@example.org>\r\nSubject: " + subject + "\r\nMIME-Version: 1.0\r\n"
            "Content-Type: multipart/related; boundary=b; type=text/html\r\n\r\n--b\r\nContent-Type: text/html\r\n"
            "Content-Location: http://example.org/\r\n\r\n<p>x</p>\r\n--b--\r\n").encode("ascii")


def test_rfc5322_2_2_3_a_subject_folded_past_the_bound_of_encoded_words_is_shown_unfolded(tmp_path: Path) -> None:
    """Found: a Subject of more encoded words than the bound, folded with bare CRs (a line end to Python's mail
    parser, not to the MHTML reader, which cuts lines at LF), kept each CR past the bound in its title."""
    bound = rfc2047.MAX_ENCODED_WORDS
    titles = []
    for fold in ("\r ", "\r\t", "\r\n "):
        path = tmp_path / "folded.mht"
        path.write_bytes(_file(fold.join(["=?utf-8?q?a?="] * (bound + 3) + ["end"])))
        result = CliRunner().invoke(cli, ["mhtml", "ls", "--json", str(path)])
        assert result.exit_code == 0, result.output
        titles.append(json.loads(result.stdout)["title"])
    # unfolded: one space (or tab) between words; the first `bound` words decoded, the white space between them
    # dropped (RFC 2047 §6.2); the rest as written, from the end of the word before the next encoded word
    assert titles == [
        "a" * bound + f"{space}=?utf-8?q?a?=" * 3 + f"{space}end" for space in (" ", "\t", " ")], [
        t[bound - 2 : bound + 40] for t in titles]


_TOKENS = st.lists(st.sampled_from(["=?utf-8?q?caf=C3=A9?=", "=?iso-8859-1?b?6Q==?=", "plain", "x=y", "\u00e9t\u00e9"]),
                   min_size=1, max_size=10)
_BREAKS = st.sampled_from(["\r\n", "\r", "\n"])
_SPACES = st.sampled_from([" ", "\t", "  "])


@settings(max_examples=300, deadline=None)
@given(_TOKENS, st.lists(st.tuples(st.booleans(), _BREAKS, _SPACES), min_size=10, max_size=10),
       st.integers(min_value=1, max_value=4))
def test_property_a_folded_field_is_shown_as_its_unfolding_is(
    tokens: list[str], gaps: list[tuple[bool, str, str]], bound: int
) -> None:
    """The oracle: the field with each fold's line break removed (RFC 5322 §2.2.3), shown with no line break,
    whatever the bound of encoded words decoded."""
    folded = unfolded = tokens[0]
    for token, (fold, brk, space) in zip(tokens[1:], gaps, strict=False):
        folded += (brk if fold else "") + space + token
        unfolded += space + token
    with mock.patch.object(rfc2047, "MAX_ENCODED_WORDS", bound):
        shown, warnings = decode_words(folded)
        assert (shown, warnings) == decode_words(unfolded)
    assert "\r" not in shown and "\n" not in shown
