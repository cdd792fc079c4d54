"""Which files of the manual (``docs/``) pdi carries for ``pdi docs``: one list, read by the command
(:mod:`pdi.cli.docs_cmd`) and by ``setup.py``, which copies them into the wheel and loads this file by its path
(so it imports nothing but the standard library)."""

from __future__ import annotations

from fnmatch import fnmatchcase

#: The manual's files pdi carries, relative to ``docs/``, each pattern matched part by part (``*`` never crosses a
#: ``/``): the pages, the deployment examples and the texts of the specifications; not the site's own files
#: (screenshots, stylesheet, build hooks).
MANUAL_FILES = ("*.md", "*/*.md", "deploy/*", "specs/*.txt")


def selected(relative: str) -> bool:
    """Whether the manual's file at ``relative`` (``how-to/operate.md``) is one pdi carries (:data:`MANUAL_FILES`)."""
    parts = relative.split("/")
    return any(len(pattern.split("/")) == len(parts)
               and all(fnmatchcase(part, want) for part, want in zip(parts, pattern.split("/"), strict=True))
               for pattern in MANUAL_FILES)
