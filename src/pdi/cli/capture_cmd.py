"""Writing commands: `pdi mhtml pack|unpack` and `pdi capture URL` (issue 6)."""

from __future__ import annotations

import click


def register(cli: click.Group) -> None:
    """Add ``capture`` to the top-level group (``pack``/``unpack`` go on ``pdi.cli.mhtml_group.mhtml``)."""
