"""Writing commands: `pdi mhtml pack|unpack` and `pdi capture URL` (issue 6).

Thin: parse arguments, call :mod:`pdi.capture` / :mod:`pdi.mhtml`, print.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import click

from pdi._wording import plural, printable
from pdi.cli.archive_cmd import archive_option
from pdi.cli.archive_io import write_out
from pdi.cli.mhtml_cmd import parse_limits, reading_limits
from pdi.cli.mhtml_group import mhtml
from pdi.errors import ImmutabilityError, LimitError

_MB = 1024 * 1024


@contextmanager
def _progress(description: str) -> Iterator[Callable[[int, int], None]]:
    """A rich progress bar on stderr (only on a terminal); yields a ``(done, total)`` callback."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    console = Console(stderr=True)
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        console=console,
        transient=True,
        disable=not console.is_terminal,
    ) as progress:
        task = progress.add_task(description, total=None)

        def update(done: int, total: int) -> None:
            progress.update(task, completed=done, total=total)

        yield update


def _refuse_overwriting_inputs(output: str, index: str, root: str | None, files: tuple[tuple[str, str], ...]) -> None:
    try:
        out = os.stat(output)
    except OSError:
        return  # nothing there yet (or unreachable: writing will say so)
    folder = Path(root) if root is not None else Path(index).parent
    for path in [Path(index), *(folder / rel for _url, rel in files)]:
        try:
            same = os.path.samestat(os.stat(path), out)
        except OSError:
            continue
        if same:
            raise ImmutabilityError(f"{output} is {path}, one of the packed files: refusing to write over it")


@mhtml.command("pack")
@click.argument("index", metavar="INDEX.html")
@click.option("-o", "--output", required=True, metavar="OUT.mht", help="Where to write the MHTML file ('-' for stdout).")
@click.option(
    "--base",
    default="thismessage:/",
    show_default=True,
    help="The URI of the root folder, ending with '/': parts are labelled with it (give the site's URL to keep real URIs).",
)
@click.option("--root", type=click.Path(file_okay=False), help="Folder files may come from (default: INDEX's folder).")
def pack_command(index: str, output: str, base: str, root: str | None) -> None:
    """Pack INDEX.html and the local files it uses into one MHTML file.

    Follows src, srcset, poster, object data, stylesheet and icon links,
    frames, inline style and <style> url(), and CSS @import and url()
    recursively; never reads outside the root folder. References it cannot
    satisfy are listed on stderr. The same files always give the same bytes.
    OUT may not be one of the files packed (exit 5).
    """
    from pdi.capture import pack_path

    packed = pack_path(index, base=base, root=root)
    if output != "-":
        _refuse_overwriting_inputs(output, index, root, packed.files)
    write_out(packed.mhtml, output)
    click.echo(f"packed {plural(len(packed.files), 'part')}, {plural(len(packed.mhtml), 'byte')}", err=True)
    for failure in packed.failures:
        click.echo(f"not packed: {printable(failure.reason)}", err=True)


@mhtml.command("unpack")
@click.argument("file", metavar="FILE")
@click.argument("directory", metavar="DIR")
@click.option("--max-parts", type=int, default=10_000, show_default=True, help="Refuse files with more parts.")
@click.option("--max-part-mb", type=float, default=200.0, show_default=True, help="Refuse any part larger than this.")
@click.option("--max-total-mb", type=float, default=1024.0, show_default=True, help="Refuse parts adding up to more.")
@click.option("--max-depth", type=int, default=16, show_default=True, help="Refuse multiparts nested deeper.")
@click.option("--max-header-kb", type=float, default=256.0, show_default=True, help="Refuse longer header blocks.")
@reading_limits
def unpack_command(
    file: str,
    directory: str,
    max_parts: int,
    max_part_mb: float,
    max_total_mb: float,
    max_depth: int,
    max_header_kb: float,
    max_seconds: float,
    max_references: int,
) -> None:
    """Write every part of an MHTML FILE into DIR so the page opens offline from DIR/index.html.

    File names are made from the parts' labels but never taken from them: no
    sub-folders, no '..', no absolute paths, no device names, nothing
    overwritten, no links followed. References (including cid: ones, meta
    refresh, form actions, ping and those in iframe srcdoc) are rewritten to
    the local files; unsatisfied ones to their absolute URIs (file: ones, which
    would reach the local disk, to about:blank); the <base> element to './'.
    Each page gets a Content-Security-Policy <meta> first: no script runs.
    Past a limit nothing is written (exit 7); --max-seconds bounds the processor
    time of reading and rewriting the references of each page.
    """
    from pdi.capture import unpack_to
    from pdi.cli.mhtml_cmd import read_file
    from pdi.mhtml.unpack import UnpackLimits, plan

    limits = UnpackLimits(
        max_parts=max_parts, max_part_bytes=int(max_part_mb * _MB), max_total_bytes=int(max_total_mb * _MB)
    )
    reading = parse_limits(
        max_seconds,
        max_references,
        max_depth=max_depth,
        max_parts=max_parts,
        max_header_bytes=int(max_header_kb * 1024),
        max_part_bytes=int(max_part_mb * _MB),
    )
    # Quoted-printable is at most three times the bytes it encodes: a larger file
    # cannot fit the total limit, so it is refused before it is read into memory.
    size = Path(file).stat().st_size if file != "-" and Path(file).is_file() else 0
    if size > 3 * limits.max_total_bytes + _MB:
        raise LimitError(f"{file} is {plural(size, 'byte')}: its parts would exceed --max-total-mb {max_total_mb}")
    aggregate = read_file(file, limits=reading)
    result = plan(aggregate, limits=limits)
    written = unpack_to(result, directory)
    click.echo(f"wrote {plural(len(written), 'file')} into {directory}", err=True)
    for url in result.unsatisfied:
        click.echo(f"left pointing at: {printable(url)}", err=True)


def _capture(
    url: str,
    *,
    browser: bool,
    allow_private: bool,
    timeout: float,
    max_mb: float,
    concurrency: int,
    settle: float,
    warc: str | None = None,
) -> tuple[bytes, str]:
    from pdi.capture import Exchange, Limits, capture, capture_with_browser

    if browser:
        shot = capture_with_browser(
            url, allow_private=allow_private, timeout=timeout, settle=settle, max_bytes=int(4 * max_mb * _MB)
        )
        for refused in shot.refused:
            click.echo(f"refused: {printable(refused)}", err=True)
        return shot.mhtml, shot.final_url
    limits = Limits(
        total_timeout=timeout,
        max_resource_bytes=int(max_mb * _MB),
        max_total_bytes=int(4 * max_mb * _MB),
        concurrency=concurrency,
    )
    exchanges: list[Exchange] | None = [] if warc is not None else None
    from rich.markup import escape

    with _progress(f"capturing {escape(url)}") as update:
        got = capture(url, allow_private=allow_private, limits=limits, progress=update, exchanges=exchanges)
    if warc is not None and exchanges is not None:
        import io

        from pdi import __version__
        from pdi.interop.warc import write_exchanges

        buffer = io.BytesIO()
        write_exchanges(buffer, exchanges, software=f"pdi {__version__} (pdi capture)")
        write_out(buffer.getvalue(), warc)
    for hop in got.redirects:
        click.echo(f"redirect {hop.status}: {printable(hop.source)} -> {printable(hop.target)}", err=True)
    for failure in got.failures:
        click.echo(f"missing: {printable(failure.reason)}", err=True)
    return got.mhtml, got.final_url



def _refuse_an_unescaped_url(url: str) -> None:
    """A :class:`~pdi.errors.ParseError` (exit 1) naming the first character of ``url`` a URI writes escaped, and
    offering the URL so written, before anything is fetched: the name a capture mints encapsulates its URL as typed,
    so ``…/a b.html`` and ``…/a%20b.html``, one page to a browser, would be two documents."""
    from pdi._wording import NAME_MOST, clipped
    from pdi.errors import ParseError
    from pdi.uri import iri_changes, unescaped_at, url_meant

    try:
        meant = url_meant(url)
    except ParseError as exc:  # no IRI either: what the URI parser says of it, with where
        raise ParseError(f"not a URL capture can fetch: {exc.reason}", text=url, offset=exc.offset,
                         rule=exc.rule) from None
    if meant == url:
        return
    at = unescaped_at(url) or 0
    ch = url[at]
    if ch == "%":
        how = "a URI writes a '%' that begins no %HH escape as %25 (RFC 3986 §2.1)"
    elif ch.isascii():
        how = f"a URI writes {ch!r} as %{ord(ch):02X} (RFC 3986 §2.1)"
    elif any(a <= at < b and not new.startswith("%") for a, b, new in iri_changes(url)):
        how = f"a URI writes the host's {ch!r} in IDNA's ASCII form (RFC 3987 §3.1)"
    else:
        how = f"a URI writes {ch!r} as {''.join(f'%{o:02X}' for o in ch.encode())}, its UTF-8 octets (RFC 3987 §3.1)"
    raise ParseError(
        f"{how}, as a browser sends it, and the name a capture mints holds the URL as given: did you mean"
        f" '{clipped(meant, NAME_MOST)}'?", text=url, offset=at, rule="RFC 3986 URI")


@click.command("capture")
@click.argument("url")
@click.option("--browser", is_flag=True, help="Let headless Chromium load the page (runs its JavaScript).")
@click.option("--series", "-s", metavar="S", help="Deposit the MHTML in the archive under series S.")
@click.option("-o", "--output", metavar="FILE", help="Also (or only) write the MHTML to FILE ('-' for stdout).")
@click.option("--allow-private", is_flag=True, help="Allow private, loopback, link-local and other non-public addresses.")
@click.option("--timeout", type=float, default=120.0, show_default=True,
              help="Seconds for the whole capture: fetching, reading the pages and writing the MHTML (exit 7 past them).")
@click.option("--max-mb", type=float, default=50.0, show_default=True, help="Largest single resource (MB); 4x for the whole page (with --browser: also for the file).")
@click.option("--concurrency", type=click.IntRange(1, 64), default=6, show_default=True, help="Parallel fetches (not with --browser).")
@click.option("--settle", type=float, default=1.0, show_default=True, help="--browser: seconds to wait after the load event.")
@click.option("--force", is_flag=True, help="With --series: deposit a new version even when the page did not change.")
@click.option("--warc", metavar="OUT.warc.gz", help="Also write the capture's HTTP exchanges as WARC (not with --browser).")
@archive_option
def capture_command(
    url: str,
    browser: bool,
    series: str | None,
    output: str | None,
    allow_private: bool,
    timeout: float,
    max_mb: float,
    concurrency: int,
    settle: float,
    force: bool,
    warc: str | None,
    archive: str,
) -> None:
    """Capture the web page at URL with everything it needs, as RFC 2557 MHTML.

    With --series S, deposit it as a PDI whose unique id encapsulates URL,
    minted on today's date, and print the PDI (for http://www.whitehouse.gov/:
    urn:pdi://S/YYYY/MM/DD/http:%2F%2Fwww%2Ewhitehouse%2Egov%2F.related.1).
    Capturing the same URL again on the same day deposits the next version
    when the page changed, and prints the existing name when it did not
    (with a note on stderr; --force deposits it again): pages are compared
    by their parts (each one's URL, type and bytes), so a --browser
    capture's new date, boundary and Content-IDs are no change. Refuses a
    URL a URI writes escaped (a space, a character beyond ASCII, a lone %:
    exit 1, offering the URL meant, since the name holds the URL as given)
    and a URL with user information (user:password@, exit 6: credentials never
    go into a name nor are sent; such a part is missing). Refuses
    private, loopback, link-local and other non-public addresses (IPv6
    forms carrying one included) unless --allow-private; --max-mb bounds
    each resource as sent and as decoded. With --browser every connection
    Chromium makes (the page's, other sites' frames', workers', WebSockets,
    redirects) goes through pdi's own proxy, which resolves the host, checks
    each address the same way and connects only to the one it checked; what
    it refuses is listed on stderr, and no UDP (WebRTC, QUIC) is sent.
    --warc OUT.warc.gz also writes every HTTP exchange of the capture
    (redirects and failures too) as WARC 1.1 request and response records,
    bodies as sent (content codings kept, the chunked coding undone).
    """
    if series is None and output is None and warc is None:
        raise click.UsageError("give --series S (deposit in the archive), -o FILE and/or --warc OUT.warc.gz")
    if warc is not None and browser:
        raise click.UsageError("--warc records the exchanges of pdi's own fetcher; it is not available with --browser")
    _refuse_an_unescaped_url(url)
    if series is not None:  # an archive this user may only read (its group's, read-only media): said before fetching
        from pdi.archive import Archive

        with Archive.open(archive) as opened:
            opened.refuse_if_read_only()
    data, _final = _capture(
        url,
        browser=browser,
        allow_private=allow_private,
        timeout=timeout,
        max_mb=max_mb,
        concurrency=concurrency,
        settle=settle,
        warc=warc,
    )
    if output is not None:
        write_out(data, output)
    if series is not None:
        from pdi.archive import Archive
        from pdi.capture.deposit import deposit_capture

        with Archive.open(archive) as opened:
            try:
                deposit = deposit_capture(opened, series, url, data, force=force,
                                          warn=lambda said: click.echo(f"warning: {printable(said)}", err=True))
            except ImmutabilityError as exc:  # the page as the withdrawn newest version holds it
                raise exc.forced_by("--force deposits it as a new version") from None
        if deposit.unchanged:
            click.echo(
                f"unchanged: version {deposit.version} of {printable(url)} captured today holds"
                " the same page; nothing was deposited (--force deposits it as a new version)",
                err=True,
            )
        click.echo(str(deposit[0]))


def register(cli: click.Group) -> None:
    """Add this module's commands to the top-level ``pdi`` group."""
    cli.add_command(capture_command)
