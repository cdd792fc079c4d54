"""``pdi search`` and ``pdi reindex``: the archive's full-text index from the command line.

``pdi search WORDS`` prints the passages that hold every word, best first:
each hit's name (``NAME#char=a,b``, the passage's matched words) and its
snippet with the matches between ``[`` and ``]`` (``--json``: the hits as
:meth:`pdi.archive.SearchHit.to_json` gives them, and the cursor of the next
page). ``pdi reindex`` makes the index again from the stored octets (after an
upgrade that added it, or to repair it), in one transaction; ``pdi reindex
--elements`` makes anew the element indexes of XML and SGML an earlier
reading made, and keeps a first parse of SGML that has none, one at a time. ``pdi index``
drains the indexer's queue: the text of large deposits, left to a background
worker (:mod:`pdi.archive.search`); ``pdi search`` says on standard error how
many names' text is still pending (``--json``: ``pending``), and that no passage holds the words when none
does (standard output then empty, exit 0), and why where it can tell (``--json``: ``note``).
"""

from __future__ import annotations

import json
import logging
import signal
import time
from typing import TYPE_CHECKING

import click

from pdi._wording import plural
from pdi.cli import one_line
from pdi.cli.archive_cmd import archive_option, progress_bar
from pdi.cli.archive_io import open_archive

if TYPE_CHECKING:
    from pdi.archive import Archive


class _SearchCommand(click.Command):
    """``pdi search``, whose words may not begin with ``-`` before a ``--``: click would read ``-self`` as ``-s elf``
    (the series ``elf``) and ``-foo`` as an unknown ``-f``, where the user meant a word, or a minus the query language
    does not have (docs/reference/search.md: a query is words, never a query language)."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        valued = {o for p in self.params if isinstance(p, click.Option) and not p.is_flag for o in p.opts}
        words: list[str] = []
        options: list[str] = []
        dashed: str | None = None
        after = False
        for at, arg in enumerate(args):
            if after:
                words.append(arg)
            elif arg == "--":
                after = True
            elif at > 0 and args[at - 1] in valued:
                options.append(arg)  # the value of -s, --series, -n …: a series or a cursor may begin with '-'
            elif not arg.startswith("-") or arg == "-":
                words.append(arg)
            elif arg.startswith("--") or arg in valued or arg == "-h" or (arg[:2] == "-n" and arg[2:].isdigit()):
                options.append(arg)  # an option, -n5 (as head -n5), or a long one click names if unknown
            else:
                dashed = dashed or arg
                words.append(arg)
        if dashed is not None:
            _refuse_a_dashed_word(ctx, dashed, words, options, valued)
        return super().parse_args(ctx, args)


def _refuse_a_dashed_word(ctx: click.Context, dashed: str, words: list[str], options: list[str],
                          valued: set[str]) -> None:
    """The usage error of a word beginning with ``-`` written before any ``--``: what click would have read it as,
    that the query has no minus, and the command line that searches for it."""
    import shlex

    glued, value = dashed[:2], dashed[2:]
    what = "the series" if glued == "-s" else "the limit"
    read = (f"would be read as {glued} {shlex.quote(value)} ({what} {value!r})" if glued in valued
            else "is no option of pdi search")
    meant = f"; for {what} {value!r}, write {glued} {shlex.quote(value)}" if glued in valued else ""
    raise click.UsageError(
        f"{dashed!r} {read}: a query has no operators, and a leading '-' excludes nothing (the word is searched"
        f" as {dashed.lstrip('-')!r}); to search for it, write the words after '--' and the options before it:"
        f" {shlex.join(['pdi', 'search', *options, '--', *words])}{meant}", ctx=ctx)


@click.command("search", cls=_SearchCommand)
@click.argument("words", nargs=-1, required=True)
@click.option("--series", "-s", help="Only names of this series.")
@click.option("--limit", "-n", default=20, show_default=True, type=click.IntRange(min=1, max=200), help="Hits on a page.")
@click.option("--after", help="Go on after this cursor (the 'next' a page printed).")
@click.option("--json", "as_json", is_flag=True, help="Print the page as JSON.")
@archive_option
def search_cmd(words: tuple[str, ...], series: str | None, limit: int, after: str | None, as_json: bool, archive: str) -> None:
    """Find the passages holding every one of WORDS ("a phrase" in quotes; no operators).

    No hit prints nothing on standard output (exit 0) and a note on standard
    error. A word beginning with '-' is refused before a '--' (-self would be
    -s elf): write the words after it, options before (pdi search -- -self);
    the '-' excludes nothing, it is passed over as punctuation is."""
    with open_archive(archive) as opened:
        results = opened.search(" ".join(words), series=series, limit=limit, after=after)
    if as_json:
        click.echo(json.dumps({"query": str(results.query), "hits": [h.to_json() for h in results.hits],
                               "next": results.next, "pending": results.pending, "note": results.note}))
        return
    for hit in results.hits:
        shown, at = [], 0
        for a, b in hit.marks:
            shown += [hit.snippet[at:a], "[", hit.snippet[a:b], "]"]
            at = b
        shown.append(hit.snippet[at:])
        click.echo(str(hit.name))
        click.echo("    " + one_line("".join(shown)).rstrip())  # a passage's last line ending: no trailing space
    if not results.hits and after is None:  # on standard error: a script reads no hit from an empty output
        if results.pending:  # the texts not searched yet may hold them: "no passage holds" would be untrue
            click.echo("note: no passage searched holds every one of these words, but the texts not searched yet"
                       " may (pdi index searches them); else try fewer words, other spellings, or a phrase's words"
                       " without its quotes", err=True)
        else:
            click.echo("note: no passage holds every one of these words: try fewer words, other spellings,"
                       " or a phrase's words without its quotes", err=True)
        if results.note:  # why, where the archive can tell: a database folding only ASCII letters
            click.echo(f"note: {results.note}", err=True)
    if results.next is not None:
        click.echo(f"next page: --after {results.next}")
    if results.pending:
        click.echo(f"index pending: the text of {plural(results.pending, 'name')}"
                   " is not searched yet (pdi index)", err=True)


@click.command("reindex")
@click.option("--series", "-s", help="Only the documents of this series.")
@click.option("--elements", is_flag=True,
              help="Instead: make anew the element indexes of XML and SGML, and the indexes of videos (their duration),"
                   " made by an earlier release of pdi, and keep a first parse of each SGML document that has none (its #elt= is refused until then) (each in its own"
                   " transaction: safe to stop and run again; documents and names are not touched).")
@archive_option
def reindex_cmd(series: str | None, elements: bool, archive: str) -> None:
    """Make the full-text index again from the stored octets (one transaction: a failure keeps the old index)."""
    if elements:
        with open_archive(archive) as opened, progress_bar("element indexes") as progress:
            opened.refuse_if_read_only()  # a member of the archive's group, or read-only media: before any parse
            made = opened.reindex_elements(series=series, progress=lambda done: progress(done, done))
        click.echo(f"made {plural(made.rewritten, 'element index', 'element indexes')} anew")
        if made.videos:
            click.echo(f"made {plural(made.videos, 'video index', 'video indexes')} anew")
        for sha256, media_type, why in made.left:
            click.echo(f"not made anew: {sha256} ({media_type}): {one_line(why)}")
        return
    with open_archive(archive) as opened, progress_bar("indexing") as progress:
        opened.refuse_if_read_only()
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
@click.option("--log-format", type=click.Choice(["text", "json"]), default="text", show_default=True,
              help="How --watch says what it does on standard error: text lines, or json: one JSON object a line,"
              " as pdi serve --log-format json writes them (pdi serve --indexer passes its own).")
@click.option("--log-file", metavar="FILE", help="With --watch, write those lines (--log-format) to FILE instead of"
              " standard error; SIGHUP reopens it (after a rotation by renaming).")
@archive_option
def index_cmd(watch: bool, interval: float, limit: int | None, show_pending: bool, log_format: str,
              log_file: str | None, archive: str) -> None:
    """Make the full-text passages large deposits left to the indexer's queue (safe in several processes)."""
    if show_pending and (watch or limit is not None):
        raise click.UsageError("--pending only lists what is queued: it goes with neither --watch nor --limit")
    if (log_format != "text" or log_file is not None) and not watch:
        raise click.UsageError("--log-format and --log-file say how --watch logs: give --watch too, or leave them out")
    log = _watch_log(log_format, log_file) if watch else None
    if log is None:
        _index(watch, interval, limit, show_pending, archive, None)
        return
    from pdi.cli.commands import error_line
    from pdi.errors import PDIError

    try:  # every line it writes is one of the log's records, its last (why it stopped) too
        _index(watch, interval, limit, show_pending, archive, log)
    except PDIError as exc:
        log.error(error_line(exc), extra={"fields": {"event": "error"}})
        raise SystemExit(exc.exit_code) from None
    except Exception:  # a bug: its traceback is the record's "exception"
        log.critical("pdi index --watch stopped on an unexpected error", exc_info=True,
                     extra={"fields": {"event": "error"}})
        raise SystemExit(1) from None


def _watch_log(log_format: str, log_file: str | None) -> logging.Logger | None:
    """The logger ``pdi index --watch`` says its lines through, when ``--log-format json`` or ``--log-file`` asks for
    records (as :func:`pdi.server.process.observe.configure_logging` makes them for ``pdi serve``); else ``None``:
    plain lines on standard error. A ``--log-file`` is reopened at its path after ``SIGHUP``."""
    from pdi.server.process.observe import configure_logging, reopen_logs

    if not configure_logging(log_format, log_file):
        return None
    if log_file is not None:
        signal.signal(signal.SIGHUP, reopen_logs)
    log = logging.getLogger("pdi.index")
    log.setLevel(logging.INFO)  # its lines are all it says, in text records too
    return log


def _say(log: logging.Logger | None, line: str, event: str, *, err: bool = True, level: int = logging.INFO,
         **fields: object) -> None:
    """One line of ``pdi index``: ``line`` echoed (on standard error if ``err``), or a record of ``log`` with
    ``"event": event`` and ``fields``."""
    if log is None:
        click.echo(line, err=err)
    else:
        log.log(level, line, extra={"fields": {"event": event, **fields}})


def _index(watch: bool, interval: float, limit: int | None, show_pending: bool, archive: str,
           log: logging.Logger | None) -> None:
    with open_archive(archive) as opened:
        if show_pending:
            queued = opened.queued_indexes()
            for sha256, media_type, charset, size, attempts, error in queued:
                what = f"{sha256} {media_type}{'; charset=' + charset if charset else ''} {size} octets"
                click.echo(what + (f", {attempts} attempts, last: {one_line(error)}" if error else ""))
            if not queued:
                click.echo("nothing is queued: every text deposited is searched", err=True)
            return
        opened.refuse_if_read_only()  # before it says it watches: a reader never drains the queue
        if watch:  # it runs until stopped: say at once that it works, and on what (as pdi serve does)
            from pdi.archive.catalog.opening import shown_location

            shown = shown_location(archive)
            _say(log, f"pdi: watching {shown} for texts queued to index, looking every {interval:g} s (Ctrl-C stops)",
                 "watching", archive=shown, interval=interval)
        try:
            _drain(opened, watch, interval, limit, log)
        except KeyboardInterrupt:  # Ctrl-C, or the server it runs beside stopping: a lease in hand runs out
            raise SystemExit(130) from None


def _drain(opened: Archive, watch: bool, interval: float, limit: int | None, log: logging.Logger | None = None) -> None:
    """Drain the queue once, or (``watch``) for ever, looking again every ``interval`` seconds: a look that found
    work says on standard error (or in ``log``) how much and how long it took; one that found none says nothing."""
    while True:
        began = time.monotonic()
        run = opened.index_queued(limit=limit)
        seconds = time.monotonic() - began
        took = f" in {seconds:.1f} s" if watch else ""
        if run.indexed or run.failed or not watch:
            _say(log, f"indexed {plural(run.passages, 'passage')} of {plural(run.indexed, 'queued octet stream')}"
                 + took, "indexed", err=watch, passages=run.passages, sources=run.indexed, seconds=round(seconds, 1))
        for sha256, error in run.failed:
            _say(log, f"failed: {sha256}: {one_line(error)} (tried again later)", "index-failed", err=watch,
                 level=logging.WARNING, sha256=sha256, error=error)
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
