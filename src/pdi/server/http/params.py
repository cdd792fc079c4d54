"""Reading a request's query parameters: each once, each in its range (an edge's one way of doing it).

Every handler that takes ``key=value`` parameters reads them here, never from
``request.query_params`` itself, whose ``get`` silently takes the last of a
repeated key (``series=a&series=b`` would deposit into ``b``). The first read
of a request looks at the whole query: a key given more than once is a
:class:`~pdi.errors.ParseError` naming it (``400``), whatever handler reads
it and in whatever order, as OAI-PMH's ``badArgument`` does for its own
arguments (OAI-PMH 2.0 §3.6). A number out of its range is a ``400`` too,
naming the parameter and the range: ``413`` is for a request whose *content*
is too large (RFC 9110 §15.5.14), not for a value the client chose.

A route that writes refuses a parameter it does not take (:func:`only`).

Routes whose query is not ``key=value`` pairs read the query string
themselves: RFC 2169's ``/uri-res/…?<urn>`` (the URN is the whole query) and
the Memento routes (the query belongs to the URL in the path).
"""

from __future__ import annotations

from collections import Counter

from starlette.requests import Request

from pdi._query import NotUTF8, query_pairs
from pdi.errors import ParseError

__all__ = ["flag", "integer", "only", "optional", "required", "single_values"]

#: Where a request's checked parameters are kept (in its ASGI scope), so the query is counted once.
_CHECKED = "pdi.query"


def single_values(request: Request) -> dict[str, str]:
    """The request's query parameters, each key given once; a :class:`ParseError` naming one given more often."""
    checked: dict[str, str] | None = request.scope.get(_CHECKED)
    if checked is not None:
        return checked
    items = _pairs(request.scope.get("query_string", b""))
    counts = Counter(key for key, _ in items)
    repeated = [key for key, count in counts.items() if count > 1]
    if repeated:
        key = repeated[0]
        raise ParseError(f"the query parameter {key}= is given {counts[key]} times: it takes one value", rule=key)
    checked = dict(items)
    request.scope[_CHECKED] = checked
    return checked


def _pairs(query: bytes) -> list[tuple[str, str]]:
    """The ``key=value`` pairs of a query string as Starlette reads them (``+`` a space, ``%XX`` an octet), each
    key and value UTF-8: a %-escape of octets that are not (``%ED%A0%80``, ``%FF``) is a :class:`ParseError`
    naming the parameter, where Starlette would put U+FFFD in their place (an ``id=`` the client never sent)."""
    try:
        return query_pairs(query.decode("latin-1"))
    except NotUTF8 as bad:
        raise ParseError(f"the query parameter {bad.name[:40]}= is not UTF-8 once its %-escapes are read"
                         f" ({bad.part[:80]}): nothing was done", text=bad.part[:80], rule=bad.name[:40] or "query"
                         ) from None


def only(request: Request, keys: frozenset[str]) -> None:
    """Refuse a parameter not among ``keys``, the ones the route takes: a :class:`ParseError` naming it and them.

    For the routes that write: a misspelt parameter (``fromat=html``) would
    otherwise be left unread and the write made without it, minting a name
    that is never taken back.
    """
    unknown = sorted(set(single_values(request)) - keys)
    if unknown:
        takes = ", ".join(f"{k}=" for k in sorted(keys)) or "none"
        raise ParseError(f"the query parameter {unknown[0]}= is not one this route takes ({takes}); nothing was"
                         " written", rule=unknown[0])


def optional(request: Request, key: str, default: str | None = None) -> str | None:
    """``key``'s value, ``default`` when absent or empty."""
    return single_values(request).get(key) or default


def required(request: Request, key: str) -> str:
    """``key``'s value; a :class:`ParseError` when it is absent or empty."""
    value = single_values(request).get(key)
    if not value:
        raise ParseError(f"the query parameter {key}= is missing", rule=key)
    return value


def integer(request: Request, key: str, default: int, *, least: int = 0, most: int = 999_999_999_999) -> int:
    """``key`` as a whole number from ``least`` to ``most`` (``default`` when absent or empty); else a ``400``
    naming the parameter and its range."""
    raw = single_values(request).get(key)
    if raw is None or raw == "":
        return default
    if not raw.isascii() or not raw.isdigit():  # '²' is a digit to str.isdigit, not to int()
        raise ParseError(f"{key}={raw[:40]!r} is not a number: give {least} to {most}",
                         text=raw[:40], offset=0, rule=key)
    digits = raw.lstrip("0") or "0"
    value = int(digits) if len(digits) <= len(str(most)) else most + 1  # no 4,300-digit int()
    if not least <= value <= most:
        raise ParseError(f"{key}={raw[:40]} is out of range: give {least} to {most}", rule=key)
    return value


def flag(request: Request, key: str) -> bool:
    """A yes-or-no parameter: ``true`` or ``false`` (absent or empty: false); anything else is refused."""
    raw = single_values(request).get(key)
    if raw is None or raw in ("", "false"):
        return False
    if raw == "true":
        return True
    raise ParseError(f"{key}={raw[:40]!r}: give true or false", text=raw[:40], offset=0, rule=key)
