"""What PostgreSQL's full-text index reads of a passage, and a headline of it read back as the passage.

The catalog keeps a passage's text as :func:`pdi.passages.fulltext.spaced` writes it (``search_passages.body``);
PostgreSQL's index and its ``ts_headline`` read it through :data:`INDEXED_BODY`, which writes some characters as
spaces, one for one, so that its parser reads words where SQLite's FTS5 (``unicode61``) reads them; a headline
made so is given the passage's own characters again by :func:`restored`.
"""

from __future__ import annotations

import functools
import re
import string
from typing import Final

__all__ = ["APART_BODY", "INDEXED_BODY", "restored"]

#: What PostgreSQL's full-text index read of a passage from schema step 19 to 20: its text as the index holds it,
#: with the character between two :data:`~pdi.passages.fulltext.APART` (a separator beyond ASCII: ``“``, ``…``,
#: ``،``) read as a space, one character for one, so that its parser, which reads every character beyond ASCII as
#: a letter in a database of ``LC_CTYPE`` ``C``, reads none of them as a word or a part of one.
APART_BODY = "regexp_replace(body, E'\\x1e.\\x1e', E'\\x1e \\x1e', 'g')"
#: What PostgreSQL's full-text index reads of a passage (schema step 20): :data:`APART_BODY` with every ASCII
#: punctuation character read as a space, one for one, as SQLite's FTS5 (``unicode61``) reads them. PostgreSQL's
#: parser read ``walrus@example.com`` as one e-mail address, ``www.example.org`` one host, a URL, a path
#: (``/usr/local/bin``), a version (``3.14.15``) or a signed number (``-42``) each as one token, so that none of
#: their words (``walrus``, ``example``, ``usr``, ``14``, ``42``) was found there (found by an attack,
#: 2026-11-28). The characters are one bracket expression of ``\\xNN`` escapes (read by the regular expression, not
#: the string literal): the statements' ``?`` placeholders, and psycopg's ``%``, never stand in it, and no
#: character (``\\``, ``]``, ``^``, ``-``) means anything but itself there. Not ``translate()``, which gives the same
#: text but compares each character with each of the 32: about 340 µs for a 1 KB passage against 70 µs, more than
#: ``to_tsvector`` itself, on every deposit's passage and every hit's headline (issue 24; docs/benchmarks.md).
_PUNCTUATION: Final = "[" + "".join(f"\\\\x{ord(c):02x}" for c in string.punctuation) + "]"
INDEXED_BODY = f"regexp_replace({APART_BODY}, E'{_PUNCTUATION}', ' ', 'g')"


def restored(headline: str, body: str) -> str:
    """``headline`` (what ``ts_headline`` made of :data:`INDEXED_BODY`: the marks around each match, and a space for
    each character between two :data:`~pdi.passages.fulltext.APART` and for each ASCII punctuation character) with
    the passage's own characters again, as ``body`` holds them: one for one outside the marks."""
    # (not imported by a command that searches nothing)
    from pdi.passages.fulltext import MARK_END, MARK_START

    out: list[str] = []
    at = 0
    for piece in _marks().split(headline):
        if piece in (MARK_START, MARK_END):
            out.append(piece)
        else:
            kept = body[at : at + len(piece)]
            out.append(kept + piece[len(kept) :])
            at += len(piece)
    return "".join(out)


@functools.cache
def _marks() -> re.Pattern[str]:
    from pdi.passages.fulltext import MARK_END, MARK_START

    return re.compile(f"([{MARK_START}{MARK_END}])")
