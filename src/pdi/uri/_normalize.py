"""Normalization and equivalence (RFC 3986 §6.2.2 syntax-based, §6.2.3 scheme-based)."""

from __future__ import annotations

import re

from pdi.uri._parse import URI, parse
from pdi.uri._percent import UNRESERVED
from pdi.uri._resolve import remove_dot_segments

_PCT_TRIPLE = re.compile(r"%[0-9A-Fa-f]{2}")

# §6.2.3: schemes whose specifications define a default port and an empty
# path equal to "/".
_DEFAULT_PORTS = {"http": "80", "https": "443", "ws": "80", "wss": "443", "ftp": "21"}


def _triple(m: re.Match[str]) -> str:
    char = chr(int(m.group()[1:], 16))
    return char if char in UNRESERVED else m.group().upper()


def _percent(text: str | None) -> str | None:
    """§6.2.2.1 and §6.2.2.2: upper-case triples, decode unreserved characters."""
    if text is None or "%" not in text:
        return text
    return _PCT_TRIPLE.sub(_triple, text)


def _lower_domain(address: str) -> str:
    at = address.rfind("@")
    if at < 0:
        return address
    return address[: at + 1] + (_percent(address[at + 1 :].lower()) or "")


def normalize_uri(uri: URI) -> URI:
    """The §6.2.2 and §6.2.3 normal form of a parsed reference."""
    scheme = uri.scheme.lower() if uri.scheme is not None else None
    host = uri.host
    if host is not None:
        host = _percent((_percent(host) or "").lower())
    port = uri.port
    path = _percent(uri.path) or ""
    if scheme is not None or host is not None or path.startswith("/"):
        # A relative path keeps its dot segments: they depend on a base.
        path = remove_dot_segments(path)
    if port == "":
        port = None  # §3.2.3: "normalizers should omit the port component and its ':' delimiter if port is empty"
    host, port, path = _scheme_based(scheme, host, port, path, uri.userinfo)
    if host is None and path.startswith("//"):
        path = "/." + path  # keep the path from re-parsing as an authority
    return URI(
        scheme,
        _percent(uri.userinfo),
        host,
        port,
        path,
        _percent(uri.query),
        _percent(uri.fragment),
    )


def _scheme_based(
    scheme: str | None, host: str | None, port: str | None, path: str, userinfo: str | None
) -> tuple[str | None, str | None, str]:
    """§6.2.3 scheme-based normalization of the host, port and path, for the schemes that have one."""
    if scheme in _DEFAULT_PORTS and host is not None:
        if port is not None and (port == "" or port.lstrip("0") == _DEFAULT_PORTS[scheme]):
            port = None
        elif port:
            port = port.lstrip("0") or "0"
        if path == "":
            path = "/"
    elif scheme == "file":
        # RFC 8089 §2: "localhost" and no authority both mean the local host.
        if (host == "localhost" and userinfo is None and port is None) or (
            host is None and path.startswith("/")
        ):
            host = ""
        if host is not None and path == "":
            path = "/"
    elif scheme == "mailto" and "@" in path:
        # §6.2.3's own example: the domain of each address is case-insensitive.
        path = ",".join(_lower_domain(address) for address in path.split(","))
    return host, port, path


def normalize(text: str) -> str:
    """The normal form of a URI reference, for comparison (RFC 3986 §6.2.2, §6.2.3).

    Parses strictly (:class:`~pdi.errors.ParseError` on an invalid
    reference), then: scheme and host in lower case, percent-encoding
    triples in upper case and unreserved characters decoded (§6.2.2.1-2);
    dot segments removed (§6.2.2.3) unless the reference is a relative
    path; an empty port dropped with its ``:`` (§3.2.3), whatever the
    scheme; for ``http``, ``https``, ``ws``, ``wss`` and ``ftp`` a default
    port dropped, leading zeros dropped from a port, and an empty path with
    an authority made ``/`` (§6.2.3); for ``file``, ``localhost``
    and a missing authority both become the empty authority (RFC 8089 §2);
    for ``mailto``, the domain of each address is lower-cased (§6.2.3's
    example, RFC 6068).
    Empty queries, fragments and userinfo are kept (§6.2.3: their
    delimiters are significant). ``normalize`` is idempotent.
    """
    return str(normalize_uri(parse(text)))


def equivalent(a: str, b: str) -> bool:
    """Whether two URI references are equivalent after :func:`normalize` (§6.1)."""
    return normalize(a) == normalize(b)
