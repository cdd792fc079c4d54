"""A throw-away PostgreSQL cluster for tests and benchmarks.

Creates a cluster in a fresh temporary directory, listening only on a unix
socket inside that directory (so it never clashes with another server or
port), and deletes everything on :meth:`TemporaryCluster.stop`; if the
process that made it ends without that (killed, or a CI deadline), its guard
stops the server and deletes the directory (``tests/support/pgguard.py``).
``initdb``
refuses to run as root, so when we are root the server programs run as the
``postgres`` system user, which owns the directory. Needs the PostgreSQL
server binaries (Debian package ``postgresql``, installed by
``scripts/bootstrap``); when they are missing the error says so.
"""

from __future__ import annotations

import glob
import os
import pwd
import re
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from pdi.errors import StoreError
from support import pgguard

#: An amount of memory as PostgreSQL's settings spell it (a number alone is in 8 kB pages).
_MEMORY = re.compile(r"[1-9][0-9]*(kB|MB|GB|TB)?")


def find_bindir() -> Path:
    """The directory of ``initdb`` and ``pg_ctl``."""
    candidates = sorted(
        glob.glob("/usr/lib/postgresql/*/bin"),
        key=lambda p: [int(x) if x.isdigit() else 0 for x in Path(p).parent.name.split(".")],
    )
    for found in reversed(candidates):
        if (Path(found) / "initdb").exists():
            return Path(found)
    initdb = shutil.which("initdb")
    if initdb:
        return Path(initdb).parent
    raise StoreError(
        "PostgreSQL server binaries (initdb, pg_ctl) not found: run scripts/bootstrap, which"
        " installs the Debian package postgresql"
    )


class TemporaryCluster:
    """A PostgreSQL server in a temporary directory, for one test session or benchmark."""

    def __init__(
        self, *, shared_buffers: str | None = None, durable: bool = False, settings: dict[str, str] | None = None,
    ) -> None:
        """``shared_buffers``: the server's buffer cache (``"6GB"``, ``"512MB"``); PostgreSQL's default (128 MB) when ``None``.

        ``durable``: keep PostgreSQL's defaults of ``fsync``, ``synchronous_commit`` and
        ``full_page_writes`` (on), as a benchmark of deposits needs; the tests turn them off.
        ``settings``: more server settings (``-c name=value``), after those.
        """
        if shared_buffers is not None and not _MEMORY.fullmatch(shared_buffers):
            raise StoreError(
                f"shared_buffers {shared_buffers!r} is not an amount of memory PostgreSQL reads"
                " (a whole number with kB, MB, GB or TB, e.g. 6GB)"
            )
        self.shared_buffers = shared_buffers
        self.durable = durable
        self.settings = dict(settings or {})
        self.bindir = find_bindir()
        # /tmp: short enough for a unix socket path (107 bytes) and open to the
        # postgres user, which a private $TMPDIR of root's may not be.
        base = Path("/tmp" if os.access("/tmp", os.W_OK | os.X_OK) else tempfile.gettempdir())
        self._user: dict[str, Any] = {}
        if os.geteuid() == 0:
            try:
                account = pwd.getpwnam("postgres")
            except KeyError as exc:
                raise StoreError(
                    "running as root, but there is no postgres user to run the server as:"
                    " run scripts/bootstrap"
                ) from exc
            self._user = {"user": account.pw_uid, "group": account.pw_gid, "extra_groups": []}
        # the clusters a killed process left whose guard was killed too (or made before there were guards)
        pgguard.sweep(base, self.bindir, self._user)
        self.directory = Path(tempfile.mkdtemp(prefix="pdi-pg-", dir=base))
        self.data = self.directory / "data"
        pgguard.write_owner(self.directory)
        if self._user:
            os.chown(self.directory, self._user["user"], self._user["group"])
        #: Stops the server and deletes the directory when this process ends without :meth:`stop`.
        self._guard, pipe = pgguard.start_guard(self.directory, self.bindir, self._user)
        self._guard_pipe: int | None = pipe
        self.started = False

    def _run(self, *args: str, timeout: float = 120) -> None:
        try:
            result = subprocess.run(
                [str(self.bindir / args[0]), *args[1:]],
                capture_output=True,
                text=True,
                check=False,
                cwd=self.directory,
                timeout=timeout,
                **self._user,
            )
        except subprocess.TimeoutExpired as exc:
            raise StoreError(f"{args[0]} did not finish within {timeout:g} s") from exc
        if result.returncode != 0:
            raise StoreError(
                f"{args[0]} failed ({result.returncode}): {result.stderr.strip() or result.stdout.strip()}"
            )

    def start(self) -> TemporaryCluster:
        """Create and start the cluster; returns self."""
        self._create()
        self.resume()
        return self

    def _create(self) -> None:
        """Make the data directory (a standby copies its primary's instead)."""
        self._run("initdb", "-D", str(self.data), "-A", "trust", "-U", "postgres",
                  "-E", "UTF8", "--locale=C", "--no-sync")

    def halt(self) -> None:
        """Stop the server (a fast shutdown: its clients' connections are cut), keeping its data for :meth:`resume`."""
        self._run("pg_ctl", "-D", str(self.data), "-m", "fast", "-w", "-t", "60", "stop")
        self.started = False

    def kill(self) -> None:
        """Stop the server at once, as a crash would (``pg_ctl stop -m immediate``: no checkpoint, clients cut off),
        keeping its data for :meth:`resume`."""
        self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "-t", "60", "stop")
        self.started = False

    def resume(self) -> None:
        """Start the server of the data :meth:`start` made (again, after :meth:`halt` or :meth:`kill`)."""
        options = f"-k {self.directory} -c listen_addresses='' -c max_connections=60"
        if not self.durable:
            options += " -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
        if self.shared_buffers is not None:
            options += f" -c shared_buffers={self.shared_buffers}"
        options += "".join(f" -c {name}={value}" for name, value in self.settings.items())
        self._run("pg_ctl", "-D", str(self.data), "-o", options,
                  "-l", str(self.directory / "server.log"), "-w", "-t", "60", "start")
        self.started = True

    def url(self, database: str = "postgres") -> str:
        """A ``postgresql://`` URL for a database of this cluster."""
        return f"postgresql://postgres@/{database}?host={self.directory}"

    def sql(self, statement: str, database: str = "postgres") -> list[tuple[Any, ...]]:
        """One statement run in its own connection (autocommit, 30 s at most): its rows."""
        import psycopg

        with psycopg.connect(self.url(database), autocommit=True, connect_timeout=30) as conn:
            conn.execute("SET statement_timeout = '30s'")
            cursor = conn.execute(statement)
            return list(cursor.fetchall()) if cursor.description is not None else []

    def create_database(self, name: str) -> str:
        """Create an empty database and return its URL."""
        import psycopg

        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def create_schema(self, name: str, database: str = "postgres") -> str:
        """Create an empty schema and return a URL whose connections use it (fast, for tests)."""
        import psycopg

        with psycopg.connect(self.url(database), autocommit=True) as conn:
            conn.execute(f'CREATE SCHEMA "{name}"')
        return f"{self.url(database)}&options=-csearch_path%3D{name}"

    def stop(self) -> None:
        """Stop the server and delete the directory (then its guard leaves, with nothing left to do)."""
        try:
            if self.started:
                self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop")
                self.started = False
        finally:
            shutil.rmtree(self.directory, ignore_errors=True)
            if self._guard_pipe is not None:
                pgguard.dismiss(self._guard, self._guard_pipe)
                self._guard_pipe = None

    def __enter__(self) -> TemporaryCluster:
        try:
            return self.start()
        except BaseException:
            self.stop()  # no __exit__ follows a failed __enter__
            raise

    def __exit__(self, *exc: object) -> None:
        self.stop()


class TemporaryBouncer:
    """pgbouncer in transaction pooling mode in front of one database of a :class:`TemporaryCluster`.

    Many resolvers share a few server connections through it, as a site
    running pdi behind pgbouncer does; it listens on a unix socket in the
    cluster's directory only. Debian's ``pgbouncer`` package provides it.
    """

    PORT = 6432

    def __init__(self, cluster: TemporaryCluster, database: str, *, pool_size: int = 4) -> None:
        self.cluster = cluster
        self.database = database
        # one directory (its socket, configuration, log) per database: several bouncers can share a cluster
        self.directory = cluster.directory / f"bouncer-{database}"
        self.pool_size = pool_size
        self._process: subprocess.Popen[bytes] | None = None

    def start(self) -> TemporaryBouncer:
        """Write its configuration and start it; returns self once it accepts connections."""
        import time

        program = shutil.which("pgbouncer") or "/usr/sbin/pgbouncer"
        if not Path(program).exists():
            raise StoreError("pgbouncer is not installed: run scripts/bootstrap --dev (Debian package pgbouncer)")
        self.directory.mkdir()
        (self.directory / "users.txt").write_text('"postgres" ""\n')
        (self.directory / "pgbouncer.ini").write_text(
            "[databases]\n"
            f"{self.database} = host={self.cluster.directory} dbname={self.database} user=postgres\n"
            "[pgbouncer]\n"
            "listen_addr =\n"
            f"listen_port = {self.PORT}\n"
            f"unix_socket_dir = {self.directory}\n"
            "auth_type = trust\n"
            f"auth_file = {self.directory / 'users.txt'}\n"
            "pool_mode = transaction\n"
            f"default_pool_size = {self.pool_size}\n"
            "max_client_conn = 200\n"
            f"logfile = {self.directory / 'pgbouncer.log'}\n"
            # read by the cluster's guard, which ends it with the cluster (tests/support/pgguard.py)
            f"pidfile = {self.directory / pgguard.BOUNCER_PID}\n"
        )
        if self.cluster._user:
            for path in self.directory.iterdir():
                os.chown(path, self.cluster._user["user"], self.cluster._user["group"])
            os.chown(self.directory, self.cluster._user["user"], self.cluster._user["group"])
        self._process = subprocess.Popen(
            [program, str(self.directory / "pgbouncer.ini")],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=self.directory, **self.cluster._user,
        )
        socket_file = self.directory / f".s.PGSQL.{self.PORT}"
        deadline = time.monotonic() + 30
        while not socket_file.exists():
            if self._process.poll() is not None or time.monotonic() > deadline:
                error = self._process.stderr.read().decode(errors="replace") if self._process.stderr else ""
                self.stop()
                raise StoreError(f"pgbouncer did not start: {error.strip()}")
            time.sleep(0.05)
        return self

    def url(self) -> str:
        """A ``postgresql://`` URL of the database through pgbouncer."""
        return f"postgresql://postgres@/{self.database}?host={self.directory}&port={self.PORT}"

    def stop(self) -> None:
        """Stop pgbouncer, and close the pipe of its standard error."""
        if self._process is not None and self._process.poll() is None:
            self._process.terminate()
            self._process.wait(timeout=30)
        if self._process is not None and self._process.stderr is not None:
            self._process.stderr.close()
        self._process = None

