"""The SURT key of a CDXJ line for the common shape of URL, as cdxj-indexer makes it, without its cost.

cdxj-indexer (1.5) keys each line by ``CDXJIndexer.get_url_key``: the
``surt`` package's ``surt.surt(url)`` (0.3.1; a port of archive-commons'
``WaybackURLKeyMaker``: ``GoogleURLCanonicalizer``, then
``IAURLCanonicalizer``, then ``handyurl.geturl_bytes(surt=True,
with_scheme=False)``), or the URL itself when that raises. Made through
its objects, regular expressions and keyword options it was a tenth of a
WACZ export's CPU.

:func:`simple_key` makes the same key, octet for octet, for a URL of the
shape almost every archived URL has, by the same steps on the same octets:
a lower-case ``http`` or ``https`` scheme, a host of letters, digits, ``.``,
``_`` and ``-`` that is not all digits and dots (an IP address, which
``surt`` resolves through the system's resolver), an optional port of
1..65535, and a path, query and fragment of printable ASCII without
spaces. Everything else answers ``None``, and the caller asks
cdxj-indexer: userinfo, IPv6 and IP hosts, non-ASCII (IDN) hosts,
a ``%`` in the host, an empty or ``0`` port, white space and control
characters, repeated schemes (``http://https://…``), and the paths and
queries ``surt`` strips session ids from (a path with ``.aspx``; a query
with ``jsessionid=``, ``phpsessid=``, ``sid=``, ``aspsessionid`` or ``cfid=``). tests/interop/test_surt_key.py
compares the two on URLs of every shape.

The steps, in ``surt``'s order: the host's ``..`` made ``.`` and its end
dots stripped, lower-cased, one leading ``www``/``wwwN.`` label dropped; a
default port (80 for http, 443 for https) dropped; the path's %-escapes
undone until none is left, its ``.`` and ``..`` segments and empty
segments resolved (``normalizePath``), escaped once again (every octet
outside the printable ASCII but ``#`` and ``%``), lower-cased, a trailing
``/`` dropped unless it is the whole path; the query's escapes undone and
redone the same way, lower-cased, its ``&``-separated arguments sorted as
``(name, value)`` pairs; the fragment dropped. The key is the host's
labels reversed and joined by ``,``, the port, ``)``, the path and
``?query`` when there is one.
"""

from __future__ import annotations

import re
from urllib.parse import quote_from_bytes, unquote_to_bytes

__all__ = ["simple_key"]

# scheme, host, port, path, query (fragment dropped): printable ASCII but the space throughout
_SIMPLE = re.compile(
    rb"(https?)://([A-Za-z0-9._-]+)(?::([0-9]{1,5}))?(/[!-\"$->@-~]*)?(?:\?([!-\"$-~]*))?(?:#[!-~]*)?"
)
_ALL_DIGITS_AND_DOTS = re.compile(rb"[0-9.]*")
_WWW = re.compile(rb"www\d*\.")
#: what ``surt``'s ``escapeOnce`` leaves as it is (besides letters, digits and ``_.-~``)
_SAFE = b"!\"$&'()*+,-./:;<=>?@[\\]^_`{|}~"
_DEFAULT_PORT = {b"http": 80, b"https": 443}
_SESSION_QUERY = (b"jsessionid=", b"phpsessid=", b"sid=", b"aspsessionid", b"cfid=")  # surt's patterns' literals


def _unescaped(value: bytes) -> bytes:
    """``surt``'s ``unescapeRepeatedly``: %-escapes undone until none is left (only asked of a value with a ``%``)."""
    while True:
        un = unquote_to_bytes(value)
        if un == value:
            return value
        value = un


def _escaped(value: bytes) -> bytes:
    """``surt``'s ``escapeOnce``: every octet but letters, digits and ``_SAFE`` %-escaped."""
    return quote_from_bytes(value, safe=_SAFE).encode("ascii") if value else value


def _normal_path(path: bytes) -> bytes:
    """``surt``'s ``normalizePath``: ``.`` segments dropped, ``..`` ones pop (kept at the top), empty ones dropped."""
    kept: list[bytes] = []
    for segment in path.split(b"/")[1:]:
        if segment == b".":
            continue
        if segment == b"..":
            if kept:
                kept.pop()
            else:
                kept.append(segment)
        else:
            kept.append(segment)
    if not kept:
        return b"/"
    return b"/" + b"".join(p + b"/" for p in kept[:-1] if p) + kept[-1]


def simple_key(url: str) -> str | None:
    """cdxj-indexer's ``get_url_key(url)`` for a URL of the common shape (see the module), else ``None``."""
    if not url.isascii():
        return None
    found = _SIMPLE.fullmatch(url.encode("ascii"))
    if found is None:
        return None
    scheme, host, port_text, path, query = found.groups()
    host = host.replace(b"..", b".").strip(b".")
    if _ALL_DIGITS_AND_DOTS.fullmatch(host):
        return None  # an IP address (or nothing): surt asks the resolver
    host = host.lower()
    www = _WWW.match(host)
    if www is not None:
        host = host[www.end():]
    port = ""
    if port_text is not None:
        number = int(port_text)
        if not 0 < number <= 65535:
            return None  # 0 is no port to surt, past 65535 an error (the URL is its own key)
        if number != _DEFAULT_PORT[scheme]:
            port = f":{number}"
    if path is None:
        path = b"/"
    else:
        # unescaped, normalized, escaped again (the escaping changes nothing in a path without a %)
        path = _escaped(_normal_path(_unescaped(path))) if b"%" in path else _normal_path(path)
        path = path.lower()
        if b".aspx" in path:
            return None  # surt looks for session ids in such a path
        if len(path) > 1 and path.endswith(b"/"):
            path = path[:-1]
    key = b",".join(reversed(host.split(b"."))).decode("ascii") + port + ")" + path.decode("ascii")
    if not query:
        return key
    if b"%" in query:
        query = _escaped(_unescaped(query))
    query = query.lower()
    if any(mark in query for mark in _SESSION_QUERY):
        return None  # surt strips session ids from such a query
    if len(query) > 1:
        pairs = sorted(tuple(argument.split(b"=", 1)) for argument in query.split(b"&"))
        query = b"&".join(b"=".join(pair) for pair in pairs)
    return key + "?" + query.decode("ascii")
