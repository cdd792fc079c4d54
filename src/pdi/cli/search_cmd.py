"""``pdi search`` and ``pdi reindex``: the archive's full-text index from the command line.

``pdi search WORDS`` prints the passages that hold every word, best first:
each hit's name (``NAME#char=a,b``, the passage's matched words) and its
snippet with the matches between ``[`` and ``]`` (``--json``: the hits as
:meth:`pdi.archive.SearchHit.to_json` gives them, and the cursor of the next
page). ``pdi reindex`` makes the index again from the stored octets (after an
upgrade that added it, or to repair it), in one transaction.
"""

from __future__ import annotations

import json

import click

from pdi.cli import one_line
from pdi.cli.archive_cmd import archive_option, open_archive, progress_bar


@click.command("search")
@click.argument("words", nargs=-1, required=True)
@click.option("--series", "-s", help="Only names of this series.")
@click.option("--limit", "-n", default=20, show_default=True, type=click.IntRange(min=1, max=200), help="Hits on a page.")
@click.option("--after", help="Go on after this cursor (the 'next' a page printed).")
@click.option("--json", "as_json", is_flag=True, help="Print the page as JSON.")
@archive_option
def search_cmd(words: tuple[str, ...], series: str | None, limit: int, after: str | None, as_json: bool, archive: str) -> None:
    """Find the passages holding every one of WORDS ("a phrase" in quotes; no operators)."""
    with open_archive(archive) as opened:
        results = opened.search(" ".join(words), series=series, limit=limit, after=after)
    if as_json:
        click.echo(json.dumps({"query": str(results.query), "hits": [h.to_json() for h in results.hits], "next": results.next}))
        return
    for hit in results.hits:
        shown, at = [], 0
        for a, b in hit.marks:
            shown += [hit.snippet[at:a], "[", hit.snippet[a:b], "]"]
            at = b
        shown.append(hit.snippet[at:])
        click.echo(str(hit.name))
        click.echo("    " + one_line("".join(shown)))
    if results.next is not None:
        click.echo(f"next page: --after {results.next}")


@click.command("reindex")
@click.option("--series", "-s", help="Only the documents of this series.")
@archive_option
def reindex_cmd(series: str | None, archive: str) -> None:
    """Make the full-text index again from the stored octets (one transaction: a failure keeps the old index)."""
    with open_archive(archive) as opened, progress_bar("indexing") as progress:
        report = opened.reindex(series=series, progress=progress)
    click.echo(f"indexed {report.passages} passages of {report.sources} stored octet streams")
    for sha256, note in report.unreadable:
        click.echo(f"not indexed: {sha256}: {one_line(note)}")


def register(cli: click.Group) -> None:
    """Add ``search`` and ``reindex`` to the top-level ``pdi`` group."""
    cli.add_command(search_cmd)
    cli.add_command(reindex_cmd)
