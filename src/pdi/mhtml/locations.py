"""How the parts of an aggregate and the references in them are named and compared: URIs, keys, ``cid:``.

RFC 2557 §8 compares a reference with a part's ``Content-Location`` once both are
resolved; browsers compare them percent-encoded as they write URLs
(:func:`pdi.mhtml.urlencoding.browser_url`), and ``cid:`` URIs name a
``Content-ID`` (RFC 2392). The lowest floor of :mod:`pdi.mhtml` but
:mod:`~pdi.mhtml.urlencoding`: the parts, the parser and the resolver use it.
Pure: no I/O.
"""

from __future__ import annotations

import re
import urllib.parse

from pdi import uri as _uri
from pdi.errors import PDIError
from pdi.mhtml.urlencoding import browser_url

IGNORED_SCHEMES = frozenset({"data", "javascript", "about", "mailto", "tel", "blob"})

_WS_EDGE = " \t\n\f\r"
_TAB_NL = re.compile(r"[\t\n\r]")



def is_cid(text: str) -> bool:
    """True when ``text`` is a ``cid:`` URI (scheme compared case-insensitively)."""
    return text[:4].lower() == "cid:"


def clean_reference(reference: str) -> str:
    """What browsers do to a URL attribute before parsing it: trim ASCII white space,
    drop tabs and line breaks inside."""
    return _TAB_NL.sub("", reference.strip(_WS_EDGE))


def resolve_uri(base: str, reference: str) -> str | None:
    """``reference`` resolved against ``base`` with :func:`pdi.uri.resolve`; ``None`` if impossible."""
    try:
        return _uri.resolve(base, clean_reference(reference), strict=False)
    except PDIError:
        return None


def location_key(uri: str, encoding: str = "UTF-8") -> str:
    """The form a URI is compared in, its fragment kept: percent-encoded as a browser
    writes it, the query with ``encoding`` (:func:`pdi.mhtml.urlencoding.browser_url`)."""
    return browser_url(uri, encoding)


def comparable(uri: str, encoding: str = "UTF-8") -> str:
    """:func:`location_key` without the fragment: the form URIs are compared in when
    fragments do not count (one resource, however many fragments name places in it)."""
    key = browser_url(uri, encoding)
    cut = key.find("#")
    return key if cut < 0 else key[:cut]


def cid_of(reference: str) -> str:
    """The Content-ID a ``cid:`` URI names (RFC 2392: the rest of the URI, %-decoded)."""
    return urllib.parse.unquote(clean_reference(reference)[4:], encoding="utf-8", errors="replace")
