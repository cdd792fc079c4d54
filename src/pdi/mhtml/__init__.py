"""RFC 2557 MHTML: web pages kept whole: read, written, unpacked.

The door of the package. Modules:

* :mod:`pdi.mhtml.parse` — :func:`parse` reads a file or stream into an
  :class:`Aggregate` (streaming multipart scanner, ``email`` with ``compat32`` for
  header values; why, and what is tolerated, is in that module's docstring).
* :mod:`pdi.mhtml.plain` — :func:`~pdi.mhtml.plain.read_plain` reads a file of the shape
  :func:`~pdi.mhtml.write.build` writes in a few calls a part (what ``parse`` reads of it, or ``None``).
* :mod:`pdi.mhtml.model` — :class:`Aggregate`, :class:`Multipart`, :class:`Part`.
* :mod:`pdi.mhtml.limits` — :class:`Limits` (sizes, counts, time) and the :class:`Budget`
  that reading one part's references may spend.
* :mod:`pdi.mhtml.headers` — RFC 2047 encoded words in header values.
* :mod:`pdi.mhtml.refs` — references in HTML and CSS with source offsets
  (``html.parser`` as the tokenizer; why is in that module's docstring).
* :mod:`pdi.mhtml.resolve` — which part a reference means (§5, §8.2, §8.3, Chromium).
* :mod:`pdi.mhtml.check` — what §7 forbids and what a page misses.
* :mod:`pdi.mhtml.write` — :func:`~pdi.mhtml.write.build` writes parts as one MHTML file
  (deterministic), and what an HTML or CSS resource needs.
* :mod:`pdi.mhtml.unpack` — :func:`~pdi.mhtml.unpack.plan` names every part safely and
  rewrites references for an offline folder (:func:`pdi.capture.unpack_to` writes it).
* :mod:`pdi.mhtml.compare` — :func:`~pdi.mhtml.compare.same_content`: whether two files
  hold the same page (parts' labels, types and bytes; not the date, boundary or cid spellings).

Text parts are decoded as a browser reads them (BOM, ``charset=``, ``<meta>``, WHATWG
labels) by :mod:`pdi.charsets.sniff`, which fragments of HTML share.

Pure: no I/O beyond reading a stream the caller hands in.
"""

from __future__ import annotations

from pdi.mhtml.check import CheckReport, Finding, check
from pdi.mhtml.limits import Budget, Limits
from pdi.mhtml.model import Aggregate, Multipart, Part, parse
from pdi.mhtml.parse import THISMESSAGE
from pdi.mhtml.refs import Reference, css_references, html_base, html_references
from pdi.mhtml.resolve import ResolvedReference, resolve_references

__all__ = [
    "THISMESSAGE",
    "Aggregate",
    "Budget",
    "CheckReport",
    "Finding",
    "Limits",
    "Multipart",
    "Part",
    "Reference",
    "ResolvedReference",
    "check",
    "css_references",
    "html_base",
    "html_references",
    "parse",
    "resolve_references",
]
