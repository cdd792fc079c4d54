"""The operator's guide and the upgrade page name only real commands, and those that need no network run as written.

docs/how-to/operator-guide.md and docs/how-to/upgrade.md are followed by a
person on a fresh machine, so every ``pdi`` command in their shell blocks
(typed as ``pdi``, ``/opt/pdi/bin/pdi`` or through ``pdi-admin``) must name a
subcommand and options the ``pdi`` command has: each is looked up in the click
commands themselves. Then the commands that touch only the archive are run,
in the guide's order, on a throw-away archive (its absolute paths moved under
a temporary directory), then the backup drill of the guide's reference page
(docs/reference/deploy.md); a ``systemctl start pdi-backup.service`` runs that
unit's ``ExecStart``. What they print, both streams as a terminal shows them, is
what the pages show (the keys and the token made here in place of the page's). The
upgrade commands run on an archive the release the upgrade page upgrades from (the newest of
``tests/data/releases/``) wrote. The guide's ``/readyz`` and ``/metrics`` answers are asked of ``pdi serve``
started with docs/deploy/pdi.service's command line. ``docs/deploy/pdi-admin`` is
checked against ``systemd-run --help`` and, its properties as a unit, ``systemd-analyze verify``.
"""

from __future__ import annotations

import datetime
import json
import os
import re
import shlex
import shutil
import socket
import sqlite3
import subprocess
import sys
import tarfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from pdi.archive.store import SCHEMA_VERSION
from pdi.cli import cli, load_all

ROOT = Path(__file__).resolve().parents[1]
GUIDE = ROOT / "docs" / "how-to" / "operator-guide.md"
#: The guide's reference page: the rules it links to, and its backup drill.
REFERENCE = ROOT / "docs" / "reference" / "deploy.md"
UPGRADE = ROOT / "docs" / "how-to" / "upgrade.md"
DEPLOY = ROOT / "docs" / "deploy"
PDI = {"pdi", "/opt/pdi/bin/pdi", "pdi-admin"}
#: Shell words that end a simple command.
OPERATORS = {"|", "||", "&&", ";", "&"}


@dataclass
class Command:
    """One simple command of a shell block: its words, and where its standard input comes from."""

    words: list[str]
    stdin: str | None
    line: str


def _blocks(page: Path, section: str | None = None) -> list[str]:
    """The ``sh`` blocks of the page (of its ``## `` section whose heading starts with ``section``)."""
    text = page.read_text("utf-8")
    if section is not None:
        parts = [p for p in re.split(r"^(?=## )", text, flags=re.MULTILINE) if p.startswith(f"## {section}")]
        assert len(parts) == 1, section
        text = parts[0]
    return re.findall(r"^```sh\n(.*?)^```", text, flags=re.MULTILINE | re.DOTALL)


def _commands(page: Path, section: str | None = None) -> list[Command]:
    """Every simple command of the page's ``sh`` blocks, leading ``sudo`` and variable assignments removed."""
    commands: list[Command] = []
    for block in _blocks(page, section):
        for line in block.replace("\\\n", " ").splitlines():
            lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
            lexer.whitespace_split = True
            lexer.commenters = "#"
            words = list(lexer)
            current: list[str] = []
            stdin: str | None = None
            pending: str | None = None
            for word in [*words, ";"]:
                if pending is not None:
                    stdin = word if pending == "<" else stdin
                    pending = None
                elif word in ("<", ">", ">>"):
                    pending = word
                elif word in OPERATORS:
                    while current and (current[0] == "sudo" or re.fullmatch(r"[A-Za-z_][A-Za-z_0-9]*=.*", current[0])):
                        current.pop(0)
                    if current:
                        commands.append(Command(current, stdin, line))
                    current, stdin = [], None
                else:
                    current.append(word)
    return commands


def _pdi_commands(page: Path) -> list[Command]:
    return [c for c in _commands(page) if c.words[0] in PDI]


def _resolve(words: list[str]) -> tuple[list[str], click.Command, list[str]]:
    """The subcommand path ``words`` names, its click command, and the words left (options and arguments)."""
    load_all()
    command: click.Command = cli
    ctx = click.Context(cli, info_name="pdi")
    path: list[str] = []
    rest = list(words)
    while isinstance(command, click.Group) and rest and not rest[0].startswith("-"):
        sub = command.get_command(ctx, rest[0])
        assert sub is not None, f"pdi {' '.join(path)}: no subcommand {rest[0]!r}"
        path.append(rest.pop(0))
        command = sub
        ctx = click.Context(sub, info_name=path[-1], parent=ctx)
    return path, command, rest


def _check_options(command: click.Command, path: list[str], rest: list[str]) -> None:
    known = {"-h", "--help"}
    if not path:
        known.add("--version")
    for param in command.params:
        known.update(param.opts)
        known.update(param.secondary_opts)
    for word in rest:
        if word.startswith("-") and word != "-":
            option = word.split("=", 1)[0]
            assert option in known, f"pdi {' '.join(path)}: no option {option} (has {sorted(known)})"


@pytest.mark.parametrize("page", [GUIDE, UPGRADE], ids=["operator-guide", "upgrade"])
def test_every_pdi_command_of_the_page_exists_with_its_options(page: Path) -> None:
    commands = _pdi_commands(page)
    if page == GUIDE:
        commands += _pdi_commands(REFERENCE)
    named = set()
    for command in commands:
        path, found, rest = _resolve(command.words[1:])
        _check_options(found, path, rest)
        named.add(" ".join(path) or rest[0])
    expected = ({"--version", "init", "series add", "keys init", "token add", "add", "verify", "restore"}
                if page == GUIDE else {"--version", "init", "verify"})
    assert expected <= named, named


def test_a_misspelt_option_is_caught() -> None:
    """The check above has teeth: an option no command has, or a subcommand that is not there, fails it."""
    path, found, rest = _resolve(["backup", "--cpoy", "/dest"])
    with pytest.raises(AssertionError, match="no option --cpoy"):
        _check_options(found, path, rest)
    with pytest.raises(AssertionError, match="no subcommand 'sereis'"):
        _resolve(["sereis", "add", "x.us"])


def test_the_files_and_units_the_guide_names_are_there() -> None:
    text = "\n".join(_blocks(GUIDE))
    files = set(re.findall(r"docs/deploy/[\w.-]+", text))
    assert {"docs/deploy/pdi.service", "docs/deploy/pdi-backup.service", "docs/deploy/pdi-backup.timer",
            "docs/deploy/pdi-admin"} <= files
    for name in files:
        assert (ROOT / name).is_file(), name
    for command in _commands(GUIDE):
        if command.words[0] == "systemctl":
            for unit in command.words[1:]:
                if unit.endswith((".service", ".timer")):
                    assert (DEPLOY / unit).is_file(), command.line
    links = re.findall(r"\]\(([\w.-]+\.md)", GUIDE.read_text("utf-8"))
    assert {"deploy.md", "operate.md", "backup.md", "upgrade.md", "postgresql.md"} <= set(links)


def _moved(word: str, root: Path) -> str:
    """A path of the guide, on this machine: under ``root``."""
    if word == "/srv/copy-of-latest":  # the drill's copy of the backup made on the service's machine
        return str(root / "var/lib/pdi-backup/latest")
    if word.startswith(("/var/lib/", "/tmp/", "/backup/")):
        return str(root / word.lstrip("/"))
    return word


def _run_offline(page: Path, root: Path, archive: Path, sections: tuple[str, ...] | None = None,
                 printed: list[str] | None = None) -> list[str]:
    """Run the archive commands of the page (of those sections) in order; returns the commands run (and adds
    what each printed, both streams, to ``printed``)."""
    backup_unit = shlex.split(next(line.split("=", 1)[1] for line in (DEPLOY / "pdi-backup.service").read_text().splitlines()
                                   if line.startswith("ExecStart=")))
    ran: list[str] = []
    env = {"PDI_ARCHIVE": str(archive)}
    commands = _commands(page) if sections is None else [c for s in sections for c in _commands(page, s)]
    for command in commands:
        words = command.words
        if words[:3] == ["systemctl", "start", "pdi-backup.service"]:
            words = backup_unit
        if words[0] not in PDI:
            continue
        path, _, _ = _resolve(words[1:])
        if path[:1] == ["serve"]:
            continue
        argv = [_moved(w, root) for w in words[1:]]
        stdin = None
        if command.stdin is not None:
            source = Path(command.stdin)
            stdin = source.read_bytes() if source.is_file() else b"A text the guide deposits.\n"
        result = CliRunner(env=env).invoke(cli, argv, input=stdin, catch_exceptions=False)
        assert result.exit_code == 0, (command.line, result.output)
        ran.append(" ".join(words))
        if printed is not None:
            printed.append(result.output.replace(str(root), ""))
    return ran


def _release_archive(root: Path, pick: Callable[..., Path] = min) -> Path:
    """The SQLite archive the oldest (``pick``: or newest) release in tests/data/releases/ wrote, as the service's
    archive."""
    release = pick((p for p in (ROOT / "tests/data/releases").iterdir() if p.is_dir()),
                   key=lambda p: tuple(int(n) for n in p.name.split(".")))
    (root / "var/lib/pdi").mkdir(parents=True)
    with tarfile.open(release / "sqlite-archive.tar.gz") as tar:
        tar.extractall(root / "var/lib/pdi", filter="data")
    return root / "var/lib/pdi/archive"


def _schema_version(archive: Path) -> int:
    with sqlite3.connect(archive / "catalog.sqlite") as conn:
        version = int(conn.execute("SELECT MAX(version) FROM schema_migrations").fetchone()[0])
    conn.close()
    return version


def _shown(page: Path, section: str) -> str:
    """The ``text`` block of the page's ``## `` section whose heading starts with ``section``."""
    text = page.read_text("utf-8")
    [part] = [p for p in re.split(r"^(?=## )", text, flags=re.MULTILINE) if p.startswith(f"## {section}")]
    [block] = re.findall(r"^```text\n(.*?)^```", part, flags=re.MULTILINE | re.DOTALL)
    return str(block)


def test_the_guides_archive_commands_run_as_written(tmp_path: Path, one_gmt_day: datetime.datetime) -> None:
    """Steps 1 to 5 on a new archive, then the reference page's backup drill, each printing what its page shows;
    step 6 (the upgrade) on an archive an older release wrote."""
    archive = tmp_path / "var/lib/pdi/archive"
    archive.parent.mkdir(parents=True)
    printed: list[str] = []
    ran = _run_offline(GUIDE, tmp_path, archive, tuple(f"{n}. " for n in range(1, 6)), printed)
    assert any(c.startswith("pdi-admin token add") for c in ran)
    assert (tmp_path / "var/lib/pdi-backup/latest/pdi-backup.json").is_file()
    # step 3's lines: the archive, the series, the key (its public half, and where its private half went), the
    # token, the name minted (today's), the audit
    at = [n for n, c in enumerate(ran) if c.startswith("pdi-admin ")]
    made = "".join(printed[at[0]:at[0] + 6])
    assert [ran[n].split()[1] for n in at[:6]] == ["init", "series", "keys", "token", "add", "verify"]
    shown = re.sub(r"/\d{4}/\d\d/\d\d/", one_gmt_day.strftime("/%Y/%m/%d/"), _shown(GUIDE, "3. "))
    key = json.loads(made.splitlines()[2])
    [(x, kid)] = set(re.findall(r'"x": "([\w-]+)", "kid": "([\w-]+)"', shown))
    [token] = re.findall(r"^pdi_\S+$", shown, flags=re.MULTILINE)
    [token_made] = re.findall(r"^pdi_\S+$", made, flags=re.MULTILINE)
    assert made == shown.replace(x, key["x"]).replace(kid, key["kid"]).replace(token, token_made)
    printed = []
    ran = _run_offline(REFERENCE, tmp_path, archive, ("Nightly backups",), printed)
    assert [c.split()[1] for c in ran] == ["restore", "verify"]
    assert "".join(printed) == _shown(REFERENCE, "Nightly backups")
    assert (tmp_path / "tmp/drill/catalog.sqlite").is_file()

    older = tmp_path / "upgraded"
    archive = _release_archive(older)
    before = _schema_version(archive)
    assert before < SCHEMA_VERSION
    ran = _run_offline(GUIDE, older, archive, ("6. ",))
    assert [c.split()[1] for c in ran] == ["--version", "init", "verify"]
    assert _schema_version(older / "var/lib/pdi-backup/before-0.3.0") == before
    assert _schema_version(archive) == SCHEMA_VERSION


def test_the_upgrade_pages_commands_run_as_written(tmp_path: Path) -> None:
    archive = _release_archive(tmp_path, max)  # the release the page upgrades from
    release = max((p.name for p in (ROOT / "tests/data/releases").iterdir() if p.is_dir()),
                  key=lambda name: tuple(int(n) for n in name.split(".")))
    before = _schema_version(archive)
    ran = _run_offline(UPGRADE, tmp_path, archive)
    assert [c.split()[1] for c in ran] == ["--version", "--version", "init", "init", "reindex", "verify", "restore"]
    assert _schema_version(tmp_path / "backup/pdi-before-upgrade") == before
    assert _schema_version(archive) == SCHEMA_VERSION
    assert _schema_version(tmp_path / f"var/lib/pdi/archive-{release}") == before  # going back: restored as it was


def test_pdi_admin_asks_systemd_run_for_what_it_has(tmp_path: Path) -> None:
    script = (DEPLOY / "pdi-admin").read_text()
    assert subprocess.run(["sh", "-n", str(DEPLOY / "pdi-admin")], check=False, timeout=30).returncode == 0
    words = shlex.split(script.split("exec ", 1)[1], comments=True)
    assert words[0] == "systemd-run" and words[-2:] == ["/opt/pdi/bin/pdi", "$@"]
    tool = shutil.which("systemd-run")
    assert tool is not None, "systemd-run is missing: scripts/bootstrap --dev installs Debian's systemd package"
    usage = subprocess.run([tool, "--help"], capture_output=True, text=True, timeout=30, check=False).stdout
    properties: list[str] = []
    environment: list[str] = []
    for word in words[1:-2]:
        option, _, value = word.partition("=")
        assert re.search(rf"\s{re.escape(option)}[\s=]", usage), f"systemd-run has no {option}"
        if option == "--property":
            properties.append(value)
        elif option == "--setenv":
            environment.append(value)
    # the same settings as a unit: systemd accepts each of them
    unit = tmp_path / "pdi-admin-run.service"
    unit.write_text("[Service]\nType=oneshot\nExecStart=/bin/true\n" + "".join(f"{p}\n" for p in properties)
                    + "".join(f"Environment={e}\n" for e in environment))
    analyze = shutil.which("systemd-analyze")
    assert analyze is not None
    run = subprocess.run([analyze, "verify", str(unit)], capture_output=True, text=True, timeout=60, check=False,
                         cwd=tmp_path)
    assert run.returncode == 0 and "pdi-admin-run" not in run.stderr, run.stderr
    # it runs as pdi.service's user, on the archive pdi.service serves
    service = (DEPLOY / "pdi.service").read_text()
    assert "User=pdi" in properties and "DynamicUser=yes" in properties
    assert f"Environment={environment[0]}" in service


def test_the_guides_service_answers_what_it_shows(tmp_path: Path) -> None:
    """``pdi serve`` started as docs/deploy/pdi.service starts it (its ``ExecStartPre=`` then its ``ExecStart=``,
    a free port for 8000), with the metrics token of step 5 in its environment: once it listens, the first
    ``/healthz`` is counted, and the scrape step 5 greps shows that one request; ``/readyz`` answers what step 2
    shows."""
    import httpx

    from test_deploy_systemd import UNIT, _settings

    settings = _settings(UNIT.read_text())
    argv = [arg if arg != "8000" else "0" for arg in shlex.split(settings["ExecStart"][0])]
    token = "0123456789abcdef0123456789abcdef0123456789abcdef"  # as `openssl rand -hex 24` makes one
    env = {**os.environ, "PDI_ARCHIVE": str(tmp_path / "archive"), "PDI_METRICS_TOKEN": token}
    python = [sys.executable, "-c", "from pdi.cli import main; main()"]
    subprocess.run([*python, *shlex.split(settings["ExecStartPre"][0])[1:]], env=env, check=True,
                   capture_output=True, timeout=120)
    server = subprocess.Popen([*python, *argv[1:]], env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
    try:
        assert server.stderr is not None and server.stdout is not None
        first = server.stderr.readline()
        found = re.search(r"at http://127\.0\.0\.1:(\d+)/", first)
        assert found is not None, first
        port = int(found.group(1))
        deadline = time.monotonic() + 60
        while True:  # listening: a connection taken, no request sent (none counted)
            try:
                socket.create_connection(("127.0.0.1", port), timeout=5).close()
                break
            except OSError:
                assert time.monotonic() < deadline and server.poll() is None, "pdi serve does not listen"
                time.sleep(0.05)
        base = f"http://127.0.0.1:{port}"
        with httpx.Client(timeout=30) as client:
            assert client.get(f"{base}/healthz").status_code == 200
            while "GET /healthz" not in server.stdout.readline():  # the access log: answered, and counted
                assert time.monotonic() < deadline
            time.sleep(0.3)
            scrape = client.get(f"{base}/metrics", headers={"Authorization": f"Bearer {token}"})
            readyz = client.get(f"{base}/readyz")
    finally:
        server.terminate()
        server.wait(timeout=30)
        for stream in (server.stdout, server.stderr):
            if stream is not None:
                stream.close()
    watch = [b for b in _blocks(GUIDE, "5. ") if "/metrics" in b]
    assert len(watch) == 1 and "grep '^pdi_http_requests_total'" in watch[0] and "PDI_METRICS_TOKEN=$token" in watch[0]
    counted = "".join(f"{line}\n" for line in scrape.text.splitlines() if line.startswith("pdi_http_requests_total"))
    assert counted == _shown(GUIDE, "5. ")
    assert "curl -s http://127.0.0.1:8000/readyz" in _blocks(GUIDE, "2. ")[0]
    assert readyz.text + "\n" == _shown(GUIDE, "2. ")
