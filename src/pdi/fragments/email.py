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

A message of more than :data:`pdi.mail.large.STREAMED_FROM` octets is read by
its structure (:func:`pdi.mail.large.read_large`), never held: ``data`` may
then be any octets :func:`len` and a slice work on (the archive gives
:class:`pdi.archive.blobs.VerifiedOctets`), its part decoded a window at a
time, its body's text read from its body's part alone (one of more than
:data:`pdi.mail.large.MAX_BODY_OCTETS` is refused, naming its part). So is
one of more lines than Python's parser is given, from its octets in hand
(:func:`pdi.mail.large.by_structure`). The answers are those of the whole reading.

Pure: no I/O.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import TYPE_CHECKING

from pdi.errors import ParseError, UnsupportedError
from pdi.fragments.results import Buffer, FragmentResult, Range

if TYPE_CHECKING:
    from pdi.mail.large import Octets
    from pdi.mail.message import MailPart

#: The schemes evaluated on a message.
SCHEMES = ("char", "line", "part")


def evaluate_email(
    scheme: str, positions: Sequence[object], data: Buffer, media_type: str, charset: str | None
) -> FragmentResult:
    """``scheme=positions`` on the message ``data`` (see the module docstring)."""
    if scheme not in SCHEMES:
        raise UnsupportedError(f"no fragment scheme {scheme!r} on a message: {', '.join(SCHEMES)} or byte")
    from pdi.mail.large import unheld

    if unheld(len(data)):  # never held: read by its structure where its octets lie
        return _evaluate_large(scheme, positions, data)  # type: ignore[arg-type]  # (sliced: bytes out)
    if scheme == "part":
        from pdi.mail.large import part_octets, read_mail

        octets = bytes(data)
        mail = read_mail(octets)  # whole, or by its structure past the lines' bound (pdi.mail.large.by_structure)
        part = mail.find_part(part_name(positions))
        return part_result(part, part_octets(octets, part) if mail.by_structure else mail.part_octets(part))
    from pdi.fragments.email_text import message_body_text

    # made once a process (email_text), read whole or by its structure as pdi.mail.large.by_structure says
    return _in_body_text(scheme, positions, message_body_text(data))


def part_name(positions: Sequence[object]) -> object:
    """The one part number or name of ``part=``'s positions."""
    if len(positions) != 1:
        raise ParseError(f"part= takes one part number or name, not {len(positions)} positions", rule="part")
    return positions[0]


def part_result(part: MailPart, octets: bytes, size: int | None = None) -> FragmentResult:
    """What ``part=`` answers of ``part``: its ``octets`` (or, ``size`` given, none in hand: they are streamed)."""
    size = len(octets) if size is None else size
    return FragmentResult(
        octets, part.media_type, False, (Range(part.index, part.index + 1, 0, size),),
        charset=_answered_charset(part.charset), scheme="part",
    )


def find_large_part(data: Octets, positions: Sequence[object]) -> MailPart:
    """The part ``part=positions`` names of the large message ``data`` (:func:`pdi.mail.large.read_large`), its
    :attr:`~pdi.mail.message.MailPart.span` saying where it lies, for its octets to be streamed."""
    from pdi.mail.large import read_large

    return read_large(data).find_part(part_name(positions))


def _evaluate_large(scheme: str, positions: Sequence[object], data: Octets) -> FragmentResult:
    """``scheme=positions`` on a message read by its structure (see the module docstring)."""
    from pdi.fragments.email_text import large_body_text
    from pdi.mail.large import part_octets, read_large

    mail = read_large(data)
    if scheme == "part":
        part = mail.find_part(part_name(positions))
        return part_result(part, part_octets(data, part))
    text = large_body_text(data, mail)
    del mail  # its body's octets let go before the text is counted in (docs/email.md §5: memory)
    return _in_body_text(scheme, positions, text)


def _in_body_text(scheme: str, positions: Sequence[object], text: str) -> FragmentResult:
    from pdi.fragments.text import evaluate_pdi

    utf8 = text.encode("utf-8", "surrogatepass")
    del text  # its UTF-8 alone counted in (a large body's text is tens of MiB: not held twice)
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
