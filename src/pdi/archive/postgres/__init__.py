"""The team catalog: PostgreSQL, through psycopg 3.

Selected by a ``postgresql://`` (or ``postgres://``) URL. The database must
exist; ``pdi init URL`` creates the tables in it. Its parts, each a mixin over
the one below it, as the catalog's parts are over
:class:`~pdi.archive.catalog.base.CatalogBase`:

* :mod:`.servers`: a pool of connections to each server, refused at once while it does not answer;
* :mod:`.transactions`: which server a statement goes to (the primary, or a streaming replica), and this
  thread's transaction on it;
* :mod:`.search`: the full-text index (``tsvector``);
* :mod:`.deposits`: minting, and a small deposit in one round trip;
* :mod:`.store`: :class:`PostgresStore`, the parts together with its blob store, the schema's steps and the
  advisory locks; :func:`open_postgres`.

psycopg is imported here first: without pdi's postgres extra, importing any part says which extra is missing.
"""

from __future__ import annotations

from pdi._extras import missing_extra

try:
    import psycopg  # noqa: F401  (each part imports it plainly, after this)
    import psycopg_pool  # noqa: F401
except ImportError as exc:  # pdi installed without its postgres extra
    missing_extra("postgres", exc)

from pdi.archive.postgres.deposits import DEPOSIT_ONE
from pdi.archive.postgres.servers import CONNECT_SECONDS, PROBE_EVERY_SECONDS, lsn, redact_url
from pdi.archive.postgres.store import PostgresStore, open_postgres
from pdi.archive.postgres.transactions import POOL_WAIT_SECONDS

__all__ = [
    "CONNECT_SECONDS",
    "DEPOSIT_ONE",
    "POOL_WAIT_SECONDS",
    "PROBE_EVERY_SECONDS",
    "PostgresStore",
    "lsn",
    "open_postgres",
    "redact_url",
]
