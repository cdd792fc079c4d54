"""Identifier commands: `pdi parse PDI` (issue 3)."""

from __future__ import annotations

import click


def register(cli: click.Group) -> None:
    """Add this module's commands to the top-level ``pdi`` group."""
