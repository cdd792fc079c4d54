"""The command's front door: help, version, and the error-to-exit-status mapping."""

from __future__ import annotations

import click
from click.testing import CliRunner

from pdi import __version__
from pdi.cli import PDIGroup, cli
from pdi.errors import IntegrityError, NotFoundError, ParseError


def test_version_prints_package_version() -> None:
    result = CliRunner().invoke(cli, ["--version"])
    assert result.exit_code == 0
    assert __version__ in result.output


def test_pdi_errors_become_one_line_and_their_exit_status() -> None:
    @click.group(cls=PDIGroup)
    def g() -> None:
        pass

    @g.command()
    def bad() -> None:
        raise ParseError("unexpected ']'", text="a]", offset=1, rule="host")

    @g.command()
    def corrupt() -> None:
        raise IntegrityError("md5 mismatch")

    runner = CliRunner()
    r = runner.invoke(g, ["bad"])
    assert r.exit_code == 1
    assert r.output.strip() == "pdi: syntax error: unexpected ']' (rule host, offset 1)"
    r = runner.invoke(g, ["corrupt"])
    assert r.exit_code == 3
    assert r.output.count("\n") == 1


def test_an_error_message_with_line_breaks_and_escapes_stays_one_line() -> None:
    @click.group(cls=PDIGroup)
    def g() -> None:
        pass

    @g.command()
    def missing() -> None:
        raise NotFoundError("no part labelled 'a\r\nb\x1b[31m' (caf\u00e9)")

    r = CliRunner().invoke(g, ["missing"])
    assert r.exit_code == 4
    assert r.output == "pdi: not found: no part labelled 'a\\r\\nb\\x1b[31m' (caf\u00e9)\n"
