"""``pdi search`` and ``pdi reindex``: the archive's full-text index from the command line.

``pdi search WORDS`` prints the passages that hold every word, best first:
each hit's name (``NAME#char=a,b``, the passage's matched words) and its
snippet with the matches between ``[`` and ``]`` (``--json``: the hits as
:meth:`pdi.archive.SearchHit.to_json` gives them, and the cursor of the next
page). ``pdi reindex`` makes the index again from the stored octets (after an
upgrade that added it, or to repair it), in one transaction; ``pdi reindex
--elements`` makes anew the element indexes of XML and SGML an earlier
reading made, one at a time. ``pdi index``
drains the indexer's queue: the text of large deposits, left to a background
worker (:mod:`pdi.archive.search`); ``pdi search`` says on standard error how
many names' text is still pending (``--json``: ``pending``).
"""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING

import click

from pdi._wording import plural
from pdi.cli import one_line
from pdi.cli.archive_cmd import archive_option, progress_bar
from pdi.cli.archive_io import open_archive

if TYPE_CHECKING:
    from pdi.archive import Archive


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
        click.echo(json.dumps({"query": str(results.query), "hits": [h.to_json() for h in results.hits],
                               "next": results.next, "pending": results.pending}))
        return
    for hit in results.hits:
        shown, at = [], 0
        for a, b in hit.marks:
            shown += [hit.snippet[at:a], "[", hit.snippet[a:b], "]"]
            at = b
        shown.append(hit.snippet[at:])
        click.echo(str(hit.name))
        click.echo("    " + one_line("".join(shown)).rstrip())  # a passage's last line ending: no trailing space
    if results.next is not None:
        click.echo(f"next page: --after {results.next}")
    if results.pending:
        click.echo(f"index pending: the text of {plural(results.pending, 'name')}"
                   " is not searched yet (pdi index)", err=True)


@click.command("reindex")
@click.option("--series", "-s", help="Only the documents of this series.")
@click.option("--elements", is_flag=True,
              help="Instead: make anew the element indexes of XML and SGML made by an earlier release of pdi (each in its own"
                   " transaction: safe to stop and run again; documents and names are not touched).")
@archive_option
def reindex_cmd(series: str | None, elements: bool, archive: str) -> None:
    """Make the full-text index again from the stored octets (one transaction: a failure keeps the old index)."""
    if elements:
        with open_archive(archive) as opened, progress_bar("element indexes") as progress:
            made = opened.reindex_elements(series=series, progress=lambda done: progress(done, done))
        click.echo(f"made {plural(made.rewritten, 'element index', 'element indexes')} anew")
        for sha256, media_type, why in made.left:
            click.echo(f"not made anew: {sha256} ({media_type}): {one_line(why)}")
        return
    with open_archive(archive) as opened, progress_bar("indexing") as progress:
        report = opened.reindex(series=series, progress=progress)
    click.echo(f"indexed {plural(report.passages, 'passage')} of {plural(report.sources, 'stored octet stream')}")
    for sha256, note in report.unreadable:
        click.echo(f"not indexed: {sha256}: {one_line(note)}")


@click.command("index")
@click.option("--watch", is_flag=True, help="Keep draining: look for new work every --interval seconds, until Ctrl-C. Says so on"
              " standard error, then a line for each batch indexed (how many, how long).")
@click.option("--interval", default=5.0, show_default=True, type=click.FloatRange(min=0.1), help="Seconds between looks (--watch).")
@click.option("--limit", type=click.IntRange(min=1), help="Index at most this many queued sources, then stop.")
@click.option("--pending", "show_pending", is_flag=True, help="Only list what is queued, index nothing.")
@archive_option
def index_cmd(watch: bool, interval: float, limit: int | None, show_pending: bool, archive: str) -> None:
    """Make the full-text passages large deposits left to the indexer's queue (safe in several processes)."""
    if show_pending and (watch or limit is not None):
        raise click.UsageError("--pending only lists what is queued: it goes with neither --watch nor --limit")
    with open_archive(archive) as opened:
        if show_pending:
            queued = opened.queued_indexes()
            for sha256, media_type, charset, size, attempts, error in queued:
                what = f"{sha256} {media_type}{'; charset=' + charset if charset else ''} {size} octets"
                click.echo(what + (f", {attempts} attempts, last: {one_line(error)}" if error else ""))
            if not queued:
                click.echo("nothing is queued: every text deposited is searched", err=True)
            return
        if watch:  # it runs until stopped: say at once that it works, and on what (as pdi serve does)
            from pdi.archive.catalog.opening import shown_location

            click.echo(f"pdi: watching {shown_location(archive)} for texts queued to index, looking every"
                       f" {interval:g} s (Ctrl-C stops)", err=True)
        try:
            _drain(opened, watch, interval, limit)
        except KeyboardInterrupt:  # Ctrl-C, or the server it runs beside stopping: a lease in hand runs out
            raise SystemExit(130) from None


def _drain(opened: Archive, watch: bool, interval: float, limit: int | None) -> None:
    """Drain the queue once, or (``watch``) for ever, looking again every ``interval`` seconds: a look that found
    work says on standard error how much and how long it took; one that found none says nothing."""
    while True:
        began = time.monotonic()
        run = opened.index_queued(limit=limit)
        took = f" in {time.monotonic() - began:.1f} s" if watch else ""
        if run.indexed or run.failed or not watch:
            click.echo(f"indexed {plural(run.passages, 'passage')} of {plural(run.indexed, 'queued octet stream')}"
                       + took, err=watch)
        for sha256, error in run.failed:
            click.echo(f"failed: {sha256}: {one_line(error)} (tried again later)", err=watch)
        if not watch:
            if run.failed:
                raise SystemExit(1)
            return
        time.sleep(interval)


def register(cli: click.Group) -> None:
    """Add ``search``, ``reindex`` and ``index`` to the top-level ``pdi`` group."""
    cli.add_command(search_cmd)
    cli.add_command(reindex_cmd)
    cli.add_command(index_cmd)
