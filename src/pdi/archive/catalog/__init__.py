"""The catalog seam: names, versions, representations, statements, tokens, the audit log, the search index.

:class:`SQLStore` is the catalog over a SQL database, by aggregate, one
module each, every one a mixin over :class:`~pdi.archive.catalog.base.CatalogBase`
alone (the connection and its transactions) and importing no other part:

* :mod:`.base`: connection, transactions, relations of many rows, shared helpers;
* :mod:`.schema`: the schema's version and its migrations run, the blob store recorded (each version's
  statements are :mod:`.schema_steps`, no part: it imports nothing);
* :mod:`.rows`: catalog rows as records;
* :mod:`.blobs`: the rules that cross the blob seam (held names, the removal lock, staging rows);
* :mod:`.documents`: series, minting and deposits, idempotency;
* :mod:`.imports`: bringing another archive's records in, a page at a time;
* :mod:`.access`: withdrawals, private series and embargoes, tokens;
* :mod:`.statements`: assertions, kept annotations, the audit log;
* :mod:`.listing` and :mod:`.browse`: listings and the reader's pages, by keyset;
* :mod:`.search_index`: the full-text index's rows;
* :mod:`.messages`: the thread index of e-mail messages (by Message-ID and by parent);
* :mod:`.mirrors`: the other archives that hold a series, and a damaged blob written again;
* :mod:`.registries`: the newest registry each ``pdi serve --registry`` source was issued;
* :mod:`.checks`: the catalog's own invariants.

The SQLite and PostgreSQL differences are each dialect's one module
(:mod:`pdi.archive.sqlite`, :mod:`pdi.archive.postgres`). A catalog holds a
blob store (:mod:`pdi.archive.blobs`) and never inherits one:
:func:`pdi.archive.catalog.opening.open_store` composes the catalog a location
names with the blob store it records.
"""

from __future__ import annotations

from abc import ABC

from pdi.archive.catalog.access import AccessPart
from pdi.archive.catalog.base import SearchAccess
from pdi.archive.catalog.blobs import BlobRules
from pdi.archive.catalog.browse import BrowsePart
from pdi.archive.catalog.checks import ChecksPart
from pdi.archive.catalog.documents import DocumentsPart
from pdi.archive.catalog.imports import ImportsPart
from pdi.archive.catalog.listing import ListingPart
from pdi.archive.catalog.messages import MessagesPart
from pdi.archive.catalog.mirrors import MirrorsPart
from pdi.archive.catalog.registries import RegistriesPart
from pdi.archive.catalog.schema import SchemaPart
from pdi.archive.catalog.search_index import SearchIndexPart, search_page
from pdi.archive.catalog.statements import StatementsPart


class SQLStore(
    SchemaPart,
    BlobRules,
    DocumentsPart,
    ImportsPart,
    AccessPart,
    StatementsPart,
    ListingPart,
    BrowsePart,
    SearchIndexPart,
    MessagesPart,
    MirrorsPart,
    RegistriesPart,
    ChecksPart,
    ABC,
):
    """The catalog over a SQL database, its parts together; a dialect supplies the rest (see the module docstring)."""


__all__ = ["SQLStore", "SearchAccess", "search_page"]
