"""The manual builds as a site with no warning, its generated reference is whole, and the README stays short.

``mkdocs build --strict`` fails on any warning: a link to a page or an
anchor that does not exist, a page missing from the navigation, a hook that
raises (mkdocs.yml's ``validation:``). The command-line and HTTP API pages
are written at build time by docs/hooks.py; here the commands are walked and
``/openapi.json`` asked again, independently of the hook, and each command
and path must be on its page.
"""

from __future__ import annotations

import html
import os
import re
import subprocess
import sys
from pathlib import Path

import click
import pytest
from starlette.testclient import TestClient

from pdi.archive import Archive
from pdi.cli import cli, load_all
from pdi.server import create_app

ROOT = Path(__file__).resolve().parents[1]
README_MAX_LINES = 320


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}  # PYTHONPATH: the pdi under test (tests/conftest.py)
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, f"mkdocs build --strict failed:\n{done.stderr[-6000:]}"
    assert "WARNING" not in done.stderr, done.stderr
    return out


def _command_paths() -> list[str]:
    load_all()
    paths: list[str] = []

    def walk(command: click.Command, ctx: click.Context, path: str) -> None:
        paths.append(path)
        if isinstance(command, click.Group):
            for name in command.list_commands(ctx):
                sub = command.get_command(ctx, name)
                assert sub is not None, f"{path} lists {name} but has no such command"
                if not sub.hidden:
                    walk(sub, click.Context(sub, info_name=name, parent=ctx, **sub.context_settings), f"{path} {name}")

    walk(cli, click.Context(cli, info_name="pdi", **cli.context_settings), "pdi")
    return paths


def test_every_command_and_subcommand_is_on_the_cli_reference(site: Path) -> None:
    page = (site / "reference" / "cli.html").read_text(encoding="utf-8")
    paths = _command_paths()
    assert len(paths) > 30, paths  # every family loaded, not only the top level
    for path in paths:
        assert f'id="{path.replace(" ", "-")}"' in page, f"{path}: no heading on the CLI reference"
        ctx_usage = f"Usage: {path}"
        assert ctx_usage in page, f"{path}: its usage line is not on the CLI reference"
    # each option of a command is there as click names it (a sample that every command has)
    assert page.count("<code>-h, --help</code>") >= len(paths) - 1


def test_every_path_of_openapi_json_is_on_the_api_reference(site: Path, tmp_path: Path) -> None:
    Archive.init(tmp_path / "archive").close()
    with TestClient(create_app(str(tmp_path / "archive"))) as client:
        document = client.get("/openapi.json").json()
    page = (site / "reference" / "http-api.html").read_text(encoding="utf-8")
    assert document["paths"], "no path in /openapi.json"
    for path, methods in document["paths"].items():
        assert f"<code>{html.escape(path)}</code>" in page, f"{path}: not on the API reference"
        for method in methods:
            if method in ("get", "put", "post", "delete", "patch", "head", "options"):
                assert f"{method.upper()} <code>{html.escape(path)}</code>" in page, (method, path)


def test_the_exit_status_page_names_every_error_class(site: Path) -> None:
    from pdi import errors

    page = (site / "reference" / "exit-codes.html").read_text(encoding="utf-8")
    todo, seen = [errors.PDIError], []
    while todo:
        cls = todo.pop()
        seen.append(cls)
        todo.extend(cls.__subclasses__())
    for cls in seen:
        assert f"<code>{cls.__module__}.{cls.__name__}</code>" in page, cls


def test_the_readme_is_short_and_its_links_into_docs_resolve() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) <= README_MAX_LINES, "README.md is the front door; the manual is docs/"
    links = re.findall(r"\]\(([^)\s]+)\)", text)
    into_docs = [link for link in links if link.startswith("docs/")]
    assert into_docs, "README.md links into docs/"
    for link in into_docs:
        target = ROOT / link.split("#", 1)[0]
        assert target.is_file(), f"README.md links to {link}, which does not exist"
    # the tour is on the first screen: its commands come before the 40th line
    head = "\n".join(text.splitlines()[:40])
    for step in ("pdi init", "pdi add", "pdi get", "pdi cite", "pdi serve"):
        assert step in head, f"{step} is not in the README's first screen"


def test_the_tutorial_shows_pdi_init_as_it_prints_today(tmp_path: Path) -> None:
    # the tutorial's first command, run: its output line, with the archive's path as the tutorial names it
    from pdi.archive.store import SCHEMA_VERSION

    made = subprocess.run([sys.executable, "-m", "pdi", "init", str(tmp_path / "pdi-archive")], capture_output=True,
                          text=True, check=True, timeout=120).stdout
    assert made == f"archive at {tmp_path / 'pdi-archive'} (schema version {SCHEMA_VERSION})\n"
    tutorial = (Path(__file__).resolve().parents[1] / "docs" / "tutorial.md").read_text("utf-8")
    assert f"$ pdi init\narchive at pdi-archive (schema version {SCHEMA_VERSION})\n" in tutorial


def test_the_built_site_is_ignored_by_git() -> None:
    ignored = (ROOT / ".gitignore").read_text(encoding="utf-8").split()
    assert "site/" in ignored or "/site/" in ignored


def test_every_page_shows_pdi_inits_line_with_todays_schema_version() -> None:
    # `pdi init` prints "archive at LOCATION (schema version N)": wherever the manual shows that line, N is
    # the schema version this pdi migrates to (the tutorial, the S3 and PostgreSQL pages)
    from pdi.archive.store import SCHEMA_VERSION

    shown: list[tuple[str, str]] = []
    for page in sorted((ROOT / "docs").rglob("*.md")):
        text = " ".join(page.read_text(encoding="utf-8").split())
        shown += [(page.name, n) for n in re.findall(r"archive at \S+ (?:\(blobs in \S+\) )?\(schema version (\d+)\)", text)]
    assert {"tutorial.md", "s3.md", "postgresql.md"} <= {name for name, _ in shown}
    assert [(name, n) for name, n in shown if n != str(SCHEMA_VERSION)] == []


def _nav_pages(entries: list[object]) -> list[str]:
    pages: list[str] = []
    for entry in entries:
        value = next(iter(entry.values())) if isinstance(entry, dict) else entry
        pages += _nav_pages(value) if isinstance(value, list) else [str(value)]
    return pages


def test_the_index_links_every_page_of_the_navigation_in_its_order() -> None:
    # docs/index.md's "How this manual is organised" is the manual's table of contents: a page in mkdocs.yml's
    # navigation that it does not name is a page a reader of the index never finds
    import yaml

    nav = _nav_pages(yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))["nav"])
    index = (ROOT / "docs" / "index.md").read_text(encoding="utf-8")
    contents = index.split("## How this manual is organised", 1)[1].split("\n## ", 1)[0]
    linked = [link.split("#", 1)[0] for link in re.findall(r"\]\(([^)\s]+\.md[^)\s]*)\)", contents)]
    missing = [page for page in nav if page != "index.md" and page not in linked]
    assert missing == [], f"docs/index.md does not link {missing}"
    first = [page for page in dict.fromkeys(linked) if page in nav]
    assert first == [page for page in nav if page in first], "docs/index.md names the pages out of the navigation's order"


def test_pages_link_the_pages_they_name_rather_than_give_their_paths() -> None:
    # a reader of the built site cannot follow `docs/pdf-text-layer.md`; a link is checked by --strict as well
    named: list[tuple[str, str]] = []
    for page in sorted((ROOT / "docs").rglob("*.md")):
        if "specs" in page.relative_to(ROOT / "docs").parts:
            continue  # the restored drafts and their notes are quoted as written
        own = page.relative_to(ROOT).as_posix()
        text = page.read_text(encoding="utf-8")
        named += [(own, path) for path in re.findall(r"`(docs/[\w/.-]+\.md)`", text) if path != own]
    assert named == []
