"""Identifier commands: `pdi parse PDI` (issue 3)."""

from __future__ import annotations

import json
from typing import Any

import click

from pdi import formats
from pdi._wording import printable
from pdi.errors import UnsupportedError
from pdi.identifier import PDI, Citation, Fragment, Position


def _position_json(pos: Position) -> Any:
    if isinstance(pos, tuple):
        return list(pos)
    return pos


def _fragment_json(fragment: Fragment, fmt: str | None) -> dict[str, Any]:
    try:
        effective: str | None = fragment.effective_scheme(fmt)
    except UnsupportedError:
        effective = None
    return {
        "scheme": fragment.scheme,
        "effective_scheme": effective,
        "positions": [_position_json(p) for p in fragment.positions],
        "text": str(fragment),
    }


def _citation_json(citation: Citation) -> dict[str, Any]:
    return {"origin": _position_json(citation.origin), "cited": describe(citation.cited)}


def _effective_version(pdi: PDI) -> int | None:
    """The version the PDI names: as written, else 1 when it has a format (§2.2)."""
    if pdi.version is not None:
        return pdi.version
    return 1 if pdi.format is not None else None


def describe(pdi: PDI) -> dict[str, Any]:
    """The components of ``pdi`` as plain JSON values."""
    media_type: str | None = None
    if pdi.format is not None and pdi.format != "*":
        try:
            media_type = formats.media_type_for(pdi.format)
        except UnsupportedError:
            media_type = None
    return {
        "canonical": str(pdi),
        "series": pdi.series_name,
        "components": list(pdi.series),
        "country": pdi.country,
        "year": pdi.year,
        "month": pdi.month,
        "day": pdi.day,
        "unique_id": pdi.unique_id,
        "unique_id_raw": pdi.unique_id_raw,
        "is_serial": pdi.is_serial,
        "serial": pdi.serial,
        "format": pdi.format,
        "media_type": media_type,
        "version": "*" if pdi.version_wildcard else _effective_version(pdi),
        "version_omitted": pdi.format is not None
        and pdi.version is None
        and not pdi.version_wildcard,
        "fragment": _fragment_json(pdi.fragment, pdi.format) if pdi.fragment else None,
        "citation": _citation_json(pdi.citation) if pdi.citation else None,
        "is_pattern": pdi.is_pattern,
        "warnings": list(pdi.warnings),
    }


def _show(value: Any) -> str:
    if value is None:
        return "*"
    return str(value)


def _lines(pdi: PDI, indent: str = "") -> list[str]:
    d = describe(pdi)
    date = "/".join(
        _show(v) if v is None else f"{v:0{w}d}"
        for v, w in ((pdi.year, 4), (pdi.month, 2), (pdi.day, 2))
    )
    kind = (
        "wildcard"
        if pdi.unique_id_is_wildcard
        else ("daily serial" if pdi.is_serial else "encapsulated")
    )
    rows = [
        ("canonical", d["canonical"]),
        ("series", d["series"]),
        ("country", d["country"]),
        ("date", date),
        ("unique id", f"{printable(pdi.unique_id)} ({kind})"),  # %-decoded: a NUL, an ESC or a bidi override shown
        ("format", "-" if pdi.format is None else f"{pdi.format}"),
    ]
    if d["media_type"]:
        rows.append(("media type", d["media_type"]))
    if pdi.format is not None:
        rows.append(("version", f"{d['version']}" + (" (omitted)" if d["version_omitted"] else "")))
    if pdi.fragment is not None:
        frag = d["fragment"]
        scheme = frag["scheme"] or f"{frag['effective_scheme'] or '?'} (default)"
        rows.append(("fragment scheme", scheme))
        rows.append(("positions", ", ".join(json.dumps(p) for p in frag["positions"])))
    if pdi.is_pattern:
        rows.append(("pattern", "yes"))
    out = [f"{indent}{k + ':':<17}{v}" for k, v in rows]
    if pdi.citation is not None:
        out.append(f"{indent}{'cited at:':<17}{json.dumps(d['citation']['origin'])}")
        out.append(f"{indent}cited PDI:")
        out.extend(_lines(pdi.citation.cited, indent + "  "))
    return out



@click.command("parse")
@click.argument("pdi")
@click.option(
    "--strict",
    is_flag=True,
    help="Turn every lenient reading (one-digit month, non-ISO country, "
    "missing version, ...) into an error.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the components as JSON.")
def parse_command(pdi: str, strict: bool, as_json: bool) -> None:
    """Parse PDI (urn:pdi://… or pdi://…) and print its components,
    canonical form and warnings.

    Exit status 0 for a valid PDI, 1 for an invalid one (one line on stderr).
    """
    value = PDI.parse(pdi, strict=strict)
    if as_json:
        click.echo(json.dumps(describe(value), indent=2, ensure_ascii=False))
        return
    for line in _lines(value):
        click.echo(line)
    for warning in value.warnings:
        click.echo(f"warning: {warning}")


def register(cli: click.Group) -> None:
    """Add this module's commands to the top-level ``pdi`` group."""
    cli.add_command(parse_command)
