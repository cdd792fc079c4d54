"""Request content in a content coding: refused, never stored coded.

A representation is its data after its content codings are undone (RFC 9110
§8.4). pdi stores what it is sent, octet for octet, and mints a name that
never changes for it: a deposit sent with ``Content-Encoding: gzip`` (or
``br``, or any coding) would be kept as the coded octets, or refused by the
format check as if the format were wrong. So any request that sends content
in a coding other than ``identity`` is answered ``415`` with ``Accept-Encoding:
identity`` before its body is read (§15.5.16, §12.5.3: the field tells a
client that the coding, not the media type, was refused), and nothing is
stored. A request without content (a ``GET``) is not concerned.

A transfer coding other than ``chunked`` (``Transfer-Encoding: gzip,
chunked``) is one the server does not undo (the HTTP parser undoes
``chunked`` alone): RFC 9112 §6.1 has such a request answered ``501``, which
it is, before its body is read, and nothing is stored. Before, the octets
were kept as sent, still coded, under a name that never changes. A
``Transfer-Encoding`` whose last coding is not ``chunked`` (``gzip`` alone)
leaves the content's end unknown: ``400`` and the connection closed (§6.3).
"""

from __future__ import annotations

from starlette.types import Receive, Scope, Send

from pdi._wording import shown_field
from pdi.server.http.bodies import sends_content
from pdi.server.http.middleware import HTTPMiddleware
from pdi.server.http.problems import problem


def codings(headers: list[tuple[bytes, bytes]]) -> list[str] | None:
    """The content codings a request's ``Content-Encoding`` fields name other than ``identity`` (lower case, in
    order), or ``None`` if it sends no content (no ``Content-Length`` above 0 and no ``Transfer-Encoding``)."""
    if not sends_content(headers):
        return None
    # lower case of ASCII alone (bytes.lower): a coding beyond it is quoted as sent (pdi._wording.shown_field)
    named = [c.strip(" \t") for key, value in headers if key == b"content-encoding"
             for c in value.lower().decode("latin-1").split(",")]
    return [c for c in named if c and c != "identity"]


def transfer_codings(headers: list[tuple[bytes, bytes]]) -> list[str]:
    """The transfer codings a request's ``Transfer-Encoding`` fields name (lower case, in order, ``chunked``
    among them; their parameters left out)."""
    named = [c.split(";")[0].strip(" \t") for key, value in headers if key == b"transfer-encoding"
             for c in value.lower().decode("latin-1").split(",")]
    return [c for c in named if c]


class ContentCodings(HTTPMiddleware):
    """ASGI middleware: a request whose content is in a content coding is ``415``, in a transfer coding other than
    ``chunked`` ``501``, one whose last transfer coding is not ``chunked`` ``400`` (the module's docstring)."""

    async def http(self, scope: Scope, receive: Receive, send: Send) -> None:
        transfer = transfer_codings(scope["headers"])
        others = [c for c in transfer if c != "chunked"]
        if transfer and transfer[-1] != "chunked":  # RFC 9112 §6.3 (4): "MUST respond with the 400"
            answer = problem(400, "Bad Request", f"the request's Transfer-Encoding ends in {shown_field(transfer[-1], 40)}, not"
                             " chunked, so where its content ends cannot be told (RFC 9112 §6.3): send it with"
                             " Content-Length or Transfer-Encoding: chunked alone")
            answer.headers["Connection"] = "close"  # its body was not read
            await answer(scope, receive, send)
            return
        if others:  # RFC 9112 §6.1: a transfer coding not understood, 501
            answer = problem(501, "unsupported", f"the request's content is in the transfer coding"
                             f" {', '.join(shown_field(c, 40) for c in others)}, which this server does not undo: send it as it is, with"
                             " Content-Length or Transfer-Encoding: chunked alone")
            answer.headers["Connection"] = "close"  # its body was not read
            await answer(scope, receive, send)
            return
        found = codings(scope["headers"])
        if found:
            said = ", ".join(shown_field(c, 40) for c in found)
            answer = problem(415, "unsupported", f"the request's content is in the content coding {said}: send it"
                             " as it is (without Content-Encoding), pdi keeps the octets it is sent")
            answer.headers["Accept-Encoding"] = "identity"
            answer.headers["Connection"] = "close"  # its body was not read
            await answer(scope, receive, send)
            return
        await self.app(scope, receive, send)
