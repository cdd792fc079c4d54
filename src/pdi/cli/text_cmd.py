"""Text fragment commands: `pdi text FILE FRAGMENT` (issue 4)."""

from __future__ import annotations

import click


def register(cli: click.Group) -> None:
    """Add this module's commands to the top-level ``pdi`` group."""
