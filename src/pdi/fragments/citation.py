"""Checking a citation: does the quoted text stand where the citation says? (PDI-GRAMMAR.md §3).

``urn:pdi://A/…/5.html.1@120=pdi://B/…/1.text.1#char=37,51`` says that the
fragment on the right is quoted in document A at position 120 of A's default
scheme (draft lines 166–170, 481–484). :func:`check_quotation` compares the
text of the cited fragment with what A holds at that position:

* A's default scheme must count characters (``char``: text, HTML, XML);
  then the position is a code point of A's CRLF-canonical text, and the
  quotation is compared code point for code point with the CRLF-canonical
  text of the cited fragment, from that position on.
* A quotation of something that is not text (an image region, a stretch of
  sound), or a position in another scheme (a point of an image), cannot be
  compared: the check says ``unchecked`` and why.

Pure: no I/O; the archive (:meth:`pdi.archive.Archive.cite`) finds both
ends.
"""

from __future__ import annotations

from dataclasses import dataclass

from pdi import charsets, formats
from pdi._wording import plural
from pdi.errors import PDIError, UnsupportedError

#: The schemes whose selection is CRLF-canonical text (they count over it): a ``byte`` range or an e-mail ``part``
#: is the stored octets as they are, made CRLF-canonical before it is compared.
CANONICAL_SCHEMES = frozenset({"char", "line", "elt", "name"})


@dataclass(frozen=True)
class QuotationCheck:
    """What the check found: ``status`` is ``ok``, ``mismatch`` or ``unchecked``; ``detail`` says why."""

    status: str
    detail: str
    quote: str | None = None  # the cited text, CRLF-canonical
    found: str | None = None  # what the citing document holds there


def check_quotation(
    citing: bytes,
    citing_media_type: str,
    citing_charset: str | None,
    scheme: str,
    origin: object,
    quoted: bytes,
    quoted_media_type: str,
    quoted_charset: str | None,
    *,
    canonical: bool = False,
) -> QuotationCheck:
    """Compare the text ``quoted`` with the citing document's text at ``origin`` (in ``scheme``).

    ``canonical``: ``quoted`` is a fragment's selection, CRLF-canonical already
    (:attr:`~pdi.fragments.FragmentResult.data`), whose line endings are not
    written again (a selection may begin with the LF of a CRLF: that is one
    character, not a line ending to make CRLF); else a whole document, made
    CRLF-canonical here.
    """
    from pdi.fragments.text import evaluate_pdi
    from pdi.fragments.text.lines import to_crlf

    if scheme != "char" or not isinstance(origin, int) or isinstance(origin, bool):
        return QuotationCheck(
            "unchecked", f"the citing document's position {origin!r} is in the {scheme} scheme:"
            " only a character position can be compared with a quotation"
        )
    if formats.media_family(quoted_media_type) not in ("text", "html", "xml"):
        return QuotationCheck("unchecked", f"the cited fragment is {quoted_media_type}, not text")
    try:
        codec = charsets.codec_for(quoted_charset or "us-ascii")  # a charset: never idna, zlib or a bad label
        quote = quoted.decode(codec)
        if not canonical:
            quote = to_crlf(quote)
    except UnsupportedError as exc:
        return QuotationCheck("unchecked", f"the cited fragment's charset cannot be read: {exc}")
    except UnicodeDecodeError as exc:
        return QuotationCheck("unchecked", f"the cited fragment is not text in {quoted_charset}: {exc}")
    try:
        there = evaluate_pdi(
            "char", (origin, origin + len(quote)), citing, charset=citing_charset, media_type=citing_media_type
        )
        found = there.text()  # the selection: CRLF-canonical, as the positions count
        if there.past_end or (origin > 0 and not quote and there.clamped):
            # the position lies past the citing document's end: how long it is, as the positions count
            length = len(evaluate_pdi("char", (0, origin), citing, charset=citing_charset,
                                      media_type=citing_media_type).text())
            return QuotationCheck("mismatch", f"the citing document ends at char={length}, before the quotation's"
                                  f" position char={origin}", quote, found)
    except PDIError as exc:
        return QuotationCheck("unchecked", f"the citing document cannot be read as text: {exc}", quote)
    if found == quote:
        return QuotationCheck("ok", f"the quotation stands at char={origin}", quote, found)
    if there.clamped:
        detail = f"the citing document ends {plural(len(quote) - len(found), 'character')} before the quotation would"
    else:
        detail = f"the citing document has other text at char={origin}"
    return QuotationCheck("mismatch", detail, quote, found)
