"""A throw-away PostgreSQL primary and its streaming standby, for the tests of ``pdi serve --read-url`` and failover.

:class:`ReplicatedClusters` starts a primary (a :class:`~support.pgcluster.TemporaryCluster`
with ``wal_level=replica`` and a replication role, ``replicator``, that its
``pg_hba.conf`` lets in over the unix socket), copies it with
``pg_basebackup -R`` (which writes the standby's ``primary_conninfo`` and
``standby.signal``) into a :class:`TemporaryStandby`, starts that as a hot
standby, and then names it in the primary's ``synchronous_standby_names``:
from then on a commit is acknowledged only once the standby has flushed it
(``synchronous_commit=on``), so it survives the primary's loss. Each server
listens only on a unix socket in its own directory; every program run has a
deadline.
"""

from __future__ import annotations

import time

from pdi.errors import StoreError
from support.pgcluster import TemporaryCluster

#: The standby's ``cluster_name``, which its WAL receiver gives the primary as ``application_name``.
STANDBY_NAME = "pdi_standby"
#: The role the standby replicates as.
REPLICATOR = "replicator"
#: What the primary runs with: WAL a standby can replay, acknowledged commits flushed on the standby too.
PRIMARY_SETTINGS = {"wal_level": "replica", "max_wal_senders": "4", "synchronous_commit": "on"}


class TemporaryStandby(TemporaryCluster):
    """A hot standby of ``primary``, streaming its WAL (made by ``pg_basebackup -R``)."""

    def __init__(self, primary: TemporaryCluster, *, name: str = STANDBY_NAME) -> None:
        # synchronous_commit as on the primary: it is the primary after a promotion
        super().__init__(settings={"cluster_name": name, "hot_standby": "on", "synchronous_commit": "on"})
        self.primary = primary
        self.name = name

    def _create(self) -> None:
        self._run("pg_basebackup", "-D", str(self.data), "-R", "-X", "stream", "-c", "fast", "--no-sync",
                  "-h", str(self.primary.directory), "-U", REPLICATOR, timeout=300)

    def promote(self) -> None:
        """Make it a primary (``pg_ctl promote``, waited for): it stops replaying and takes writes."""
        self._run("pg_ctl", "-D", str(self.data), "-w", "-t", "60", "promote")


class ReplicatedClusters:
    """A primary and its synchronous streaming standby."""

    def __init__(self) -> None:
        self.primary = TemporaryCluster(settings=PRIMARY_SETTINGS)
        self.standby: TemporaryStandby | None = None

    def start(self) -> ReplicatedClusters:
        try:
            self.primary.start()
            self.primary.sql(f"CREATE ROLE {REPLICATOR} REPLICATION LOGIN")
            hba = self.primary.data / "pg_hba.conf"
            hba.write_text(f"local replication {REPLICATOR} trust\n" + hba.read_text())  # the first line that matches
            self.primary.sql("SELECT pg_reload_conf()")
            self.standby = standby = TemporaryStandby(self.primary)
            standby.start()
            self.primary.sql(f"ALTER SYSTEM SET synchronous_standby_names = '{standby.name}'")
            self.primary.sql("SELECT pg_reload_conf()")
            self.wait_synchronous()
        except BaseException:
            self.stop()
            raise
        return self

    def wait_synchronous(self, seconds: float = 60) -> None:
        """Wait until the primary counts the standby as its synchronous one."""
        deadline = time.monotonic() + seconds
        while True:
            states = self.primary.sql("SELECT application_name, sync_state FROM pg_stat_replication")
            if (STANDBY_NAME, "sync") in states:
                return
            if time.monotonic() > deadline:
                raise StoreError(f"the standby did not become synchronous within {seconds:g} s: {states}")
            time.sleep(0.05)

    def wait_replayed(self, seconds: float = 60) -> None:
        """Wait until the standby has replayed everything the primary has written so far (its commits are
        flushed there at once, but replayed a moment later: a read on it may not see them yet)."""
        (written,) = self.primary.sql("SELECT pg_current_wal_lsn()")[0]
        deadline = time.monotonic() + seconds
        while not self.replica.sql(f"SELECT pg_last_wal_replay_lsn() >= '{written}'::pg_lsn")[0][0]:
            if time.monotonic() > deadline:
                raise StoreError(f"the standby did not replay the primary's WAL up to {written} within {seconds:g} s")
            time.sleep(0.02)

    @property
    def replica(self) -> TemporaryStandby:
        if self.standby is None:
            raise StoreError("the standby has not been started")
        return self.standby

    def write_url(self, database: str) -> str:
        """The URL writers use: whichever of the two servers takes writes (libpq tries them in order)."""
        hosts = f"{self.primary.directory},{self.replica.directory}"
        return f"postgresql://postgres@/{database}?host={hosts}&target_session_attrs=read-write"

    def read_url(self, database: str) -> str:
        """The URL readers use: the standby while it answers as one, else the other server."""
        hosts = f"{self.replica.directory},{self.primary.directory}"
        return f"postgresql://postgres@/{database}?host={hosts}&target_session_attrs=prefer-standby"

    def stop(self) -> None:
        try:
            if self.standby is not None:
                self.standby.stop()
        finally:
            self.primary.stop()

    def __enter__(self) -> ReplicatedClusters:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
