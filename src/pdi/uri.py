"""URIs as RFC 3986 defines them (RFC 2396 results as a mode).

Early core: only reference resolution (§5.2) for any scheme, so that other
modules can resolve ``thismessage:/`` and ``pdi:`` references from the start.
The full module (parse, normalize, equivalence, percent-encoding, IRIs) grows
from here with the same function names.
"""

from __future__ import annotations

import re

# RFC 3986 Appendix B.
_SPLIT = re.compile(r"^(?:([^:/?#]+):)?(?://([^/?#]*))?([^?#]*)(?:\?([^#]*))?(?:#(.*))?$", re.S)


def _split(text: str) -> tuple[str | None, str | None, str, str | None, str | None]:
    m = _SPLIT.match(text)
    assert m is not None  # the Appendix B expression matches every string
    scheme, authority, path, query, fragment = m.groups()
    return scheme, authority, path, query, fragment


def remove_dot_segments(path: str) -> str:
    """RFC 3986 §5.2.4."""
    output: list[str] = []
    inp = path
    while inp:
        if inp.startswith("../"):
            inp = inp[3:]
        elif inp.startswith("./"):
            inp = inp[2:]
        elif inp.startswith("/./"):
            inp = inp[2:]
        elif inp == "/.":
            inp = "/"
        elif inp.startswith("/../"):
            inp = inp[3:]
            if output:
                output.pop()
        elif inp == "/..":
            inp = "/"
            if output:
                output.pop()
        elif inp in (".", ".."):
            inp = ""
        else:
            start = 1 if inp.startswith("/") else 0
            cut = inp.find("/", start)
            if cut < 0:
                cut = len(inp)
            output.append(inp[:cut])
            inp = inp[cut:]
    return "".join(output)


def _merge(base_authority: str | None, base_path: str, ref_path: str) -> str:
    """RFC 3986 §5.2.3."""
    if base_authority is not None and base_path == "":
        return "/" + ref_path
    cut = base_path.rfind("/")
    return base_path[: cut + 1] + ref_path if cut >= 0 else ref_path


def resolve(base: str, reference: str, *, strict: bool = True) -> str:
    """Resolve ``reference`` against the absolute URI ``base`` (RFC 3986 §5.2), for any scheme."""
    b_scheme, b_auth, b_path, b_query, _ = _split(base)
    r_scheme, r_auth, r_path, r_query, r_frag = _split(reference)
    if not strict and r_scheme is not None and b_scheme is not None and r_scheme.lower() == b_scheme.lower():
        r_scheme = None
    t: tuple[str | None, str | None, str, str | None]
    if r_scheme is not None:
        t = (r_scheme, r_auth, remove_dot_segments(r_path), r_query)
    elif r_auth is not None:
        t = (b_scheme, r_auth, remove_dot_segments(r_path), r_query)
    elif r_path == "":
        t = (b_scheme, b_auth, b_path, r_query if r_query is not None else b_query)
    elif r_path.startswith("/"):
        t = (b_scheme, b_auth, remove_dot_segments(r_path), r_query)
    else:
        t = (b_scheme, b_auth, remove_dot_segments(_merge(b_auth, b_path, r_path)), r_query)
    scheme, auth, path, query = t
    out = []
    if scheme is not None:
        out.append(scheme + ":")
    if auth is not None:
        out.append("//" + auth)
    elif path.startswith("//"):
        path = "/." + path  # keep the path from re-parsing as an authority (specs/README.md)
    out.append(path)
    if query is not None:
        out.append("?" + query)
    if r_frag is not None:
        out.append("#" + r_frag)
    return "".join(out)
