"""Capture command: `pdi capture URL` (issue 6)."""

from __future__ import annotations

import click


def register(cli: click.Group) -> None:
    """Add this module's commands to the top-level ``pdi`` group."""
