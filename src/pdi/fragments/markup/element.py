"""One element of an HTML or XML source: where its start tag begins and where the element ends.

The value the readers (:mod:`pdi.fragments.markup.reading`, and html5lib's
side in :mod:`pdi.fragments.markup.html`) make, the index made at deposit
(:mod:`pdi.fragments.markup.index`) keeps, and ``elt`` and ``name``
fragments (:mod:`pdi.fragments.markup`) cut by. Below all of them, so each
imports it from here. Pure: no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Element:
    """One start tag of the source and the element it opens: code points ``[start, end)`` of the CRLF-canonical text."""

    number: int
    name: str
    start: int
    end: int
    attributes: dict[str, str]
