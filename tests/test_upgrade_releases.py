"""Archives written by each tagged release open, migrate and verify with this pdi, every name and passage intact.

``tests/data/releases/<version>/`` holds, for each release, a SQLite archive
(a tarball of its directory) and a PostgreSQL one (a ``pg_dump -Fc``), both
made by ``scripts/release-archives TAG`` running that release's own code, and
``expected.json``: every name with the SHA-256 of the file that was deposited
(computed by the script from its input, not read back from the archive), the
withdrawn name, passages with the text the script cut from its input, and
what else the release was given (statements, a deposit token, a word to
search). Here each is opened by the pdi under test: refused by every other command (``pdi ls``, ``pdi get``,
``pdi serve`` …: exit 8, the catalog left octet for octet) and migrated by ``pdi init``
alone, to :data:`SCHEMA_VERSION`; ``pdi verify`` is clean; each
name gives its octets back, each passage its text; the withdrawn name is gone
(exit 11, HTTP 410); the old token deposits. A catalog newer than this pdi
is refused, saying so; a migration run twice changes nothing the second time; one killed (SIGKILL)
midway leaves the release's catalog as it was, and the next ``pdi init`` migrates it whole.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import re
import resource
import shlex
import signal
import sqlite3
import subprocess
import sys
import tarfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from starlette.testclient import TestClient

from pdi.archive import Archive
from pdi.archive.store import SCHEMA_VERSION
from pdi.cli import cli
from pdi.errors import OlderSchemaError
from pdi.server import create_app
from support.pgcluster import TemporaryCluster

RELEASES = Path(__file__).resolve().parent / "data" / "releases"
SRC = Path(__file__).resolve().parents[1] / "src"
#: Oldest first (by version number: 0.10.0 after 0.9.0).
RELEASE_DIRS = sorted((p for p in RELEASES.iterdir() if p.is_dir()),
                      key=lambda p: tuple(int(n) for n in p.name.split(".")))
KINDS = ("sqlite", "postgres")
_databases = itertools.count(1)


def _expected(release: Path) -> dict[str, Any]:
    return json.loads((release / "expected.json").read_text("utf-8"))  # type: ignore[no-any-return]


def pdi(location: str, *args: str) -> Result:
    return CliRunner().invoke(cli, [*args, "--archive", location], catch_exceptions=False)


def _restore(release: Path, kind: str, tmp_path: Path, request: pytest.FixtureRequest) -> str:
    """The release's archive of ``kind``, as it was written: unpacked, or restored into a fresh database."""
    if kind == "sqlite":
        with tarfile.open(release / "sqlite-archive.tar.gz") as tar:
            tar.extractall(tmp_path, filter="data")
        return str(tmp_path / "archive")
    cluster: TemporaryCluster = request.getfixturevalue("pg_cluster")
    url = cluster.create_database(f"release_{release.name.replace('.', '_')}_{next(_databases)}")
    done = subprocess.run(
        [str(cluster.bindir / "pg_restore"), "--no-owner", "--single-transaction", "--exit-on-error",
         "--dbname", url, str(release / "postgres.dump")],
        capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    return url


def _schema_rows(location: str) -> list[tuple[int, str]]:
    """The catalog's own record of its migrations, read past pdi (SQLite's or PostgreSQL's client)."""
    if location.startswith("postgresql://"):
        import psycopg

        with psycopg.connect(location) as conn:
            return [(int(v), str(a)) for v, a in conn.execute(
                "SELECT version, applied_at FROM schema_migrations ORDER BY version")]
    with sqlite3.connect(Path(location) / "catalog.sqlite") as conn:
        return [(int(v), str(a)) for v, a in conn.execute(
            "SELECT version, applied_at FROM schema_migrations ORDER BY version")]


def _audit_rows(location: str) -> list[tuple[str, ...]]:
    """The catalog's audit log (when, who, what, of which, in what detail), read past pdi."""
    sql = "SELECT at, who, action, subject, detail FROM audit_log ORDER BY id"
    if location.startswith("postgresql://"):
        import psycopg

        with psycopg.connect(location) as conn:
            return [tuple(str(v) for v in row) for row in conn.execute(sql)]
    with sqlite3.connect(Path(location) / "catalog.sqlite") as conn:
        return [tuple(str(v) for v in row) for row in conn.execute(sql)]


def test_there_are_release_archives() -> None:
    """Each release directory has what the script writes, and all of them stay small."""
    assert RELEASE_DIRS, "tests/data/releases/ holds no release: run scripts/release-archives TAG"
    total = 0
    for release in RELEASE_DIRS:
        files = {p.name for p in release.iterdir()}
        assert files == {"README.md", "expected.json", "sqlite-archive.tar.gz", "postgres.dump"}, release
        expected = _expected(release)
        assert expected["version"] == release.name and expected["tag"] == f"v{release.name}"
        assert expected["schema_version"] <= SCHEMA_VERSION  # no release is newer than the code that tests it
        total += sum(p.stat().st_size for p in release.iterdir())
    assert total < 2 << 20


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("release", RELEASE_DIRS, ids=[p.name for p in RELEASE_DIRS])
def test_a_release_archive_migrates_and_answers_as_it_did(
    release: Path, kind: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    expected = _expected(release)
    kept = expected["archives"][kind]
    location = _restore(release, kind, tmp_path, request)
    assert [v for v, _ in _schema_rows(location)] == list(range(1, expected["schema_version"] + 1))

    done = pdi(location, "init")  # pdi init migrates (what docs/how-to/upgrade.md says to run), and nothing else
    assert done.exit_code == 0, done.output
    assert done.stdout.endswith(f"(schema version {SCHEMA_VERSION})\n")
    assert [v for v, _ in _schema_rows(location)] == list(range(1, SCHEMA_VERSION + 1))

    checked = pdi(location, "verify")
    assert checked.exit_code == 0, checked.output
    assert checked.stdout.rstrip().endswith(" 0 problems")

    for name, known in kept["names"].items():
        out = tmp_path / "octets"
        got = pdi(location, "get", name, "-o", str(out))
        assert got.exit_code == 0, (name, got.output)
        octets = out.read_bytes()
        assert (hashlib.sha256(octets).hexdigest(), len(octets)) == (known["sha256"], known["size"]), name
    for name, digest in kept["served_by_release"].items():
        got = pdi(location, "get", name, "-o", "-")
        assert got.exit_code == 0 and hashlib.sha256(got.stdout_bytes).hexdigest() == digest, name
    for citation, passage in kept["passages"].items():
        got = pdi(location, "get", citation)
        assert got.exit_code == 0, (citation, got.output)
        assert got.stdout_bytes == passage["text"].encode(passage["charset"]), citation
    for generic, versions in kept["versions"].items():
        listed = pdi(location, "get", generic)
        assert [line for line in listed.stdout.splitlines() if not line.startswith("#")] == versions
    for name, statements in (kept["statements"] | kept["fragment_statements"]).items():
        shown = pdi(location, "meta", name).stdout.splitlines()
        assert all(f"{key}\t{value}" in shown for key, value in statements.items()), (name, shown)
    for word, name in kept["search"].items():
        found = pdi(location, "search", word)
        assert found.exit_code == 0 and found.stdout.startswith(name + "#"), found.output

    (withdrawn, reason), = kept["withdrawn"].items()
    gone = pdi(location, "get", withdrawn)
    assert gone.exit_code == 11 and reason in gone.stderr
    with TestClient(create_app(location)) as client:
        answer = client.get(f"/uri-res/N2R?{withdrawn}")
        assert answer.status_code == 410 and reason in answer.text
        name, known = next(iter(kept["names"].items()))
        assert hashlib.sha256(client.get(f"/uri-res/N2R?{name}").content).hexdigest() == known["sha256"]
        # the release's deposit token still deposits
        token = kept["token"]
        made = client.post(f"/api/deposit?series={token['series']}&format=text", content=b"deposited after the upgrade\n",
                           headers={"Authorization": f"Bearer {token['secret']}", "Content-Type": "text/plain"})
        assert made.status_code == 201, made.text
        assert client.get(made.headers["location"]).content == b"deposited after the upgrade\n"
    again = pdi(location, "verify")
    assert again.exit_code == 0 and again.stdout.rstrip().endswith(" 0 problems"), again.output


def _catalog_state(location: str) -> object:
    """What a refused opening must leave as it was: the SQLite catalog's octets (their SHA-256), or PostgreSQL's
    record of its migrations and its audit log (a migration adds to both), read past pdi."""
    if location.startswith("postgresql://"):
        return _schema_rows(location), _audit_rows(location)
    return hashlib.sha256((Path(location) / "catalog.sqlite").read_bytes()).hexdigest()


#: The command the systemd unit runs before pdi serve at each start (docs/deploy/pdi.service), without its path.
UNIT_PRE = shlex.split(next(line.split("=", 1)[1] for line in (
    Path(__file__).resolve().parents[1] / "docs" / "deploy" / "pdi.service").read_text("utf-8").splitlines()
    if line.startswith("ExecStartPre=")))[1:]


def _serve(location: str, workers: int) -> subprocess.Popen[str]:
    """``pdi serve`` of ``location`` on free ports, as a process of its own (its standard error to read)."""
    return subprocess.Popen(
        [sys.executable, "-m", "pdi", "serve", "--archive", location, "--port", "0", "--replay-port", "0",
         "--workers", str(workers)],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": str(SRC)})


@contextmanager
def _answering(location: str, path: str) -> Iterator[str]:
    """The base URL of a ``pdi serve`` of ``location`` (one worker) once it answers ``GET path``; stopped after."""
    import httpx

    server = _serve(location, 1)
    try:
        assert server.stderr is not None
        line = server.stderr.readline()
        port = re.search(r" at http://[^:]+:(\d+)/", line)
        assert port is not None, line
        base = f"http://127.0.0.1:{port[1]}"
        deadline = time.monotonic() + 60
        while True:
            try:
                httpx.get(base + path, timeout=10)
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline and server.poll() is None, base + path
                time.sleep(0.1)
        yield base
    finally:
        server.terminate()
        server.communicate(timeout=60)


def _refusal(location: str, old: int) -> str:
    """The words every command but pdi init says of the release's archive (its location as pdi shows it: a
    PostgreSQL URL's password left out; these have none)."""
    return (f"pdi: storage error: the archive at {location} has schema version {old}, older than this pdi's"
            f" ({SCHEMA_VERSION}), and only pdi init migrates an archive: back it up and migrate it with pdi init"
            " --archive ")


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("release", RELEASE_DIRS, ids=[p.name for p in RELEASE_DIRS])
def test_a_release_archive_is_refused_by_every_command_but_init_and_left_as_it_was(
    release: Path, kind: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """Before ``pdi init`` migrates it, the release's archive is refused (exit 8) by ``pdi ls``, ``pdi get``,
    ``pdi verify``, ``pdi serve`` (one worker or several), the systemd unit's ``ExecStartPre=`` and
    ``Archive.open``, each saying its schema version, this pdi's and the ``pdi init`` to run, and the catalog is
    left octet for octet (found 2026-11-30: any of them migrated it, without a backup: a ``pdi ls`` of a newer pdi
    on one machine migrated a PostgreSQL catalog under the older resolvers still serving it). ``pdi init --backup``
    then backs it up and migrates it, and the same commands answer."""
    import httpx

    expected = _expected(release)
    kept = expected["archives"][kind]
    old = expected["schema_version"]
    location = _restore(release, kind, tmp_path, request)
    before = _catalog_state(location)
    name, known = next(iter(kept["names"].items()))
    refusal = _refusal(location, old)

    def refused(said: str, what: object) -> None:
        line, = said.splitlines()  # one line
        assert line.startswith(refusal), (what, line)
        command = line[len(refusal) - len("pdi init --archive "):]
        typed = shlex.split(command.split(" (pdi docs how-to/upgrade)", 1)[0])  # as a shell reads it
        assert typed == ["pdi", "init", "--archive", location, "--backup", "DEST"], (what, line)
        assert _catalog_state(location) == before, what  # nothing changed

    for args in (("ls",), ("get", "--info", name), ("get", name, "-o", "-"), ("verify",), UNIT_PRE):
        done = pdi(location, *args)
        assert done.exit_code == 8, (args, done.output)
        assert done.stdout == "", args
        refused(done.stderr, args)
    assert UNIT_PRE == ["init", "--no-migrate"]  # the unit's: it makes an archive where there is none, only
    for workers in (1, 2):
        server = _serve(location, workers)
        try:
            _, said = server.communicate(timeout=120)  # refused before it listens: it never serves
        finally:
            server.kill()
            server.communicate()
        assert server.returncode == 8, said
        refused(said, f"pdi serve --workers {workers}")
    with pytest.raises(OlderSchemaError) as caught:
        Archive.open(location)
    refused(f"pdi: storage error: {caught.value}", "Archive.open")

    dest = tmp_path / "before-upgrade"
    done = pdi(location, "init", "--backup", str(dest))
    assert done.exit_code == 0, done.output
    assert done.stdout.startswith(f"backed up the archive at schema version {old} to {dest} before migrating it\n")
    assert [v for v, _ in _schema_rows(location)] == list(range(1, SCHEMA_VERSION + 1))
    if kind == "sqlite":  # the backup is the release's archive as it was
        assert [v for v, _ in _schema_rows(str(dest))] == list(range(1, old + 1))

    assert pdi(location, *UNIT_PRE).stdout.endswith(f"(schema version {SCHEMA_VERSION})\n")
    listed = pdi(location, "ls")
    assert listed.exit_code == 0 and name in listed.stdout.splitlines(), listed.output
    assert pdi(location, "get", "--info", name).exit_code == 0
    got = pdi(location, "get", name, "-o", "-")
    assert got.exit_code == 0 and hashlib.sha256(got.stdout_bytes).hexdigest() == known["sha256"], got.output
    checked = pdi(location, "verify")
    assert checked.exit_code == 0 and checked.stdout.rstrip().endswith(" 0 problems"), checked.output
    with _answering(location, "/healthz") as base:
        answer = httpx.get(f"{base}/uri-res/N2R?{name}", timeout=10)
        assert answer.status_code == 200 and hashlib.sha256(answer.content).hexdigest() == known["sha256"]


@pytest.mark.parametrize("kind", KINDS)
def test_migrating_twice_changes_nothing_the_second_time(kind: str, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    release = RELEASE_DIRS[0]
    location = _restore(release, kind, tmp_path, request)
    first = pdi(location, "init")
    assert first.exit_code == 0, first.output
    # said as what it did: the release's archive was there, and was migrated from the release's schema version
    old = _expected(release)["schema_version"]
    assert first.stdout.startswith("archive at ") and first.stdout.endswith(f" (schema version {SCHEMA_VERSION})\n")
    assert (f"note: the archive was there already: migrated from schema version {old} to {SCHEMA_VERSION}\n"
            in first.stderr), first.stderr
    migrated = _schema_rows(location)
    with Archive.open(location) as archive:
        names = archive.ls()
    again = pdi(location, "init")
    assert again.exit_code == 0 and again.stdout.endswith(f"(schema version {SCHEMA_VERSION})\n"), again.output
    assert "note: the archive was there already: left as it was\n" in again.stderr, again.stderr
    assert "migrated" not in again.stderr
    assert _schema_rows(location) == migrated  # no step applied again, none recorded twice
    with Archive.open(location) as archive:
        assert archive.ls() == names
    assert pdi(location, "verify").exit_code == 0


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("release", RELEASE_DIRS, ids=[p.name for p in RELEASE_DIRS])
def test_the_audit_log_says_who_migrated_the_archive_from_what_to_what(
    release: Path, kind: str, tmp_path: Path, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The upgrade is one entry of the archive's audit log, appended in the migration's own commit: an operator
    reading an archive's years finds when it was upgraded, from which schema version to which, by whom and with
    which pdi (found 2026-11-30: a migration left no trace there). Opened again, nothing more is said; a new
    archive's making is no upgrade."""
    from pdi import __version__

    location = _restore(release, kind, tmp_path, request)
    before = _audit_rows(location)
    monkeypatch.setenv("PDI_USER", "night-operator")
    assert pdi(location, "init").exit_code == 0
    with Archive.open(location) as archive:
        after = archive.audit()
    assert [(e.at, e.who, e.action, e.subject, e.detail) for e in after[:-1]] == before
    entry = after[-1]
    assert (entry.who, entry.action, entry.subject, entry.detail) == (
        "night-operator", "migrate", "catalog",
        f"schema version {_expected(release)['schema_version']} to {SCHEMA_VERSION}, by pdi {__version__}")
    assert entry.at >= max(applied for _, applied in _schema_rows(location))  # made as the migration ran, last
    assert pdi(location, "init").exit_code == 0 and pdi(location, "verify").exit_code == 0
    with Archive.open(location) as archive:
        assert archive.audit() == after
    with Archive.init(str(tmp_path / "new")) as made:
        assert made.audit() == []


def test_a_second_init_while_another_migrates_waits_for_it_and_finds_it_migrated(
    tmp_path: Path, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A second ``pdi init`` of a SQLite archive that another is migrating waits for that migration however long it
    takes, then finds the catalog migrated, each step applied once (found 2026-11-30: a migration of 800,000
    passages took minutes, and a second opening started meanwhile failed after SQLite's two minutes of waiting for
    the write lock, "database is locked"); any other opening meanwhile is refused at once, the catalog still at
    the release's version. Here SQLite waits 0.3 s, and the first migration takes 2 s longer."""
    import threading
    import time

    import pdi.archive.sqlite
    from pdi.archive.catalog.schema import SchemaPart

    location = _restore(RELEASE_DIRS[-1], "sqlite", tmp_path, request)
    monkeypatch.setattr(pdi.archive.sqlite, "BUSY_TIMEOUT_MS", 300)
    migrating = threading.Event()
    respace = SchemaPart._respace_all

    def slowly(self: SchemaPart, page: int = 500, *, spaced_before: bool = False) -> int:
        migrating.set()
        time.sleep(2)
        return respace(self, page, spaced_before=spaced_before)

    monkeypatch.setattr(SchemaPart, "_respace_all", slowly)
    failed: list[BaseException] = []

    def first() -> None:
        try:
            Archive.init(location).close()
        except BaseException as exc:  # said below, in the test's own thread
            failed.append(exc)

    thread = threading.Thread(target=first)
    thread.start()
    try:
        assert migrating.wait(60)
        with pytest.raises(OlderSchemaError, match=f"has schema version {_expected(RELEASE_DIRS[-1])['schema_version']},"
                                                   " older than this pdi's"):
            Archive.open(location)
        with Archive.init(location) as second:
            assert second.schema_version() == SCHEMA_VERSION
            names = second.ls()
    finally:
        thread.join(120)
    assert not failed, failed
    assert [v for v, _ in _schema_rows(location)] == list(range(1, SCHEMA_VERSION + 1))
    with Archive.open(location) as archive:
        assert [e.action for e in archive.audit()].count("migrate") == 1
    assert set(_expected(RELEASE_DIRS[-1])["archives"]["sqlite"]["names"]) <= {str(n) for n in names}


@pytest.mark.parametrize("kind", KINDS)
def test_a_catalog_newer_than_this_pdi_is_refused_saying_so(kind: str, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    release = RELEASE_DIRS[0]
    location = _restore(release, kind, tmp_path, request)
    assert pdi(location, "init").exit_code == 0
    newer = SCHEMA_VERSION + 1
    if kind == "postgres":
        import psycopg

        with psycopg.connect(location) as conn:
            conn.execute("INSERT INTO schema_migrations (version, applied_at) VALUES (%s, 'later')", (newer,))
    else:
        with sqlite3.connect(Path(location) / "catalog.sqlite") as conn:
            conn.execute("INSERT INTO schema_migrations (version, applied_at) VALUES (?, 'later')", (newer,))
        conn.close()
    before = _schema_rows(location)
    name = next(iter(_expected(release)["archives"][kind]["names"]))
    for args in (("init",), ("get", "--info", name), ("verify",)):
        refused = pdi(location, *args)
        assert refused.exit_code == 8, (args, refused.output)
        assert (f"has schema version {newer}, newer than this pdi understands ({SCHEMA_VERSION}); upgrade pdi"
                in refused.stderr), refused.stderr
    assert _schema_rows(location) == before


def _empty_place(kind: str, tmp_path: Path, request: pytest.FixtureRequest, name: str) -> str:
    if kind == "sqlite":
        return str(tmp_path / name)
    cluster: TemporaryCluster = request.getfixturevalue("pg_cluster")
    return cluster.create_database(f"{name}_{next(_databases)}")


@pytest.mark.parametrize("kind", KINDS)
def test_a_backup_by_this_pdi_keeps_the_release_as_it_was(kind: str, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    """pdi backup and pdi restore copy an archive, they do not migrate it: the way back to the older release."""
    release = RELEASE_DIRS[0]
    kept = _expected(release)["archives"][kind]
    old = list(range(1, _expected(release)["schema_version"] + 1))
    location = _restore(release, kind, tmp_path, request)
    dest = tmp_path / "backup"
    done = pdi(location, "backup", str(dest))
    assert done.exit_code == 0, done.output
    assert [v for v, _ in _schema_rows(location)] == old  # the archive backed up is left as it was
    if kind == "sqlite":
        assert [v for v, _ in _schema_rows(str(dest))] == old
    again = _empty_place(kind, tmp_path, request, "restored")
    restored = CliRunner().invoke(cli, ["restore", str(dest), "--to", again], catch_exceptions=False)
    assert restored.exit_code == 0, restored.output
    assert [v for v, _ in _schema_rows(again)] == old  # restored as the release wrote it
    assert pdi(again, "init").exit_code == 0
    assert [v for v, _ in _schema_rows(again)] == list(range(1, SCHEMA_VERSION + 1))
    assert pdi(again, "verify").exit_code == 0
    for name, known in kept["names"].items():
        got = pdi(again, "get", name, "-o", "-")
        assert hashlib.sha256(got.stdout_bytes).hexdigest() == known["sha256"], name


@pytest.mark.parametrize("kind", KINDS)
def test_init_backup_backs_up_before_migrating_and_only_then(kind: str, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    release = RELEASE_DIRS[0]
    old = list(range(1, _expected(release)["schema_version"] + 1))
    location = _restore(release, kind, tmp_path, request)
    # a backup that cannot be made (DEST is a file) migrates nothing
    (tmp_path / "a-file").write_text("not a backup\n")
    refused = pdi(location, "init", "--backup", str(tmp_path / "a-file"))
    assert refused.exit_code == 5, refused.output
    assert [v for v, _ in _schema_rows(location)] == old
    dest = tmp_path / "before-upgrade"
    done = pdi(location, "init", "--backup", str(dest))
    assert done.exit_code == 0, done.output
    assert done.stdout.splitlines() == [
        f"backed up the archive at schema version {old[-1]} to {dest} before migrating it",
        done.stdout.splitlines()[-1]]
    assert done.stdout.endswith(f"(schema version {SCHEMA_VERSION})\n")
    assert [v for v, _ in _schema_rows(location)] == list(range(1, SCHEMA_VERSION + 1))
    assert json.loads((dest / "pdi-backup.json").read_text())["store"] == kind
    if kind == "sqlite":
        assert [v for v, _ in _schema_rows(str(dest))] == old
    # nothing to migrate: no backup
    assert pdi(location, "init", "--backup", str(tmp_path / "unneeded")).stdout.startswith("archive at ")
    assert not (tmp_path / "unneeded").exists()


def test_init_backup_and_no_migrate_together_are_refused_before_anything_is_done(tmp_path: Path,
                                                                                 request: pytest.FixtureRequest) -> None:
    location = _restore(RELEASE_DIRS[0], "sqlite", tmp_path, request)
    before = _catalog_state(location)
    refused = pdi(location, "init", "--no-migrate", "--backup", str(tmp_path / "dest"))
    assert refused.exit_code == 2, refused.output
    assert "--backup backs an archive up before migrating it, and --no-migrate migrates none" in refused.stderr
    assert _catalog_state(location) == before and not (tmp_path / "dest").exists()


#: A process that migrates an archive (as pdi init does) and stops inside the migration's transaction as step
#: argv[2] is to run, the steps before it applied there, saying so on standard output: to be killed there.
_STOPS_MID_MIGRATION = """
import sys, time
from pdi.archive import Archive
from pdi.archive.catalog.schema import SchemaPart

stop = int(sys.argv[2])
step = SchemaPart._step

def stopping(self, version, statements, target):
    if version == stop:
        print("stopped", version, flush=True)
        time.sleep(600)
    return step(self, version, statements, target)

SchemaPart._step = stopping
Archive.init(sys.argv[1])
"""


# stopped after steps 11 to 16 (SQLite's tables made again), or after 17 to 19 wrote the passages again
@pytest.mark.parametrize("stop", [17, 20])
@pytest.mark.parametrize("kind", KINDS)
def test_an_upgrade_killed_midway_leaves_the_release_and_the_next_open_finishes_it(
        kind: str, stop: int, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    release = RELEASE_DIRS[0]
    expected = _expected(release)
    kept = expected["archives"][kind]
    old = list(range(1, expected["schema_version"] + 1))
    assert old[-1] < stop <= SCHEMA_VERSION
    location = _restore(release, kind, tmp_path, request)
    child = subprocess.Popen([sys.executable, "-c", _STOPS_MID_MIGRATION, location, str(stop)],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             env={**os.environ, "PYTHONPATH": str(SRC)})
    try:
        assert child.stdout is not None
        said = child.stdout.readline()
        assert said == f"stopped {stop}\n", child.stderr.read() if child.stderr else said
    finally:
        child.send_signal(signal.SIGKILL)
        child.communicate()
    assert child.returncode == -signal.SIGKILL
    assert [v for v, _ in _schema_rows(location)] == old  # the steps it applied died with it
    Archive.init(location).close()  # the next pdi init migrates it all
    assert [v for v, _ in _schema_rows(location)] == list(range(1, SCHEMA_VERSION + 1))
    checked = pdi(location, "verify")
    assert checked.exit_code == 0 and checked.stdout.rstrip().endswith(" 0 problems"), checked.output
    for name, known in kept["names"].items():
        got = pdi(location, "get", name, "-o", "-")
        assert got.exit_code == 0, (name, got.output)
        assert (hashlib.sha256(got.stdout_bytes).hexdigest(), len(got.stdout_bytes)) == (known["sha256"], known["size"])
    for citation, passage in kept["passages"].items():
        assert pdi(location, "get", citation).stdout_bytes == passage["text"].encode(passage["charset"]), citation
    for word, name in kept["search"].items():
        found = pdi(location, "search", word)
        assert found.exit_code == 0 and found.stdout.startswith(name + "#"), found.output
    if kind == "sqlite":
        with sqlite3.connect(Path(location) / "catalog.sqlite") as conn:
            assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
            assert conn.execute("PRAGMA foreign_key_check").fetchall() == []
        conn.close()


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_an_upgrade_that_fails_says_so_and_leaves_the_release_as_it_was(tmp_path: Path, request: pytest.FixtureRequest) -> None:
    """A migration whose commit fails (here the catalog's write-ahead log cannot grow: the process may write no file
    past 64 KiB, ``RLIMIT_FSIZE``, as on a full disk) rolls back: every file of the archive is as the release wrote
    it, and the error says what failed, on which archive, and at which schema version the archive still is."""
    release = RELEASE_DIRS[0]
    old = _expected(release)["schema_version"]
    location = _restore(release, "sqlite", tmp_path, request)
    before = _files(Path(location))

    def small_files() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (64 << 10, 64 << 10))

    failed = subprocess.run([sys.executable, "-m", "pdi", "init", "--archive", location], preexec_fn=small_files,
                            capture_output=True, text=True, timeout=300, check=False)
    assert failed.returncode == 8, failed.stderr
    said = failed.stderr
    assert said.startswith("pdi: storage error: "), said
    assert f"migrating the archive at {location} from schema version {old} to {SCHEMA_VERSION} failed" in said, said
    assert f"it is still at schema version {old}" in said, said
    assert f"{Path(location) / 'catalog.sqlite'}" in said, said  # the file whose commit failed
    assert _files(Path(location)) == before
    assert pdi(location, "init").stdout.endswith(f"(schema version {SCHEMA_VERSION})\n")  # with room, it migrates
    assert pdi(location, "verify").exit_code == 0


@pytest.mark.parametrize("kind", KINDS)
def test_an_upgrade_whose_step_fails_says_so_and_leaves_the_release_as_it_was(
        kind: str, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    """A table someone made in the catalog under the name step 11 gives its own (``mirrors``): the step fails, and
    the steps before it with it; the error says so, and what failed."""
    release = RELEASE_DIRS[0]
    old = _expected(release)["schema_version"]
    assert old < 11 <= SCHEMA_VERSION
    location = _restore(release, kind, tmp_path, request)
    if kind == "postgres":
        import psycopg

        with psycopg.connect(location) as conn:
            conn.execute("CREATE TABLE mirrors (made_by_someone INTEGER)")
    else:
        with sqlite3.connect(Path(location) / "catalog.sqlite") as conn:
            conn.execute("CREATE TABLE mirrors (made_by_someone INTEGER)")
        conn.close()
    before = _schema_rows(location)
    failed = pdi(location, "init")
    assert failed.exit_code == 8, failed.output
    assert failed.stderr.startswith("pdi: storage error: migrating the archive at "), failed.stderr
    assert (f" from schema version {old} to {SCHEMA_VERSION} failed, and nothing of it was applied (it is still at"
            f" schema version {old}): ") in failed.stderr, failed.stderr
    assert "mirrors" in failed.stderr and "already exists" in failed.stderr, failed.stderr  # what failed
    assert _schema_rows(location) == before


@pytest.mark.parametrize("kind", KINDS)
def test_a_migrated_release_archive_dates_changes_of_access(kind: str, tmp_path: Path,
                                                            request: pytest.FixtureRequest) -> None:
    """Schema step 21 on the newest release's archive: a series made private after the upgrade withholds what
    harvesters were shown, dated then (an OAI-PMH deleted record), and made public again shows it, dated then."""
    from pdi.archive.access import Reader, reading_as

    release = RELEASE_DIRS[-1]
    series = _expected(release)["archives"][kind]["series"][0]
    location = _restore(release, kind, tmp_path, request)
    with Archive.init(location) as archive:  # pdi init migrates it
        assert archive.store.schema_version() == SCHEMA_VERSION
        with reading_as(Reader()):
            before = {str(c.generic.pdi): c for c in archive.changes(series=series, limit=1000)}
        assert before and all(c.changed_at < "2099" for c in before.values())
        archive.set_series_access(series, "private")
        with reading_as(Reader()):
            withheld = {str(c.generic.pdi): c for c in archive.changes(series=series, limit=1000)}
        archive.set_series_access(series, "public")
        with reading_as(Reader()):
            shown = {str(c.generic.pdi): c for c in archive.changes(series=series, limit=1000)}
    assert set(withheld) == set(shown) == set(before)
    moments = {c.changed_at for c in withheld.values()}
    assert len(moments) == 1 and moments == {c.withdrawn_at for c in withheld.values()}
    (hid,) = moments
    assert hid > max(c.changed_at for c in before.values())
    assert all(c.changed_at > hid for c in shown.values())
    assert [name for name, c in shown.items() if c.withdrawn_at] == [
        name for name, c in before.items() if c.withdrawn_at]  # as before: the withdrawn ones only


@pytest.mark.parametrize("kind", KINDS)
def test_step_21_reads_the_versions_of_a_page_of_documents_in_one_statement(
        kind: str, tmp_path: Path, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Step 21 reads the versions of the documents whose access it dates a page of them at a time, not one
    statement a document (a round trip each on PostgreSQL): a series a release made private makes every document
    of it such a one."""
    from pdi.archive.postgres.transactions import PostgresTransactions
    from pdi.archive.sqlite import SQLiteStore

    release = RELEASE_DIRS[-1]
    series = _expected(release)["archives"][kind]["series"][0]
    location = _restore(release, kind, tmp_path, request)
    _release_writes(location, _release_series_access(series, "private", CHANGED))
    asked: list[str] = []
    cls = SQLiteStore if kind == "sqlite" else PostgresTransactions
    asked_by = cls._query

    def counted(self: Any, sql: str, params: Any = ()) -> Any:
        asked.append(sql)
        return asked_by(self, sql, params)

    monkeypatch.setattr(cls, "_query", counted)
    with Archive.init(location) as archive:
        documents = len(archive.store._query("SELECT id FROM documents"))
    of_versions = [sql for sql in asked if "FROM versions WHERE document" in sql]
    assert documents > 1 and len(of_versions) == 1, (documents, of_versions)


#: When a harvester that read the release's archive whole harvested it last: after its deposits (the newest release's
#: were made on 2026-11-25 from 13:21 to 13:22, GMT), before the changes of access below; ``from=`` of its next harvest.
HARVESTED = "2026-11-25T14:00:00Z"
#: The changes of access made with the release, after that harvest and before the upgrade.
CHANGED, LIFTED = "2026-11-26T10:00:00Z", "2026-11-26T11:00:00Z"
FOREVER, OVER = "2099-01-01T00:00:00Z", "2026-11-27T00:00:00Z"


def _release_writes(location: str, statements: list[tuple[str, tuple[object, ...]]]) -> None:
    """Write into the release's catalog, past this pdi, what the release wrote for a change of access."""
    if location.startswith("postgresql://"):
        import psycopg

        with psycopg.connect(location) as conn:
            for sql, params in statements:
                conn.execute(sql.replace("?", "%s"), params)
        return
    with sqlite3.connect(Path(location) / "catalog.sqlite") as conn:
        for sql, params in statements:
            conn.execute(sql, params)


def _doc(name: str) -> str:
    """The catalog's ``documents.id`` of the newest release's document ``1``, ``2`` … of 2026-11-25, as SQL."""
    return f"(SELECT id FROM documents WHERE day = '2026-11-25' AND unique_id = '{name}')"


def _audited(at: str, action: str, subject: str, detail: str) -> list[tuple[str, tuple[object, ...]]]:
    return [("INSERT INTO access_changes (at) VALUES (?)", (at,)),
            ("INSERT INTO audit_log (at, who, action, subject, detail, address) VALUES (?, 'uid 0', ?, ?, ?, NULL)",
             (at, action, subject, detail))]


def _release_embargo(series: str, name: str, version: int | None, until: str | None, at: str
                     ) -> list[tuple[str, tuple[object, ...]]]:
    """What ``pdi embargo`` of pdi 0.1.0 and 0.2.0 wrote (``SQLStore.set_embargo``, commit 346c376f:
    src/pdi/archive/catalog/access.py): the embargo, a row of ``access_changes``, the audit entry naming the name
    given (a versioned name for a version)."""
    subject = f"urn:pdi://{series}/2026/11/25/{name}" + ("" if version is None else f".text.{version}")
    what = "the document" if version is None else f"version {version}"
    if version is None:
        change = ("UPDATE documents SET embargo_until = ? WHERE id = " + _doc(name), (until,))
    else:
        change = (f"UPDATE versions SET embargo_until = ? WHERE document = {_doc(name)} AND version = ?",
                  (until, version))
    return [change, *_audited(at, "embargo", subject, f"{what} until {until}" if until else f"{what}: lifted")]


def _release_series_access(series: str, access: str, at: str) -> list[tuple[str, tuple[object, ...]]]:
    """What ``pdi series access`` of pdi 0.1.0 and 0.2.0 wrote (``SQLStore.set_series_access``, the same file)."""
    return [("UPDATE series SET access = ? WHERE name = ?", (access, series)),
            *_audited(at, "series-access", series, access)]


def _deposited_embargoed(name: str) -> list[tuple[str, tuple[object, ...]]]:
    """A document deposited under an embargo (``pdi deposit --embargo-until``: its version's row holds it, and
    nothing else says so): the release's document ``name`` as if it had been."""
    return [(f"UPDATE versions SET embargo_until = ? WHERE document = {_doc(name)}", (FOREVER,))]


def _mirrored_embargoed(series: str, name: str) -> list[tuple[str, tuple[object, ...]]]:
    """A document a mirror took from its origin under the origin's embargo (``Mirroring`` of pdi 0.2.0, the same
    commit: src/pdi/archive/mirroring.py, the embargo set with the document and audited from the origin's address):
    the release's document ``name`` as if it had been, its audit entry after its deposit."""
    at = "2026-11-25T13:30:00Z"
    return [(f"UPDATE documents SET embargo_until = ? WHERE id = {_doc(name)}", (FOREVER,)),
            ("INSERT INTO access_changes (at) VALUES (?)", (at,)),
            ("INSERT INTO audit_log (at, who, action, subject, detail, address) VALUES"
             " (?, 'uid 0', 'embargo', ?, ?, 'https://origin.example/')",
             (at, f"urn:pdi://{series}/2026/11/25/{name}",
              f"the document until {FOREVER} (from its origin's signed manifest)"))]


def _harvest_after_upgrade(location: str, **arguments: str) -> tuple[str, str, dict[str, tuple[str, bool]]]:
    """``pdi init`` of the release's archive, then an anonymous incremental harvest (sickle's ListIdentifiers) of
    ``pdi serve``: GMT to the second before and after the migration, and each header's name (:func:`_short`) with
    its datestamp and whether it is a deleted record."""
    import datetime

    from sickle import Sickle, oaiexceptions

    def now() -> str:
        return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")

    before = now()
    assert pdi(location, "init").exit_code == 0
    after = now()
    with _answering(location, "/oai?verb=Identify") as base:
        try:
            headers = list(Sickle(f"{base}/oai").ListIdentifiers(metadataPrefix="oai_dc", **arguments))
        except oaiexceptions.NoRecordsMatch:
            headers = []
    return before, after, {_short(h.identifier): (h.datestamp, h.deleted) for h in headers}


def _short(name: str) -> str:
    """A name's last segment, without its format and version: ``1`` for …/2026/11/25/1.text.2 (a unique id's own
    dots are escaped, %2E)."""
    return name.rpartition("/")[2].partition(".")[0]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("release", RELEASE_DIRS, ids=[p.name for p in RELEASE_DIRS])
def test_embargoes_set_and_lifted_by_a_release_are_harvested_after_the_upgrade(
        release: Path, kind: str, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    """Embargoes a release set or lifted after a harvester's last harvest: its next incremental harvest (OAI-PMH
    2.0 §2.7.1, ``from=`` then) after ``pdi init`` migrated the archive shows, dated at the migration, a deleted
    record for the document it may no longer read (§2.5.1) and the record of each document whose versions it is
    shown changed; a document deposited under an embargo it never saw (or mirrored under its origin's) is named
    nowhere, and one nothing happened to is not harvested again."""
    series = _expected(release)["archives"][kind]["series"][0]
    location = _restore(release, kind, tmp_path, request)
    _release_writes(location, [
        *_release_embargo(series, "3", None, FOREVER, CHANGED),  # withheld since
        *_release_embargo(series, "4", None, FOREVER, CHANGED),  # withheld, then shown again
        *_release_embargo(series, "4", None, None, LIFTED),
        *_release_embargo(series, "1", 2, FOREVER, CHANGED),  # its second version withheld: the first shown
        *_release_embargo(series, "6", None, OVER, CHANGED),  # withheld until an embargo since over
        *_deposited_embargoed("5"),
        *_mirrored_embargoed(series, "7"),
    ])
    before, after, harvested = _harvest_after_upgrade(location, **{"from": HARVESTED})
    assert sorted(harvested) == ["1", "3", "4", "6"], harvested
    assert {name: deleted for name, (_, deleted) in harvested.items()} == {
        "1": False, "3": True, "4": False, "6": False}
    for name in ("1", "3", "4"):
        assert before <= harvested[name][0] <= after, (name, harvested[name], before, after)
    assert harvested["6"][0] >= OVER
    _, _, whole = _harvest_after_upgrade(location)  # a first harvest: the never-shown document is nowhere
    assert "5" not in whole and "7" not in whole and "3" in whole and whole["3"][1]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("release", RELEASE_DIRS, ids=[p.name for p in RELEASE_DIRS])
@pytest.mark.parametrize("accesses", [("private",), ("hidden",), ("private", "public")], ids="-".join)
def test_a_series_made_private_or_public_by_a_release_is_harvested_after_the_upgrade(
        accesses: tuple[str, ...], release: Path, kind: str, tmp_path: Path, request: pytest.FixtureRequest,
) -> None:
    """A series a release made private or hidden after a harvester's last harvest: its next incremental harvest
    after ``pdi init`` migrated the archive shows every document it was shown as a deleted record dated at the
    migration; made private and public again, every one as a record dated then (it may have missed any of them).
    A document deposited under an embargo is named in neither."""
    expected = _expected(release)
    series = expected["archives"][kind]["series"][0]
    location = _restore(release, kind, tmp_path, request)
    moments = (CHANGED, LIFTED)
    _release_writes(location, [*_deposited_embargoed("5"), *(
        statement for access, at in zip(accesses, moments, strict=False)
        for statement in _release_series_access(series, access, at))])
    before, after, harvested = _harvest_after_upgrade(location, **{"from": HARVESTED})
    held = expected["archives"][kind]
    documents = {_short(name) for part in ("names", "served_by_release", "withdrawn") for name in held[part]} - {"5"}
    assert len(documents) == 14 - 1 and "10" in documents  # the release's 14 documents (10 withdrawn), but 5
    assert set(harvested) == documents, (sorted(harvested), sorted(documents))
    shown_again = accesses[-1] == "public"
    for name, (datestamp, deleted) in harvested.items():
        assert before <= datestamp <= after, (name, datestamp, before, after)
        assert deleted is (not shown_again or name == "10"), (name, deleted)
