"""The servers of a PostgreSQL catalog: a pool of connections to each, refused at once while it does not answer.

A server that stops answering (a broken connection) is asked again at most
once a second; until it answers, transactions on it are refused at once
(:class:`~pdi.errors.StoreError`, 503) rather than waiting for the pool; when
it answers, a fresh pool is made. With a URL naming several hosts
(``host=a,b&target_session_attrs=read-write``) that is how the resolvers
follow a failover. docs/reference/postgresql.md says which settings keep every
acknowledged deposit (``synchronous_commit``, ``synchronous_standby_names``).
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import psycopg
import psycopg.conninfo
from psycopg_pool import ConnectionPool, PoolTimeout

from pdi.archive.blobs.large_objects import oneline as _oneline
from pdi.errors import StoreError

#: How often a server found not answering is asked again (meanwhile its transactions are refused at once).
PROBE_EVERY_SECONDS = 1.0
#: How long such a question, or any new connection of a URL that sets no ``connect_timeout``, may take.
CONNECT_SECONDS = 5


def _sets_connect_timeout(url: str) -> bool:
    """Whether ``url`` sets libpq's ``connect_timeout``. Parsed only when it may (the word, or a %-escape, in it):
    each parse by libpq is some 70 µs of a command's opening, and psycopg's ``connect`` parses it twice anyway."""
    if "connect_timeout" not in url and "%" not in url:
        return False
    return "connect_timeout" in psycopg.conninfo.conninfo_to_dict(url)


def _connect_once(url: str, wait: float, *, own_timeout: bool, **kwargs: Any) -> psycopg.Connection[Any]:
    """One connection, made at once: a server that refuses, a database that does not exist or a refused
    password is said at once (psycopg.Error), not after the pool has tried again for ``wait`` seconds.

    A server that does not answer at all is given ``wait`` seconds (libpq's ``connect_timeout``, unless
    the URL sets its own: ``own_timeout``). ``kwargs``: the pool's own (:func:`_handing` gives the connection to
    the pool).
    """
    kwargs = {name: value for name, value in kwargs.items() if name != "connect_timeout"}
    if not own_timeout:  # a keyword of psycopg's connect: libpq's parameter, over the URL's (which sets none)
        kwargs["connect_timeout"] = max(1, round(wait))
    return psycopg.connect(url, **kwargs)


def _handing(first: psycopg.Connection[Any]) -> type[psycopg.Connection[Any]]:
    """A connection class whose first ``connect`` is ``first`` (the connection that asked the server, made as the
    pool makes its own), those after it made as psycopg makes them: the pool's first connection is the one that
    asked, so opening a catalog costs the server one connection, not two (a backend started and ended, 4 to 5 ms
    of a ``pdi`` command's wall time)."""
    handed = [first]

    class Handing(psycopg.Connection[Any]):
        @classmethod
        def connect(cls, conninfo: str = "", **kwargs: Any) -> Any:
            try:
                return handed.pop()
            except IndexError:
                return psycopg.Connection.connect(conninfo, **kwargs)

    return Handing


def redact_url(url: str) -> str:
    """``url`` with any password in it written ``***``."""
    # Never print a password written into the URL: in its userinfo, or as
    # libpq's password= query parameter.
    url = _PASSWORD_PARAMETER.sub(r"\1***", url)
    head, sep, tail = url.partition("@")
    if not sep or ":" not in head.split("//", 1)[-1]:
        return url
    scheme, _, user = head.partition("//")
    return f"{scheme}//{user.split(':', 1)[0]}:***@{tail}"


_PASSWORD_PARAMETER = re.compile(r"([?&]password=)[^&]*", re.IGNORECASE)


def lsn(text: str | None) -> int:
    """A WAL location as PostgreSQL writes it (``16/B374D848``) as a number (0 for none)."""
    if not text:
        return 0
    high, _, low = text.partition("/")
    return (int(high, 16) << 32) + int(low, 16)


class _Servers:
    """A pool of connections to the server a URL names (the first that answers, of several), refused at once
    while it does not answer, made afresh when it answers again."""

    def __init__(self, url: str, *, size: int, wait: float, name: str) -> None:
        self.url = url
        self.location = redact_url(url)
        self.size, self.wait, self.name = size, wait, name
        self._lock = threading.Lock()
        self._down_since: float | None = None
        self._asked = 0.0
        self._own_timeout = _sets_connect_timeout(url)
        self.pool = self._open(wait)

    def _open(self, wait: float) -> ConnectionPool[psycopg.Connection[Any]]:
        # No server-side prepared statements (psycopg prepares a query run 5 times):
        # through pgbouncer in transaction mode the next transaction may run on
        # another server connection, where the statement does not exist. Nor any
        # session state: each transaction may run on another pooled connection.
        kwargs: dict[str, Any] = {"autocommit": True, "prepare_threshold": None}
        if not self._own_timeout:
            kwargs["connect_timeout"] = CONNECT_SECONDS
        try:
            first = _connect_once(self.url, wait, own_timeout=self._own_timeout, **kwargs)
        except psycopg.Error as exc:
            raise StoreError(f"cannot connect to {self.location}: {_oneline(exc)}") from exc
        pool: ConnectionPool[psycopg.Connection[Any]] = ConnectionPool(
            self.url, connection_class=_handing(first), min_size=1, max_size=self.size, timeout=self.wait,
            open=False, kwargs=kwargs, name=self.name,
        )
        try:
            pool.open(wait=True, timeout=wait)
        except (psycopg.Error, PoolTimeout) as exc:
            pool.close()
            first.close()  # if the pool never took it
            raise StoreError(f"cannot connect to {self.location}: {_oneline(exc)}") from exc
        return pool

    def _recover(self) -> None:
        """While the server is down: ask it again (at most once a second); a fresh pool if it answers, else
        :class:`StoreError` at once."""
        with self._lock:  # one thread asks; the others, meanwhile, are refused at once
            if self._down_since is None:
                return
            now = time.monotonic()
            since = now - self._down_since
            if now - self._asked < PROBE_EVERY_SECONDS:
                raise StoreError(f"{self.location}: the database server is not answering (for {since:.0f} s);"
                                 " try again shortly")
            self._asked = now
        try:
            fresh = self._open(CONNECT_SECONDS)
        except StoreError as exc:
            raise StoreError(f"{exc} (not answering for {since:.0f} s); try again shortly") from exc
        with self._lock:
            old, self.pool, self._down_since = self.pool, fresh, None
        # its connections are broken; those in use are closed when given back
        threading.Thread(target=old.close, kwargs={"timeout": 5.0}, daemon=True, name=f"{self.name}-close").start()

    @contextmanager
    def connection(self) -> Iterator[psycopg.Connection[Any]]:
        """A connection of the pool for as long as the block runs (:class:`StoreError` if none comes in time)."""
        if self._down_since is not None:
            self._recover()
        pool = self.pool
        try:
            with pool.connection() as conn:
                try:
                    yield conn
                finally:
                    if conn.broken:  # the server went away (or the network): ask it again before the next use
                        with self._lock:
                            if self.pool is pool and self._down_since is None:
                                self._down_since = self._asked = time.monotonic()
        except PoolTimeout as exc:
            raise StoreError(
                f"{self.location}: no catalog connection free within {pool.timeout:g} s ({self.size} in the pool)"
            ) from exc

    def pop_stats(self) -> dict[str, int]:
        return self.pool.pop_stats()

    def close(self) -> None:
        self.pool.close()
