"""``pdi uri …``: RFC 3986 parsing, resolution and normalization from the shell."""

from __future__ import annotations

import click


@click.group()
def uri() -> None:
    """Parse, resolve and normalize URIs (RFC 3986; RFC 2396 as a mode)."""
