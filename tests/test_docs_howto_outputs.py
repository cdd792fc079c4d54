"""How-to pages show what their commands print, and leave every rule to a reference page.

A how-to is a recipe for one goal: the steps a reader types, what the reader then sees, and links out
(docs/how-to/search.md, annotations.md, replay.md, write-over-http.md, serve.md). Each is short and links its
reference page (docs/reference/search.md, annotations.md, replay.md, write-api.md, resolver.md), where every option, status, header and
limit is; the output a page shows is what the command prints, typed on the archive the page describes (its day
made today's: the names carry the day they were minted on, the times when they were written).
"""

from __future__ import annotations

import datetime
import json
import re
import shlex
from pathlib import Path

import pytest
from click.testing import CliRunner

from pdi.cli import cli

ROOT = Path(__file__).resolve().parents[1]
HOWTO = ROOT / "docs" / "how-to"
#: A how-to longer than this has grown into a reference.
HOWTO_MAX_LINES = 120
#: An ISO 8601 time as pdi prints it (UTC, microseconds).
WHEN = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z"


def _blocks(page: str, language: str) -> list[str]:
    text = (HOWTO / page).read_text("utf-8")
    return re.findall(rf"^```{language}\n(.*?)^```", text, flags=re.MULTILINE | re.DOTALL)


def _today(text: str, today: datetime.datetime) -> str:
    """The page's names and times with the day they were shown on made ``today``'s."""
    text = re.sub(r"/\d{4}/\d\d/\d\d/", today.strftime("/%Y/%m/%d/"), text)
    return re.sub(r"\b\d{4}-\d\d-\d\dT", today.strftime("%Y-%m-%dT"), text)


def _run(runner: CliRunner, *args: str, stream: str = "stdout") -> str:
    """What ``pdi ARGS`` prints on standard output (``stream="output"``: and on standard error, as a
    terminal shows both); it must succeed."""
    result = runner.invoke(cli, list(args))
    assert result.exit_code == 0, (args, result.output)
    return str(getattr(result, stream))


@pytest.mark.parametrize(("howto", "reference"), [("search.md", "search.md"), ("annotations.md", "annotations.md"),
                                                  ("replay.md", "replay.md"), ("write-over-http.md", "write-api.md"),
                                                  ("serve.md", "resolver.md")])
def test_the_split_howtos_are_short_and_link_their_reference(howto: str, reference: str) -> None:
    text = (HOWTO / howto).read_text("utf-8")
    assert len(text.splitlines()) <= HOWTO_MAX_LINES, f"{howto}: a how-to of {len(text.splitlines())} lines"
    assert (ROOT / "docs" / "reference" / reference).is_file()
    assert f"](../reference/{reference}" in text, f"{howto} does not link its reference"
    assert _blocks(howto, "text"), f"{howto} shows no output"


def test_the_search_page_shows_what_its_commands_print(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, one_gmt_day: datetime.datetime
) -> None:
    """The page's archive: two documents, then ``walrus.txt``, the third. ``pdi search walrus carpenter``
    names the stretch from "walrus" (character 4) to the end of "carpenter" (28) and shows the passage with
    both words bracketed; ``pdi reindex`` reads the three stored texts (one passage each), twice, and the
    queue is empty (``pdi index --pending`` says so on standard error)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PDI_ARCHIVE", str(tmp_path / "archive"))
    (tmp_path / "a.txt").write_bytes(b"The quick brown fox jumps over the lazy dog.\n")
    (tmp_path / "p.html").write_bytes(b"<p>The <b>quick</b> brown fox</p>\n")
    (tmp_path / "walrus.txt").write_bytes(b"The walrus and the carpenter were walking close at hand.\n")
    runner = CliRunner()
    for args in (["init"], ["series", "add", "oma.eop.gov.us"], ["add", "a.txt", "-s", "oma.eop.gov.us"],
                 ["add", "p.html", "-s", "oma.eop.gov.us"], ["add", "walrus.txt", "-s", "oma.eop.gov.us"]):
        _run(runner, *args)
    shown_hit, shown_reindex = (_today(block, one_gmt_day) for block in _blocks("search.md", "text"))
    assert _run(runner, "search", "walrus", "carpenter") == shown_hit
    name = shown_hit.splitlines()[0]
    assert name.endswith("/3.text.1#char=4,28")
    assert _run(runner, "get", name.replace("4,28", "0,10")) == "The walrus"
    printed = [_run(runner, *args, stream="output") for args in (["reindex"], ["reindex", "--series", "oma.eop.gov.us"], ["index"],
                                                ["index", "--pending"])]
    assert "".join(printed) == shown_reindex
    [shown_json] = _blocks("search.md", "json")
    [hit] = json.loads(_run(runner, "search", '"the walrus"', "-s", "oma.eop.gov.us", "-n", "5", "--json"))["hits"]
    [hit_shown] = json.loads(_today(shown_json, one_gmt_day))["hits"]
    assert {k: v for k, v in hit.items() if k != "deposited"} == {k: v for k, v in hit_shown.items()
                                                                  if k != "deposited"}
    assert hit["matches"] == [[0, 10]]  # a phrase is one match: "The walrus", its words one range


def test_the_annotations_page_shows_what_its_commands_print(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, one_gmt_day: datetime.datetime
) -> None:
    """The directive ``quick,fox`` is characters 10 to 29 of ``<p>The <b>quick</b> brown fox</p>`` (from
    "quick" to the end of "fox", the ``</b>`` inside); the Hypothesis note quoting "brown fox" is found at 20 to
    29; the annotation of ``#char=19,34`` of the text quotes " jumps over the" with 19 characters before it
    and what follows to the end (its line ending as CRLF), and its id is the same for the same name."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PDI_ARCHIVE", str(tmp_path / "archive"))
    (tmp_path / "a.txt").write_bytes(b"The quick brown fox jumps over the lazy dog.\n")
    (tmp_path / "p.html").write_bytes(b"<p>The <b>quick</b> brown fox</p>\n")
    (tmp_path / "hypothesis.json").write_text(json.dumps({"total": 1, "rows": [{
        "id": "h1", "uri": "https://example.org/fox.html", "target": [{
            "source": "https://example.org/fox.html",
            "selector": [{"type": "TextQuoteSelector", "exact": "brown fox"}]}]}]}))
    runner = CliRunner()
    for args in (["init"], ["series", "add", "oma.eop.gov.us"], ["add", "a.txt", "-s", "oma.eop.gov.us"],
                 ["add", "p.html", "-s", "oma.eop.gov.us"]):
        _run(runner, *args)
    day = one_gmt_day.strftime("%Y/%m/%d")
    page = f"urn:pdi://oma.eop.gov.us/{day}/2.html.1"
    native = _run(runner, "annotate", "--native", f"{page}#:~:text=quick,fox")
    imported = _run(runner, "annotate", "--import", "hypothesis.json", "--pdi", page)
    assert native + imported == _today(_blocks("annotations.md", "text")[0], one_gmt_day)
    assert imported == f"found\t{page}#char=20,29\tthe quote is there\n"
    exported = json.loads(_run(runner, "annotate", "--export", f"urn:pdi://oma.eop.gov.us/{day}/1.text.1#char=19,34"))
    shown = json.loads(_today(_blocks("annotations.md", "json")[0], one_gmt_day))
    assert exported["target"] == shown["target"] and exported["body"] == shown["body"]
    assert exported["target"]["selector"][0]["exact"] == " jumps over the"


def test_the_write_over_http_pages_withdrawals_print_what_it_shows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, one_gmt_day: datetime.datetime
) -> None:
    """Two reports deposited; the page's ``pdi withdraw`` lines take version 1 of the first, and the whole
    second document with its octets: each says what it withdrew, when and why, the purge that the octets
    went; ``pdi get`` of the first then exits 11 (gone)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PDI_ARCHIVE", str(tmp_path / "archive"))
    (tmp_path / "report.txt").write_bytes(b"Quarterly report.\n")
    (tmp_path / "other.txt").write_bytes(b"Another report.\n")
    runner = CliRunner()
    for args in (["init"], ["series", "add", "oma.eop.gov.us"], ["add", "report.txt", "-s", "oma.eop.gov.us"],
                 ["add", "other.txt", "-s", "oma.eop.gov.us"]):
        _run(runner, *args)
    [block] = [b for b in _blocks("write-over-http.md", "sh") if "pdi withdraw" in b]
    printed = ""
    for line in _today(block, one_gmt_day).splitlines():
        printed += _run(runner, *shlex.split(line, comments=True)[1:])
    [shown] = [b for b in _blocks("write-over-http.md", "text") if b.startswith("withdrew")]
    shown = _today(shown, one_gmt_day)
    assert re.sub(WHEN, "WHEN", printed) == re.sub(WHEN, "WHEN", shown)
    assert "at WHEN: sealed by order of 2026-11-20\n" in re.sub(WHEN, "WHEN", printed)
    day = one_gmt_day.strftime("%Y/%m/%d")
    assert runner.invoke(cli, ["get", f"urn:pdi://oma.eop.gov.us/{day}/1.text.1"]).exit_code == 11


def test_the_serve_pages_answers_are_what_the_resolver_answers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, one_gmt_day: datetime.datetime
) -> None:
    """The page's text of 30 lines ("Line N of the report.", N from 1) as the first document of its series:
    ``#line=10,20`` selects the lines after the 10th line ending up to the 20th, lines 11 to 20 (RFC 5147
    counts line endings from 0), the page's first and last; ``N2L`` is a ``302`` to the ``N2R`` address;
    ``/api/resolve`` of the name describes the 681 octets stored (9 lines of 22 octets, 21 of 23)."""
    from starlette.testclient import TestClient

    from pdi.server import create_app

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PDI_ARCHIVE", str(tmp_path / "archive"))
    (tmp_path / "report.txt").write_text("".join(f"Line {n} of the report.\n" for n in range(1, 31)))
    runner = CliRunner()
    for args in (["init"], ["series", "add", "oma.eop.gov.us"], ["add", "report.txt", "-s", "oma.eop.gov.us"]):
        _run(runner, *args)
    text = _today((HOWTO / "serve.md").read_text("utf-8"), one_gmt_day)
    asked = re.findall(r"curl (?:-i )?'http://127\.0\.0\.1:8000(/[^']+)'", text.split("## Ask it for a name", 1)[1])
    assert len(asked) == 3, asked
    [passage] = [b for b in _blocks("serve.md", "text") if b.startswith("Line ")]
    [described] = _blocks("serve.md", "json")
    with TestClient(create_app(str(tmp_path / "archive")), follow_redirects=False) as client:
        lines = client.get(asked[0]).text.splitlines()
        assert lines == [f"Line {n} of the report." for n in range(11, 21)]
        assert [lines[0], "…", lines[-1]] == passage.splitlines()
        located = client.get(asked[1])
        day = one_gmt_day.strftime("%Y/%m/%d")
        location = f"/uri-res/N2R?urn:pdi://oma.eop.gov.us/{day}/1.text.1"
        assert (located.status_code, located.headers["location"]) == (302, location)
        assert f"`HTTP/1.1 302 Found` with `location: {location}`" in " ".join(text.split())
        answer = client.get(asked[2]).json()
    shown = json.loads(_today(described, one_gmt_day))
    del answer["stored"]["created_at"], shown["stored"]["created_at"]
    assert answer == shown
    assert answer["bytes"] == 9 * 22 + 21 * 23
