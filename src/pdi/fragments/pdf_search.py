"""RFC 8118's ``search=`` on a PDF's text layer: the words it names, and the folding both sides are compared in
(docs/pdf-text-layer.md §5), apart from the evaluator (:func:`pdi.fragments.pdf.evaluate_pdf`) that runs it on a
layer. Pure: no PDF is read here."""

from __future__ import annotations

from array import array
from collections.abc import Sequence

from pdi.errors import ParseError

__all__ = ["MAX_SEARCH_WORDS", "fold", "fold_with_map", "search_words"]

#: What separates two lines of the text layer (its hyphen at a line end is ``-`` then this: §2).
LINE_BREAK = "\r\n"

#: The most different words (folded) one ``search=`` looks for: each is a pass over the whole text layer, and a
#: 64 KB request could name 12,000 of them (18 s on a layer of two million characters).
MAX_SEARCH_WORDS = 32


def search_words(positions: Sequence[object]) -> list[str]:
    """The words of RFC 8118's ``search="w1 w2"`` (its quotes optional; one position, or one per word)."""
    if any(isinstance(p, tuple) for p in positions):  # (a,b) is a parenthesised position, no words: str() of it
        # was searched for as "('a', 'b')"
        raise ParseError("search= takes a quoted list of words (RFC 8118 §3), not a parenthesised position",
                         rule="search")
    joined = " ".join(str(p) for p in positions)
    if len(joined) >= 2 and joined[0] == joined[-1] == '"':
        joined = joined[1:-1]
    words = [word.strip('"') for word in joined.split()]
    words = [word for word in words if fold(word)]
    if not words:
        raise ParseError("search= takes a quoted list of words (RFC 8118 §3): it has none", rule="search")
    return words


def fold(text: str) -> str:
    """``text`` as a search compares it (docs/pdf-text-layer.md §5): case-folded, NFKD (compatibility forms
    spelt out, marks apart from their letters), combining marks removed, each run of white space one space."""
    return fold_with_map(text)[0].strip()


def fold_with_map(text: str) -> tuple[str, array[int]]:
    """``text`` folded as :func:`fold` (without the strip), and for each folded character the offset in ``text``
    of the character it comes from; a hyphen, CR LF between two letters (rule 1's hyphen at a line end) folds
    to nothing."""
    import unicodedata

    out: list[str] = []
    origin: array[int] = array("q")
    i, n = 0, len(text)
    space = False
    while i < n:
        char = text[i]
        if char == "-" and text.startswith(LINE_BREAK, i + 1) and i > 0 and i + 3 < n \
                and text[i - 1].isalpha() and text[i + 3].isalpha():
            i += 3
            continue
        if char.isspace():
            if not space:
                out.append(" ")
                origin.append(i)
            space = True
            i += 1
            continue
        space = False
        for piece in unicodedata.normalize("NFKD", char.casefold()):  # compatibility forms, marks apart
            if not unicodedata.combining(piece):
                out.append(piece)
                origin.append(i)
        i += 1
    return "".join(out), origin
