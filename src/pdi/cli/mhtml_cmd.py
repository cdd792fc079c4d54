"""MHTML reading commands: `pdi mhtml ls|check` (issue 6)."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterable, Iterator
from typing import Any, TypeVar

import click

from pdi._wording import plural, printable
from pdi.cli.mhtml_group import mhtml
from pdi.errors import IntegrityError, NotFoundError, StoreError
from pdi.mhtml import Aggregate, Limits, check, parse
from pdi.mhtml.limits import MAX_READ_SECONDS, MAX_REFERENCES

_MB = 1024 * 1024
_F = TypeVar("_F", bound=Callable[..., Any])


def reading_limits(f: _F) -> _F:
    """The options bounding what reading a file may cost: ``max_seconds`` (0: no time
    limit) and ``max_references``; :func:`parse_limits` turns them into :class:`Limits`."""
    options: tuple[tuple[str, click.ParamType[Any], float, str], ...] = (
        ("--max-references", click.IntRange(min=0), MAX_REFERENCES,
         "Refuse files with more references in their HTML and CSS (exit 7)."),
        ("--max-seconds", click.FloatRange(min=0), MAX_READ_SECONDS,
         "Give up (exit 7) when reading or resolving the references of one part takes more CPU seconds"
         " (or ten times that on the clock; 0: no limit)."),
    )
    for name, kind, default, text in options:
        f = click.option(name, type=kind, default=default, show_default=True, help=text)(f)
    return f


def reading_one_file(f: _F) -> _F:
    """``--base``, ``--max-part-mb`` and the :func:`reading_limits` options: how `pdi mhtml ls` and `check` read."""
    f = reading_limits(f)
    f = click.option("--max-part-mb", type=float, default=200.0, show_default=True,
                     help="Refuse any part larger than this (exit 7).")(f)
    return click.option("--base", default=None, help="The URI the file was retrieved from (RFC 2557 §5 (d)).")(f)


def parse_limits(max_seconds: float, max_references: int, **sizes: int) -> Limits:
    """:class:`Limits` from the :func:`reading_limits` options and sizes (``max_part_bytes`` …)."""
    return Limits(max_read_seconds=max_seconds or None, max_references=max_references, **sizes)

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
    """One dict a part; its ``references`` are made one at a time as they are written
    (no dict a reference held at once) and ``satisfied``/``count`` give their tally."""
    spans: dict[int, tuple[int, int]] = {}  # part: (first, end) in agg.references, which are in part order
    tally: dict[int, list[int]] = {p.index: [0, 0] for p in agg.parts}  # part: [satisfied, not ignored]
    referenced_by: dict[int, set[int]] = {p.index: set() for p in agg.parts}
    refs = agg.references
    for i, r in enumerate(refs):
        first, _end = spans.get(r.source.index, (i, i))
        spans[r.source.index] = (first, i + 1)
        if r.status == "ignored":
            continue
        tally[r.source.index][1] += 1
        if r.target is not None:
            tally[r.source.index][0] += 1
            referenced_by[r.target.index].add(r.source.index)

    def references(index: int) -> Iterator[dict[str, Any]]:
        first, end = spans.get(index, (0, 0))
        for k in range(first, end):
            r = refs[k]
            if r.status != "ignored":
                yield {
                    "url": r.reference.url,
                    "kind": r.reference.kind,
                    "uri": r.uri,
                    "status": r.status,
                    "part": r.target.index if r.target is not None else None,
                    "rule": r.rule,
                }

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
                "references": references(p.index),
                "referenced_by": sorted(referenced_by[p.index]),
                "satisfied": tally[p.index][0],
                "count": tally[p.index][1],
            }
        )
    return out


def _json_chunks(value: Any, level: int = 0) -> Iterator[str]:
    """``json.dumps(value, indent=2, ensure_ascii=False)`` in pieces, iterators written as
    lists item by item (so a list of a million references is never held as dicts)."""
    pad = "  " * (level + 1)
    if isinstance(value, dict):
        if not value:
            yield "{}"
            return
        for n, (key, item) in enumerate(value.items()):
            yield ("{\n" if n == 0 else ",\n") + pad + json.dumps(key, ensure_ascii=False) + ": "
            yield from _json_chunks(item, level + 1)
        yield "\n" + "  " * level + "}"
    elif isinstance(value, (list, tuple, Iterator)):
        n = 0
        for n, item in enumerate(value, 1):
            yield ("[\n" if n == 1 else ",\n") + pad
            yield from _json_chunks(item, level + 1)
        yield ("\n" + "  " * level + "]") if n else "[]"
    else:
        yield json.dumps(value, ensure_ascii=False)


def _write(chunks: Iterable[str]) -> None:
    """Write ``chunks`` to standard output in blocks of about 64 KiB, then a line break."""
    out = sys.stdout
    block: list[str] = []
    size = 0
    for chunk in chunks:
        block.append(chunk)
        size += len(chunk)
        if size >= 1 << 16:
            out.write("".join(block))
            block.clear()
            size = 0
    block.append("\n")
    out.write("".join(block))
    out.flush()


@mhtml.command("ls")
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--json", "as_json", is_flag=True, help="Print JSON: every part with its references.")
@reading_one_file
def ls_command(
    file: str, as_json: bool, base: str | None, max_part_mb: float, max_seconds: float, max_references: int
) -> None:
    """List the parts of an MHTML FILE: type, size, resolved URI, and what each references.

    The table shows, per part, how many of its references the file itself satisfies;
    --json gives every reference with the part it resolves to. A part larger than
    --max-part-mb, more references than --max-references, or a part whose references
    take more than --max-seconds of processor time to read or to resolve is an error (exit 7).
    """
    limits = parse_limits(max_seconds, max_references, max_part_bytes=int(max_part_mb * _MB))
    agg = read_file(file, base=base, limits=limits)
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
        for row in listing:
            del row["satisfied"], row["count"]
        _write(_json_chunks(doc))
        return
    title = agg.header("Subject", decode=True)
    snapshot = agg.header("Snapshot-Content-Location")
    click.echo(f"{plural(len(agg.parts), 'part')}, {plural(agg.size, 'byte')}; root: part {agg.root.index}")
    if snapshot:
        click.echo(f"saved from: {printable(snapshot)}")
    if title:
        click.echo(f"title: {printable(title)}")
    from rich.console import Console
    from rich.table import Table

    table = Table(show_lines=False)
    for col in ("#", "type", "size", "location / content-id", "refs in file", "used by"):
        table.add_column(col, overflow="fold")
    for row in listing:
        sat, count = row["satisfied"], row["count"]
        label = row["location"] or (f"cid:{row['content_id']}" if row["content_id"] else "")
        table.add_row(
            f"{row['index']}{'*' if row['root'] else ''}",
            printable(row["content_type"]),
            str(row["size"]),
            printable(label),
            f"{sat}/{count}" if count else "",
            ",".join(str(i) for i in row["referenced_by"]),
        )
    # Labels are data from the file: no rich markup, emoji codes or highlighting in them.
    Console(width=200, markup=False, emoji=False, highlight=False).print(table)
    for w in agg.warnings:
        click.echo(f"warning: {printable(w)}", err=True)


@mhtml.command("check")
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--strict", is_flag=True, help="Fail on warnings too (unreferenced parts, unsatisfied references).")
@reading_one_file
def check_command(
    file: str, strict: bool, base: str | None, max_part_mb: float, max_seconds: float, max_references: int
) -> None:
    """Check an MHTML FILE: duplicate labels (§7), a missing start part, parts nobody
    references and references no part satisfies.

    Prints one line per finding and a summary. Exit status: 0 without errors; 3 on an
    error, or with --strict on a warning too; 1 when the file cannot be read as MIME;
    7 past a limit (--max-part-mb, --max-references, --max-seconds).
    """
    limits = parse_limits(max_seconds, max_references, max_part_bytes=int(max_part_mb * _MB))
    agg = read_file(file, base=base, limits=limits)
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
