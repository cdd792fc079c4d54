"""Reference resolution: RFC 3986 §5.2 for any scheme, and RFC 2396 §5.2 as a mode.

The hot path never touches the strict grammar: both inputs are split as the
Appendix B expression would (transcribed with ``str.find``, which is faster
than the regular expression and gives the same five components), and
§5.2.4 runs on a list of segments only when a dot segment can be present.
"""

from __future__ import annotations

from pdi.errors import ParseError, UnsupportedError

_Parts = tuple[str | None, str | None, str, str | None, str | None]


def not_text(*values: object) -> ParseError:
    """The error for a value that is not a string (the public functions take text)."""
    wrong = next((v for v in values if not isinstance(v, str)), None)
    return ParseError(f"a URI is text, not {type(wrong).__name__}", rule="URI-reference")


def split5(text: str) -> _Parts:
    """RFC 3986 Appendix B: ``(scheme, authority, path, query, fragment)`` of any string."""
    fragment = query = scheme = authority = None
    cut = text.find("#")
    if cut >= 0:
        fragment = text[cut + 1 :]
        text = text[:cut]
    cut = text.find("?")
    if cut >= 0:
        query = text[cut + 1 :]
        text = text[:cut]
    cut = text.find(":")
    if cut > 0 and text.find("/", 0, cut) < 0:
        scheme = text[:cut]
        text = text[cut + 1 :]
    if text.startswith("//"):
        cut = text.find("/", 2)
        if cut < 0:
            authority = text[2:]
            text = ""
        else:
            authority = text[2:cut]
            text = text[cut:]
    return scheme, authority, text, query, fragment


def remove_dot_segments(path: str) -> str:
    """RFC 3986 §5.2.4, with the same result as the algorithm's literal text.

    On a rootless path the literal algorithm can produce a leading ``/``
    (``a/../b`` gives ``/b``); we keep that (docs/specs/README.md).
    """
    if not isinstance(path, str):
        raise not_text(path)
    if "/." not in path and not path.startswith("."):
        return path  # no complete "." or ".." segment can be present
    segments = path.split("/")
    last = len(segments) - 1
    i = 0
    # Rule A: leading "../" and "./" of a relative path are dropped; rule D:
    # a remaining lone "." or ".." leaves nothing.
    while i < last and segments[i] in (".", ".."):
        i += 1
    if i == last and segments[i] in (".", ".."):
        return ""
    out: list[str] = []
    if segments[i]:  # rule E on a first segment with no "/" before it
        out.append(segments[i])
    elif i == last:
        return ""
    i += 1
    while i <= last:
        seg = segments[i]
        if seg == ".":
            if i == last:
                out.append("/")
        elif seg == "..":
            if out:
                out.pop()
            if i == last:
                out.append("/")
        else:
            out.append("/" + seg)
        i += 1
    return "".join(out)


def _merge(base_authority: str | None, base_path: str, ref_path: str) -> str:
    """RFC 3986 §5.2.3, with erratum 4789 for a base path ending in a dot segment."""
    if base_authority is not None and base_path == "":
        return "/" + ref_path
    cut = base_path.rfind("/")
    last = base_path[cut + 1 :]
    if last in (".", ".."):
        # Erratum 4789: ".../limit/.." is the directory ".../", so resolve
        # against the base path with its dot segments removed.
        base_path = remove_dot_segments(base_path)
        cut = base_path.rfind("/")
    return base_path[: cut + 1] + ref_path if cut >= 0 else ref_path


def _recompose(
    scheme: str | None, authority: str | None, path: str, query: str | None, fragment: str | None
) -> str:
    """§5.3, except that a path starting with ``//`` and no authority gets ``/.`` before it."""
    if authority is not None:
        result = scheme + "://" + authority + path if scheme is not None else "//" + authority + path
    else:
        if path.startswith("//"):
            path = "/." + path  # would otherwise re-parse as an authority (docs/specs/README.md)
        result = scheme + ":" + path if scheme is not None else path
    if query is not None:
        result = result + "?" + query
    if fragment is not None:
        result = result + "#" + fragment
    return result


def _base_parts(base: str) -> _Parts:
    parts = split5(base)
    if parts[0] is None:
        raise ParseError(
            "a base URI must be absolute (start with a scheme)",
            text=base,
            offset=0,
            rule="absolute-URI",
        )
    return parts


def resolve(base: str, reference: str, *, rfc: int = 3986, strict: bool = True) -> str:
    """Resolve ``reference`` against the absolute URI ``base``, for any scheme.

    ``rfc=3986`` (the default) is RFC 3986 §5.2: §5.2.2 with §5.2.3
    ``merge``, §5.2.4 ``remove_dot_segments`` and §5.3 recomposition. With
    ``strict=False`` a reference whose scheme equals the base's (compared
    case-insensitively) loses it first, the non-strict parser of §5.2.2
    (``http:g`` against ``http://a/b/c/d;p?q`` gives ``http://a/b/c/g``).

    Both strings are split with the Appendix B expression; they are not
    validated (use :func:`parse` for that). The base must have a scheme
    (§5.1), else :class:`ParseError`; its fragment is ignored.

    Our readings of three places where RFC 3986 is unclear
    (docs/specs/README.md): a rootless base follows the literal §5.2.4
    (``foo:a/b`` + ``../c`` = ``foo:/c``); a result with no authority whose
    path starts with ``//`` is printed ``/.//…`` so that it re-parses to the
    same path (``f:/a`` + ``.//g`` = ``f:/.//g``); a base path ending in
    ``.`` or ``..`` is read with erratum 4789
    (``http://www.example.com/data/limit/..`` + ``test.xml`` =
    ``http://www.example.com/data/test.xml``).

    ``rfc=2396`` gives RFC 2396 §5.2 results (steps 1-7, with the dot
    segment rules 6c-6g applied as written). Every way the two differ, with
    the base ``http://a/b/c/d;p?q`` of both documents' examples:

    1. A reference that is only a query. RFC 2396 step 2 does not treat it
       as the current document, so step 6 merges its empty path with the
       base's directory: ``?y`` = ``http://a/b/c/?y``. RFC 3986 keeps the
       base path: ``http://a/b/c/d;p?y``.
    2. ``..`` segments above the root. RFC 2396 6g keeps them (the Appendix
       C choice): ``../../../g`` = ``http://a/../g``, ``../../../../g`` =
       ``http://a/../../g``; a base path's own leading ``..`` stays too.
       RFC 3986 drops them: ``http://a/g``.
    3. Absolute-path references. RFC 2396 step 5 goes straight to step 7:
       ``/./g`` = ``http://a/./g``, ``/../g`` = ``http://a/../g``. RFC 3986
       removes dot segments: ``http://a/g``.
    4. References with a scheme or an authority. RFC 2396 steps 3 and 4 take
       their path as written (``//g/./h`` = ``http://g/./h``, ``foo:a/../b``
       = ``foo:a/../b``); RFC 3986 removes dot segments from them too
       (``http://g/h``, ``foo:/b``).
    5. Rootless (opaque-looking) bases. RFC 2396 6e removes
       ``segment/../`` wherever it is, so ``foo:a/b`` + ``../c`` =
       ``foo:c`` and ``zz:abc`` + ``foo/../bar`` = ``zz:bar``; the literal
       RFC 3986 algorithm gives ``foo:/c`` and ``zz:/bar``.
    6. A base path ending in a dot segment. RFC 2396 6a copies it up to its
       last ``/``: ``http://www.example.com/data/limit/..`` + ``test.xml`` =
       ``http://www.example.com/data/limit/test.xml``; in RFC 3986 mode we
       follow erratum 4789 (``…/data/test.xml``).
    7. The §5.2.2 non-strict choice: RFC 2396 step 3 allows dropping a
       repeated scheme only for schemes "known to always use the
       <hier_part> syntax"; like RFC 3986 §5.2.2 we apply ``strict=False``
       to any scheme, in both modes.

    Cases where both documents agree (the Appendix C / §5.4 normal
    examples, fragment-only and empty references, ``g;x=1/../y``, queries
    and fragments containing ``/./`` or ``/../``) give the same result in
    both modes. One place where RFC 2396 read literally breaks the URI is
    repaired as RFC 3986 §5.2.3 does, in both modes: a base with an
    authority and an empty path merges as ``/`` + reference
    (``http://a`` + ``g`` = ``http://a/g``, not ``http://ag``). The ``/.``
    prefix for a ``//`` path without authority also applies in both modes.
    Outside the seven cases above the two modes agree (a property test
    checks it for bases and references with no ``.`` that are not
    query-only references).
    """
    if not isinstance(base, str) or not isinstance(reference, str):
        raise not_text(base, reference)
    if rfc != 3986:
        if rfc == 2396:
            return _resolve_2396(base, reference, strict)
        raise UnsupportedError(f"rfc={rfc!r}: only 3986 and 2396 resolution are implemented")
    b = _BASES.get(base)
    if b is None:
        b = _prepare_base(base)
    b_scheme, b_auth, b_path, b_query, prefix, directory, directory_dirty = b
    # The reference, split as in Appendix B (inlined: this is the hot path).
    ref = reference
    fragment = query = None
    cut = ref.find("#")
    if cut >= 0:
        fragment = ref[cut + 1 :]
        ref = ref[:cut]
    cut = ref.find("?")
    if cut >= 0:
        query = ref[cut + 1 :]
        ref = ref[:cut]
    cut = ref.find(":")
    if cut > 0 and ref.find("/", 0, cut) < 0:
        r_scheme = ref[:cut]
        if strict or r_scheme.lower() != b_scheme.lower():
            r_auth = None
            path = ref[cut + 1 :]
            if path[:2] == "//":
                end = path.find("/", 2)
                if end < 0:
                    r_auth, path = path[2:], ""
                else:
                    r_auth, path = path[2:end], path[end:]
            if "/." in path or path[:1] == ".":
                path = remove_dot_segments(path)
            return _recompose(r_scheme, r_auth, path, query, fragment)
        ref = ref[cut + 1 :]  # §5.2.2 non-strict: the same scheme as the base is dropped
    if ref[:2] == "//":
        end = ref.find("/", 2)
        if end < 0:
            result = b_scheme + ":" + ref
        else:
            path = ref[end:]
            if "/." in path:
                path = remove_dot_segments(path)
            result = b_scheme + ":" + ref[:end] + path
    elif not ref:
        if query is None:
            query = b_query
        result = prefix + b_path if b_auth is not None or b_path[:2] != "//" else prefix + "/." + b_path
    else:
        if ref[0] == "/":
            path = ref
            if "/." in path:
                path = remove_dot_segments(path)
        else:
            path = directory + ref
            if directory_dirty or ref[0] == "." or "/." in ref:
                path = remove_dot_segments(path)
        if b_auth is None and path[:2] == "//":
            path = "/." + path  # would otherwise re-parse as an authority (docs/specs/README.md)
        result = prefix + path
    if query is not None:
        result = result + "?" + query
    if fragment is not None:
        result = result + "#" + fragment
    return result


_Base = tuple[str, str | None, str, str | None, str, str, bool]
_BASES: dict[str, _Base] = {}
_BASES_MAX = 256


def _prepare_base(base: str) -> _Base:
    """Split a base once and keep what resolution needs of it (a small cache)."""
    b_scheme, b_auth, b_path, b_query, _ = _base_parts(base)
    assert b_scheme is not None
    prefix = b_scheme + ":" if b_auth is None else b_scheme + "://" + b_auth
    merged = _merge(b_auth, b_path, "")  # the directory a relative path is appended to
    dirty = "/." in merged or merged[:1] == "."
    prepared = (b_scheme, b_auth, b_path, b_query, prefix, merged, dirty)
    if len(_BASES) >= _BASES_MAX:
        _BASES.clear()
    _BASES[base] = prepared
    return prepared


def _resolve_3986_plain(base: str, reference: str, strict: bool = True) -> str:
    """§5.2.2 as written, component by component: the hot path above must agree with it."""
    b_scheme, b_auth, b_path, b_query, _ = _base_parts(base)
    r_scheme, r_auth, r_path, r_query, r_frag = split5(reference)
    if (
        not strict
        and r_scheme is not None
        and b_scheme is not None
        and r_scheme.lower() == b_scheme.lower()
    ):
        r_scheme = None
    if r_scheme is not None:
        return _recompose(r_scheme, r_auth, remove_dot_segments(r_path), r_query, r_frag)
    if r_auth is not None:
        return _recompose(b_scheme, r_auth, remove_dot_segments(r_path), r_query, r_frag)
    if r_path == "":
        return _recompose(b_scheme, b_auth, b_path, b_query if r_query is None else r_query, r_frag)
    if r_path[0] == "/":
        return _recompose(b_scheme, b_auth, remove_dot_segments(r_path), r_query, r_frag)
    return _recompose(
        b_scheme, b_auth, remove_dot_segments(_merge(b_auth, b_path, r_path)), r_query, r_frag
    )


def _dot_rules_2396(buffer: str) -> str:
    """RFC 2396 §5.2 step 6, rules c to g, on the merged buffer."""
    if "." not in buffer:
        return buffer
    segments = buffer.split("/")
    absolute = buffer.startswith("/")  # the empty string before a leading "/" is not a segment
    # c) every "./" where "." is a complete segment; d) a final ".".
    kept = [s for s in segments[:-1] if s != "."]
    kept.append("" if segments[-1] == "." else segments[-1])
    segments = kept
    first = 1 if absolute else 0
    # e) "<segment>/../" with segment not "..", leftmost first, until none is
    # left: the same as cancelling pairs on a stack, left to right (linear).
    stack = segments[:first]
    for seg in segments[first:-1]:
        if seg == ".." and len(stack) > first and stack[-1] != "..":
            stack.pop()
        else:
            stack.append(seg)
    stack.append(segments[-1])
    segments = stack
    # f) a final "<segment>/.." with segment not "..".
    if len(segments) - 2 >= first and segments[-1] == ".." and segments[-2] != "..":
        segments[-2:] = [""]
    # g) leading ".." segments are kept, the Appendix C choice.
    return "/".join(segments)


def _resolve_2396(base: str, reference: str, strict: bool) -> str:
    b_scheme, b_auth, b_path, b_query, _ = _base_parts(base)
    r_scheme, r_auth, r_path, r_query, r_frag = split5(reference)
    if (
        not strict
        and r_scheme is not None
        and b_scheme is not None
        and r_scheme.lower() == b_scheme.lower()
    ):
        r_scheme = None  # step 3, the backwards-compatible loophole
    if r_scheme is None and r_auth is None and r_path == "" and r_query is None:
        return _recompose(b_scheme, b_auth, b_path, b_query, r_frag)  # step 2
    if r_scheme is not None:
        return _recompose(r_scheme, r_auth, r_path, r_query, r_frag)  # step 3
    if r_auth is not None or r_path.startswith("/"):
        auth = r_auth if r_auth is not None else b_auth
        return _recompose(b_scheme, auth, r_path, r_query, r_frag)  # steps 4 and 5
    if b_auth is not None and b_path == "":
        buffer = "/" + r_path  # RFC 3986 §5.2.3's repair (see the docstring)
    else:
        buffer = b_path[: b_path.rfind("/") + 1] + r_path  # 6a, 6b
    return _recompose(b_scheme, b_auth, _dot_rules_2396(buffer), r_query, r_frag)
