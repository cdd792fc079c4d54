"""A PostgreSQL backup's dump is read as a stranger's may be (docs/reference/backup.md, "Restore"; the checks:
:mod:`pdi.archive.postgres_dumps`): ``pg_restore`` runs whatever statements it holds, as the role it connects as.

Found by an attack on ``pdi restore`` (2026-11-27): a ``catalog.dump`` whose ``SEARCHPATH`` entry or one
``TABLE DATA`` entry's ``COPY`` statement was rewritten to ``COPY (SELECT 1) TO PROGRAM '…'`` was restored by a
superuser's ``--to``, the program run on the database's host, and the restore said "restored". Each crafted dump
here is first given to ``pg_restore`` itself (the oracle: the program runs), then to ``pdi restore``, which must
refuse it, naming the entry, before anything is written.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path

import psycopg
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pdi.archive import Archive, Content
from pdi.archive.backup import backup
from pdi.archive.postgres import PostgresStore
from pdi.archive.restore import restore
from pdi.archive.store import SCHEMA_VERSION
from pdi.errors import StoreError, UnsupportedError
from support.backups import reseal
from support.pgcluster import TemporaryCluster

S = "dump.example.us"


def _pdi(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pdi", *args], capture_output=True, text=True, timeout=600,
                          check=False)


def _name() -> str:
    return f"pdi_dump_{uuid.uuid4().hex[:12]}"


def _archive_backup(cluster: TemporaryCluster, tmp_path: Path, *statements: str) -> Path:
    """A backup of a small archive in a database of its own, ``statements`` run in that database first."""
    location = cluster.create_database(_name())
    with Archive.init(location) as archive:
        archive.add_series(S)
        archive.deposit(S, [Content(os.urandom(100_000), "octet-stream")])
    with psycopg.connect(location, autocommit=True) as conn:
        for statement in statements:
            conn.execute(statement)
    backup(location, tmp_path / "b")
    return tmp_path / "b"


def _untouched(cluster: TemporaryCluster, database: str) -> None:
    """The database a refused restore was given holds no table, and no schema the checks made is left in it."""
    tables = cluster.sql("SELECT count(*) FROM pg_tables WHERE schemaname NOT IN ('pg_catalog', 'information_schema')",
                         database)
    schemas = cluster.sql("SELECT count(*) FROM pg_namespace WHERE nspname LIKE 'pdi_restore_check_%'", database)
    assert (tables, schemas) == ([(0,)], [(0,)])


def _rewrite(dump: Path, old: bytes, new: bytes) -> None:
    """``old`` (once in the dump's table of contents) made ``new``, padded with spaces to the same length: no
    offset of the dump's data moves, so ``pg_restore`` reads the rest as it was."""
    data = dump.read_bytes()
    assert data.count(old) == 1 and len(new) <= len(old)
    dump.write_bytes(data.replace(old, new.ljust(len(old))))
    reseal(dump.parent)  # as the stranger can: the checks of the dump's entries are what meet it


@pytest.mark.parametrize(("old", "entry"), [
    (b"SELECT pg_catalog.set_config('search_path', '', false);\n", "its header"),
    (b"COPY public.audit_log (id, at, who, action, subject, detail, address) FROM stdin;\n",
     "TABLE DATA public.audit_log"),
    (b"SELECT pg_catalog.setval('public.audit_log_id_seq', 1, false);\n", "SEQUENCE SET public.audit_log_id_seq"),
])
def test_a_dump_whose_entry_runs_a_program_is_refused(pg_cluster: TemporaryCluster, tmp_path: Path, old: bytes,
                                                        entry: str) -> None:
    made = _archive_backup(pg_cluster, tmp_path)
    ran = pg_cluster.directory / f"ran-{uuid.uuid4().hex[:8]}"  # the server's working directory is data/, beside it
    _rewrite(made / "catalog.dump", old, f"COPY (SELECT 1) TO PROGRAM 'touch ../{ran.name}';".encode())
    oracle = pg_cluster.create_database(_name())
    subprocess.run(["pg_restore", "--no-owner", f"--dbname={oracle}", str(made / "catalog.dump")],
                   capture_output=True, timeout=300, check=False)
    assert ran.exists()  # pg_restore ran it
    ran.unlink()
    target = _name()
    result = _pdi("restore", str(made), "--to", pg_cluster.create_database(target))
    assert result.returncode == StoreError.exit_code, result.stdout + result.stderr
    assert entry in result.stderr and "TO PROGRAM" in result.stderr and "nothing was restored" in result.stderr
    assert not ran.exists()
    _untouched(pg_cluster, target)


def test_a_dump_whose_data_is_statements_is_refused(pg_cluster: TemporaryCluster, tmp_path: Path) -> None:
    """A dump made with ``pg_dump --inserts``: its tables' data are blocks of statements, which ``pg_restore`` runs
    as they are (one rewritten here to run a program); pdi's data entries are each one ``COPY … FROM stdin``."""
    made = _archive_backup(pg_cluster, tmp_path, "UPDATE series SET authority = repeat('a', 200)")
    location = str(json.loads((made / "pdi-backup.json").read_text())["source"])
    database = location.split("@/")[1].split("?")[0]
    (made / "catalog.dump").unlink()
    subprocess.run(["pg_dump", "--format=custom", "--no-owner", "--inserts", "--compress=0",
                    f"--file={made / 'catalog.dump'}", f"--dbname={pg_cluster.url(database)}"], check=True, timeout=300)
    ran = pg_cluster.directory / f"ran-{uuid.uuid4().hex[:8]}"
    # the row's value, one piece of its INSERT statement: the statement goes on after it ("…, 'public');")
    _rewrite(made / "catalog.dump", b"'" + b"a" * 200 + b"'",
             f"'a', 'now', 'public'); COPY (SELECT 1) TO PROGRAM 'touch ../{ran.name}'; SELECT (1".encode())
    oracle = pg_cluster.create_database(_name())
    subprocess.run(["pg_restore", "--no-owner", f"--dbname={oracle}", str(made / "catalog.dump")],
                   capture_output=True, timeout=300, check=False)
    assert ran.exists()  # pg_restore ran it
    ran.unlink()
    target = _name()
    result = _pdi("restore", str(made), "--to", pg_cluster.create_database(target))
    assert result.returncode == StoreError.exit_code, result.stdout + result.stderr
    assert "TABLE DATA public.schema_migrations is restored by '', not by COPY" in result.stderr  # the first read
    assert not ran.exists()
    _untouched(pg_cluster, target)


def test_an_entry_that_is_not_data_may_carry_none() -> None:
    """``pg_restore`` restores the block of data of any entry that has one (``hadDumper``), after its definition,
    and runs it as statements when the entry has no COPY: only pdi's TABLE DATA entries have one."""
    from pdi.archive.postgres_dumps import Entry, Toc, check_data

    function = Entry(7, True, "1255", "17409", "pwn()", "FUNCTION", "", "", "public", "", None)
    with pytest.raises(StoreError, match=r"its entry 7; FUNCTION public.pwn\(\) carries data"):
        check_data(Toc("15", "15", (function,)), Toc("15", "15", ()), "public", "x", "public", Path("d"))


@pytest.mark.parametrize(("statements", "said"), [
    (["CREATE FUNCTION pwn() RETURNS trigger LANGUAGE plpgsql AS $$BEGIN RETURN NEW; END$$"],
     "in its entry 'Name: pwn(); Type: FUNCTION; Schema: public; Owner: -'"),
    (["CREATE FUNCTION pwn() RETURNS trigger LANGUAGE plpgsql AS $$BEGIN RETURN NEW; END$$",
      "CREATE TRIGGER pwn BEFORE INSERT ON series FOR EACH ROW EXECUTE FUNCTION pwn()"],
     "holds an entry pdi never makes (", ),
    (["CREATE VIEW pwn AS SELECT 1 AS one"], "holds an entry pdi never makes ("),
    (["CREATE RULE pwn AS ON INSERT TO series DO ALSO NOTIFY pwn"], "; RULE public.series pwn)"),
    (["ALTER TABLE series ENABLE ROW LEVEL SECURITY", "CREATE POLICY pwn ON series USING (true)"],
     "holds an entry pdi never makes ("),
    (["ALTER TABLE audit_log ALTER COLUMN who SET DEFAULT current_user"],
     "'Name: audit_log; Type: TABLE; Schema: public; Owner: -'"),
])
def test_statements_pdi_does_not_make_are_refused(pg_cluster: TemporaryCluster, tmp_path: Path,
                                                  statements: list[str], said: str) -> None:
    """A dump of an archive's database to which a stranger added a function, a trigger, a view, a rule, a policy
    or a column's default: each is refused, named, before anything is written."""
    made = _archive_backup(pg_cluster, tmp_path, *statements)
    target = _name()
    result = _pdi("restore", str(made), "--to", pg_cluster.create_database(target))
    assert result.returncode == StoreError.exit_code, result.stdout + result.stderr
    assert said in result.stderr and "nothing was restored" in result.stderr, result.stderr
    _untouched(pg_cluster, target)


def test_a_restore_into_a_database_not_made_yet_says_to_make_it(pg_cluster: TemporaryCluster, tmp_path: Path) -> None:
    """The page's restore (docs/reference/backup.md: into an empty database, "make it first: createdb pdi") given a
    database the server does not have: the server answered, so the error does not say it was not reached; it names
    the database and says to make it, and nothing is made."""
    made = _archive_backup(pg_cluster, tmp_path)
    target = _name()
    result = _pdi("restore", str(made), "--to", pg_cluster.url(target))
    assert result.returncode == StoreError.exit_code, result.stdout + result.stderr
    said = result.stderr
    assert "cannot reach" not in said, said
    assert f"cannot connect to the PostgreSQL database {pg_cluster.url(target)}" in said, said
    assert (f"make it first, that role's own (createdb --owner postgres --template template0 --lc-ctype C.UTF-8"
            f" {target})") in said and "nothing was restored" in said, said
    assert pg_cluster.sql(f"SELECT count(*) FROM pg_database WHERE datname = '{target}'") == [(0,)]



def test_a_database_the_role_of_to_does_not_own_is_refused_saying_how_to_make_it_its_own(
        pg_cluster: TemporaryCluster, tmp_path: Path) -> None:
    """A database made by another role (``sudo -u postgres createdb pdi``, as docs/how-to/backup.md said to after a
    loss, found following it on 2026-12-02) gives ``--to``'s role no CREATE: refused before anything is written,
    naming the command that makes it that role's own (the how-to's, of Run on PostgreSQL) and the statement that
    makes the one there so; after that statement the same restore restores. ``GRANT CREATE`` alone is not
    offered: PostgreSQL 15's schema public is still its owner's, and ``pg_restore`` is refused there."""
    made = _archive_backup(pg_cluster, tmp_path)
    role, database = _name(), _name()
    pg_cluster.sql(f'CREATE ROLE "{role}" LOGIN')
    pg_cluster.create_database(database)  # the cluster's superuser's, as a bare createdb makes it
    target = pg_cluster.url(database).replace("postgresql://postgres@", f"postgresql://{role}@")
    refused = _pdi("restore", str(made), "--to", target)
    assert refused.returncode == StoreError.exit_code, refused.stdout + refused.stderr
    said = refused.stderr
    assert f"permission denied for database {database}" in said, said
    assert (f"make the database that role's own (createdb --owner {role} --template template0 --lc-ctype C.UTF-8"
            f" {database}, or ALTER DATABASE {database} OWNER TO {role}); nothing was restored") in said, said
    _untouched(pg_cluster, database)
    pg_cluster.sql(f'ALTER DATABASE "{database}" OWNER TO "{role}"')  # as the error says
    restored = _pdi("restore", str(made), "--to", target)
    assert restored.returncode == 0, restored.stderr
    verified = _pdi("verify", "--archive", target)
    assert verified.returncode == 0 and verified.stdout.endswith("0 problems\n"), verified.stdout + verified.stderr


def test_a_pg_restore_that_fails_is_said_by_its_error_not_by_the_statement_it_failed_on(
        pg_cluster: TemporaryCluster, tmp_path: Path) -> None:
    """``pg_restore`` refused (a role granted CREATE on a database it does not own: PostgreSQL 15's schema public is
    still its owner's) writes its error, then the whole statement it ran, a function of a hundred lines. ``pdi
    restore`` said the last 2,000 characters of that, the middle of a function's body, and never the error (found
    trying the advice of the test above, 2026-12-02). Now it says pg_restore's own line and the statement's first
    line; the database keeps no table (one transaction)."""
    made = _archive_backup(pg_cluster, tmp_path)
    role, database = _name(), _name()
    pg_cluster.sql(f'CREATE ROLE "{role}" LOGIN')
    pg_cluster.create_database(database)
    pg_cluster.sql(f'GRANT CREATE ON DATABASE "{database}" TO "{role}"')
    target = pg_cluster.url(database).replace("postgresql://postgres@", f"postgresql://{role}@")
    refused = _pdi("restore", str(made), "--to", target)
    assert refused.returncode == StoreError.exit_code, refused.stdout + refused.stderr
    [said] = refused.stderr.splitlines()
    assert said.startswith("pdi: storage error: pg_restore failed (exit 1): pg_restore: error: could not execute"
                           " query: ERROR:  permission denied for schema public / Command was: CREATE "), said
    assert "END IF" not in said and len(said) < 400, said
    _untouched(pg_cluster, database)


def test_a_backup_restored_to_a_place_of_another_kind_is_refused_as_unsupported(pg_cluster: TemporaryCluster,
                                                                                 tmp_path: Path) -> None:
    """The user's mistake, not the storage failing (docs/reference/exit-codes.md: 8 is "not a user mistake"; found by
    a tester, 2026-11-30): a PostgreSQL backup to a directory, a SQLite one to a database, a whole database's to a
    URL with a search_path are each exit 6, saying what to give, nothing written."""
    made = _archive_backup(pg_cluster, tmp_path)
    to_folder = _pdi("restore", str(made), "--to", str(tmp_path / "folder"))
    assert to_folder.returncode == UnsupportedError.exit_code, to_folder.stderr
    assert "restore it --to a postgresql:// URL" in to_folder.stderr and not (tmp_path / "folder").exists()
    sqlite_made = tmp_path / "sqlite"
    with Archive.init(sqlite_made) as archive:
        archive.add_series(S)
    backup(str(sqlite_made), tmp_path / "sb")
    database = _name()
    target = pg_cluster.create_database(database)
    to_database = _pdi("restore", str(tmp_path / "sb"), "--to", target)
    assert to_database.returncode == UnsupportedError.exit_code, to_database.stderr
    assert "restore it to a directory" in to_database.stderr
    _untouched(pg_cluster, database)
    with_path = _pdi("restore", str(made), "--to", target + "&options=-csearch_path%3Delsewhere")
    assert with_path.returncode == UnsupportedError.exit_code, with_path.stderr
    assert "restore --to a database URL without a search_path" in with_path.stderr
    _untouched(pg_cluster, database)


def test_a_restore_to_a_url_psycopg_cannot_read_says_so_without_a_traceback(
        pg_cluster: TemporaryCluster, tmp_path: Path) -> None:
    """A ``--to`` URL with a query parameter libpq does not know (``foo=bar``; libpq's connection URIs,
    PostgreSQL's docs §34.1.1) is refused when the restore connects: a storage error naming the database, one line
    on stderr, nothing restored; the hint to make the database does not fail on the same URL (a traceback)."""
    made = _archive_backup(pg_cluster, tmp_path)
    target = _name()
    url = pg_cluster.url(target) + "&foo=bar"
    result = _pdi("restore", str(made), "--to", url)
    assert result.returncode == StoreError.exit_code, result.stdout + result.stderr
    assert "Traceback" not in result.stderr, result.stderr
    assert result.stderr.startswith("pdi: storage error: cannot connect to the PostgreSQL database"), result.stderr
    assert "foo" in result.stderr and "nothing was restored" in result.stderr, result.stderr
    assert pg_cluster.sql(f"SELECT count(*) FROM pg_database WHERE datname = '{target}'") == [(0,)]

def test_a_grant_to_a_readers_role_is_not_restored_and_does_not_stop_a_restore(
        pg_cluster: TemporaryCluster, tmp_path: Path) -> None:
    """An operator's grant (a dump's ACL entry) is left out, as the restore's --no-privileges says: a dump pdi
    made is restored whole, without it."""
    role = _name()
    made = _archive_backup(pg_cluster, tmp_path, f"CREATE ROLE {role}", f"GRANT SELECT ON series TO {role}")
    listed = subprocess.run(["pg_restore", "--list", str(made / "catalog.dump")], capture_output=True, text=True,
                            check=True).stdout
    assert " ACL public " in listed
    target = pg_cluster.create_database(_name())
    _, done = restore(made, target)
    assert done.schema_version == SCHEMA_VERSION
    with psycopg.connect(target) as conn:
        assert conn.execute("SELECT has_table_privilege(%s, 'series', 'SELECT')", (role,)).fetchone() == (False,)
    assert _pdi("verify", "--archive", target).returncode == 0


def test_a_marker_whose_schema_version_is_not_the_dumps_is_refused(pg_cluster: TemporaryCluster,
                                                                   tmp_path: Path) -> None:
    made = _archive_backup(pg_cluster, tmp_path)
    marker = (made / "pdi-backup.json").read_text()
    (made / "pdi-backup.json").write_text(marker.replace(f'"schema_version": {SCHEMA_VERSION}',
                                                         f'"schema_version": {SCHEMA_VERSION - 1}'))
    target = _name()
    with pytest.raises(StoreError, match=f"at schema version {SCHEMA_VERSION - 1}, but .* is at {SCHEMA_VERSION}"):
        restore(made, pg_cluster.create_database(target))
    _untouched(pg_cluster, target)


def test_a_backup_of_every_schema_version_is_restored(pg_cluster: TemporaryCluster, tmp_path: Path) -> None:
    """An archive left at each schema version (as an older release made it: pdi's own migrations, stopped there),
    backed up and restored: its dump is the one pdi makes at that version, whatever the version. (From step 5,
    which made ``blob_store``: ``pdi backup`` reads it, and cannot back up an archive older than that.)"""
    schema = _name()
    location = pg_cluster.create_schema(schema)
    catalog = PostgresStore(location, connections=1)
    try:
        assert catalog.migrate(4) == 4
        with pytest.raises(StoreError, match='relation "blob_store" does not exist'):
            backup(location, tmp_path / "b4")
    finally:
        catalog.close()
    for version in range(5, SCHEMA_VERSION + 1):
        catalog = PostgresStore(location, connections=1)
        try:
            assert catalog.migrate(version) == version
        finally:
            catalog.close()
        made = tmp_path / f"b{version}"
        backup(location, made)
        database = _name()
        pg_cluster.create_database(database)
        pg_cluster.sql(f'CREATE SCHEMA "{schema}"', database)
        target = pg_cluster.url(database) + f"&options=-csearch_path%3D{schema}"
        _, done = restore(made, target)
        assert done.schema_version == version
        with psycopg.connect(target) as conn:
            assert conn.execute("SELECT max(version) FROM schema_migrations").fetchone() == (version,)


def _leftovers(cluster: TemporaryCluster, database: str) -> list[tuple[object, ...]]:
    return cluster.sql("SELECT nspname FROM pg_namespace WHERE nspname LIKE 'pdi_restore_check_%'", database)


def _interrupt_at(monkeypatch: pytest.MonkeyPatch, where: str) -> list[str]:
    """A Ctrl-C (a real ``SIGINT``, to this process) once the check has read the catalog it made: as the drop of its
    throw-away schema connects, as the ``DROP`` is sent, or just before the drop holds Ctrl-C. What was done: the
    list it gives."""
    import signal

    from psycopg import sql

    from pdi.archive import postgres_dumps

    done: list[str] = []
    read = postgres_dumps.schema_text

    def reading(*args: object, **kwargs: object) -> str:
        done.append("read")
        return read(*args, **kwargs)  # type: ignore[arg-type]

    def interrupt(at: str) -> None:
        if done == ["read"] and at == where:
            done.append("interrupted")
            signal.raise_signal(signal.SIGINT)

    connect, execute = psycopg.connect, psycopg.Connection.execute

    def connecting(*args: object, **kwargs: object) -> psycopg.Connection[tuple[object, ...]]:
        interrupt("connect")
        return connect(*args, **kwargs)  # type: ignore[arg-type]

    def executing(self: psycopg.Connection[tuple[object, ...]], query: object, *args: object,
                  **kwargs: object) -> object:
        if isinstance(query, sql.Composable) and query.as_string(self).startswith("DROP SCHEMA"):
            interrupt("DROP")
        return execute(self, query, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(postgres_dumps, "schema_text", reading)
    monkeypatch.setattr(psycopg, "connect", connecting)
    monkeypatch.setattr(psycopg.Connection, "execute", executing)
    if where == "before it is held":
        held = postgres_dumps.sigint_held

        def holding() -> object:
            interrupt(where)
            return held()

        monkeypatch.setattr(postgres_dumps, "sigint_held", holding)
    return done


@pytest.mark.parametrize("where", ["connect", "DROP", "before it is held"])
def test_a_ctrl_c_as_the_check_drops_its_schema_leaves_none(pg_cluster: TemporaryCluster, tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch, where: str) -> None:
    """Found by a tester (``timeout -s INT 1.98 pdi restore …``): a Ctrl-C that landed on the drop of the check's
    throw-away schema (its ``connect``) left ``pdi_restore_check_…`` in the database restored into, and every
    later backup of it was refused by the restore. The drop runs to its end, Ctrl-C held, and is raised then."""
    import signal

    made = _archive_backup(pg_cluster, tmp_path)
    target = _name()
    location = pg_cluster.create_database(target)
    done = _interrupt_at(monkeypatch, where)
    with pytest.raises(KeyboardInterrupt):
        restore(made, location)
    monkeypatch.undo()
    assert done == ["read", "interrupted"]
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    _untouched(pg_cluster, target)


def test_pdi_restore_stopped_as_the_check_drops_its_schema_exits_130_and_leaves_none(
        pg_cluster: TemporaryCluster, tmp_path: Path) -> None:
    """The same through the command (Ctrl-C as the drop connects): exit 130, as docs/reference/exit-codes.md says,
    nothing written and no schema left."""
    made = _archive_backup(pg_cluster, tmp_path)
    target = _name()
    location = pg_cluster.create_database(target)
    script = tmp_path / "interrupted.py"
    script.write_text(
        "import signal, sys\n"
        "import psycopg\n"
        "from pdi.archive import postgres_dumps\n"
        "from pdi.cli import main\n"
        "read, connect, done = postgres_dumps.schema_text, psycopg.connect, []\n"
        "def reading(*args, **kwargs):\n"
        "    done.append('read')\n"
        "    return read(*args, **kwargs)\n"
        "def connecting(*args, **kwargs):\n"
        "    if done == ['read']:\n"
        "        done.append('interrupted')\n"
        "        signal.raise_signal(signal.SIGINT)\n"
        "    return connect(*args, **kwargs)\n"
        "postgres_dumps.schema_text, psycopg.connect = reading, connecting\n"
        "sys.argv = ['pdi', 'restore', sys.argv[1], '--to', sys.argv[2]]\n"
        "main()\n")
    result = subprocess.run([sys.executable, str(script), str(made), location], capture_output=True, text=True,
                            timeout=600, check=False)
    assert result.returncode == 130, result.stdout + result.stderr
    _untouched(pg_cluster, target)


def test_a_schema_a_stopped_check_left_is_not_backed_up(pg_cluster: TemporaryCluster, tmp_path: Path) -> None:
    """A database that holds a ``pdi_restore_check_…`` schema (a whole catalog, as an older pdi's check stopped by
    Ctrl-C left it): ``pdi backup`` leaves it out, and the backup is restored (it was dumped, and every restore of
    that backup refused it: "holds a statement … in its entry 'Name: pdi_restore_check_…; Type: SCHEMA'")."""
    location = pg_cluster.create_database(_name())
    with Archive.init(location) as archive:
        archive.add_series(S)
        archive.deposit(S, [Content(os.urandom(100_000), "octet-stream")])
    left = "pdi_restore_check_335d0123456789ab"
    pg_cluster.sql(f"CREATE SCHEMA {left}", location.split("@/")[1].split("?")[0])
    catalog = PostgresStore(f"{location}&options=-csearch_path%3D{left}", connections=1)
    try:
        catalog.migrate(SCHEMA_VERSION)
    finally:
        catalog.close()
    made = tmp_path / "b"
    result = _pdi("backup", str(made), "--archive", location)
    assert result.returncode == 0, result.stdout + result.stderr
    listed = subprocess.run(["pg_restore", "--list", str(made / "catalog.dump")], capture_output=True, text=True,
                            check=True).stdout
    assert "pdi_restore_check" not in listed and " TABLE public series " in listed
    target = _name()
    result = _pdi("restore", str(made), "--to", pg_cluster.create_database(target))
    assert result.returncode == 0, result.stdout + result.stderr
    assert _leftovers(pg_cluster, target) == []
    assert _pdi("verify", "--archive", pg_cluster.url(target)).returncode == 0


_HEAD = b"PGDMP\x01\x0e\x00\x04\x08\x01"  # format 1.14.0, integers of 4 octets, offsets of 8, custom


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=2048), st.booleans())
def test_any_octets_are_a_table_of_contents_or_refused(octets: bytes, headed: bool) -> None:
    """:func:`read_toc` of any file (after a real header, or not) gives entries or a :class:`StoreError` saying
    why, and reads no further than the file (a length said past its end is refused, not waited on)."""
    from pdi.archive.postgres_dumps import read_toc

    with tempfile.TemporaryFile() as f:
        f.write((_HEAD if headed else b"") + octets)
        f.flush()
        try:
            toc = read_toc(f, Path("catalog.dump"))
        except StoreError as exc:
            assert "catalog.dump is not a pg_dump custom-format dump pdi can read" in str(exc)
        else:
            assert len(toc.entries) > 0
