"""Persistent document identifiers: the grammar of draft-mallery-urn-pdi-00.

Implements ``docs/specs/PDI-GRAMMAR.md`` (the restored ABNF of §1 and the
readings of §2 and §3) over the draft's own lines 112-218 (syntax), 228-462
(semantics: series, date, unique id, format, version) and 464-749 (fragments
and citations):

    urn:pdi://series.cc/YYYY/MM/DD/unique-id.format.version[#fragment | @pos=pdi]

- :class:`PDI` is a frozen value. :meth:`PDI.parse` reads both spellings
  (``urn:pdi://`` and ``pdi://``), raises :class:`~pdi.errors.ParseError`
  naming the rule and the offset, and records lenient readings as warnings
  (``strict=True`` turns each into an error). ``str(pdi)`` is the canonical
  form of §2.2.
- :class:`Fragment` and :class:`Citation` are the fragment and citation syntax,
  checked against the format (§3). Evaluating fragments against bytes lives in
  :mod:`pdi.fragments`.
- :func:`equivalent` is the equivalence of §2.2 (and RFC 8141's with
  ``ignore_fragment=True``, §2.10); :meth:`PDI.matches` and
  :meth:`PDI.to_query` serve wildcard patterns (§2.9); :meth:`PDI.build` mints
  the text of a new identifier, escaping a foreign id.
- :func:`hash_unescaped` is the name meant by a name pasted from an RFC 2169
  address, its ``#`` written ``%23``: one rule for every edge that says so
  (:func:`saying_name_meant`: a syntax error that offers it); :func:`missing_citation_mark` the ``@`` or
  ``=`` a citation that does not parse lacks.

Pure: no I/O.
"""

from __future__ import annotations

from pdi.identifier._fragment import Fragment, allowed_schemes
from pdi.identifier._meant import hash_unescaped, missing_citation_mark, saying_name_meant
from pdi.identifier._pdi import PDI, Citation, PDIQuery, equivalent, series_for_minting
from pdi.identifier._syntax import (
    FRAGMENT_SCHEMES,
    ISO_3166_ALPHA2,
    Position,
    escape_unique_id,
    spells_serial,
)

__all__ = [
    "FRAGMENT_SCHEMES",
    "ISO_3166_ALPHA2",
    "PDI",
    "Citation",
    "Fragment",
    "PDIQuery",
    "Position",
    "allowed_schemes",
    "equivalent",
    "escape_unique_id",
    "hash_unescaped",
    "missing_citation_mark",
    "saying_name_meant",
    "series_for_minting",
    "spells_serial",
]
