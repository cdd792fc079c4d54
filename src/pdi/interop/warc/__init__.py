"""WARC in: importing web archives' captures as aggregates; WARC out: a capture's HTTP exchanges.

Implements, of ISO 28500:2017 (WARC 1.1), what an importer needs: the
record types ``response`` (§6.3), ``resource`` (§6.4) and ``revisit``
(§6.7, both profiles: §6.7.2 identical payload digest and §6.7.3 server
not modified), and the named fields ``WARC-Target-URI`` (§5.11),
``WARC-Date`` (§5.4), ``WARC-Payload-Digest`` (§5.9), ``WARC-Block-Digest``
(§5.8), ``WARC-Refers-To-Target-URI``/``-Date`` (§5.12, §5.13) and ``WARC-Refers-To`` (a revisit's original by its
``WARC-Record-ID``, which it follows first, unless that record's payload digest is not the revisit's). The
records are read with ``warcio``, except in pass 1 a file of plain records
only (:mod:`~pdi.interop.warc.direct`: a header block at a time, for speed,
giving what warcio gives; any other record and warcio reads the file).

An import runs in two passes.

1. **Index and check** (:func:`read_index`): every record is read once to
   its end; its block and payload digests are checked (warcio's digest
   verifier, over the payload as sent), its payload's transfer and content
   codings are undone with the output bounded, and a record whose length
   does not match what follows it, that ends early, or whose digests fail is
   an error naming the file and the record's offset. So a damaged file
   deposits nothing at all (and so nothing of the damaged record's page).
   The file is read within bounds (:mod:`~pdi.interop.warc.bounded`: a
   header line, a record's header lines, the expansion of a gzip member or
   ZIP entry, time), and a file cut short (inside a gzip member, a header
   block, a record's block or its closing CRLF CRLF) is damaged too; only a
   file cut exactly between two records reads as a shorter whole file. With
   ``partial`` the whole records before the damage are imported and the
   damage reported.
2. **Pages** (:func:`plan_import`, :func:`import_warc`): each ``200``
   response of HTML (or a revisit that resolves to one) is a page. Its parts
   are gathered by the capture path's own crawl (:func:`pdi.capture.crawl.crawl`)
   with a fetch that answers from the index instead of the network: the
   record of the URL nearest in time to the page's ``WARC-Date`` (as replay
   tools pick them), redirects (3xx with ``Location``) followed inside the
   file, revisits followed to the record with the payload they name. The
   aggregate is packed by :func:`pdi.capture.crawl.pack_crawl` and deposited
   by :func:`pdi.capture.deposit.deposit_capture` under the page's URL on
   the GMT day of its ``WARC-Date``. A ``200`` record that no page uses
   (a lone PDF, an image) is deposited as itself, in its own format. Each
   deposit is all or nothing; what the WARC said of each record (date,
   record id, payload digest, and the parts' digests) is kept as
   statements (``warc:…``) about the deposited name.

:func:`write_exchanges` writes a capture's HTTP exchanges (``request`` and
``response`` records, with payload digests) as WARC.

The package's modules: :mod:`~pdi.interop.warc.sources` (the WARC files of a
path: itself, or those a WACZ holds), :mod:`~pdi.interop.warc.records` (pass 1: reading and
checking the records, the index by URL and digest), :mod:`~pdi.interop.warc.bounded`
(warcio's reader with the bounds and the checks for a file cut short), :mod:`~pdi.interop.warc.coding`
(a payload's transfer and content codings undone a bounded piece at a time), :mod:`~pdi.interop.warc.pages`
(pass 2: pages and lone resources, planned and deposited), :mod:`~pdi.interop.warc.direct`
(pass 1's fast path for plain records) and
:mod:`~pdi.interop.warc.write` (a capture's exchanges as WARC).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pdi._lazy import exports

if TYPE_CHECKING:
    from pdi.interop.warc.bounded import ReadLimits
    from pdi.interop.warc.pages import Imported, ImportPlan, Item, import_warc, plan_import
    from pdi.interop.warc.records import PAGE_TYPES, Entry, WarcIndex, read_index
    from pdi.interop.warc.sources import (
        Source,
        is_web_archive,
        sources_for,
        wacz_signature,
        wacz_sources,
    )
    from pdi.interop.warc.write import warc_date, write_exchanges
else:  # loaded when first asked for (pdi._lazy): reading a WARC loads no WARC writer
    __getattr__, __dir__ = exports(__name__, {
        "bounded": "ReadLimits", "pages": "Imported ImportPlan Item import_warc plan_import",
        "records": "PAGE_TYPES Entry WarcIndex read_index",
        "sources": "Source is_web_archive sources_for wacz_signature wacz_sources", "write": "warc_date write_exchanges",
    })

__all__ = [
    "PAGE_TYPES", "Entry", "ImportPlan", "Imported", "Item", "ReadLimits", "Source", "WarcIndex",
    "import_warc", "is_web_archive", "plan_import", "read_index", "sources_for", "wacz_signature", "wacz_sources",
    "warc_date", "write_exchanges",
]
