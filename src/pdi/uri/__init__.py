"""URIs as RFC 3986 defines them, with RFC 2396 resolution results as a mode.

- :func:`parse` (strict, Appendix A grammar, errors name the rule and the
  offset) and :func:`split` (lenient, Appendix B) give a :class:`URI`, whose
  ``str()`` recomposes it (§5.3).
- :func:`resolve` is §5.2 for any scheme (``thismessage:``, ``pdi:``,
  ``urn:``, ``cid:``, made-up ones), strict or not (§5.2.2), or RFC 2396
  §5.2 with ``rfc=2396``; :func:`remove_dot_segments` is §5.2.4.
- :func:`normalize` and :func:`equivalent`: §6.2.2 and §6.2.3.
- :func:`percent_encode`, :func:`percent_decode`, :func:`percent_decode_bytes`
  (§2.1, UTF-8) and :func:`iri_to_uri` (RFC 3987 §3.1: a web URL's host beyond
  ASCII in IDNA's ``xn--`` form), with :func:`iri_changes` to say where;
  :func:`url_meant` is a URL as typed (a space, a lone ``%``) as a URI writes it,
  :func:`unescaped_at` where it first differs.

Pure: no I/O. Every error is a :mod:`pdi.errors` error.
"""

from __future__ import annotations

from pdi.uri._normalize import equivalent, normalize, normalize_uri
from pdi.uri._parse import URI, parse, split
from pdi.uri._percent import (
    NEVER_IN_A_URI,
    UNRESERVED,
    iri_changes,
    iri_to_uri,
    percent_decode,
    percent_decode_bytes,
    percent_encode,
    unescaped_at,
    url_meant,
)
from pdi.uri._resolve import remove_dot_segments, resolve

__all__ = [
    "NEVER_IN_A_URI",
    "UNRESERVED",
    "URI",
    "equivalent",
    "iri_changes",
    "iri_to_uri",
    "normalize",
    "normalize_uri",
    "parse",
    "percent_decode",
    "percent_decode_bytes",
    "percent_encode",
    "remove_dot_segments",
    "resolve",
    "split",
    "unescaped_at",
    "url_meant",
]
