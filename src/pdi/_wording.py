"""Counted nouns in what pdi prints: ``1 frame``, ``2 frames``, ``0 frames``; and what a stranger wrote, printable
and cut short.

One helper each, so that every count the command, the resolver and the cores'
messages print agrees in number with its noun. Pure.
"""

from __future__ import annotations

import re


def plural(count: int, noun: str, nouns: str | None = None) -> str:
    """``count`` and ``noun`` in the number the count takes: ``"1 frame"``, ``"2 frames"``, ``"0 frames"``.

    The plural is ``noun`` + ``s`` unless ``nouns`` gives it
    (``plural(2, "entry", "entries")``). Only 1 is singular, as English has it.
    """
    return f"{count} {noun if count == 1 else nouns if nouns is not None else noun + 's'}"


#: What never reaches a terminal as it is: the controls (C0, DEL, C1: category Cc), the line and paragraph
#: separators (Zl, Zp: a log viewer breaks lines at them), Unicode's bidirectional controls (the Bidi_Control
#: property of PropList.txt: ALM, LRM, RLM, the embeddings and overrides, the isolates) and lone surrogates (no
#: character: a name argv carried with surrogateescape, which UTF-8 cannot write). The rest, a zero-width joiner
#: in an emoji or a Persian word, an ideographic space, prints as it is.
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069\ud800-\udfff]")


def printable(text: str) -> str:
    """``text`` with what would drive a terminal (a control character, a line separator, a bidirectional control,
    a lone surrogate) shown as ``\\xNN`` or ``\\uNNNN``: what a stranger wrote never drives the terminal, and prints
    on one line."""
    return _CONTROL.sub(lambda m: m.group(0).encode("unicode_escape").decode("ascii"), text)


def clipped(text: str, most: int = 200) -> str:
    """``text`` when it has at most ``most`` characters, else its first ``most``, "…" and how many it has: a
    URL a stranger made 100,000 characters long is named in a message, not copied into it whole."""
    if len(text) <= most:
        return text
    return f"{text[:most]}… ({len(text):,} characters)"
