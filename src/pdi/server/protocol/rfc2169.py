"""RFC 2169's convention for names in URLs, as every answer of the resolver writes and reads them.

RFC 2169 ("A Trivial Convention for using HTTP in URN Resolution") puts the
URN in the query string: ``/uri-res/N2R?<urn>``. A PDI's ``#`` cannot travel
in a query, so it is written ``%23`` (:func:`rfc2169_query`, read back by
:func:`urn_from_query`), and its ``%2E`` is written ``%252E``, which no
client rewrites (:func:`sturdy`); :func:`n2r_path` and :func:`n2r_url` are
the N2R locations of a name that :mod:`~pdi.server.protocol.resolver` and
:mod:`~pdi.server.protocol.memento_oaipmh` both write. Pure: no I/O.
"""

from __future__ import annotations

import re
from urllib.parse import parse_qsl, urlsplit

from pdi.errors import PDIError
from pdi.identifier import PDI


def urn_from_query(query: str) -> str:
    """The URN of an RFC 2169 query string: the inverse of :func:`rfc2169_query`.

    ``%23`` is the ``#`` a URL cannot carry and ``%25`` a ``%`` written so
    that it is not read as one of these two; every other escape is the PDI's
    own and is kept, so ``http:%2F%2F…`` ids travel unchanged.
    """
    if "%" not in query:
        return query
    out: list[str] = []
    i = 0
    while i < len(query):
        code = query[i + 1 : i + 3] if query[i] == "%" else ""
        if code == "23":
            out.append("#")
            i += 3
        elif code == "25":
            out.append("%")
            i += 3
        else:
            out.append(query[i])
            i += 1
    return "".join(out)


def name_in_address(url: str) -> tuple[str, str] | None:
    """The PDI a resolver's web address holds, and the fragment after the address (the browser's, not the name's):
    a viewer's page ``…/view?pdi=NAME`` (what its address bar shows, the fragment ``#passage`` its own) or an RFC
    2169 address ``…/uri-res/N2R?NAME`` (N2L, N2Ls …: a name's ``#`` written ``%23``); else ``None``, as for an
    address that holds no name that parses. What the reader's pages and ``pdi`` offer for such an address pasted
    where a name is asked for."""
    try:
        parts = urlsplit(url)
    except ValueError:  # an address no URL parser reads ("http://[x")
        return None
    if parts.path.endswith("/view"):
        found = [value for key, value in parse_qsl(parts.query, keep_blank_values=True) if key == "pdi"]
        held, browsers = (found[0].strip(), "") if found else ("", "")
    elif re.search(r"/uri-res/[A-Za-z0-9]+\Z", parts.path):
        held, browsers = urn_from_query(parts.query), parts.fragment
    else:
        return None
    if not held:
        return None
    try:
        PDI.parse(held)
    except PDIError:
        return None
    return held, browsers


def rfc2169_query(name: str) -> str:
    """A PDI as an RFC 2169 query string: ``#`` as ``%23``, a ``%`` before ``23`` or ``25`` as ``%25``."""
    if "%" in name:  # each % of the name as written (lookahead: the digits after it are the name's own)
        name = _PERCENT_23_25.sub("%25", name)
    return name.replace("#", "%23") if "#" in name else name


_PERCENT_23_25 = re.compile("%(?=2[35])")


def sturdy(query: str) -> str:
    """A name in a URL with each ``%2E`` written ``%252E``, which no client rewrites.

    Many HTTP clients normalize a URL before they send it and decode the
    escapes of unreserved characters (RFC 3986 §6.2.2.2): ``requests``, and
    so ``memento_client``, sends ``%2E`` as ``.``, which turns a PDI's
    encapsulated id into a name that does not parse (a ``.`` there must be
    escaped). ``%25`` is a ``%`` to the resolver (:func:`urn_from_query`)
    and to no client an unreserved character, so ``%252E`` arrives as written.
    """
    return _ESCAPED_DOT.sub("%252E", query)


_ESCAPED_DOT = re.compile("%2E", re.IGNORECASE)


def n2r_path(name: PDI | str) -> str:
    """The N2R path of a name as every answer writes it: its ``%2E`` as ``%252E``, which clients keep (:func:`sturdy`)."""
    return f"/uri-res/N2R?{sturdy(rfc2169_query(str(name)))}"


def n2r_url(base: str, name: PDI | str) -> str:
    """The N2R URL of ``name`` under ``base`` as every answer of the resolver writes it (:func:`n2r_path`)."""
    return base.rstrip("/") + n2r_path(name)
