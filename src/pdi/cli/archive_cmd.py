"""Archive commands: `pdi init`, `series`, `add`, `version`, `get`, `ls`, `meta`, `verify`, `export`, `import` (issue 5)."""

from __future__ import annotations

import click


def register(cli: click.Group) -> None:
    """Add this module's commands to the top-level ``pdi`` group."""
