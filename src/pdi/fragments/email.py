"""Fragments of an e-mail message (``message/rfc822``, format ``header``): its body's text and its parts.

**Decision** (``docs/email.md``, PDI-GRAMMAR.md §3): ``char`` and ``line``
count on the message's *body text* (:func:`pdi.fragments.email_text.body_text`: the
part Python's ``get_body(("plain", "html"))`` finds, its transfer encoding
removed, decoded in its charset, CRLF-canonical; an HTML body as its page
text), as on a UTF-8 text, and answer the passage's text (``text/plain;
charset=utf-8``); their ranges' octets are those of the body text in UTF-8,
not of the message. ``part=N`` (from 0), ``part=cid:ID``, and
``part=NAME`` (a Content-Location, else a file name) answer that part's
octets, its transfer encoding removed, with its own media type and charset
(a label pdi does not know as UTF-8, as the body's text is read; an enclosed
message, ``message/rfc822``, as the octets of the message hold it); the
range's positions are the part's number (``N,N+1``) and its octets' size.
``byte`` stays the octets of the message as stored.

Pure: no I/O.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from pdi.errors import ParseError, UnsupportedError
from pdi.fragments.results import Buffer, FragmentResult, Range

#: The schemes evaluated on a message.
SCHEMES = ("char", "line", "part")


def evaluate_email(
    scheme: str, positions: Sequence[object], data: Buffer, media_type: str, charset: str | None
) -> FragmentResult:
    """``scheme=positions`` on the message ``data`` (see the module docstring)."""
    if scheme not in SCHEMES:
        raise UnsupportedError(f"no fragment scheme {scheme!r} on a message: {', '.join(SCHEMES)} or byte")
    if scheme == "part":
        from pdi.mail.message import read_message

        mail = read_message(bytes(data))
        if len(positions) != 1:
            raise ParseError(
                f"part= takes one part number or name, not {len(positions)} positions", rule="part"
            )
        part = mail.find_part(positions[0])
        octets = mail.part_octets(part)
        return FragmentResult(
            octets, part.media_type, False, (Range(part.index, part.index + 1, 0, len(octets)),),
            charset=_answered_charset(part.charset), scheme="part",
        )
    from pdi.fragments.email_text import message_body_text
    from pdi.fragments.text import evaluate_pdi

    utf8 = message_body_text(data).encode("utf-8", "surrogatepass")  # made once a process (email_text)
    result = evaluate_pdi(scheme, positions, utf8, charset="utf-8", media_type="text/plain")
    return dataclasses.replace(result, media_type="text/plain", charset="utf-8", scheme=scheme)


def _answered_charset(label: str | None) -> str | None:
    """The charset a part is answered in: its ``charset`` label under its registered name (``latin_1`` →
    ``iso-8859-1``); a label pdi does not know (Pine's ``X-UNKNOWN``, ``x-mac-roman``, a label that is no
    charset name at all), read as UTF-8, as the body's text is read (:func:`pdi.fragments.email_text.body_text`)."""
    from pdi.formats import registered_charset

    if label is None:
        return None
    try:
        return registered_charset(label)
    except UnsupportedError:
        return "utf-8"
