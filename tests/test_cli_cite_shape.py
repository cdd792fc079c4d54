"""``pdi cite`` of a citation missing its ``@`` or its ``=`` (PDI draft, line 168: ``citing@origin=cited``) says
which mark is missing, not what the grammar made of the run-together names.

A new archivist who typed ``…/2.html.1=…/1.text.1#line=5,6`` (no ``@position``) was told ``reserved character
'/' in the specifier must be %-escaped``, and ``…/2.html.1@388urn:pdi://…`` (no ``=``) ``reserved character '/'
in an element name``: true of the text read as one name, no help in mending a citation.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pdi.archive import Archive
from pdi.cli import cli
from pdi.errors import ParseError

S = "archives.gov.us"
A = f"urn:pdi://{S}/2026/11/28/2.html.1"
B = f"urn:pdi://{S}/2026/11/28/1.text.1"
SHAPE = "a citation is NAME@position=PDI, such as …/2.html.1@388=…/1.text.1#line=5,6"


@pytest.fixture(scope="module")
def archive(tmp_path_factory: pytest.TempPathFactory) -> str:
    location = str(tmp_path_factory.mktemp("cite-shape") / "a")
    with Archive.init(location) as made:
        made.add_series(S)
    return location


def _cite(archive: str, citation: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["cite", citation, "--archive", archive])
    return result.exit_code, result.stderr


def test_a_citation_without_its_at_says_it_has_none(archive: str) -> None:
    code, err = _cite(archive, f"{A}={B}#line=5,6")
    assert code == 1
    assert err == f"pdi: syntax error: not a citation: no '@' before a position ({SHAPE}) (rule citation)\n"


def test_a_citation_without_its_equals_sign_says_where_it_is_missing(archive: str) -> None:
    citation = f"{A}@388{B}#line=5,6"
    code, err = _cite(archive, citation)
    assert code == 1
    where = len(A) + len("@388")  # where the cited name starts, with no '=' before it
    assert err == (f"pdi: syntax error: no '=' between the position and the cited PDI ({SHAPE})"
                   f" (rule citation, offset {where})\n")


def test_what_was_said_before_stays_so(archive: str) -> None:
    # a cited side that is no name, an empty position, a name that is no citation: their own words, unchanged
    assert _cite(archive, f"{A}@388=") == (1, "pdi: syntax error: the cited PDI (after '='): expected 'urn:pdi:'"
                                               f" or 'pdi:' (rule pdi, offset {len(A) + 5})\n")
    assert _cite(archive, f"{A}@={B}")[1].startswith("pdi: syntax error: empty fragment position")
    assert _cite(archive, A) == (6, f"pdi: unsupported: {A} is not a citation (NAME@position=PDI)\n")


@settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(position=st.integers(min_value=0, max_value=10**9), cited_scheme=st.sampled_from(["urn:pdi://", "pdi://"]),
       fragment=st.sampled_from(["", "#line=5,6", "#char=0,10", "#name=quote,quote"]))
def test_either_mark_missing_is_named_whatever_the_position_and_fragment(
        archive: str, position: int, cited_scheme: str, fragment: str) -> None:
    cited = cited_scheme + B.removeprefix("urn:pdi://") + fragment
    with Archive.open(archive) as opened:
        with pytest.raises(ParseError) as no_at:
            opened.cite(f"{A}={cited}")
        assert no_at.value.rule == "citation" and no_at.value.reason.startswith("not a citation: no '@'")
        with pytest.raises(ParseError) as no_equals:
            opened.cite(f"{A}@{position}{cited}")
        assert no_equals.value.rule == "citation" and no_equals.value.offset == len(A) + 1 + len(str(position))
        assert no_equals.value.reason.startswith("no '=' between the position and the cited PDI")


def test_the_tutorial_citation_still_parses_as_one(tmp_path: Path) -> None:
    # the marks' check runs only when the text does not parse: a citation written right is read as before
    location = str(tmp_path / "t")
    with Archive.init(location) as made:
        made.add_series(S)
    code, err = _cite(location, f"{A}@388={B}#line=5,6")
    assert code == 4 and err.startswith("pdi: not found:"), err  # parsed; the page is not in this archive


QUOTED = b"We hold these truths to be self-evident.\r\n"
CITING = b"Jefferson wrote: We hold these truths. The end.\r\n"


@pytest.fixture(scope="module")
def both_ends(archive: str) -> tuple[str, str]:
    from pdi.archive import Content

    with Archive.open(archive) as opened:
        quoted = str(opened.deposit(S, [Content(QUOTED, "text")])[0])
        citing = str(opened.deposit(S, [Content(CITING, "text")])[0])
    return citing, quoted


@pytest.mark.parametrize("fragment", ["#char=5,5", "#char=5", "#line=1,1", "#char=42,42"])
def test_a_citation_of_an_empty_passage_is_refused_saying_it_is_empty(
        archive: str, both_ends: tuple[str, str], fragment: str) -> None:
    # a zero-length passage quotes nothing, and nothing "stands" at every position: never "ok"
    citing, quoted = both_ends
    result = CliRunner().invoke(cli, ["cite", f"{citing}@17={quoted}{fragment}", "--archive", archive])
    said = f"the cited passage {quoted}{fragment} is empty: it quotes no text, so none can stand at the position"
    assert result.exit_code == 3
    assert result.stdout == (f"citing\t{citing}\ncited\t{quoted}{fragment}\nposition\t17\nquote\t\"\"\n"
                             f"check\tmismatch: {said}\n")
    assert result.stderr == f"pdi: citation does not match: the quotation is not at 17 in {citing}: {said}\n"


def test_the_same_citation_of_the_words_quoted_is_ok(archive: str, both_ends: tuple[str, str]) -> None:
    citing, quoted = both_ends  # "We hold these truths" is at 0-20 of the quoted text and at 17 of the citing one
    result = CliRunner().invoke(cli, ["cite", f"{citing}@17={quoted}#char=0,20", "--archive", archive])
    assert (result.exit_code, result.stderr) == (0, "")
    assert result.stdout.splitlines()[-2:] == ['quote\t"We hold these truths"', "check\tok: the quotation stands at char=17"]


def test_an_empty_passage_cited_is_a_mismatch_in_json_too(archive: str, both_ends: tuple[str, str]) -> None:
    import json

    citing, quoted = both_ends
    result = CliRunner().invoke(cli, ["cite", f"{citing}@0={quoted}#char=0,0", "--json", "--archive", archive])
    assert result.exit_code == 3
    answer = json.loads(result.stdout)
    assert (answer["check"], answer["quote"], answer["found"]) == ("mismatch", "", None)
    assert answer["detail"].startswith(f"the cited passage {quoted}#char=0,0 is empty")
