"""The ``pdi mhtml`` group, shared by the reading commands (``mhtml_cmd``) and the writing ones (``capture_cmd``)."""

from __future__ import annotations

import click


@click.group()
def mhtml() -> None:
    """Read, check, pack and unpack RFC 2557 MHTML files."""
