"""Moving an archive: export to a BagIt bag (RFC 8493) and import from one.

A bag written by :func:`export_bag`::

    bagit.txt                 BagIt-Version: 1.0
    bag-info.txt              Bagging-Date, Payload-Oxum, Bag-Count …
    manifest-sha256.txt       a SHA-256 line for every payload file
    tagmanifest-sha256.txt    a SHA-256 line for every tag file
    data/catalog.json         series (with who may read each), every representation under its PDI,
                              assertions, withdrawals, embargoes
    data/objects/<sha256>     the bytes of each representation, named by their SHA-256

A representation whose octets were purged (a legal takedown,
:meth:`pdi.archive.Archive.withdraw` with ``purge``) is listed with
``"purged": "<when>"`` and has no object (unless another name keeps the
same bytes); its tombstone says ``"purged": true``. Importing such a bag
brings the name and its tombstone in without octets.

A bag another tool made (RFC 8493, any version and checksum algorithm it
allows) is checked the same way by :func:`validate_bag` and imported by
:func:`import_payload`: its payload files become new documents of a series,
with bag-info.txt's labels as statements on each. A stranger's tag files are
read within bounds (:data:`MAX_TAG_LINE_BYTES` a line, :data:`MAX_BAG_INFO_BYTES`
for bagit.txt and bag-info.txt), a line at a time.

Every name and every byte survives the move: :func:`import_bag` checks the
bag is complete and valid (every payload file listed, every checksum right,
the Payload-Oxum right) before the target store sees anything, then imports
everything in one transaction of the target store, reading the objects one at
a time as the store writes them (so an import holds one object in memory, not
the bag) and hashing each again as it is read. ``catalog.json`` is streamed
(``ijson``), never read whole, and its records are never held in a list: the
store iterates them again for each of its passes (checks, staging, rows), so
an import of millions of names holds what grows with its distinct objects
and days only (RFC 8493 §3 for the bag's validity, §2.1.3 and §2.2.2 for the
manifests and the Payload-Oxum).
"""


from typing import TYPE_CHECKING

from pdi._lazy import exports

if TYPE_CHECKING:
    from pdi.archive.bagit.catalog import EXPORT_FORMAT, EXPORT_VERSION
    from pdi.archive.bagit.export import export_bag
    from pdi.archive.bagit.imports import import_bag, import_payload, is_pdi_export
    from pdi.archive.bagit.manifests import (
        ALGORITHMS,
        MAX_BAG_INFO_BYTES,
        MAX_TAG_LINE_BYTES,
        BagInfo,
        validate_bag,
    )
else:  # loaded when first asked for (pdi._lazy): an export loads none of the import code
    __getattr__, __dir__ = exports(__name__, {
        "catalog": "EXPORT_FORMAT EXPORT_VERSION", "export": "export_bag",
        "imports": "import_bag import_payload is_pdi_export",
        "manifests": "ALGORITHMS MAX_BAG_INFO_BYTES MAX_TAG_LINE_BYTES BagInfo validate_bag",
    })

__all__ = [
    "ALGORITHMS", "EXPORT_FORMAT", "EXPORT_VERSION", "MAX_BAG_INFO_BYTES", "MAX_TAG_LINE_BYTES",
    "BagInfo", "export_bag", "import_bag", "import_payload", "is_pdi_export", "validate_bag",
]
