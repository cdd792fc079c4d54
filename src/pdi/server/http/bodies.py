"""Reading a small request body whole, within a bound: its octets, or its JSON.

Every handler that takes a body it needs whole (a statement's value, a
reason, an annotation) reads it here: octet by octet as it arrives, so a
body past the bound is refused (a :class:`~pdi.errors.LimitError`, ``413``)
as soon as it passes it, without the rest being read or kept.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable

import anyio.to_thread
from starlette.requests import ClientDisconnect, Request

from pdi import untrusted_json
from pdi._wording import plural
from pdi.errors import LimitError, ParseError


def sends_content(headers: Iterable[tuple[bytes, bytes]]) -> bool:
    """Whether a request's raw header fields say it sends content: a ``Content-Length`` above 0 (``1*DIGIT``, RFC
    9110 §8.6: ``00`` is 0 too), or a ``Transfer-Encoding`` (RFC 9112 §6.3)."""
    return any(key == b"transfer-encoding" or (key == b"content-length" and value.strip(b" \t").lstrip(b"0") != b"")
               for key, value in headers)


async def read_body(request: Request, limit: int, too_large: str) -> bytes:
    """The body of ``request``; a :class:`~pdi.errors.LimitError` saying ``too_large`` past ``limit`` octets.

    A ``Content-Length`` past the bound is refused before any octet is read, so a client that sent ``Expect:
    100-continue`` is answered ``413`` in place of ``100 Continue`` (RFC 9110 §10.1.1) and sends nothing more. A
    client that goes away before its body is whole is a :class:`~pdi.errors.ParseError` (``400``, logged as a
    refusal: nothing was done with a body not read whole), not the server's error.
    """
    declared = request.headers.get("content-length", "")
    if declared.isascii() and declared.isdigit():
        digits = declared.lstrip("0") or "0"
        # past 19 digits, past any bound: never int() of it (which refuses more than 4,300 digits, a ValueError)
        if len(digits) > 19 or int(digits) > limit:
            raise LimitError(too_large)
    parts: list[bytes] = []
    seen = 0
    try:
        async for piece in request.stream():
            seen += len(piece)
            if seen > limit:
                raise LimitError(too_large)
            parts.append(piece)
    except ClientDisconnect:
        raise cut_short(seen, declared) from None
    return b"".join(parts)


def cut_short(seen: int, declared: str) -> ParseError:
    """The refusal of a body whose client went away after ``seen`` octets (of a ``Content-Length`` ``declared``, if
    it said one): the request is answered as one whose body was not sent whole."""
    promised = f" of the {declared} its Content-Length promised" if declared.isascii() and declared.isdigit() else ""
    return ParseError(f"the body ended after {plural(seen, 'octet')}{promised}: the client went away, and nothing was"
                      " done with it", rule="body")


async def read_json(request: Request, limit: int, too_large: str, *, rule: str, unique_keys: bool = False) -> object:
    """The JSON of :func:`read_body`'s body; a :class:`~pdi.errors.ParseError` (of grammar ``rule``) if it is not JSON
    (or, ``unique_keys``, names a member of an object twice).

    Read off the event loop (a body of megabytes takes tens of milliseconds), within
    :func:`pdi.untrusted_json.loads`'s bounds."""
    body = await read_body(request, limit, too_large)
    return await anyio.to_thread.run_sync(functools.partial(untrusted_json.loads, body, "the body", rule=rule,
                                                            unique_keys=unique_keys))
