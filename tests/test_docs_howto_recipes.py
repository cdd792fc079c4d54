"""The recipes of the longer how-tos print what they show (docs/how-to/deposit.md, cite.md, viewer.md, postgresql.md,
upgrade.md, capture.md, web-archives.md's and reanchor.md's *Try it*).

Each was split, as tests/test_docs_howto_outputs.py's pages were, into a short recipe whose outputs are real and a
reference page holding every rule (docs/reference/deposit.md, citations.md, viewer.md, postgresql.md, upgrade.md,
capture.md).
Here each recipe's lines are typed, in order, on an archive made as the page says (its day made today's: the names carry
the day they were minted on), and what they print, both streams as a terminal shows them, is what the page shows
(the viewer's addresses are asked of the resolver's app). docs/how-to/operate.md, which needs a running ``pdi
serve``, is followed by tests/server/test_server_operate_howto.py.
"""

from __future__ import annotations

import base64
import contextlib
import datetime
import hashlib
import itertools
import re
import shlex
import stat
import subprocess
import tarfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from pdi.cli import cli
from support.pgcluster import TemporaryCluster

ROOT = Path(__file__).resolve().parents[1]
HOWTO = ROOT / "docs" / "how-to"
#: An ISO 8601 time as pdi prints it (UTC, microseconds).
WHEN = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z"


def _pairs(page: str) -> list[tuple[str, str]]:
    """Each ``sh`` block of the page with the ``text`` block that follows it (what its lines print)."""
    text = (HOWTO / page).read_text("utf-8")
    blocks = re.findall(r"^```(\w*)\n(.*?)^```", text, flags=re.MULTILINE | re.DOTALL)
    return [(body, after[1]) for (language, body), after in itertools.pairwise(blocks)
            if language == "sh" and after[0] == "text"]


def _today(text: str, today: datetime.datetime) -> str:
    """The page's names with the day they were shown on made ``today``'s, its times made ``WHEN``."""
    text = re.sub(r"/\d{4}/\d\d/\d\d/", today.strftime("/%Y/%m/%d/"), text)
    # and as a query's value spells it, each "/" percent-encoded (%2F, any case)
    text = re.sub(r"%2[Ff]\d{4}%2[Ff]\d\d%2[Ff]\d\d%2[Ff]", today.strftime("%%2F%Y%%2F%m%%2F%d%%2F"), text)
    return re.sub(WHEN, "WHEN", text)


def _type(runner: CliRunner, lines: str, monkeypatch: pytest.MonkeyPatch,
          statuses: dict[str, int] | None = None) -> str:
    """What the lines print, each line's output ended as a terminal would end it (a prompt on a line of its
    own); ``export NAME=VALUE`` sets the variable; a line not listed in ``statuses`` must exit 0."""
    printed = ""
    for line in lines.splitlines():
        words = shlex.split(line, comments=True)
        if not words:
            continue
        if words[0] == "export":
            name, value = words[1].split("=", 1)
            monkeypatch.setenv(name, value)
            continue
        assert words[0] == "pdi", line
        result = runner.invoke(cli, words[1:])
        expected = next((code for part, code in (statuses or {}).items() if part in line), 0)
        assert result.exit_code == expected, (line, result.output)
        printed += result.output if result.output.endswith("\n") or not result.output else result.output + "\n"
    return printed


def test_the_deposit_pages_lines_print_what_it_shows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, one_gmt_day: datetime.datetime
) -> None:
    """The deposit page's directory: ``report.txt`` (one line, 45 characters), its second version
    ``report-v2.txt`` ("jumped"), and ``scan.jpg``, a PNG. ``#char=4,19`` of the first is "quick brown fox";
    a second ``pdi add`` mints serial 2 and warns that serial 1 holds the octets; ``--id q3-report`` twice mints
    once; the generic name lists both versions; the misnamed PNG is refused (exit 3) until ``--format png``;
    ``pdi verify`` finds 5 names' representations in 3 blobs (the report, its second version, the PNG)."""
    import subprocess

    # the page's first block makes the directory, typed in the clone (its /tmp/deposit made this test's own)
    made = re.search(r"^```sh\n(mkdir .*?)^```", (HOWTO / "deposit.md").read_text("utf-8"), re.MULTILINE | re.DOTALL)
    assert made is not None
    subprocess.run(["bash", "-e", "-c", made.group(1).replace("/tmp/deposit", shlex.quote(str(tmp_path)))],
                   cwd=ROOT, check=True, timeout=60)
    assert (tmp_path / "report.txt").read_bytes() == b"The quick brown fox jumps over the lazy dog.\n"
    assert (tmp_path / "report-v2.txt").read_bytes() == b"The quick brown fox jumped over the lazy dog.\n"
    assert (tmp_path / "scan.jpg").read_bytes().startswith(b"\x89PNG\r\n\x1a\n")  # a PNG (its signature)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("PDI_ARCHIVE", raising=False)
    runner = CliRunner()
    pairs = _pairs("deposit.md")
    assert len(pairs) == 7, pairs
    for lines, shown in pairs:
        printed = _type(runner, _today(lines, one_gmt_day), monkeypatch, {"scan.jpg -s oma.eop.gov.us  ": 3})
        assert re.sub(WHEN, "WHEN", printed) == _today(shown, one_gmt_day), printed
    assert "quick brown fox\n" in pairs[1][1]
    day = one_gmt_day.strftime("%Y/%m/%d")
    # pdi get writes the passage's 15 octets and nothing else: the page's line says no newline follows them
    assert runner.invoke(cli, ["get", f"urn:pdi://oma.eop.gov.us/{day}/1.text.1#char=4,19"]).output == \
        "quick brown fox"
    [asked] = [line for line in pairs[1][0].splitlines() if "#char=4,19" in line]
    assert "no newline" in asked.split("#", 2)[2], asked
    assert _type(runner, f"pdi get urn:pdi://oma.eop.gov.us/{day}/1.text.1", monkeypatch) == \
        "The quick brown fox jumps over the lazy dog.\n"


def test_the_cite_pages_lines_print_what_it_shows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, one_gmt_day: datetime.datetime
) -> None:
    """The tutorial's archive (examples/declaration.txt, then examples/site/index.html, which quotes the sixth
    line of the text in a ``<blockquote id="quote">``). The quotation "We hold these truths" starts at character
    388 of the page's source: at 380 stand the eight characters ``"quote">`` before it, which the mismatch's
    ``found`` line shows (exit 3); a passage of a series not registered here is left unchecked (exit 0)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("PDI_ARCHIVE", raising=False)
    page = (ROOT / "examples" / "site" / "index.html").read_bytes()
    (tmp_path / "declaration.txt").write_bytes((ROOT / "examples" / "declaration.txt").read_bytes())
    (tmp_path / "index.html").write_bytes(page)
    runner = CliRunner()
    _type(runner, "pdi init\npdi series add archives.gov.us\npdi add declaration.txt --series archives.gov.us\n"
          "pdi add index.html --series archives.gov.us", monkeypatch)
    pairs = _pairs("cite.md")
    assert len(pairs) == 4, pairs
    for lines, shown in pairs:
        printed = _type(runner, _today(lines, one_gmt_day), monkeypatch, {"@380=": 3})
        assert printed == _today(shown, one_gmt_day), printed
    # The position is a character of the page's source, every line ending counted as CR LF (the file's are LF).
    canonical = page.decode("utf-8").replace("\r\n", "\n").replace("\n", "\r\n")
    assert canonical[388:408] == "We hold these truths"
    assert canonical[380:388] == '"quote">'


def test_the_viewer_pages_addresses_answer_what_it_shows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, one_gmt_day: datetime.datetime
) -> None:
    """The deposit page's ``report.txt`` as ``1.text.1``, served: its ``/view`` page of ``#char=4,19`` marks
    "quick brown fox" (characters 4 to 19 of "The quick brown fox …"), and that of ``9.text.1``, a name of the
    same day not minted, is a 404 page, "Not in this archive", offering the day's document instead."""
    from starlette.testclient import TestClient

    from pdi.server import create_app

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PDI_ARCHIVE", "pdi-archive")
    (tmp_path / "report.txt").write_bytes(b"The quick brown fox jumps over the lazy dog.\n")
    runner = CliRunner()
    _type(runner, "pdi init\npdi series add oma.eop.gov.us\npdi add report.txt --series oma.eop.gov.us", monkeypatch)
    [(lines, shown)] = _pairs("viewer.md")
    lines, shown = _today(lines, one_gmt_day), _today(shown, one_gmt_day)
    asked = re.findall(r"curl -s (?:-o /dev/null -w '%\{http_code\}\\n' )?'http://127\.0\.0\.1:8000(/[^']+)'", lines)
    assert len(asked) == 2, lines
    day = one_gmt_day.strftime("%Y/%m/%d")
    with TestClient(create_app("pdi-archive")) as client:
        marked = client.get(asked[0])
        missing = client.get(asked[1])
    assert marked.status_code == 200
    printed = "\n".join(re.findall(r"<mark.*</mark>", marked.text)) + f"\n{missing.status_code}\n"
    assert printed == shown
    assert "<mark id=\"passage\">quick brown fox</mark>" in shown
    assert "<h1>Not in this archive</h1>" in missing.text
    assert f"<code>urn:pdi://oma.eop.gov.us/{day}/1</code>" in missing.text.split('id="nearest"', 1)[1]


def test_the_postgresql_pages_lines_print_what_it_shows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, one_gmt_day: datetime.datetime, pg_cluster: TemporaryCluster
) -> None:
    """The page's database made as its ``createuser``/``createdb`` lines make it (a role ``pdi`` with a password,
    a database it owns from ``template0`` with the character type ``C.UTF-8``), in a throw-away cluster whose
    unix socket stands for the page's ``localhost``: ``SHOW lc_ctype`` says ``C.UTF-8``; ``pdi init`` prints the
    URL with its password masked, and the series, the deposit and the check print what the page shows."""
    text = (HOWTO / "postgresql.md").read_text("utf-8")
    assert "createuser --pwprompt pdi" in text
    assert "createdb --owner pdi --template template0 --lc-ctype C.UTF-8 pdi" in text
    pg_cluster.sql("CREATE ROLE pdi LOGIN PASSWORD 'PASSWORD'")
    pg_cluster.sql("CREATE DATABASE pdi_howto OWNER pdi TEMPLATE template0 LC_CTYPE 'C.UTF-8'")
    socket = pg_cluster.url("pdi_howto").split("?", 1)[1]

    def here(text: str) -> str:
        for user in ("pdi", "pdi:PASSWORD", "pdi:***"):
            text = text.replace(f"postgresql://{user}@localhost/pdi", f"postgresql://{user}@/pdi_howto?{socket}")
        return text

    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("PDI_ARCHIVE", raising=False)
    monkeypatch.delenv("PGPASSWORD", raising=False)
    # report.txt as the page's own line makes it (found in a new user's trial: the page once named only its text)
    [made] = re.findall(r"`(echo [^`]+ > report\.txt)`", " ".join(text.split()))
    subprocess.run(["sh", "-ec", made], cwd=tmp_path, check=True, timeout=30)
    assert (tmp_path / "report.txt").read_bytes() == b"The quick brown fox jumps over the lazy dog.\n"
    (show, shown_ctype), (lines, shown) = _pairs("postgresql.md")
    assert shlex.split(show)[:3] == ["psql", "-Atc", "SHOW lc_ctype"]
    [(ctype,)] = pg_cluster.sql("SHOW lc_ctype", "pdi_howto")
    assert f"{ctype}\n" == shown_ctype
    runner = CliRunner()
    printed = _type(runner, here(_today(lines, one_gmt_day)), monkeypatch)
    assert printed == here(_today(shown, one_gmt_day))
    assert "PASSWORD" not in printed and ":***@" in printed


def test_the_upgrade_pages_lines_print_what_it_shows(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The page's ``/var/lib/pdi/archive`` is the SQLite archive release 0.2.0 wrote (tests/data/releases/0.2.0:
    schema version 13, fifteen blobs, no XML or SGML document), its paths moved under a temporary directory:
    ``pdi init --backup`` backs it up at 13 and migrates it to this pdi's schema version, and a second run backs
    up nothing; its HTML page's element index (an earlier reading's) is made anew; the fifteen blobs verify; the backup restores at 13 (its one blob
    file copied: blobs of at most 64 KiB are rows of the catalog)."""
    from pdi.archive.store import SCHEMA_VERSION

    (tmp_path / "var/lib/pdi").mkdir(parents=True)
    with tarfile.open(ROOT / "tests/data/releases/0.2.0/sqlite-archive.tar.gz") as tar:
        tar.extractall(tmp_path / "var/lib/pdi", filter="data")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("PDI_ARCHIVE", raising=False)

    def here(text: str) -> str:
        return text.replace("/var/lib/", f"{tmp_path}/var/lib/").replace("/backup/", f"{tmp_path}/backup/")

    runner = CliRunner()
    # before pdi init, what the page and its reference show any other command saying: refused, the catalog unchanged
    catalog = tmp_path / "var/lib/pdi/archive/catalog.sqlite"
    octets = catalog.read_bytes()
    refused = runner.invoke(cli, ["ls", "--archive", here("/var/lib/pdi/archive")])
    assert refused.exit_code == 8 and refused.stdout == "", refused.output
    for page in (HOWTO / "upgrade.md", HOWTO.parent / "reference" / "upgrade.md"):
        shown = [block for block in re.findall(r"^```text\n(.*?)^```", page.read_text("utf-8"), re.MULTILINE | re.DOTALL)
                 if block.startswith("pdi: storage error: ") and "older than this pdi's" in block]
        assert [here(block) for block in shown] == [refused.stderr], page
    assert catalog.read_bytes() == octets
    # the page's chmod first, as it says (the release's archive is 0644 and 0755, as 0.2.0 made it under umask 022)
    (closing,) = [line for line in (HOWTO / "upgrade.md").read_text("utf-8").splitlines() if line.startswith("chmod ")]
    assert stat.S_IMODE(catalog.stat().st_mode) & 0o044
    subprocess.run(here(closing), shell=True, check=True)
    assert stat.S_IMODE(catalog.stat().st_mode) & 0o077 == 0
    pairs = _pairs("upgrade.md")
    assert len(pairs) == 4, pairs
    for lines, shown in pairs:
        typed = "\n".join(line for line in here(lines).splitlines() if line.startswith("pdi "))
        assert _type(runner, typed, monkeypatch) == here(shown)
    assert f"(schema version {SCHEMA_VERSION})" in pairs[0][1] and "schema version 13 " in pairs[0][1]


@contextlib.contextmanager
def _site() -> Iterator[int]:
    """The repository's examples/site served on loopback, as ``python3 -m http.server --bind 127.0.0.1 -d examples/site`` serves it
    (the capture pages' 8080): its port."""
    import functools
    import http.server
    import threading

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:
            """Nothing on standard error, which the command's output is read from."""

    handler = functools.partial(Quiet, directory=str(ROOT / "examples" / "site"))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def test_the_capture_pages_lines_print_what_it_shows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, one_gmt_day: datetime.datetime
) -> None:
    """The repository's examples/site served on loopback (its port standing for the page's 8080): the capture's
    name encapsulates the URL (``/`` written ``%2F``, ``.`` ``%2E``), a second capture of the same page the same
    day deposits nothing and says so, and the file got back holds the three files of the site, the page's two
    references (its style sheet and image) satisfied."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PDI_ARCHIVE", "pdi-archive")
    runner = CliRunner()
    with _site() as port:
        _type(runner, "pdi init\npdi series add web.example.us", monkeypatch)
        [(lines, shown), (files, listed)] = _pairs("capture.md")
        printed = _type(runner, _today(lines, one_gmt_day).replace(":8080", f":{port}"), monkeypatch)
    assert printed == _today(shown, one_gmt_day).replace(":8080", f":{port}")
    assert "3 parts, 2 references satisfied" in shown
    # the page.mht got back, listed, checked, unpacked and packed again: the site's three files (its own sizes)
    site = ROOT / "examples" / "site"
    assert f"│ 2  │ image/png │ {(site / 'seal.png').stat().st_size}  │" in listed
    assert f"│ 1  │ text/css  │ {(site / 'style.css').stat().st_size}  │" in listed
    if port != 8080:  # the table's columns are as wide as the URLs: the page's port, as it shows it
        monkeypatch.chdir(tmp_path)
        Path("page.mht").write_bytes(Path("page.mht").read_bytes().replace(f":{port}/".encode(), b":8080/"))
    printed = _type(runner, files, monkeypatch)
    head, tail = listed.split("packed 3 parts, …\n")
    assert printed.startswith(head) and tail == "", printed
    assert re.fullmatch(r"packed 3 parts, \d+ bytes\n", printed[len(head):]), printed
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["index.html", "seal.png", "style.css"]


def test_the_web_archives_pages_lines_print_what_they_show(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, one_gmt_day: datetime.datetime
) -> None:
    """docs/how-to/web-archives.md's *Try it*: a WARC written by ``pdi capture --warc`` of examples/site, imported
    into a series of its own, is one page named on the day of its ``WARC-Date`` (today); its statements give the
    page's SHA-1 and its two parts' (the site's files' own, in base 32, as WARC writes them), and the WACZ holds
    the page's three records. Times and the record's UUID differ from run to run: the page shows them cut."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PDI_ARCHIVE", "pdi-archive")
    runner = CliRunner()
    text = (HOWTO / "web-archives.md").read_text("utf-8")
    [(lines, shown)] = _pairs("web-archives.md")
    assert "## Try it" in text.split(lines)[0]
    with _site() as port:
        _type(runner, "pdi init", monkeypatch)
        printed = _type(runner, _today(lines, one_gmt_day).replace(":8080", f":{port}"), monkeypatch)
    printed = re.sub(r"<urn:uuid:[0-9a-f-]{36}>", "<urn:uuid:…>", re.sub(WHEN, "WHEN", printed))
    assert printed == _today(shown, one_gmt_day).replace(":8080", f":{port}"), printed
    site = ROOT / "examples" / "site"

    def sha1(name: str) -> str:
        return "sha1:" + base64.b32encode(hashlib.sha1((site / name).read_bytes()).digest()).decode()

    assert f"warc:payload-digest\t{sha1('index.html')}\n" in shown
    assert f"warc:parts\t{sha1('style.css')} " in shown and f"\\n{sha1('seal.png')} " in shown
    assert (tmp_path / "pages.wacz").stat().st_size > 0


def test_the_reanchor_pages_try_it_prints_what_it_shows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, one_gmt_day: datetime.datetime
) -> None:
    """docs/how-to/reanchor.md's *Try it*, on the deposit page's report and its version 2 ("jumps" became "jumped"):
    "quick brown fox" (characters 4 to 19) stands unchanged in version 2, its context not (32 characters each
    side: "The " and " jumps over the lazy dog.\r\n" against "… jumped …"), so it is found by quote at the same
    place; "jumps" (20 to 25) is no longer there, and a word of five letters is not searched fuzzily: orphaned,
    exit 12."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PDI_ARCHIVE", "pdi-archive")
    (tmp_path / "report.txt").write_bytes(b"The quick brown fox jumps over the lazy dog.\n")
    (tmp_path / "report-v2.txt").write_bytes(b"The quick brown fox jumped over the lazy dog.\n")
    day = one_gmt_day.strftime("%Y/%m/%d")
    runner = CliRunner()
    _type(runner, f"pdi init\npdi series add oma.eop.gov.us\npdi add report.txt --series oma.eop.gov.us\n"
          f"pdi version urn:pdi://oma.eop.gov.us/{day}/1 report-v2.txt", monkeypatch)
    [(lines, shown)] = _pairs("reanchor.md")
    assert "The quick brown fox jumps over the lazy dog."[4:19] == "quick brown fox"
    assert "The quick brown fox jumps over the lazy dog."[20:25] == "jumps"
    printed = _type(runner, _today(lines, one_gmt_day), monkeypatch, {"#char=20,25": 12})
    assert printed == _today(shown, one_gmt_day)
    assert shown.splitlines()[0].endswith("/1.text.2#char=4,19")


@pytest.mark.slow  # the whole demo, as tests/archive/test_archive_cli.py runs it: a minute at most
def test_the_set_up_pages_demo_prints_what_it_shows(tmp_path: Path) -> None:
    """docs/how-to/set-up.md's ``scripts/demo``, run on the checkout under test (no set-up: a ``pdi`` on ``PATH``
    that runs this tree's src; ``--no-serve`` and ``--archive``, so that it stops and leaves nothing behind) on the
    day the page shows, noon GMT, by libfaketime: each stretch of the page's excerpt (between its ``…`` lines) is
    printed as it stands, in the page's order."""
    import os
    import shutil
    import subprocess
    import sys

    [(lines, shown), *_] = _pairs("set-up.md")
    assert shlex.split(lines, comments=True) == ["scripts/demo"]
    [day] = set(re.findall(r"urn:pdi://archives\.gov\.us/(\d{4}/\d\d/\d\d)/", shown))
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "pdi").write_text(f'#!/bin/sh\nexec {shlex.quote(sys.executable)} -m pdi "$@"\n')
    (bin_dir / "pdi").chmod(0o755)
    faketime = shutil.which("faketime")
    assert faketime, "faketime is missing: scripts/bootstrap --dev installs Debian's faketime"
    temporary = tmp_path / "tmp"  # where mktemp makes the demo's directory
    temporary.mkdir()
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"), PDI_SKIP_BOOTSTRAP="1", TZ="UTC", TMPDIR=str(temporary),
               PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    done = subprocess.run([faketime, "-f", f"@{day.replace('/', '-')} 12:00:00", str(ROOT / "scripts" / "demo"),
                           "--no-serve", "--archive", str(tmp_path / "archive")],
                          capture_output=True, text=True, env=env, check=False, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert list(temporary.iterdir()) == []  # its tmp.XXXX/out, the files fetched, removed with the archive elsewhere
    assert (tmp_path / "archive" / "catalog.sqlite").is_file()
    printed = done.stdout
    at = 0
    for stretch in shown.split("…\n"):
        found = printed.find(stretch, at)
        assert found >= 0, (stretch, printed[at:])
        assert found == 0 or printed[found - 1] == "\n", stretch  # whole lines
        at = found + len(stretch)
    assert "checked 5 representations in 5 blobs: 0 problems\n" in shown


def test_every_page_that_serves_a_folder_with_python_serves_it_on_loopback_alone() -> None:
    """``python3 -m http.server`` listens on every interface unless told (its ``--bind``, Python's documentation):
    a page's command that serves the examples binds 127.0.0.1, as scripts/demo does, so no one else on the network
    reads what it serves."""
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    serving = [(page.name, line) for page in pages for line in page.read_text("utf-8").splitlines()
               if re.search(r"python3? -m http\.server", line) and not line.lstrip().startswith(("`", "|"))
               and "http.server" in line.split("#")[0]]
    assert {name for name, _ in serving} >= {"capture.md", "collection.md"}, serving
    for name, line in serving:
        assert re.search(r"python3? -m http\.server .*--bind 127\.0\.0\.1", line), (name, line)
