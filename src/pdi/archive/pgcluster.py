"""A throw-away PostgreSQL cluster for tests and benchmarks.

Creates a cluster in a fresh temporary directory, listening only on a unix
socket inside that directory (so it never clashes with another server or
port), and deletes everything on :meth:`TemporaryCluster.stop`. ``initdb``
refuses to run as root, so when we are root the server programs run as the
``postgres`` system user, which owns the directory. Needs the PostgreSQL
server binaries (Debian package ``postgresql``, installed by
``scripts/bootstrap``); when they are missing the error says so.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from pdi.errors import StoreError


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

    def __init__(self) -> None:
        self.bindir = find_bindir()
        self.directory = Path(tempfile.mkdtemp(prefix="pdi-pg-"))
        self.data = self.directory / "data"
        self._user: dict[str, Any] = {}
        if os.geteuid() == 0:
            try:
                account = pwd.getpwnam("postgres")
            except KeyError as exc:
                raise StoreError(
                    "running as root, but there is no postgres user to run the server as:"
                    " run scripts/bootstrap"
                ) from exc
            os.chown(self.directory, account.pw_uid, account.pw_gid)
            self._user = {"user": account.pw_uid, "group": account.pw_gid, "extra_groups": []}
        self.started = False

    def _run(self, *args: str) -> None:
        result = subprocess.run(
            [str(self.bindir / args[0]), *args[1:]],
            capture_output=True,
            text=True,
            check=False,
            cwd=self.directory,
            **self._user,
        )
        if result.returncode != 0:
            raise StoreError(
                f"{args[0]} failed ({result.returncode}): {result.stderr.strip() or result.stdout.strip()}"
            )

    def start(self) -> TemporaryCluster:
        """Create and start the cluster; returns self."""
        self._run("initdb", "-D", str(self.data), "-A", "trust", "-U", "postgres",
                  "-E", "UTF8", "--locale=C", "--no-sync")
        options = (
            f"-k {self.directory} -c listen_addresses='' -c fsync=off"
            " -c synchronous_commit=off -c full_page_writes=off -c max_connections=60"
        )
        self._run("pg_ctl", "-D", str(self.data), "-o", options,
                  "-l", str(self.directory / "server.log"), "-w", "-t", "60", "start")
        self.started = True
        return self

    def url(self, database: str = "postgres") -> str:
        """A ``postgresql://`` URL for a database of this cluster."""
        return f"postgresql://postgres@/{database}?host={self.directory}"

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
        """Stop the server and delete the directory."""
        try:
            if self.started:
                self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop")
                self.started = False
        finally:
            shutil.rmtree(self.directory, ignore_errors=True)

    def __enter__(self) -> TemporaryCluster:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
