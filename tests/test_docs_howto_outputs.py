"""How-to pages show what their commands print, and leave every rule to a reference page.

A how-to is a recipe for one goal: the steps a reader types, what the reader then sees, and links out
(docs/how-to/search.md, annotations.md, replay.md, write-over-http.md, serve.md, backup.md, signatures.md,
federation.md, mirrors.md, deposit.md, cite.md, viewer.md, operate.md, postgresql.md, upgrade.md, capture.md,
set-up.md, operator-guide.md, deploy.md). Each is short and links its reference page (docs/reference/search.md,
annotations.md, replay.md, write-api.md, resolver.md, backup.md, signatures.md, federation.md, mirrors.md, deposit.md,
citations.md, viewer.md, operate.md, postgresql.md, upgrade.md, capture.md, set-up.md, and deploy.md for the last
two), where every option, status, header and limit is; the output a page shows is what the
command prints, typed on the archive the page describes (its day made today's: the names carry the day they were
minted on, the times when they were written). The mirrors page, which needs two servers, is followed by
tests/server/test_server_mirrors_howto.py; the longer how-tos split since (deposit.md, cite.md, viewer.md,
postgresql.md, upgrade.md, capture.md, and set-up.md's demo) by tests/test_docs_howto_recipes.py, and operate.md, which
needs a running pdi serve, by tests/server/test_server_operate_howto.py; operator-guide.md by tests/test_operator_guide.py,
and deploy.md, whose lines ask systemd and nginx, by tests/test_deploy_systemd.py and tests/test_deploy_nginx.py.
"""

from __future__ import annotations

import datetime
import itertools
import json
import re
import shlex
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from pdi.cli import cli
from support.pgcluster import TemporaryCluster

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
    # and as a query's value spells it, each "/" percent-encoded (%2F, any case)
    text = re.sub(r"%2[Ff]\d{4}%2[Ff]\d\d%2[Ff]\d\d%2[Ff]", today.strftime("%%2F%Y%%2F%m%%2F%d%%2F"), text)
    return re.sub(r"\b\d{4}-\d\d-\d\dT", today.strftime("%Y-%m-%dT"), text)


def _run(runner: CliRunner, *args: str, stream: str = "stdout") -> str:
    """What ``pdi ARGS`` prints on standard output (``stream="output"``: and on standard error, as a
    terminal shows both); it must succeed."""
    result = runner.invoke(cli, list(args))
    assert result.exit_code == 0, (args, result.output)
    return str(getattr(result, stream))


@pytest.mark.parametrize(("howto", "reference"), [("search.md", "search.md"), ("annotations.md", "annotations.md"),
                                                  ("replay.md", "replay.md"), ("write-over-http.md", "write-api.md"),
                                                  ("serve.md", "resolver.md"), ("backup.md", "backup.md"),
                                                  ("signatures.md", "signatures.md"), ("federation.md", "federation.md"),
                                                  ("mirrors.md", "mirrors.md"), ("deposit.md", "deposit.md"),
                                                  ("cite.md", "citations.md"),
                                                  ("reanchor.md", "citations.md"),
                                                  ("viewer.md", "viewer.md"),
                                                  ("operate.md", "operate.md"),
                                                  ("postgresql.md", "postgresql.md"),
                                                  ("upgrade.md", "upgrade.md"),
                                                  ("capture.md", "capture.md"),
                                                  ("set-up.md", "set-up.md"),
                                                  ("operator-guide.md", "deploy.md"),
                                                  ("deploy.md", "deploy.md")])
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
    # a search that finds nothing: no hit on standard output, exit 0, and the note the page quotes on standard error
    # (the page said it "prints nothing", found following it on 2026-12-01: a terminal shows the note)
    nothing = runner.invoke(cli, ["search", "zzzqqq"])
    assert nothing.exit_code == 0 and nothing.stdout == "" and nothing.stderr.startswith("note: "), nothing.output
    assert nothing.stderr.strip() in " ".join((HOWTO / "search.md").read_text("utf-8").split())


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
    [shown] = [json.loads(_today(block, one_gmt_day)) for block in _blocks("annotations.md", "json")
               if '"Annotation"' in block and '"target": {' in block]
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


def _pairs(page: str) -> list[tuple[str, str]]:
    """Each ``sh`` block of the page with the ``text`` block that follows it (what its lines print)."""
    text = (HOWTO / page).read_text("utf-8")
    blocks = re.findall(r"^```(\w*)\n(.*?)^```", text, flags=re.MULTILINE | re.DOTALL)
    return [(body, after[1]) for (language, body), after in itertools.pairwise(blocks)
            if language == "sh" and after[0] == "text"]


def _typed(runner: CliRunner, lines: str, folder: Path) -> str:
    """What a block's lines print, typed in ``folder`` (the backup page's ``/srv``): each command of a line (joined by
    ``&&``) a ``pdi`` line run, ``printf`` and ``head`` run by the shell, ``rm -rf DIR`` done, ``rm -f PATTERN``
    done (a shell's pattern), ``cd /srv`` nothing."""
    import subprocess

    printed = ""
    for line in lines.splitlines():
        for command in line.split(" && "):
            words = shlex.split(command, comments=True)
            if not words or words == ["cd", "/srv"]:
                continue
            if words[:2] == ["rm", "-rf"]:
                shutil.rmtree(words[2])
            elif words[:2] == ["rm", "-f"]:
                found = sorted(folder.glob(words[2]))
                assert found, line  # the damage the page shows is done
                for path in found:
                    path.unlink()
            elif words[0] == "pdi":
                printed += _run(runner, *words[1:])
            else:
                assert words[0] in ("printf", "head"), line
                subprocess.run(["bash", "-c", command], cwd=folder, check=True)
    return printed


def test_the_backup_pages_lines_print_what_it_shows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, one_gmt_day: datetime.datetime, pg_cluster: TemporaryCluster
) -> None:
    """The backup page's lines, every block typed in order, its archive (``/srv/pdi-archive``) made by its own first
    block (found in a new user's trial: the page once assumed two documents with no lines to make them): an 18-octet
    text, a catalog row, and a scan of 100,000 octets, a blob file. The first backup copies the one blob file, the
    second (after the page's third small document) nothing new; after ``rm -rf`` the restore copies it back and
    ``pdi verify`` finds the three representations whole; the scan's blob file lost is put back from the backup
    restored beside it (``pdi verify --repair-from``); the bag of them is imported into a new PostgreSQL archive
    (the page's ``postgresql://pdi@db/pdi``, a database of a throw-away cluster here) and verifies there too. A line
    not ``pdi``'s (``printf``, ``head``) is run by the shell; ``cd /srv`` is this test's own folder."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("PDI_ARCHIVE", raising=False)
    url = pg_cluster.create_database("pdi_howto_backup")
    runner = CliRunner()

    def here(text: str) -> str:
        text = text.replace("/srv/", f"{tmp_path}/").replace("/backup/", f"{tmp_path}/backup/")
        text = text.replace("/exports/", f"{tmp_path}/exports/").replace("postgresql://pdi@db/pdi", url)
        return text.replace("/2026/11/28/", one_gmt_day.strftime("/%Y/%m/%d/"))  # names minted today

    def typed(lines: str) -> str:
        return _typed(runner, here(lines), tmp_path)

    text = (HOWTO / "backup.md").read_text("utf-8")
    blocks = re.findall(r"^```(\w*)\n(.*?)^```", text, flags=re.MULTILINE | re.DOTALL)
    pairs = []
    for (language, lines), after in itertools.pairwise([*blocks, ("", "")]):
        if language != "sh" or "15 * * * *" in lines:  # the crontab line: the same backup, every hour
            continue
        printed = typed(lines)
        if after[0] == "text":
            moment = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ"
            assert re.sub(moment, "WHEN", printed) == re.sub(moment, "WHEN", here(after[1])), printed
            pairs.append((lines, after[1]))
    assert (tmp_path / "report.txt").stat().st_size == 18 and (tmp_path / "scan.bin").stat().st_size == 100_000
    assert len(pairs) == 5, pairs
    assert "1 blob copied (100000 octets)" in pairs[0][1] and "1 there already" in pairs[1][1]
    assert "\nrepaired\t" in pairs[3][1]


def _follow(runner: CliRunner, lines: str, skip: tuple[str, ...] = ()) -> str:
    """What the ``pdi`` lines of a block print, both streams as a terminal shows them (a line holding one of
    ``skip``, and any other command, is left to the server tests); ``> FILE`` is written."""
    printed = ""
    for line in lines.replace("\\\n", " ").splitlines():
        words = shlex.split(line, comments=True)
        if not words or words[0] != "pdi" or any(s in w for w in words for s in skip):
            continue
        if ">" in words:
            result = runner.invoke(cli, words[1:words.index(">")])
            assert result.exit_code == 0, (line, result.output)
            Path(words[words.index(">") + 1]).write_text(result.stdout)
        else:
            printed += _run(runner, *words[1:], stream="output")
    return printed


def test_the_signatures_pages_lines_print_what_it_shows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, one_gmt_day: datetime.datetime
) -> None:
    """The signatures page's ``pdi-archive``, two names of its series minted on its day (made today): the keys
    made print their public halves (the page's keys are replaced by the ones made here), the day's manifest
    lists the two names and checks clean, ``/api/keys`` answers the key set of the one key, and the WACZ lines
    on ``site.warc.gz`` (tests/data/warc/site.warc.gz: a page and a PDF captured on 2026-11-23) print what the
    page shows. Lines that ask a resolver or a TSA are the server tests' (tests/test_rfc3161.py,
    tests/server/test_server_mirrors.py)."""
    from starlette.testclient import TestClient

    from pdi.server import create_app

    shutil.copy(ROOT / "tests" / "data" / "warc" / "site.warc.gz", tmp_path)
    monkeypatch.chdir(tmp_path)
    for name in ("PDI_ARCHIVE", "PDI_SIGNING_KEY", "PDI_WACZ_KEY"):
        monkeypatch.delenv(name, raising=False)
    runner = CliRunner()
    text = (HOWTO / "signatures.md").read_text("utf-8")
    # its archive made as it says, by the backup page's first lines (found in a new user's trial: the page once
    # pointed to no lines that make it)
    assert "a text and a scan, as [Back up](backup.md)'s first lines make them" in " ".join(text.split())
    _typed(runner, _blocks("backup.md", "sh")[0], tmp_path)
    [(x, kid)] = set(re.findall(r'"x": "([\w-]+)", "kid": "([\w-]+)"', text))
    [(spki, wacz_id)] = set(re.findall(r"^(MHYw\S+)\n.*?^id\t(sha256:\w+)$", text, flags=re.MULTILINE | re.DOTALL))
    pairs = _pairs("signatures.md")
    assert len(pairs) == 3, pairs
    (keys, shown_keys), (manifests, shown_check), (wacz, shown_wacz) = pairs
    printed = _follow(runner, keys)
    made = json.loads(printed.splitlines()[0])
    assert printed == shown_keys.replace(x, made["x"]).replace(kid, made["kid"])
    today = one_gmt_day.strftime("%Y-%m-%d")
    assert _follow(runner, manifests.replace("2026-11-25", today)) == shown_check
    assert shown_check == "checked 1 manifest listing 2 names: 0 problems\n"
    with TestClient(create_app(str(tmp_path / "pdi-archive"))) as client:
        answered = client.get("/api/keys").json()
    [shown_set] = _blocks("signatures.md", "json")
    assert answered == json.loads(shown_set.replace(x, made["x"]).replace(kid, made["kid"]))
    printed = _follow(runner, wacz)
    made_spki = printed.splitlines()[0]
    made_id = printed.splitlines()[1].split()[2]
    assert printed == shown_wacz.replace(spki, made_spki).replace(wacz_id, made_id)


def test_the_federation_pages_registry_lines_print_what_it_shows(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The federation page's registry, made on a new ``pdi-archive``: the key made prints its public half (the
    page's key replaced by the one made here), each ``registry add`` the series' resolvers as they then stand,
    the authority first, ``registry show`` the same line, and ``registry remove`` the line left. The resolver's redirects and ``N2Ls`` are the
    server tests' (tests/server/test_server_federation.py)."""
    monkeypatch.chdir(tmp_path)
    for name in ("PDI_ARCHIVE", "PDI_SIGNING_KEY", "PDI_REGISTRY"):
        monkeypatch.delenv(name, raising=False)
    runner = CliRunner()
    _run(runner, "init")
    text = (HOWTO / "federation.md").read_text("utf-8")
    [(x, kid)] = set(re.findall(r'"x": "([\w-]+)", "kid": "([\w-]+)"', text))
    [(lines, shown), (remove, left)] = _pairs("federation.md")
    printed = _follow(runner, lines)
    made = json.loads(printed.splitlines()[0])
    assert printed == shown.replace(x, made["x"]).replace(kid, made["kid"])
    assert (tmp_path / "registry.jws").read_text().count(".") == 2  # a compact JWS
    assert shown.splitlines()[-1] == "oma.eop.gov.us\thttps://pdi.example.gov/\thttps://mirror.example.org/"
    # the removal's output, in a block of its own (it stood in the sh block, where a reader would type it)
    assert remove.strip() == "pdi registry remove oma.eop.gov.us https://mirror.example.org/"
    assert _follow(runner, remove) == left == "oma.eop.gov.us\thttps://pdi.example.gov/\n"
