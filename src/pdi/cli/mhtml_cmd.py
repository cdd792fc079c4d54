"""MHTML reading commands: `pdi mhtml ls|check` (issue 6)."""

from __future__ import annotations

import json
import re
import sys
from typing import Any

import click
from rich.console import Console
from rich.table import Table

from pdi._wording import plural
from pdi.cli.mhtml_group import mhtml
from pdi.errors import IntegrityError, NotFoundError, StoreError
from pdi.mhtml import Aggregate, Limits, check, parse

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def printable(text: str) -> str:
    """``text`` with control characters (C0, DEL, C1, bidirectional overrides) shown as
    ``\\xNN`` or ``\\uNNNN``: what a file says never drives the terminal."""
    return _CONTROL.sub(lambda m: m.group(0).encode("unicode_escape").decode("ascii"), text)


def read_file(path: str, *, base: str | None = None, limits: Limits | None = None) -> Aggregate:
    """Parse the MHTML file at ``path`` (``-``: standard input), streamed in chunks.

    A missing file is a not-found error; any other failure to read it a storage error.
    """
    if path == "-":
        return parse(sys.stdin.buffer, base=base, limits=limits)
    try:
        with open(path, "rb") as f:
            return parse(f, base=base, limits=limits)
    except FileNotFoundError as exc:
        raise NotFoundError(f"no such file: {path}") from exc
    except OSError as exc:
        raise StoreError(f"cannot read {path}: {exc.strerror}") from exc


def _listing(agg: Aggregate) -> list[dict[str, Any]]:
    by_part: dict[int, list[dict[str, Any]]] = {p.index: [] for p in agg.parts}
    referenced_by: dict[int, set[int]] = {p.index: set() for p in agg.parts}
    for r in agg.references:
        if r.status == "ignored":
            continue
        by_part[r.source.index].append(
            {
                "url": r.reference.url,
                "kind": r.reference.kind,
                "uri": r.uri,
                "status": r.status,
                "part": r.target.index if r.target is not None else None,
                "rule": r.rule,
            }
        )
        if r.target is not None:
            referenced_by[r.target.index].add(r.source.index)
    out = []
    for p in agg.parts:
        out.append(
            {
                "index": p.index,
                "root": p is agg.root,
                "content_type": p.content_type,
                "charset": p.charset,
                "encoding": p.encoding if p.is_text else None,
                "size": len(p.data),
                "content_location": p.content_location,
                "location": p.location,
                "content_id": p.content_id,
                "base": p.base,
                "references": by_part[p.index],
                "referenced_by": sorted(referenced_by[p.index]),
            }
        )
    return out


@mhtml.command("ls")
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--json", "as_json", is_flag=True, help="Print JSON: every part with its references.")
@click.option("--base", default=None, help="The URI the file was retrieved from (RFC 2557 §5 (d)).")
def ls_command(file: str, as_json: bool, base: str | None) -> None:
    """List the parts of an MHTML FILE: type, size, resolved URI, and what each references.

    The table shows, per part, how many of its references the file itself satisfies;
    --json gives every reference with the part it resolves to.
    """
    agg = read_file(file, base=base)
    listing = _listing(agg)
    if as_json:
        doc = {
            "size": agg.size,
            "root": agg.root.index,
            "boundary": agg.boundary,
            "title": agg.header("Subject", decode=True),
            "snapshot_location": agg.header("Snapshot-Content-Location"),
            "parts": listing,
            "warnings": list(agg.warnings),
        }
        click.echo(json.dumps(doc, indent=2, ensure_ascii=False))
        return
    title = agg.header("Subject", decode=True)
    snapshot = agg.header("Snapshot-Content-Location")
    click.echo(f"{plural(len(agg.parts), 'part')}, {plural(agg.size, 'byte')}; root: part {agg.root.index}")
    if snapshot:
        click.echo(f"saved from: {printable(snapshot)}")
    if title:
        click.echo(f"title: {printable(title)}")
    table = Table(show_lines=False)
    for col in ("#", "type", "size", "location / content-id", "refs in file", "used by"):
        table.add_column(col, overflow="fold")
    for row in listing:
        refs = row["references"]
        sat = sum(1 for r in refs if r["status"] == "satisfied")
        label = row["location"] or (f"cid:{row['content_id']}" if row["content_id"] else "")
        table.add_row(
            f"{row['index']}{'*' if row['root'] else ''}",
            printable(row["content_type"]),
            str(row["size"]),
            printable(label),
            f"{sat}/{len(refs)}" if refs else "",
            ",".join(str(i) for i in row["referenced_by"]),
        )
    # Labels are data from the file: no rich markup, emoji codes or highlighting in them.
    Console(width=200, markup=False, emoji=False, highlight=False).print(table)
    for w in agg.warnings:
        click.echo(f"warning: {printable(w)}", err=True)


@mhtml.command("check")
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--strict", is_flag=True, help="Fail on warnings too (unreferenced parts, unsatisfied references).")
@click.option("--base", default=None, help="The URI the file was retrieved from (RFC 2557 §5 (d)).")
def check_command(file: str, strict: bool, base: str | None) -> None:
    """Check an MHTML FILE: duplicate labels (§7), a missing start part, parts nobody
    references and references no part satisfies.

    Prints one line per finding and a summary. Exit status: 0 without errors; 3 on an
    error, or with --strict on a warning too; 1 when the file cannot be read as MIME.
    """
    agg = read_file(file, base=base)
    report = check(agg)
    for f in report.findings:
        click.echo(printable(str(f)))
    click.echo(
        f"{plural(len(agg.parts), 'part')}, "
        f"{plural(sum(1 for r in report.references if r.satisfied), 'reference')} satisfied, "
        f"{plural(len(report.errors), 'error')}, {plural(len(report.warnings), 'warning')}, "
        f"{plural(report.unsatisfied_links, 'link')} to pages outside the file"
    )
    if report.errors or (strict and report.warnings):
        raise IntegrityError(
            f"{file}: {plural(len(report.errors), 'error')}, {plural(len(report.warnings), 'warning')}"
        )


def register(cli: click.Group) -> None:
    """Add the ``mhtml`` group (with its commands) to the top-level ``pdi`` group."""
    cli.add_command(mhtml)
