"""``pdi docs``: the manual's pages and the deployment files, read from the installed package (here: the checkout).

An operator who installed pdi's wheel with pipx has no checkout: what a ``--help`` text tells them to read must
come from pdi itself. ``pdi docs PAGE`` prints a file of ``docs/`` octet for octet, ``pdi docs DIR --to DEST``
writes a folder's files (the deployment examples of ``docs/deploy/``), never over a file that is there; every
page a ``--help`` text names is written ``pdi docs PAGE``, and is there. tests/test_package.py asks the same of
the installed wheel.
"""

from __future__ import annotations

import re
import stat
from pathlib import Path

import click
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from pdi.cli import cli, load_all
from support.checkout import ROOT

DOCS = ROOT / "docs"
DEPLOY = DOCS / "deploy"
#: What the manual is made of, as MANIFEST.in and setup.py put it in the sdist and the wheel: its pages, the
#: deployment files and the texts of the specifications (not the site's own: screenshots, stylesheet, hooks).
PAGES = sorted({*(str(p.relative_to(DOCS)) for p in DOCS.rglob("*.md")),
                *(f"deploy/{p.name}" for p in DEPLOY.iterdir()),
                *(f"specs/{p.name}" for p in (DOCS / "specs").glob("*.txt"))})
#: The reference pages ``pdi docs`` prints whole (tests/test_cli_docs_reference.py), each with its text up to its
#: first comment (the note for readers of the repository, left out, or the marker, where the reference is written).
GENERATED = {page: (DOCS / page).read_text("utf-8").split("<!--")[0]
             for page in ("reference/cli.md", "reference/http-api.md", "reference/exit-codes.md")}
#: A page a ``--help`` text names: ``pdi docs PAGE``, PAGE up to a space, a comma, a parenthesis or a semicolon.
NAMED = re.compile(r"pdi docs ([\w./-]+[\w/])")
#: Any other way a help text could point into the manual: a path under docs/, or the old "(docs: how-to/x)".
ELSEWHERE = re.compile(r"(?<!pdi )\bdocs(?:/|: )")


def invoke(*args: str) -> click.testing.Result:
    return CliRunner().invoke(cli, ["docs", *args])


def help_texts() -> dict[str, str]:
    """Every command's ``--help``, laid out so wide that no line is broken (click breaks at hyphens: how-/to)."""
    load_all()
    found: dict[str, str] = {}

    def walk(command: click.Command, ctx: click.Context, path: str) -> None:
        found[path] = command.get_help(ctx)
        if isinstance(command, click.Group):
            for name in command.list_commands(ctx):
                sub = command.get_command(ctx, name)
                assert sub is not None
                walk(sub, click.Context(sub, info_name=name, parent=ctx, max_content_width=10_000,
                                        terminal_width=10_000), f"{path} {name}")

    walk(cli, click.Context(cli, info_name="pdi", max_content_width=10_000, terminal_width=10_000), "pdi")
    return found


def test_pdi_docs_prints_a_deployment_file_as_the_manual_holds_it() -> None:
    for asked in ("deploy/nginx.conf", "docs/deploy/nginx.conf"):
        result = invoke(asked)
        assert result.exit_code == 0, result.output
        assert result.stdout_bytes == (DEPLOY / "nginx.conf").read_bytes()


@pytest.mark.parametrize("asked", ["how-to/operate", "how-to/operate.md", "docs/how-to/operate.md"])
def test_pdi_docs_prints_a_page_named_as_a_help_text_or_the_manual_names_it(asked: str) -> None:
    result = invoke(asked)
    assert result.exit_code == 0, result.output
    assert result.stdout_bytes == (DOCS / "how-to" / "operate.md").read_bytes()


def test_pdi_docs_lists_every_page_with_its_title() -> None:
    result = invoke()
    assert result.exit_code == 0, result.output
    lines = dict(line.split("\t") for line in result.stdout.splitlines())
    assert sorted(lines) == PAGES
    assert "hooks.py" not in lines and not [p for p in lines if p.startswith(("screenshots/", "stylesheets/"))]
    for page in PAGES:
        if page.endswith(".md"):
            first = (DOCS / page).read_text("utf-8").splitlines()[0]
            assert lines[page] == first.removeprefix("# "), page
    assert lines["deploy/nginx.conf"].startswith("pdi behind nginx: TLS ended here")
    assert lines["deploy/pdi-admin"].startswith("pdi-admin: ")  # its first comment, past the #! line
    # a first sentence that runs on over the next comment lines is listed whole, not cut at the line's end
    assert lines["deploy/pdi-admin"].endswith("run as the service's own user (pdi docs how-to/operator-guide).")
    assert lines["deploy/pdi-backup.service"].endswith("started by pdi-backup.timer (pdi docs how-to/operator-guide).")
    # the specifications' sources have no heading of their own: their folder's README names the document
    assert lines["specs/000_5a440b81ff564daf.txt"] == (
        "RFC 5147, URI Fragment Identifiers for the text/plain Media Type (XML source)")
    assert lines["specs/draft-mallery-urn-pdi-00.reflowed.txt"].startswith("draft-mallery-urn-pdi-00, Persistent")
    assert [page for page, said in lines.items() if not said] == []  # every file listed has a title


def test_pdi_docs_of_a_folder_lists_its_files() -> None:
    result = invoke("deploy")
    assert result.exit_code == 0, result.output
    assert [line.split("\t")[0] for line in result.stdout.splitlines()] == sorted(
        f"deploy/{p.name}" for p in DEPLOY.iterdir())


def test_pdi_docs_deploy_to_writes_the_deployment_files(tmp_path: Path) -> None:
    dest = tmp_path / "new" / "deploy"
    result = invoke("deploy", "--to", str(dest))
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in dest.iterdir()) == sorted(p.name for p in DEPLOY.iterdir())
    for path in DEPLOY.iterdir():
        written = dest / path.name
        assert written.read_bytes() == path.read_bytes()
        # a script is written executable (pdi-admin is installed with install -m 0755), the rest not
        executable = path.read_bytes().startswith(b"#!")
        assert stat.S_IMODE(written.stat().st_mode) & 0o111 == (0o111 if executable else 0), path.name
    assert result.stdout.splitlines() == [str(dest / p.name) for p in sorted(DEPLOY.iterdir())]


def test_pdi_docs_to_writes_one_file_or_the_whole_manual(tmp_path: Path) -> None:
    assert invoke("deploy/pdi.service", "--to", str(tmp_path / "one")).exit_code == 0
    assert [p.name for p in (tmp_path / "one").iterdir()] == ["pdi.service"]
    assert invoke("--to", str(tmp_path / "all")).exit_code == 0
    written = sorted(str(p.relative_to(tmp_path / "all")) for p in (tmp_path / "all").rglob("*") if p.is_file())
    assert written == PAGES


def test_pdi_docs_to_never_overwrites_and_then_writes_nothing(tmp_path: Path) -> None:
    (tmp_path / "pdi.service").write_bytes(b"the operator's own unit\n")
    result = invoke("deploy", "--to", str(tmp_path))
    assert result.exit_code == 5, result.output  # an immutability conflict, as pdi export into a file there
    assert "pdi.service" in result.stderr and "exists" in result.stderr
    assert [p.name for p in tmp_path.iterdir()] == ["pdi.service"]
    assert (tmp_path / "pdi.service").read_bytes() == b"the operator's own unit\n"


def test_pdi_docs_to_writes_through_no_link_put_in_a_partial_file_s_place(tmp_path: Path) -> None:
    """Found in review, 2026-12-02: each file went first to ``.NAME.pdi-partial`` by its name, so a link put there
    (by another user who can write to the folder) had the file written through it, over what it pointed at. Now the
    partial file is made new (O_EXCL, O_NOFOLLOW): the link is refused, named, and nothing is written or kept."""
    victim = tmp_path / "victim"
    victim.write_bytes(b"the writer's own file\n")
    dest = tmp_path / "deploy"
    dest.mkdir()
    (dest / ".pdi.service.pdi-partial").symlink_to(victim)
    result = invoke("deploy", "--to", str(dest))
    assert result.exit_code != 0
    said = " ".join(result.stderr.split())
    assert f"{dest / '.pdi.service.pdi-partial'} is there and is a link" in said and "nothing was kept" in said
    assert victim.read_bytes() == b"the writer's own file\n"
    assert [p.name for p in dest.iterdir()] == [".pdi.service.pdi-partial"]
    # a killed run's own leftover (a regular file of this user's) is no refusal: it is made again
    (dest / ".pdi.service.pdi-partial").unlink()
    (dest / ".pdi.service.pdi-partial").write_bytes(b"a killed run's octets")
    assert invoke("deploy", "--to", str(dest)).exit_code == 0
    assert (dest / "pdi.service").read_bytes() == (DEPLOY / "pdi.service").read_bytes()
    assert sorted(p.name for p in dest.iterdir()) == sorted(p.name for p in DEPLOY.iterdir())


def test_pdi_docs_deploy_to_run_twice_says_the_files_exist(tmp_path: Path) -> None:
    assert invoke("deploy", "--to", str(tmp_path)).exit_code == 0
    again = invoke("deploy", "--to", str(tmp_path))
    assert again.exit_code == 5, again.output
    first = sorted(p.name for p in DEPLOY.iterdir())[:3]  # named in order, three at most
    shown = ", ".join(str(tmp_path / name) for name in first)
    assert f"{shown} … exist (nothing was written)" in again.stderr, again.stderr


@pytest.mark.parametrize("asked", ["nonesuch", "how-to/nonesuch.md", "../pyproject.toml", "deploy/../../setup.py",
                                   "/etc/passwd", "hooks.py", "screenshots", ""])
def test_pdi_docs_refuses_what_the_manual_does_not_hold(asked: str) -> None:
    result = invoke(asked)
    assert result.exit_code == 4, result.output
    assert result.stdout == ""
    assert "pdi: not found: " in result.stderr and "pdi docs lists" in result.stderr


@settings(max_examples=300, deadline=None)
@given(st.text(st.sampled_from("abdeghilmnoprstuwy-./:\\ \x00é"), max_size=30) | st.sampled_from(PAGES))
def test_pdi_docs_prints_a_manual_file_or_nothing(asked: str) -> None:
    result = invoke("--", asked)  # (a word that starts with "-" is no option here)
    if result.exit_code == 0:
        assert (result.stdout_bytes in {(DOCS / p).read_bytes() for p in PAGES if p not in GENERATED}
                or any(result.stdout.startswith(start) for start in GENERATED.values()) or "\t" in result.stdout)
    else:
        assert result.exit_code == 4 and result.stdout == "", (asked, result.output)


def test_every_page_a_help_text_names_is_in_the_manual() -> None:
    named: dict[str, set[str]] = {}
    for command, text in help_texts().items():
        flat = " ".join(text.split())
        assert not ELSEWHERE.search(flat.replace("pdi docs", "")), (
            f"{command} --help points into the manual otherwise than `pdi docs PAGE`: {flat}")
        for page in NAMED.findall(flat):
            named.setdefault(page, set()).add(command)
    assert {"deploy/nginx.conf", "how-to/operate", "how-to/backup", "how-to/mirrors"} <= set(named)
    for page, commands in named.items():
        result = invoke(page)
        assert result.exit_code == 0 and result.stdout_bytes, (page, commands, result.output)
        if (DOCS / page).is_dir():  # a folder: its files listed
            assert [line.split("\t")[0] for line in result.stdout.splitlines()] == sorted(
                f"{page}/{p.name}" for p in (DOCS / page).iterdir()), page
        else:
            candidates = [DOCS / page, DOCS / f"{page}.md"]
            assert result.stdout_bytes in [c.read_bytes() for c in candidates if c.is_file()], page


def test_the_top_level_help_names_pdi_docs() -> None:
    result = CliRunner().invoke(cli, ["--help"], terminal_width=200)
    assert re.search(r"^  docs +The manual's pages and the deployment files", result.stdout, re.MULTILINE)
