"""``pdi docs reference/cli``, ``reference/http-api`` and ``reference/exit-codes`` print the pages whole: the part the
site's build writes from the code (docs/hooks.py, which calls :mod:`pdi.cli.reference_pages`) is written in, as plain
text, where the page's file holds only its marker and a note for readers of the repository.

What each page must name is found here without the generator: the click commands walked again (as
tests/test_docs_build.py walks them), the resolver's ``/openapi.json`` asked over HTTP of the app, and the
exit statuses of :mod:`pdi.errors`' classes.
"""

from __future__ import annotations

import re
from pathlib import Path

import click
import pytest
from click.testing import CliRunner
from starlette.testclient import TestClient

from pdi import errors
from pdi.archive import Archive
from pdi.cli import cli, load_all
from pdi.server import create_app


def _docs(*args: str) -> str:
    result = CliRunner().invoke(cli, ["docs", *args])
    assert result.exit_code == 0, result.output
    return result.stdout


def _commands() -> dict[str, click.Command]:
    load_all()
    found: dict[str, click.Command] = {}

    def walk(command: click.Command, ctx: click.Context, path: str) -> None:
        found[path] = command
        if isinstance(command, click.Group):
            for name in command.list_commands(ctx):
                sub = command.get_command(ctx, name)
                assert sub is not None
                if not sub.hidden:
                    walk(sub, click.Context(sub, info_name=name, parent=ctx, **sub.context_settings), f"{path} {name}")

    walk(cli, click.Context(cli, info_name="pdi", **cli.context_settings), "pdi")
    return found


@pytest.mark.parametrize("page", ["reference/cli", "reference/http-api", "reference/exit-codes"])
def test_a_generated_page_is_printed_whole_without_the_note_for_the_repository(page: str) -> None:
    printed = _docs(page)
    assert "Reading this file in the repository" not in printed
    assert "<!--" not in printed and "<table>" not in printed and "<code>" not in printed  # plain text
    assert len(printed.splitlines()) > 100


def test_pdi_docs_reference_cli_names_every_command_and_each_of_its_options() -> None:
    printed = _docs("reference/cli")
    found = _commands()
    assert len(found) > 30 and {"pdi export", "pdi restore", "pdi series add", "pdi docs"} <= set(found)
    lines = printed.splitlines()
    for path, command in found.items():
        assert f"{'#' * min(2 + path.count(' '), 4)} {path}" in lines, f"{path}: no heading"
        assert f"Usage: {path} " in printed or f"Usage: {path}\n" in printed, f"{path}: no usage line"
        section = re.split(r"\n#{2,4} pdi", printed.split(f"{'#' * min(2 + path.count(' '), 4)} {path}\n", 1)[1])[0]
        for param in command.params:
            if isinstance(param, click.Option) and not param.hidden:
                assert f"- {', '.join(param.opts)}" in section or param.opts[0] in section, (path, param.opts)
    assert "--link / --copy" in printed and "--wacz OUT.wacz" in printed


def test_pdi_docs_reference_http_api_names_every_path_of_openapi_json(tmp_path: Path) -> None:
    Archive.init(tmp_path / "archive").close()
    with TestClient(create_app(str(tmp_path / "archive"))) as client:
        document = client.get("/openapi.json").json()
    printed = _docs("reference/http-api")
    lines = printed.splitlines()
    assert len(document["paths"]) > 20
    for path, methods in document["paths"].items():
        assert f"## `{path}`" in lines, path
        for method, operation in methods.items():
            if isinstance(operation, dict) and "responses" in operation:
                assert f"### {method.upper()} `{path}`" in lines, (method, path)
    assert f"{len(document['paths'])} paths." in printed


def test_pdi_docs_reference_exit_codes_names_every_error_class() -> None:
    printed = _docs("reference/exit-codes")
    todo: list[type[errors.PDIError]] = [errors.PDIError]
    while todo:
        cls = todo.pop()
        todo.extend(cls.__subclasses__())
        assert f"- {cls.exit_code}: class or constant: {cls.__module__}.{cls.__name__}; " in printed, cls


def test_pdi_docs_to_writes_a_generated_page_whole(tmp_path: Path) -> None:
    assert CliRunner().invoke(cli, ["docs", "reference/cli", "--to", str(tmp_path)]).exit_code == 0
    assert (tmp_path / "cli.md").read_text("utf-8") == _docs("reference/cli")
