"""MHTML reading commands: `pdi mhtml ls|check` (issue 6)."""

from __future__ import annotations

import click

from pdi.cli.mhtml_group import mhtml


def register(cli: click.Group) -> None:
    """Add the ``mhtml`` group (with its commands) to the top-level ``pdi`` group."""
    cli.add_command(mhtml)
