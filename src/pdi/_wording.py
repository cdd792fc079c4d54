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


_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def printable(text: str) -> str:
    """``text`` with control characters (C0, DEL, C1, bidirectional overrides) shown as
    ``\\xNN`` or ``\\uNNNN``: what a file says never drives the terminal."""
    return _CONTROL.sub(lambda m: m.group(0).encode("unicode_escape").decode("ascii"), text)


def clipped(text: str, most: int = 200) -> str:
    """``text`` when it has at most ``most`` characters, else its first ``most``, "…" and how many it has: a
    URL a stranger made 100,000 characters long is named in a message, not copied into it whole."""
    if len(text) <= most:
        return text
    return f"{text[:most]}… ({len(text):,} characters)"
