"""MkDocs hooks: the reference pages written from the code itself, so the manual cannot drift from it.

A page holds a marker comment on a line of its own (``<!-- cli-reference -->``,
``<!-- http-api-reference -->``, ``<!-- exit-codes-from-errors -->``), and the
build puts there what :mod:`pdi.cli.reference_pages` writes: every command of
``pdi`` as ``pdi COMMAND --help`` prints it, every operation of the resolver's
``/openapi.json``, every exit status. ``pdi docs reference/cli`` (and
``reference/http-api``, ``reference/exit-codes``) prints the same text, plain.

tests/test_docs_build.py builds the site and checks that each command and
each path is there.
"""

from __future__ import annotations

from typing import Any

from pdi.cli.reference_pages import fill


def on_page_markdown(markdown: str, **_: Any) -> str:
    """Put the generated reference where a page's marker stands; drop what is for readers of the repository."""
    return fill(markdown, site=True)
