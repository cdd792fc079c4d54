"""Start-up: ``pdi --help`` and ``pdi get`` import only what they use, and ``--help`` is click's own.

Each command runs in a fresh interpreter, as the console script runs it
(``pdi.cli.main``), and reports ``sys.modules`` as it exits; the modules a
command does not use must not be there. ``pdi --help`` and ``pdi --version``
import no click (:mod:`pdi.cli.top_help`) and no command's module: the help
must equal what click prints for a plain group holding every real command,
at every width click can lay it out to.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from pdi import __version__
from pdi.cli import COMMAND_HELP, COMMAND_MODULES, FAST_GET_DEFERRED, cli, load_all, top_help
from pdi.cli.group import PDIContext

#: Third-party packages no start-up of ``pdi --help`` or ``pdi get`` of a text needs.
HEAVY = (
    "html5lib", "PIL", "rapidfuzz", "re2", "httpx", "starlette", "uvicorn", "rich", "numpy",
    "psycopg", "psycopg_pool", "boto3", "botocore", "soundfile", "magic", "warcio", "ijson",
    "cdxj_indexer", "multipart", "python_multipart", "prometheus_client", "pyvips", "cffi",
)
#: Parts of pdi that reading a stored text by name does not use.
NOT_FOR_GET = (
    "pdi.server", "pdi.capture", "pdi.mhtml", "pdi.interop.warc", "pdi.interop.wacz",
    "pdi.archive.postgres", "pdi.archive.blobs.s3", "pdi.archive.bagit", "pdi.fragments.markup",
    "pdi.fragments.text", "pdi.fragments.image", "pdi.fragments.audio", "pdi.passages.reanchor",
    "pdi.fragments.image_streamed", "pdi.fragments.image_child", "pdi.fragments.image_size",  # not under .image
    "pdi.fragments.video", "pdi.archive.video",
    "pdi.interop",  # a browser fragment's aliases: only for a name with a '#'
    "pdi.charsets.sniff",  # how a browser finds a text's encoding: a stored text's charset is IANA's name
    "pdi.archive.content", "pdi.archive.fixity",  # what a deposit is; what an audit reports
)
#: Standard-library modules reading a text by name does not use (annotations' JSON; a deposit's counting thread;
#: the temporary file a blob is spooled to ahead, and what tempfile brings: shutil, random, the compressors;
#: what dataclasses, pathlib and urllib.parse import and a read never asks: pdi.cli.FAST_GET_DEFERRED, and inspect's
#: own imports).
STDLIB_NOT_FOR_GET = (
    "json", "queue", "tempfile", "shutil", "random", "bz2", "lzma", "zlib",
    "inspect", "ast", "dis", "tokenize", "linecache", "ipaddress", "copy", "ntpath", "fnmatch", "mmap", "fcntl", "heapq",
)

_REPORT = """
import atexit, os, sys
def report():
    deferred = sys.modules.get("pdi._deferred")  # a module deferred and never asked for was not imported
    modules = sorted(m for m in sys.modules if deferred is None or deferred.loaded(m))  # before json (see below)
    later = sys.modules.get("pdi._later")
    waiting = [f"{c.__module__}.{c.__qualname__}" for c in later.waiting()] if later else []
    import json
    open(os.environ["PDI_TEST_MODULES"], "w").write(json.dumps(modules))
    open(os.environ["PDI_TEST_MODULES"] + ".waiting", "w").write(json.dumps(waiting))
atexit.register(report)
from pdi.cli import main
main()
"""


def modules_after(args: list[str], tmp_path: Path, **env: str) -> tuple[subprocess.CompletedProcess[bytes], set[str]]:
    """Run ``pdi ARGS`` in a fresh interpreter: the finished process and the modules it had imported."""
    report = tmp_path / "modules.json"
    result = subprocess.run(
        [sys.executable, "-c", _REPORT, *args],
        capture_output=True, cwd=tmp_path, check=False,
        env={**os.environ, "PDI_TEST_MODULES": str(report), **env},
    )
    assert result.returncode == 0, result.stderr.decode()
    return result, set(json.loads(report.read_text()))


def still_waiting(tmp_path: Path) -> set[str]:
    """The dataclasses (``pdi._later``) the last :func:`modules_after` left unmade: no instance was needed."""
    return set(json.loads((tmp_path / "modules.json.waiting").read_text()))


def loaded(modules: set[str], packages: tuple[str, ...]) -> list[str]:
    """The modules of ``modules`` that are one of ``packages`` or inside one."""
    return sorted(m for m in modules if any(m == p or m.startswith(p + ".") for p in packages))


#: All of pdi that ``pdi --help`` and ``pdi --version`` import.
FRONT_DOOR = ["pdi", "pdi._lazy", "pdi.cli", "pdi.cli.commands", "pdi.cli.top_help"]


@pytest.mark.parametrize("option", ["--help", "-h"])
def test_help_imports_no_command_module_and_no_click(tmp_path: Path, option: str) -> None:
    _, modules = modules_after([option], tmp_path)
    assert loaded(modules, (*HEAVY, "click")) == []
    assert sorted(m for m in modules if m.startswith("pdi")) == FRONT_DOOR


def test_version_imports_no_command_module_and_no_click(tmp_path: Path) -> None:
    result, modules = modules_after(["--version"], tmp_path)
    clicks_own = CliRunner().invoke(cli, ["--version"], prog_name="pdi").output
    assert result.stdout.decode() == clicks_own == f"pdi, version {__version__}\n"
    assert loaded(modules, ("click",)) == []
    assert sorted(m for m in modules if m.startswith("pdi")) == FRONT_DOOR


def test_any_other_command_line_goes_to_click(tmp_path: Path) -> None:
    """Only ``--help``, ``-h`` or ``--version`` alone (and a plain ``pdi get NAME``) are answered without click."""
    for args in (["--help", "--version"], ["get", "--help"], ["--version", "-h"]):
        _, modules = modules_after(args, tmp_path)
        assert "click" in modules, args
    _, modules = modules_after(["--help"], tmp_path, _PDI_COMPLETE="bash_source")  # click's completion
    assert "click" in modules


def test_get_of_a_text_on_sqlite_imports_only_what_it_uses(tmp_path: Path) -> None:
    archive = str(tmp_path / "archive")
    text = tmp_path / "small.txt"
    text.write_bytes(b"A line of a small text.\n" * 40)
    for args in (["init", archive], ["series", "add", "bench.example.us", "--archive", archive]):
        subprocess.run([sys.executable, "-m", "pdi", *args], check=True, capture_output=True)
    name = subprocess.run(
        [sys.executable, "-m", "pdi", "add", "-s", "bench.example.us", str(text), "--archive", archive],
        check=True, capture_output=True, text=True,
    ).stdout.strip()
    result, modules = modules_after(["get", name, "--archive", archive], tmp_path)
    assert result.stdout == text.read_bytes()
    assert loaded(modules, HEAVY) == []
    assert loaded(modules, NOT_FOR_GET) == []
    assert loaded(modules, STDLIB_NOT_FOR_GET) == []
    assert set(FAST_GET_DEFERRED) <= set(STDLIB_NOT_FOR_GET)
    # the archive's records it has no instance of are never made (pdi._later): these, and some thirty more
    waiting = still_waiting(tmp_path)
    assert {f"pdi.archive.store.{name}" for name in ("SeriesRecord", "TokenRecord", "AuditRecord", "SearchRow",
                                                      "NewRepresentation", "ListQuery")} <= waiting
    assert {"pdi.archive.results.Deposit", "pdi.archive.results.SearchHit"} <= waiting
    assert len(waiting) >= 35
    assert "pdi.archive.store.RepresentationRecord" not in waiting
    # a plain `pdi get NAME --archive DIR` is read without click (pdi.cli.fast_get)
    assert loaded(modules, ("click",)) == []
    assert loaded(modules, ("pdi.cli",)) == [
        "pdi.cli", "pdi.cli.archive_io", "pdi.cli.commands", "pdi.cli.fast_get", "pdi.cli.get_run"]


def test_every_command_has_its_stored_help_sentence() -> None:
    """:data:`COMMAND_HELP` holds, for each command, exactly what click would shorten its help from."""
    load_all()
    assert set(COMMAND_HELP) == set(COMMAND_MODULES) == set(cli.commands)
    for name, command in cli.commands.items():
        stand_in = click.Command(name, help=COMMAND_HELP[name])
        for limit in (10, 30, 45, 60, 1000):
            assert stand_in.get_short_help_str(limit) == command.get_short_help_str(limit), (name, limit)


def _clicks_own_help(width: int) -> str:
    """What click prints for ``pdi --help`` at ``width``, from a plain group holding every real command."""
    load_all()
    plain = click.Group(
        cli.name, commands=dict(cli.commands), params=list(cli.params), help=cli.help,
        context_settings=cli.context_settings,
    )
    with PDIContext(plain, info_name="pdi", terminal_width=width, **cli.context_settings) as ctx:
        return plain.get_help(ctx) + "\n"


def test_the_page_without_click_is_clicks_own_at_every_width() -> None:
    """:func:`top_help.page` lays the help out as click does at each width click may use (50 to 78)."""
    for width in range(50, 79):
        assert top_help.page(width) + "\n" == _clicks_own_help(width), width


@pytest.mark.parametrize("columns", [55, 70, 100])
def test_help_is_clicks_own_listing_of_every_command(tmp_path: Path, columns: int) -> None:
    """``pdi --help`` (nothing loaded) prints what click prints for a plain group of every real command."""
    result, _ = modules_after(["--help"], tmp_path, COLUMNS=str(columns))
    width = max(min(columns, 80) - 2, 50)  # click's own: the terminal's columns, at most 80, less 2
    expected = _clicks_own_help(width)
    assert result.stdout.decode() == expected
    listed = [line.split()[0] for line in expected.split("Commands:\n", 1)[1].splitlines()
              if line.startswith("  ") and not line.startswith("   ")]
    assert listed == sorted(cli.commands)


def test_a_command_that_asks_over_http_imports_no_command_line_of_httpx(tmp_path: Path) -> None:
    """httpx's package imports its own command line (``httpx.main``: rich, pygments) unless it is absent; pdi never
    calls it, so a command of pdi that imports httpx (``pdi mirror sync`` here, which then finds no mirror to
    sync) imports neither."""
    report = tmp_path / "modules.json"
    subprocess.run([sys.executable, "-c", _REPORT, "init", "--archive", str(tmp_path / "a")], check=True,
                   capture_output=True, env={**os.environ, "PDI_TEST_MODULES": str(report)})
    result = subprocess.run([sys.executable, "-c", _REPORT, "mirror", "sync", "--archive", str(tmp_path / "a")],
                            capture_output=True, cwd=tmp_path, check=False,
                            env={**os.environ, "PDI_TEST_MODULES": str(report)})
    assert b"mirrors no series" in result.stderr, result.stderr.decode()
    modules = set(json.loads(report.read_text()))
    assert {"httpx", "pdi.network.mirrors"} <= modules
    assert loaded(modules, ("rich", "pygments")) == []


def test_import_of_a_warc_imports_no_http_client_and_no_signature_checks(tmp_path: Path) -> None:
    """``pdi import`` of a WARC crawls its pages from the file and checks no WACZ signature: httpx (and httpcore,
    ssl's client set-up) and cryptography are not imported (a fifth of a second of its start: issue 24)."""
    import io

    from warcio.statusandheaders import StatusAndHeaders
    from warcio.warcwriter import WARCWriter

    warc = tmp_path / "a.warc.gz"
    with warc.open("wb") as out:
        writer = WARCWriter(out, gzip=True)
        for url, body, media in (("http://example.org/", b'<html><img src="i.png"><p>a page</p></html>', "text/html"),
                                 ("http://example.org/i.png", b"\x89PNG\r\n\x1a\n" + bytes(40), "image/png")):
            http = StatusAndHeaders("200 OK", [("Content-Type", media)], protocol="HTTP/1.1")
            writer.write_record(writer.create_warc_record(url, "response", payload=io.BytesIO(body),
                                                          length=len(body), http_headers=http))
    archive = str(tmp_path / "archive")
    for args in (["init", archive], ["series", "add", "web.example.us", "--archive", archive]):
        subprocess.run([sys.executable, "-m", "pdi", *args], check=True, capture_output=True)
    result, modules = modules_after(["import", str(warc), "--series", "web.example.us", "--archive", archive],
                                    tmp_path)
    assert b"imported 1 page and 0 other resources" in result.stderr, result.stderr.decode()
    assert {"warcio", "pdi.interop.warc.pages", "pdi.capture.crawl"} <= modules
    modules.discard("httpx._main")  # pdi.cli's placeholder (None) that keeps httpx's command line out, no import
    assert loaded(modules, ("httpx", "httpcore", "cryptography", "pdi.capture.fetch", "pdi.wacz_signing")) == []
