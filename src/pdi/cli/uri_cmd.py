"""URI commands: `pdi uri parse|resolve|normalize` (issue 2)."""

from __future__ import annotations

import click


def register(cli: click.Group) -> None:
    """Add this module's commands to the top-level ``pdi`` group."""
