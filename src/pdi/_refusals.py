"""What another server said when it refused: the RFC 9457 problem of an answer other than ``200``, and the error
pdi raises for it (a mirror's origin, a registry, a manifest's resolver).

A pdi resolver refuses with a problem whose ``detail`` names what was wrong
(``series nosuch.example.us is not registered``, ``day is a GMT day
YYYY-MM-DD``); saying only ``HTTP 404`` would leave the user to guess, and
say the same of a plain web server that is no pdi at all.
"""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING

from pdi._wording import clipped
from pdi.errors import ParseError, PDIError, RemoteError, RemoteNotFoundError

if TYPE_CHECKING:
    import httpx

#: The longest problem body read, in octets: beyond it, nothing is quoted.
MAX_PROBLEM = 64 << 10
#: What pdi asks another server to send octets in: as they are, never in a content coding (a few kilobytes of
#: brotli undo to gigabytes before any size check sees them).
IDENTITY = {"Accept-Encoding": "identity"}


def unreached() -> tuple[type[Exception], ...]:
    """What httpx raises when another server cannot be asked or its answer cannot be had: its ``HTTPError``, and
    ``InvalidURL``, no ``HTTPError``, which it raises on a redirect's ``Location`` it cannot read
    (``javascript:alert(1)``) even when redirects are not followed; and idna's ``IDNAError`` (a ``UnicodeError``),
    which it raises, not as ``InvalidURL``, on a ``Location`` whose host is an A-label that decodes to nothing
    (``http://xn--/``): httpx decodes it when it reads the redirect's host. For ``except unreached() as exc:``."""
    import httpx
    import idna  # httpx's own (its URLs' hosts)

    return (httpx.HTTPError, httpx.InvalidURL, idna.IDNAError)


def coded(coding: str | None, what: str) -> RemoteError | None:
    """The refusal of an answer sent in the content coding ``coding`` (its ``Content-Encoding``) though
    :data:`IDENTITY` was asked, or ``None`` for one sent as it is: such an answer is never read."""
    named = (coding or "").strip().lower()
    if named in ("", "identity"):
        return None
    return RemoteError(f"{what} is sent with Content-Encoding {named[:40]!r}, though it was asked as it is (identity):"
                       " not read")


def said(answer: httpx.Response, deadline: float | None = None) -> Told | None:
    """The ``detail`` (else the ``title``) of ``answer``'s problem (a JSON body, RFC 9457 §3.1), on one line of at
    most 1,000 printable characters, read from its first :data:`MAX_PROBLEM` octets before ``deadline`` (a
    :func:`time.monotonic` time; ``None``: the client's own timeouts only); ``None`` for any other body, or one
    not read in time. For an answer read as a stream whose body has not been read."""

    if "json" not in answer.headers.get("content-type", ""):
        return None
    if coded(answer.headers.get("content-encoding"), "") is not None:
        return None  # coded: not undone
    body = bytearray()
    try:
        for piece in answer.iter_raw():
            body += piece
            if len(body) > MAX_PROBLEM or (deadline is not None and time.monotonic() > deadline):
                return None
    except unreached():
        return None
    return told(bytes(body))


class Told(str):
    """What a problem said (:func:`told`), and its RFC 9457 ``type`` (:attr:`problem_type`; ``None`` if it gave none
    or one that is no short string)."""

    problem_type: str | None = None


def told(body: bytes | str) -> Told | None:
    """The ``detail`` (else the ``title``) of a problem's JSON ``body`` (RFC 9457 §3.1), on one line of at most
    1,000 printable characters, with its ``type``; ``None`` if it is no such JSON (nested too deep for Python's
    reader too)."""
    try:
        problem = json.loads(body)
    except (ValueError, RecursionError):
        return None
    text = (problem.get("detail") or problem.get("title")) if isinstance(problem, dict) else None
    if not isinstance(text, str):
        return None
    kind = problem.get("type")
    # another server's words on our terminal and in our logs: no control characters (an escape sequence, a bell),
    # and a long one cut in its middle, its start and its end kept (pdi._wording.clipped)
    line = clipped(" ".join("".join(c if c.isprintable() else " " for c in text[:MAX_PROBLEM]).split()), 1000)
    if not line:
        return None
    said = Told(line)
    if isinstance(kind, str) and len(kind) <= 200 and kind.isprintable():
        said.problem_type = kind
    return said


def refusal(status: int, what: str, told: Told | str | None = None) -> PDIError:
    """The error of an answer ``status`` other than ``200`` to a request for ``what``, quoting what the server
    ``told`` (:func:`said`): a ``400`` is a :class:`ParseError` (what was asked is not as it should be), a
    ``404`` a :class:`~pdi.errors.RemoteNotFoundError` (with the problem's ``type``), anything else a
    :class:`RemoteError` (the other server failed or refused: not this archive's storage)."""
    text = f"{what}: HTTP {status}" + (f": {told}" if told else "")
    if status == 400:
        return ParseError(text, rule="request")
    if status == 404:
        return RemoteNotFoundError(text, told_type=getattr(told, "problem_type", None))
    return RemoteError(text)
