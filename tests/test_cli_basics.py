"""The command's front door: help, version, and the error-to-exit-status mapping."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import click
import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

import pdi
from pdi import __version__
from pdi.cli import COMMAND_MODULES, PDIGroup, cli, load_all
from pdi.errors import IntegrityError, NotFoundError, ParseError
from support.checkout import INSTALLED


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


def test_every_command_is_loaded_from_the_modules_that_add_it() -> None:
    """``COMMAND_MODULES`` says which modules make each command; the first one adds it to the top group."""
    for module in sorted({m for modules in COMMAND_MODULES.values() for m in modules}):
        group = PDIGroup()
        group.load(module)
        expected = {name for name, modules in COMMAND_MODULES.items() if modules[0] == module}
        assert set(group.commands) == expected, module
    assert set(PDIGroup(lazy=COMMAND_MODULES).list_commands(click.Context(cli))) == set(COMMAND_MODULES)
    load_all()
    assert set(cli.commands) == set(COMMAND_MODULES)
    mhtml = cli.commands["mhtml"]
    assert isinstance(mhtml, click.Group)
    assert set(mhtml.commands) == {"ls", "check", "pack", "unpack"}  # from mhtml_cmd and capture_cmd


def test_a_command_loads_only_its_own_modules(tmp_path: Path) -> None:
    """``pdi text`` starts without the HTTP client, the database driver or the MHTML reader."""
    sample = tmp_path / "t.txt"
    sample.write_bytes(b"one\ntwo\n")
    script = (
        "import sys\n"
        "from pdi.cli import cli\n"
        f"cli.main(['text', {str(sample)!r}, 'line=1,2'], standalone_mode=False)\n"
        "print(sorted(m for m in ('httpx', 'psycopg', 'pdi.mhtml', 'pdi.archive') if m in sys.modules))\n"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert result.stdout == "two\n[]\n"


def test_subprocesses_run_the_pdi_under_test(tmp_path: Path) -> None:
    # tests/conftest.py puts this tree's src first, so a `python -m pdi` a test starts
    # is the code under test even where another copy of pdi is installed; in CI both are
    # the installed wheel (support.checkout, tests/test_package.py checks which one this is)
    result = subprocess.run(
        [sys.executable, "-c", "import pdi; print(pdi.__file__)"],
        capture_output=True, text=True, check=True, cwd=tmp_path,
    )
    here = Path(__file__).resolve().parent.parent / "src" / "pdi" / "__init__.py"
    assert Path(result.stdout.strip()) == (Path(pdi.__file__) if INSTALLED else here)


def test_every_error_prints_one_pdi_prefix() -> None:
    """``pdi: <kind>: message`` for each class; the base class names no kind ("pdi: pdi error:" would repeat it)."""
    from pdi import errors

    classes = [errors.PDIError, errors.ParseError, errors.IntegrityError, errors.NotFoundError,
               errors.ImmutabilityError, errors.UnsupportedError, errors.LimitError, errors.StoreError]
    expected = {
        errors.PDIError: (1, "pdi: it failed"),
        errors.ParseError: (1, "pdi: syntax error: it failed"),
        errors.IntegrityError: (3, "pdi: integrity check failed: it failed"),
        errors.NotFoundError: (4, "pdi: not found: it failed"),
        errors.ImmutabilityError: (5, "pdi: immutability conflict: it failed"),
        errors.UnsupportedError: (6, "pdi: unsupported: it failed"),
        errors.LimitError: (7, "pdi: limit exceeded: it failed"),
        errors.StoreError: (8, "pdi: storage error: it failed"),
    }
    for cls in classes:
        @click.group(cls=PDIGroup)
        def g() -> None:
            pass

        @g.command()
        def fail(cls: type[errors.PDIError] = cls) -> None:
            raise cls("it failed")

        r = CliRunner().invoke(g, ["fail"])
        assert (r.exit_code, r.stderr) == (expected[cls][0], expected[cls][1] + "\n"), cls


def test_a_port_in_use_is_one_plain_line(tmp_path: Path) -> None:
    """The one error ``pdi`` raises as the base class, for real: ``pdi serve`` on a port another socket holds."""
    import errno
    import socket

    archive = tmp_path / "archive"
    assert subprocess.run([sys.executable, "-m", "pdi", "init", str(archive)], capture_output=True).returncode == 0
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        result = subprocess.run(
            [sys.executable, "-m", "pdi", "serve", "--port", str(port), "--archive", str(archive)],
            capture_output=True, text=True, timeout=60,
        )
    assert result.returncode == 1
    assert result.stderr == (
        f"pdi: cannot listen on 127.0.0.1 port {port}: {os.strerror(errno.EADDRINUSE)}; give another --port\n"
    )


@pytest.mark.parametrize("host", ["999.1.1.1", "192.0.2.1"])
def test_a_host_that_is_not_this_machine_is_said_to_be_the_host(tmp_path: Path, host: str) -> None:
    # a name that does not resolve (999.1.1.1 is no IPv4 address: getaddrinfo looks it up as a name) and an address
    # no interface here has (192.0.2.1, RFC 5737's TEST-NET-1: EADDRNOTAVAIL) are the host's fault, not the port's:
    # the line said "give another --port"
    archive = tmp_path / "archive"
    assert subprocess.run([sys.executable, "-m", "pdi", "init", str(archive)], capture_output=True).returncode == 0
    result = subprocess.run([sys.executable, "-m", "pdi", "serve", "--host", host, "--port", "0", "--archive",
                             str(archive)], capture_output=True, text=True, timeout=60)
    assert result.returncode == 1
    assert result.stderr.startswith(f"pdi: cannot listen on {host} port 0: "), result.stderr
    assert result.stderr.endswith("; give another --host: an address of this machine (127.0.0.1, ::1, or 0.0.0.0 for"
                                  " all)\n"), result.stderr
    assert "--port" not in result.stderr


@contextlib.contextmanager
def _held_port_after_a_free_one() -> Iterator[int]:
    """A port a listening socket holds here, the port below it free (as far as a bind can tell)."""
    import socket

    while True:
        with socket.socket() as holder:
            holder.bind(("127.0.0.1", 0))
            holder.listen()
            taken = holder.getsockname()[1]
            with socket.socket() as probe:
                try:
                    probe.bind(("127.0.0.1", taken - 1))
                except OSError:
                    continue
            yield taken
            return


def test_a_replay_port_in_use_is_named_as_the_replay_port(tmp_path: Path) -> None:
    """``pdi serve --port N`` also listens on N + 1 for the replay origin: when that one is taken, the line
    names it, and --replay-port, not a port the user never gave."""
    import errno

    archive = tmp_path / "archive"
    assert subprocess.run([sys.executable, "-m", "pdi", "init", str(archive)], capture_output=True).returncode == 0
    with _held_port_after_a_free_one() as taken:
        result = subprocess.run(
            [sys.executable, "-m", "pdi", "serve", "--port", str(taken - 1), "--archive", str(archive)],
            capture_output=True, text=True, timeout=60,
        )
        given = subprocess.run(
            [sys.executable, "-m", "pdi", "serve", "--port", "0", "--replay-port", str(taken), "--archive", str(archive)],
            capture_output=True, text=True, timeout=60,
        )
    in_use = os.strerror(errno.EADDRINUSE)
    assert result.returncode == 1
    assert result.stderr == (
        f"pdi: cannot listen on 127.0.0.1 port {taken} for the replay origin (--port {taken - 1} + 1, where archived"
        f" web pages are served): {in_use}; give another --replay-port\n"
    )
    assert given.returncode == 1
    assert given.stderr == (
        f"pdi: cannot listen on 127.0.0.1 port {taken} for the replay origin (--replay-port, where archived"
        f" web pages are served): {in_use}; give another --replay-port\n"
    )


def test_usage_errors_stay_as_click_prints_them() -> None:
    r = CliRunner().invoke(cli, ["get"])
    assert r.exit_code == 2
    assert r.stderr.startswith("Usage: ") and "Error: Missing argument 'PDI'." in r.stderr
    assert "pdi: " not in r.stderr


@given(st.integers(min_value=0, max_value=10**12), st.sampled_from(["frame", "blob", "byte", "unreferenced blob"]))
def test_plural_agrees_in_number(count: int, noun: str) -> None:
    from pdi._wording import plural

    words = plural(count, noun)
    assert words == (f"1 {noun}" if count == 1 else f"{count} {noun}s")
    assert plural(count, "entry", "entries") == (f"{count} entry" if count == 1 else f"{count} entries")


def test_each_kind_of_error_has_an_exit_status_of_its_own() -> None:
    # a script must tell them apart; only "gone" is shared (a withdrawn name, a deleted annotation: both 410)
    import pdi.errors as errors
    from pdi.cli.archive_cmd import PARTIAL_EXIT

    kinds = [k for k in vars(errors).values() if isinstance(k, type) and issubclass(k, errors.PDIError)
             and k is not errors.PDIError and "exit_code" in vars(k)]
    by_status: dict[int, set[str]] = {}
    for kind in kinds:
        by_status.setdefault(kind.exit_code, set()).add(kind.__name__)
    shared = {status: names for status, names in by_status.items() if len(names) > 1}
    assert shared == {11: {"WithdrawnError", "DeletedError"}}, shared
    assert PARTIAL_EXIT not in by_status and 9 not in by_status and 2 not in by_status


def test_who_writes_without_user_variables_is_the_accounts_name(monkeypatch: pytest.MonkeyPatch) -> None:
    # a service or a container runs without $USER and $LOGNAME: the audit names the account, not "uid 0"
    import pwd

    from pdi.archive.naming import default_who

    for variable in ("PDI_USER", "USER", "LOGNAME"):
        monkeypatch.delenv(variable, raising=False)
    account = pwd.struct_passwd(("curator", "x", os.getuid(), 0, "", "/", "/bin/sh"))
    monkeypatch.setattr(pwd, "getpwuid", lambda uid: account if uid == os.getuid() else None)
    assert default_who() == "curator"

    def unknown(uid: int) -> pwd.struct_passwd:  # a container's uid with no account
        raise KeyError(f"getpwuid(): uid not found: {uid}")

    monkeypatch.setattr(pwd, "getpwuid", unknown)
    assert default_who() == f"uid {os.getuid()}"
    monkeypatch.setenv("PDI_USER", "archivist")
    assert default_who() == "archivist"


def test_serve_help_says_writes_need_a_token_not_that_it_is_read_only() -> None:
    """``pdi serve`` also serves the write API (docs/reference/write-api.md): its help must not say read-only."""
    load_all()
    for text in (CliRunner().invoke(cli, ["serve", "--help"]).output, cli.commands["serve"].get_short_help_str(1000)):
        words = " ".join(text.split())
        assert "read-only" not in words
        assert "writes need a token" in words


def _every_help_text() -> Iterator[tuple[str, str]]:
    """Each command's and subcommand's ``--help`` page, as one line, with the command's path."""
    load_all()

    def walk(command: click.Command, path: list[str]) -> Iterator[tuple[str, str]]:
        with click.Context(command, info_name=" ".join(["pdi", *path])) as ctx:
            yield " ".join(path), " ".join(command.get_help(ctx).split())
        if isinstance(command, click.Group):
            for name, sub in command.commands.items():
                yield from walk(sub, [*path, name])

    yield from walk(cli, [])


def test_every_command_a_help_page_names_is_a_command() -> None:
    """A ``pdi WORD`` in any help page names a command that exists (``pdi audit`` named ``pdi assert``)."""
    import re

    prose = {"names", "resolver", "resolvers", "left", "knows", "exported", "makes"}  # "pdi makes", not commands
    for path, text in _every_help_text():
        for word in re.findall(r"\bpdi ([a-z][a-z0-9-]*)", text):
            assert word in cli.commands or word in prose, (path or "pdi", f"pdi {word}")


def test_token_add_help_says_what_every_role_may_do() -> None:
    """``pdi token add --help`` explains each choice of ``--role`` (it left ``mirror`` out)."""
    from pdi.archive.tokens import ROLES

    text = dict(_every_help_text())["token add"]
    for role in ROLES:
        assert f"{role}: " in text, role


def test_every_option_says_what_it_is_for() -> None:
    """Every option of every command has a help text (``pdi audit --limit``, ``pdi mirror remove --series`` had none)."""
    def walk(command: click.Command, path: list[str]) -> Iterator[tuple[str, click.Command]]:
        yield " ".join(path), command
        if isinstance(command, click.Group):
            for name, sub in command.commands.items():
                yield from walk(sub, [*path, name])

    load_all()
    for path, command in walk(cli, []):
        for param in command.params:
            if isinstance(param, click.Option) and "--version" not in param.opts:
                assert param.help, (path, param.opts)


def test_meta_who_help_names_every_fallback_default_who_takes(monkeypatch: pytest.MonkeyPatch) -> None:
    """``pdi meta --help`` says whom a statement is by without --who: $LOGNAME and the account too, as
    :func:`default_who` does (it named only $PDI_USER and $USER)."""
    from pdi.archive.naming import default_who

    for variable in ("PDI_USER", "USER"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("LOGNAME", "carol")
    assert default_who() == "carol"
    text = dict(_every_help_text())["meta"]
    assert "$LOGNAME" in text and "account" in text
