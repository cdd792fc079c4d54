"""How-to pages followed as written: their ``sh`` blocks' ``pdi`` lines that need no server, run in order.

The operator's guide and the upgrade page have their own test (tests/test_operator_guide.py); these are
the other operator pages (docs/how-to/mirrors.md, signatures.md, federation.md), whose lines a new operator types one
after the other on one archive: each must do what the page says, not fail on what an earlier line made. The
federation page's block tried on one machine is typed whole, by a shell, its two servers started and stopped here.
"""

from __future__ import annotations

import base64
import datetime
import itertools
import json
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from pdi.cli import cli

ROOT = Path(__file__).resolve().parents[1]
HOWTO = ROOT / "docs" / "how-to"
#: The day the signatures page's examples were minted on; the test's names are minted today.
SHOWN_DAY = "2026-11-25"


def _pdi_lines(page: Path, *, leaving: str | None = None) -> list[tuple[list[str], str | None]]:
    """Each ``pdi`` line of the page's ``sh`` blocks, in order (but those of a block holding ``leaving``): its words
    (comments and redirections left out) and the file its standard output goes to (``> FILE``), if any."""
    text = page.read_text("utf-8")
    lines: list[tuple[list[str], str | None]] = []
    for block in re.findall(r"^```sh\n(.*?)^```", text, flags=re.MULTILINE | re.DOTALL):
        if leaving is not None and leaving in block:
            continue
        for line in block.replace("\\\n", " ").splitlines():
            words = shlex.split(line, comments=True)
            if not words or words[0] != "pdi":
                continue
            out = None
            if ">" in words:
                out = words[words.index(">") + 1]
                words = words[: words.index(">")]
            lines.append((words, out))
    return lines


def _set_up(tmp_path: Path, runner: CliRunner, block: str) -> list[str]:
    """A page's set-up block typed in ``tmp_path``: each command of its lines (joined by ``&&``), an ``echo … > FILE``
    written as echo writes it, a ``pdi`` line run (it must succeed); what the ``pdi`` lines print, in order."""
    printed = []
    for line in block.splitlines():
        for command in line.split("&&"):
            words = shlex.split(command, comments=True)
            if words[0] == "echo":
                assert words[2] == ">" and len(words) == 4, words
                (tmp_path / words[3]).write_text(words[1] + "\n", "utf-8")
                continue
            assert words[0] == "pdi", words
            result = runner.invoke(cli, words[1:])
            assert result.exit_code == 0, (words, result.output)
            printed.append(result.stdout)
    return printed


def _after_set_up(page: Path, block: str) -> list[tuple[list[str], str | None]]:
    """The page's ``pdi`` lines after those of its set-up ``block`` (its first ``sh`` block)."""
    return _pdi_lines(page)[sum(line.startswith("pdi ") for line in block.splitlines()):]


def test_the_mirrors_pages_tokens_are_made_as_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every ``pdi token add`` of the mirrors page, typed on one origin in the page's order, makes its token
    (a token's name is never reused: a second ``mirror-b`` would be refused, exit 5)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PDI_ARCHIVE", str(tmp_path / "origin"))
    runner = CliRunner()
    assert runner.invoke(cli, ["init"]).exit_code == 0
    assert runner.invoke(cli, ["series", "add", "oma.eop.gov.us"]).exit_code == 0
    tokens = [(words, out) for words, out in _pdi_lines(HOWTO / "mirrors.md") if words[1:3] == ["token", "add"]]
    assert len(tokens) == 2, tokens
    for words, out in tokens:
        result = runner.invoke(cli, words[1:])
        assert result.exit_code == 0, (words, result.output)
        assert out is not None and result.stdout.startswith("pdi_"), (words, result.stdout)


def test_the_signatures_pages_commands_that_need_no_server_do_what_it_says(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, one_gmt_day: datetime.datetime
) -> None:
    """The signatures page's lines, typed on an archive of the series it names holding a text deposited
    today (its day there, 2026-11-25), and a WARC of a small site for its WACZ lines (``site.warc.gz``,
    tests/data/warc/site.warc.gz, made by tests/data/warc/README.md's recipe): keys, manifests, their
    checks and a signed WACZ exported, checked, imported and validated by py-wacz. Lines that ask a server
    (a resolver's URL, a TSA, a CA-issued certificate) are the server tests' (tests/test_rfc3161.py,
    tests/interop/test_interop_wacz_signed.py)."""
    shutil.copy(ROOT / "tests" / "data" / "warc" / "site.warc.gz", tmp_path)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PDI_ARCHIVE", str(tmp_path / "archive"))
    monkeypatch.delenv("PDI_SIGNING_KEY", raising=False)
    monkeypatch.delenv("PDI_WACZ_KEY", raising=False)
    runner = CliRunner()
    (tmp_path / "text.txt").write_bytes(b"hello\n")
    for words in (["init"], ["series", "add", "oma.eop.gov.us"], ["add", "--series", "oma.eop.gov.us", "text.txt"]):
        assert runner.invoke(cli, words).exit_code == 0, words
    today = one_gmt_day.strftime("%Y-%m-%d")
    ran = []
    page = HOWTO / "signatures.md"
    for words, _ in _pdi_lines(page):
        if any("://" in w or w in ("--tsa", "--tsa-ca", "--domain-cert") for w in words) or words[1] == "serve":
            continue
        words = [w.replace(SHOWN_DAY, today) for w in words]
        result = runner.invoke(cli, words[1:])
        assert result.exit_code == 0, (words, result.output)
        ran.append(" ".join(words[1:3]))
        if words[1:3] == ["verify", "--signatures"]:
            assert result.stdout.splitlines()[-1].endswith(": 0 problems"), result.stdout
    assert ran == ["keys init", "keys show", "manifest --series", "manifest --series", "verify --signatures",
                   "keys init", "keys show", "import site.warc.gz", "export --wacz", "verify --signatures",
                   "import out.wacz"], ran
    text = page.read_text("utf-8")
    assert "wacz validate -f out.wacz" in text
    checked = subprocess.run([str(Path(sys.executable).parent / "wacz"), "validate", "-f", "out.wacz"],
                             capture_output=True, text=True, timeout=300)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "Has signature" in checked.stdout and "is valid" in checked.stdout, checked.stdout


def test_the_annotations_pages_lines_do_what_it_says(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, one_gmt_day: datetime.datetime
) -> None:
    """The annotations page's ``pdi`` lines, typed on the archive it describes, made by its first block in an empty
    directory (a text, then the page ``<p>The <b>quick</b> brown fox</p>``, in its series, today), with
    ``hypothesis.json`` a Hypothesis search API export quoting "brown fox": the text directive is the range the
    page's prose gives (``#char=10,29``), the export names its passage, the import finds the quote where it stands
    in the page's source (characters 20 to 29: ``<p>`` 3, ``The `` 4, ``<b>`` 3, ``quick`` 5, ``</b>`` 4, a
    space). The token the curl lines use is made by the command the page gives for it. ``curl`` lines are the
    server tests' (tests/server/test_server_annotations.py)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("PDI_ARCHIVE", raising=False)  # the page's archive: ./pdi-archive, as pdi init makes it
    runner = CliRunner()
    page = HOWTO / "annotations.md"
    text = page.read_text("utf-8")
    shown = re.search(r"urn:pdi://oma\.eop\.gov\.us/(\d{4}/\d\d/\d\d)/", text)
    assert shown is not None
    today = one_gmt_day.strftime("%Y/%m/%d")
    # the first block makes the archive (found following the page, 2026-12-01: it said which archive, not how to
    # make it): each command of its lines (joined by &&), an echo written to its file as echo writes it
    setup = re.findall(r"^```sh\n(.*?)^```", text, flags=re.MULTILINE | re.DOTALL)[0]
    minted = _set_up(tmp_path, runner, setup)
    html = f"urn:pdi://oma.eop.gov.us/{today}/2.html.1"
    assert minted[2:] == [f"urn:pdi://oma.eop.gov.us/{today}/1.text.1\n", html + "\n"], minted
    assert (tmp_path / "fox.html").read_bytes() == b"<p>The <b>quick</b> brown fox</p>\n"
    # the page's own hypothesis.json (found following it, 2026-11-28: a reader had no such file to type with)
    [hypothesis] = [block for block in re.findall(r"^```json\n(.*?)^```", text, flags=re.MULTILINE | re.DOTALL)
                    if '"rows"' in block]
    assert json.loads(hypothesis)["rows"][0]["target"][0]["selector"] == [{"type": "TextQuoteSelector",
                                                                          "exact": "brown fox"}]
    (tmp_path / "hypothesis.json").write_text(hypothesis)
    outputs = []
    for words, _ in _after_set_up(page, setup):
        words = [w.replace(shown.group(1), today) for w in words]
        result = runner.invoke(cli, words[1:])
        assert result.exit_code == 0, (words, result.output)
        outputs.append(result.stdout)
    native, exported, imported = outputs
    assert native == f"{html}#char=10,29\n"
    assert json.loads(exported)["body"] == f"urn:pdi://oma.eop.gov.us/{today}/1.text.1#char=19,34"
    assert imported.split("\t")[:2] == ["found", f"{html}#char=20,29"], imported
    made = re.search(r"\$\((pdi token add [^)]*)\)", text)
    assert made is not None
    result = runner.invoke(cli, shlex.split(made.group(1))[1:])
    assert result.exit_code == 0 and result.stdout.startswith("pdi_"), result.output


def test_the_write_over_http_pages_access_lines_run_in_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, one_gmt_day: datetime.datetime
) -> None:
    """The private-series block of the write-over-HTTP page, typed in order on a new archive (its day there
    made today's): every ``pdi`` line, and the ``pdi`` command a line's ``$(…)`` runs, succeeds, so the series
    is there before its access is set, the embargoed document before its embargo is changed, and the
    ``$READER`` the ``curl`` line sends is a token. The ``curl`` line is the server tests'
    (tests/server/test_server_access.py)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PDI_ARCHIVE", str(tmp_path / "archive"))
    (tmp_path / "ruling.txt").write_bytes(b"The motion is granted.\n")
    runner = CliRunner()
    assert runner.invoke(cli, ["init"]).exit_code == 0
    text = (HOWTO / "write-over-http.md").read_text("utf-8")
    [block] = [b for b in re.findall(r"^```sh\n(.*?)^```", text, flags=re.MULTILINE | re.DOTALL) if "series access" in b]
    today = one_gmt_day.strftime("%Y/%m/%d")
    ran = []
    for line in block.splitlines():
        made = re.match(r"(\w+)=\$\((pdi [^)]*)\)", line)
        words = shlex.split(made.group(2) if made else line, comments=True)
        if not words or words[0] != "pdi":
            continue
        words = [re.sub(r"/\d{4}/\d\d/\d\d/", f"/{today}/", w) for w in words]
        result = runner.invoke(cli, words[1:])
        assert result.exit_code == 0, (line, result.output)
        if made:
            assert result.stdout.startswith("pdi_"), (line, result.stdout)
            ran.append(made.group(1))
        ran.append(" ".join(words[1:3]))
    assert "READER" in ran and "$READER" in block, ran
    assert ran[0] == "series add", ran


def test_the_reanchor_pages_first_line_prints_what_it_shows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, one_gmt_day: datetime.datetime
) -> None:
    """The re-anchoring page's first line, typed on its document (the third of its series today) whose
    version 2 has 22 characters inserted near the start, far (more than 32 characters) before the passage:
    the passage ``char=120,164`` is found by the exact method 22 characters on, ``char=142,186``, score and
    context 1, as the page shows."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PDI_ARCHIVE", str(tmp_path / "archive"))
    words = " ".join(f"w{i:03d}" for i in range(80))  # 399 characters, one line, no line ending
    (tmp_path / "v1.txt").write_text(words)
    (tmp_path / "v2.txt").write_text(words[:10] + "INSERTED TWENTY-TWO + " + words[10:])
    (tmp_path / "other.txt").write_text("another document\n")
    today = one_gmt_day.strftime("%Y/%m/%d")
    runner = CliRunner()
    for args in (["init"], ["series", "add", "court.example.us"], ["add", "other.txt", "-s", "court.example.us"],
                 ["add", "other.txt", "-s", "court.example.us"], ["add", "v1.txt", "-s", "court.example.us"],
                 ["version", f"urn:pdi://court.example.us/{today}/3", "v2.txt"]):
        result = runner.invoke(cli, args)
        assert result.exit_code == 0, (args, result.output)
    text = (HOWTO / "reanchor.md").read_text("utf-8")
    block = re.search(r"^```sh\n(.*?)^```", text, flags=re.MULTILINE | re.DOTALL)
    assert block is not None
    first, shown = block.group(1).split("\n# ", 1)
    shown_lines = ["# " + shown.splitlines()[0], shown.splitlines()[1]]
    args = [re.sub(r"/\d{4}/\d\d/\d\d/", f"/{today}/", w) for w in shlex.split(first)]
    result = runner.invoke(cli, args[1:])
    assert result.exit_code == 0, result.output
    expected = [re.sub(r"/\d{4}/\d\d/\d\d/", f"/{today}/", line[2:]) for line in shown_lines]
    assert result.stdout.splitlines() == expected
    assert expected[0].endswith("/3.text.2#char=142,186")


def test_the_search_pages_lines_run_in_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, one_gmt_day: datetime.datetime
) -> None:
    """The search page's ``pdi`` lines, typed in order on the archive its first block makes in an empty directory
    (its series, two documents, then a text with the words it looks for), but ``pdi index --watch``, which runs
    until stopped: each succeeds, and both searches find the text, the third document (the phrase "The walrus"
    starts it: ``#char=0,10``)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("PDI_ARCHIVE", raising=False)  # the page's archive: ./pdi-archive, as pdi init makes it
    runner = CliRunner()
    page = HOWTO / "search.md"
    # found following the page, 2026-12-01: it showed a third document's hit without saying what came before it
    setup = re.findall(r"^```sh\n(.*?)^```", page.read_text("utf-8"), flags=re.MULTILINE | re.DOTALL)[0]
    day = one_gmt_day.strftime("%Y/%m/%d")
    assert _set_up(tmp_path, runner, setup)[2:] == [
        "".join(f"urn:pdi://oma.eop.gov.us/{day}/{n}\n" for n in ("1.text.1", "2.html.1", "3.text.1"))]
    ran = []
    for words, _ in _after_set_up(page, setup):
        if "--watch" in words:
            continue
        result = runner.invoke(cli, words[1:])
        assert result.exit_code == 0, (words, result.output)
        ran.append(" ".join(words[1:2]))
        if words[1] == "search" and "--json" in words:
            [hit] = json.loads(result.stdout)["hits"]
            assert hit["name"].endswith("/3.text.1#char=0,10"), hit
        elif words[1] == "search":
            assert "/3.text.1#char=" in result.stdout, result.stdout
    assert ran[:2] == ["search", "search"] and "reindex" in ran and "index" in ran, ran


def test_every_test_file_the_manual_and_the_deploy_files_name_is_there() -> None:
    """A reader told that a test checks something can open that test: every ``tests/….py`` the manual
    (docs/, README.md) or a deploy file (docs/deploy/) names exists."""
    named: set[str] = set()
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*"))]:
        if path.is_file() and path.suffix in ("", ".md", ".service", ".timer", ".conf"):
            named.update(re.findall(r"(?<![\w/])tests/[\w/.-]+\.py", path.read_text("utf-8")))
    assert "tests/test_deploy_systemd.py" in named
    assert {name for name in named if not (ROOT / name).is_file()} == set()


#: What marks the federation page's block tried on one machine (its own two archives, typed in an empty directory).
ONE_MACHINE = "pdi init authority"


def test_the_federation_pages_registry_lines_do_what_it_says(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The federation page's first lines, typed in order on a new archive: the key, the authority and a mirror
    added, the registry shown (one line a series, the authority first), signed into ``registry.jws`` (a
    compact JWS whose protected header is the one the page gives), the mirror removed. ``pdi serve --registry``
    is the server tests' (tests/server/test_server_federation.py); the block tried on one machine, with its own
    archives, is typed by the next test."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PDI_ARCHIVE", str(tmp_path / "archive"))
    monkeypatch.delenv("PDI_SIGNING_KEY", raising=False)
    monkeypatch.delenv("PDI_REGISTRY", raising=False)
    runner = CliRunner()
    assert runner.invoke(cli, ["init"]).exit_code == 0
    shows = []
    removed = None
    for words, out in _pdi_lines(HOWTO / "federation.md", leaving=ONE_MACHINE):
        if words[1] == "serve":
            continue
        result = runner.invoke(cli, words[1:])
        assert result.exit_code == 0, (words, result.output)
        if out is not None:
            (tmp_path / out).write_text(result.stdout)
        elif words[1:3] == ["registry", "show"]:
            shows.append(result.stdout)
        elif words[1:3] == ["registry", "remove"]:
            removed = result.stdout
    assert shows == ["oma.eop.gov.us\thttps://pdi.example.gov/\thttps://mirror.example.org/\n"]
    assert removed == "oma.eop.gov.us\thttps://pdi.example.gov/\n"  # the series' line left
    jws = (tmp_path / "registry.jws").read_text().strip()
    header, payload, _ = jws.split(".")
    protected = json.loads(base64.urlsafe_b64decode(header + "=" * (-len(header) % 4)))
    assert set(protected) == {"alg", "kid", "typ"}
    assert (protected["alg"], protected["typ"]) == ("EdDSA", "pdi-registry+jws")
    listed = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    assert listed["series"] == {"oma.eop.gov.us": ["https://pdi.example.gov/", "https://mirror.example.org/"]}
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", listed["issued"])
    result = runner.invoke(cli, ["registry", "show"])
    assert result.stdout == "oma.eop.gov.us\thttps://pdi.example.gov/\n"


def _answering(port: int, server: subprocess.Popen[bytes], log: Path) -> None:
    """Wait (60 s at most) until ``port`` of 127.0.0.1 takes a connection, as a reader waits for the server's
    "pdi: serving …" line before typing the next."""
    import socket
    import time

    deadline = time.monotonic() + 60
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            assert server.poll() is None and time.monotonic() < deadline, log.read_text()
            time.sleep(0.1)


def test_the_federation_pages_lines_on_one_machine_send_the_reader_to_the_authority(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The federation page's block tried on one machine, typed by a shell line after line in an empty directory
    (found following the page, 2026-12-01: it said in prose what to set up and gave no line to type), its ports made
    free ones: two archives made, the authority's with a name minted today and its registry listing itself, both
    served in the background (each line ending ``&`` started, and waited for as a reader waits for its "serving"
    line; stopped at the end), and the ``curl`` of the name at the resolver, which holds nothing of the series,
    answers ``302 Found`` to the same name at the authority's port (RFC 2169's N2R, the series' resolver
    the signed registry lists)."""
    from pdi._ports import free_port

    assert shutil.which("curl"), "curl is missing (Debian's curl)"
    monkeypatch.chdir(tmp_path)
    for name in ("PDI_ARCHIVE", "PDI_SIGNING_KEY", "PDI_REGISTRY"):
        monkeypatch.delenv(name, raising=False)
    [block] = [b for b in re.findall(r"^```sh\n(.*?)^```", (HOWTO / "federation.md").read_text("utf-8"),
                                     flags=re.MULTILINE | re.DOTALL) if ONE_MACHINE in b]
    shown = sorted(set(re.findall(r"127\.0\.0\.1:(\d+)|--replay-port (\d+)", block)))
    ports = {p for pair in shown for p in pair if p}
    assert ports == {"8310", "8311", "8340", "8341"}, ports
    chosen: dict[str, int] = {}
    while len(set(chosen.values())) < len(ports):
        chosen = {shown_port: free_port() for shown_port in sorted(ports)}
    block = re.sub(r"\b(8310|8311|8340|8341)\b", lambda m: str(chosen[m.group(1)]), block)
    bin_dir = tmp_path.parent / f"{tmp_path.name}-bin"  # the directory typed in is empty
    bin_dir.mkdir()
    (bin_dir / "pdi").write_text(f'#!/bin/sh\nexec {shlex.quote(sys.executable)} -m pdi "$@"\n')
    (bin_dir / "pdi").chmod(0o755)
    import os

    env = dict(os.environ, PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    servers: list[subprocess.Popen[bytes]] = []
    printed: list[str] = []
    try:
        for line in block.replace("\\\n", " ").splitlines():
            if line.rstrip().endswith("&"):
                log = tmp_path.parent / f"{tmp_path.name}-server-{len(servers)}.log"
                with log.open("wb") as out:
                    servers.append(subprocess.Popen(["bash", "-c", "exec " + line.rstrip()[:-1]], cwd=tmp_path, env=env,
                                                    stdout=out, stderr=out, start_new_session=True))
                port = re.search(r"--port (\d+)", line)
                assert port is not None, line
                _answering(int(port.group(1)), servers[-1], log)
                continue
            done = subprocess.run(["bash", "-c", line], cwd=tmp_path, env=env, capture_output=True, text=True,
                                  timeout=120, check=False)
            assert done.returncode == 0, (line, done.stdout, done.stderr)
            printed.append(done.stdout)
    finally:
        for server in servers:
            if server.poll() is None:
                server.terminate()
            server.wait(timeout=60)
    minted = [out for out in printed if out.startswith("urn:pdi:")]
    assert len(minted) == 1 and minted[0].endswith("/1.text.1\n"), printed
    head = printed[-1].replace("\r\n", "\n").split("\n\n", 1)[0].split("\n")
    assert head[0] == "HTTP/1.1 302 Found", printed[-1]
    [asked] = re.findall(r"N2R\?(urn:pdi://[^\"]+)\"", block.replace("$(date -u +%Y/%m/%d)", "DAY"))
    [location] = [h.split(":", 1)[1].strip() for h in head if h.lower().startswith("location:")]
    day = re.fullmatch(rf"http://127\.0\.0\.1:{chosen['8310']}/uri-res/N2R\?urn:pdi://oma\.eop\.gov\.us/"
                       r"(\d{4}/\d\d/\d\d)/1\.text\.1", location)
    assert day is not None, location
    assert asked.replace("DAY", day.group(1)) == location.split("N2R?", 1)[1]


def _bootstrap_packages() -> tuple[list[str], list[str]]:
    """The Debian packages scripts/bootstrap installs when missing (its ``want`` lines): those of a plain run,
    and those ``--dev`` adds (the lines inside its ``if [ "$dev" -eq 1 ]`` block)."""
    plain: list[str] = []
    dev: list[str] = []
    inside = False
    for line in (ROOT / "scripts" / "bootstrap").read_text("utf-8").splitlines():
        if line.startswith('if [ "$dev" -eq 1 ]; then'):
            inside = True
        elif line == "fi":
            inside = False
        found = re.search(r"\bwant ([a-z0-9 .+-]+)", line.split("#", 1)[0])
        if found and not line.lstrip().startswith("want()"):
            (dev if inside else plain).extend(found.group(1).split())
    return plain, dev


def test_the_set_up_page_names_every_debian_package_bootstrap_installs() -> None:
    """A reader of "What set-up does" (docs/reference/set-up.md, the set-up how-to's reference) is told every Debian
    package scripts/bootstrap may install on the machine: those of a plain run before the ``--dev`` ones, each in
    backticks."""
    plain, dev = _bootstrap_packages()
    assert {"python3-venv", "libmagic1", "ffmpeg"} <= set(plain) and {"chromium", "nginx", "qpdf"} <= set(dev)
    page = (ROOT / "docs" / "reference" / "set-up.md").read_text("utf-8")
    section = page.split("## What set-up does", 1)[1].split("\n## ", 1)[0]
    before_dev, _, after = section.partition("with `--dev` also")
    assert after, "the section says what --dev adds"
    assert [p for p in plain if f"`{p}`" not in before_dev] == []
    assert [p for p in dev if f"`{p}`" not in section] == []


def test_the_sgml_pages_lines_add_a_dtd_and_the_file_it_names_in_an_order_that_works(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, one_gmt_day: datetime.datetime
) -> None:
    """The SGML how-to followed in an empty directory: its three files saved from its ``sgml`` blocks (found
    following the page, 2026-12-01: it named ``filing.dtd`` and ``filing.sgml`` and gave neither), then its ``sh``
    lines typed in order (its day made today's; ``| grep sgml-parse`` the lines that start so). The DTD is the
    filing DTD whose parse tests/support/sgml_filing.py checks with onsgmls by hand, reading the entity file by its
    file name, so the entity file is added first (found in a new user's trial: the page once added the DTD first,
    which the folder refuses while the file it names is missing). Each block prints what the ``text`` block after
    it shows: ``pdi sgml add`` and ``list`` each file's name, its SHA-256 (hashlib's, of the file saved) and the
    DTD's public identifier; the deposit its name, and ``sgml-parse`` that the DTD was found, with no error."""
    import hashlib

    from support.sgml_filing import FILING_DTD, PUBLIC

    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("PDI_ARCHIVE", raising=False)  # the page's archive: ./pdi-archive, as pdi init makes it
    monkeypatch.delenv("PDI_SGML_CATALOG", raising=False)
    text = (HOWTO / "sgml-dtds.md").read_text("utf-8")
    saved = re.findall(r"^`([\w.-]+)`[^\n]*\n(?:[^\n]+\n)*\n```sgml\n(.*?)^```", text, flags=re.MULTILINE | re.DOTALL)
    assert [name for name, _ in saved] == ["filing-entities.ent", "filing.dtd", "filing.sgml"], saved
    for name, body in saved:
        (tmp_path / name).write_text(body, encoding="ascii")
    files = dict(saved)
    assert files["filing.dtd"] == '<!ENTITY % entities SYSTEM "filing-entities.ent">\n%entities;\n' + FILING_DTD
    assert files["filing.sgml"].startswith(f'<!DOCTYPE filing PUBLIC "{PUBLIC}">\n')
    digest = {name: "sha256:" + hashlib.sha256(body.encode("ascii")).hexdigest() for name, body in saved}
    day = one_gmt_day.strftime("%Y/%m/%d")
    runner = CliRunner()
    blocks = re.findall(r"^```(\w*)\n(.*?)^```", text, flags=re.MULTILINE | re.DOTALL)
    pairs = [(body, after[1]) for (language, body), after in itertools.pairwise(blocks)
             if language == "sh" and after[0] == "text"]
    assert len(pairs) == 2, pairs
    ran = []
    for lines, shown in pairs:
        printed = ""
        for line in lines.splitlines():
            command, _, piped = line.partition(" | ")
            for part in command.split("&&"):
                words = [re.sub(r"/\d{4}/\d\d/\d\d/", f"/{day}/", w) for w in shlex.split(part, comments=True)]
                assert words[0] == "pdi", line
                result = runner.invoke(cli, words[1:])
                assert result.exit_code == 0, (words, result.output)
                out = result.stdout
                if piped:
                    assert shlex.split(piped) == ["grep", "sgml-parse"], line
                    out = "".join(kept for kept in out.splitlines(keepends=True) if "sgml-parse" in kept)
                printed += out
                ran.append(" ".join(words[1:3]))
        assert printed == re.sub(r"/\d{4}/\d\d/\d\d/", f"/{day}/", shown), (lines, printed)
    assert ran == ["init", "series add", "sgml add", "sgml add", "sgml list", "add filing.sgml", "get --info"], ran
    listed = [line.split("\t") for line in pairs[0][1].splitlines()[-2:]]
    assert listed == [["filing-entities.ent", digest["filing-entities.ent"]],
                      ["filing.dtd", digest["filing.dtd"], PUBLIC]], listed
    assert "DTD found (" + PUBLIC in pairs[1][1] and "; 0 parser errors" in pairs[1][1]
