"""Archive commands: `pdi init`, `series`, `add`, `version`, `get`, `ls`, `meta`, `verify`, `export`, `import` (issue 5).

Thin: each command parses its arguments, calls :class:`pdi.archive.Archive`,
and prints. :data:`archive_option` is the ``--archive`` option every command
that deposits or reads the archive uses (other command modules too).
"""

from __future__ import annotations

import dataclasses
import json
import mimetypes
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from pdi._wording import plural
from pdi.archive import (
    DEFAULT_LOCATION,
    MAX_REPRESENTATION_BYTES,
    Archive,
    Content,
    Deposit,
    Generic,
    Resolved,
    is_text_format,
    resolve_location,
)
from pdi.cli import EXIT_PAST_END, EXIT_USAGE
from pdi.errors import IntegrityError, LimitError, NotFoundError, ParseError, StoreError

if TYPE_CHECKING:
    from pdi.fragments import FragmentResult

F = TypeVar("F", bound=Callable[..., Any])

#: ``--archive DIR|URL``: where the archive is; falls back to ``$PDI_ARCHIVE``, then ``./pdi-archive``.
archive_option: Callable[[F], F] = click.option(
    "--archive",
    "archive",
    envvar="PDI_ARCHIVE",
    default=DEFAULT_LOCATION,
    show_default=True,
    metavar="DIR|URL",
    help="The archive: a directory (SQLite + blob files) or a postgresql:// URL"
    " [env PDI_ARCHIVE].",
)


@contextmanager
def _progress(description: str) -> Iterator[Callable[[int, int], None]]:
    """A rich progress bar on stderr; yields a ``(done, total)`` callback."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    console = Console(stderr=True)
    with Progress(
        TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
        console=console, transient=True, disable=not console.is_terminal,
    ) as progress:
        task = progress.add_task(description, total=None)

        def update(done: int, total: int) -> None:
            progress.update(task, completed=done, total=total)

        yield update


def _read_file(path: str) -> bytes:
    """The bytes of a file to deposit ('-' = stdin); over the limit, refused unread."""
    too_big = LimitError(f"{path}: a representation may have at most {MAX_REPRESENTATION_BYTES} bytes")
    if path == "-":
        data = sys.stdin.buffer.read(MAX_REPRESENTATION_BYTES + 1)
        if len(data) > MAX_REPRESENTATION_BYTES:
            raise too_big
        return data
    try:
        with open(path, "rb") as f:
            if os.fstat(f.fileno()).st_size > MAX_REPRESENTATION_BYTES:
                raise too_big
            return f.read()
    except FileNotFoundError as exc:
        raise NotFoundError(f"cannot read {path}: no such file") from exc
    except IsADirectoryError as exc:
        raise NotFoundError(f"cannot read {path}: it is a directory") from exc
    except OSError as exc:
        raise StoreError(f"cannot read {path}: {exc.strerror}") from exc


def _guess_format(path: str) -> str:
    from pdi import formats

    media_type, encoding = mimetypes.guess_type(path, strict=False)
    if Path(path).suffix.lower() in _AGGREGATE_SUFFIXES:
        # A saved web page is an RFC 2557 aggregate, stored as `pdi capture` stores it.
        media_type = "multipart/related"
    if encoding is not None:
        # notes.txt.gz holds compressed bytes: its format is the compression's.
        media_type = _COMPRESSED.get(encoding)
    if media_type is None:
        raise click.UsageError(f"cannot tell the format of {path} from its name: give --format")
    return formats.token_for(_REGISTERED.get(media_type, media_type))


#: Names of RFC 2557 MHTML files (``mimetypes`` calls them message/rfc822).
_AGGREGATE_SUFFIXES = (".mht", ".mhtml")

#: The registered media type of an unregistered name ``mimetypes`` gives (.wav).
_REGISTERED = {"audio/x-wav": "audio/wav"}

#: Registered media types of the encodings ``mimetypes`` reads from a name (.gz …).
_COMPRESSED = {"gzip": "application/gzip"}


def _print_generic(generic: Generic) -> None:
    """Every version of a generic PDI: a comment line each (number, deposit time), then its format names."""
    click.echo(f"# {generic.pdi}")
    for version in generic.versions:
        click.echo(f"# version {version.number}, deposited {version.created_at}")
        for name in version.formats:
            click.echo(str(name))


def _print_info(result: Resolved) -> None:
    """``pdi get --info``: one ``key<TAB>value`` line per fact of :func:`pdi.archive.describe.describe`."""
    from pdi.archive.describe import describe

    about = describe(result)
    stored = about["stored"]
    click.echo(f"pdi\t{about['pdi']}")
    click.echo(f"media-type\t{about['media_type']}")
    if about["charset"]:
        click.echo(f"charset\t{about['charset']}")
    click.echo(f"bytes\t{about['bytes']}")
    selection = about.get("fragment")
    if selection is None:
        click.echo(f"sha256\t{stored['sha256']}")
    else:  # the fragment's bytes are cut (or made) from these stored ones
        click.echo(f"stored-bytes\t{stored['bytes']}")
        click.echo(f"stored-sha256\t{stored['sha256']}")
    if stored["line_ending"]:
        click.echo(f"original-line-endings\t{stored['line_ending']}")
    if selection is None:
        return
    for span in selection["ranges"]:
        click.echo(f"range\tchar={span['start']},{span['end']} (octets {span['byte_start']} to {span['byte_end']})")
    if (r := selection["region"]) is not None:
        click.echo(f"region\t({r['x1']},{r['y1']}),({r['x2']},{r['y2']}) of frame {r['frame']}"
                   f" ({plural(r['frames'], 'frame')} of {r['width']}x{r['height']} pixels)")
    if (i := selection["interval"]) is not None:
        click.echo(f"interval\tsample frames {i['start']} to {i['end']} of {i['length']}"
                   f" ({i['start'] / i['rate']:.3f} s to {i['end'] / i['rate']:.3f} s at {i['rate']} Hz,"
                   f" {plural(i['channels'], 'channel')})")
    if selection["clamped"]:
        click.echo("clamped\ttrue")
    if selection["past_end"]:
        click.echo("past-end\ttrue")


def _is_text_media(media_type: str) -> bool:
    """Whether content of ``media_type`` is text/*, which may be written to a terminal."""
    return media_type.split(";", 1)[0].strip().lower().startswith("text/")


def _extent(selection: FragmentResult) -> str:
    """How long the document is, as far as the fragment's result says (`` (the text has 50 characters)``)."""
    if selection.interval is not None:
        i = selection.interval
        return f" (the recording lasts {i.length / i.rate:.3f} s)"
    if selection.region is not None:
        return f" (the image is {selection.region.width}x{selection.region.height} pixels)"
    if selection.scheme in ("char", "byte") and selection.ranges:
        end = selection.ranges[-1].end  # clamped to the end
        return f" (the text has {plural(end, 'character')})" if selection.scheme == "char" else f" (it has {plural(end, 'byte')})"
    return ""


def _write_out(data: bytes, output: str | None) -> None:
    """Write ``data`` to the file ``output``, or to standard output (``None`` or ``-``)."""
    if output is None or output == "-":
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()
        return
    try:
        Path(output).write_bytes(data)
    except OSError as exc:
        raise StoreError(f"cannot write {output}: {exc.strerror}") from exc


_FORCE_HELP = (
    "Deposit even when the bytes contradict the format or charset, or equal the latest"
    " version's bytes."
)


def _source(path: str) -> str:
    """How a refusal names the file the bytes came from."""
    return "standard input" if path == "-" else path


def _print_deposit(deposit: Deposit, how_to_force: str) -> None:
    """Print the names a deposit answers with; when it stored nothing, say so on stderr."""
    if deposit.unchanged:
        generic = dataclasses.replace(deposit[0], format=None, version=None).canonical()
        click.echo(
            f"unchanged: version {deposit.version} of {generic} already holds these bytes;"
            f" nothing was deposited ({how_to_force})",
            err=True,
        )
    for name in deposit:
        click.echo(str(name))


def _open(archive: str) -> Archive:
    return Archive.open(archive)



@click.command("init")
@click.argument("location", required=False, metavar="[DIR|URL]")
@archive_option
def init_cmd(location: str | None, archive: str) -> None:
    """Create an archive at DIR or in a postgresql:// database (default: --archive).

    Running it again on an existing archive only migrates its schema forward.
    """
    with Archive.init(location or resolve_location(archive)) as opened:
        click.echo(
            f"archive at {opened.location} (schema version {opened.store.schema_version()})"
        )

@click.group("series")
def series_group() -> None:
    """Register and list document series (issuing authority, ISO 3166 country last)."""

@series_group.command("add")
@click.argument("name")
@click.option("--parent", help="Delegate NAME as a subseries of this registered series.")
@click.option("--authority", default="", help="Who issues names in this series (free text).")
@archive_option
def series_add(name: str, parent: str | None, authority: str, archive: str) -> None:
    """Register the series NAME, e.g. oma.eop.gov.us (last component: a country code)."""
    with _open(archive) as opened:
        record = opened.add_series(name, parent=parent, authority=authority)
        under = f" under {record.parent}" if record.parent else ""
        click.echo(f"series {record.name}{under}")

@series_group.command("ls")
@archive_option
def series_ls(archive: str) -> None:
    """List the registered series."""
    with _open(archive) as opened:
        for record in opened.series():
            parent = f"\t(under {record.parent})" if record.parent else ""
            click.echo(f"{record.name}{parent}")

@click.command("add")
@click.argument("file")
@click.option("--series", "-s", required=True, help="A registered series.")
@click.option("--format", "-f", "format_", help="Format token (default: from the file name).")
@click.option("--id", "foreign_id", help="A mnemonic or foreign id (URL, DOI) instead of the next daily serial.")
@click.option("--charset", help="The charset of a text file (default: BOM, else UTF-8).")
@click.option("--force", is_flag=True,
              help="Deposit even when the bytes contradict the format or charset.")
@archive_option
def add_cmd(
    file: str, series: str, format_: str | None, foreign_id: str | None,
    charset: str | None, force: bool, archive: str,
) -> None:
    """Mint a PDI for FILE ('-' = stdin) today (GMT) and deposit it; prints the PDI.

    The bytes are checked against the format (its file signature, by
    libmagic) and the charset (bytes that are UTF-8 but declared latin-1 or
    another one-byte charset): a contradiction is refused with exit 3
    unless --force. With --id naming a document minted today whose latest
    version holds the same bytes, nothing is deposited: its name is
    printed (and a note on stderr), exit 0. Other bytes, or --force, are
    refused with exit 5: a name is minted once (pdi version deposits a
    new version of it).
    """
    data = _read_file(file)
    token = format_ or _guess_format(file)
    content = Content(data, token, charset, _source(file))
    with _open(archive) as opened:
        deposit = opened.deposit(series, [content], foreign_id=foreign_id, force=force)
        _print_deposit(deposit, "pdi version --force deposits them as a new version")

@click.command("version")
@click.argument("pdi")
@click.argument("files", nargs=-1, required=True)
@click.option("--format", "-f", "formats_", multiple=True,
              help="Format of each FILE, in order (default: from the file names).")
@click.option("--charset", help="The charset of the text files among FILES.")
@click.option("--add-format", is_flag=True,
              help="Add FILES as new formats (same content) of the version PDI names,"
              " instead of depositing a new version.")
@click.option("--force", is_flag=True, help=_FORCE_HELP)
@archive_option
def version_cmd(
    pdi: str, files: tuple[str, ...], formats_: tuple[str, ...], charset: str | None,
    add_format: bool, force: bool, archive: str,
) -> None:
    """Deposit FILES as the next version of PDI (every format it is to have); prints the PDIs.

    When the latest version has the same formats with the same bytes (as
    stored: text CRLF-canonical) and charsets, nothing is deposited: its
    names are printed, with a note on stderr, and the exit status is 0;
    --force deposits a new version all the same. The bytes are checked
    as for pdi add (exit 3 unless --force).
    """
    if formats_ and len(formats_) != len(files):
        raise click.UsageError("give one --format per FILE, or none")
    tokens = list(formats_) or [_guess_format(f) for f in files]
    contents = [
        Content(_read_file(f), t, charset if charset and is_text_format(t) else None, _source(f))
        for f, t in zip(files, tokens, strict=True)
    ]
    with _open(archive) as opened:
        if add_format:
            for c in contents:
                name = opened.add_format(
                    pdi, c.data, format=c.format, charset=c.charset, force=force, source=c.source
                )
                click.echo(str(name))
        else:
            deposit = opened.add_version(pdi, contents, force=force)
            _print_deposit(deposit, "--force deposits them as a new version")

@click.command("get")
@click.argument("pdi")
@click.option("--output", "-o", type=click.Path(dir_okay=False, writable=True, allow_dash=True),
              help="Write the bytes to this file; '-' is standard output, also when it is a terminal.")
@click.option("--latest", is_flag=True, help="Use the newest version, whatever PDI says.")
@click.option("--info", is_flag=True, help="Print the name, media type, size and SHA-256 instead (with a "
              "fragment: its size, and the size and SHA-256 of the stored representation).")
@archive_option
@click.pass_context
def get_cmd(
    ctx: click.Context, pdi: str, output: str | None, latest: bool, info: bool, archive: str
) -> None:
    """Write the bytes PDI[#fragment] names; a generic PDI lists its versions.

    A generic PDI (no format) lists every version, oldest first: its
    number, when it was deposited (UTC) and the names of its formats
    (--latest: the newest version only). A PDI with a format and no
    version is version 1.

    A fragment reaching past the end is cut there, with a warning on
    stderr. A fragment lying wholly past the end (char=100,200 of a
    50-character text; char=50,50 is the empty place at its end, not past
    it) selects nothing: a warning, and exit status 9. On an image,
    #rect=(x1,y1),(x2,y2)[,frame] (the default scheme) gives the whole
    image and #crop=… the cut-out pixels as PNG; on audio, #sec=a,b (the
    default) or #msec=a,b gives those samples as WAV; on HTML and XML,
    #elt=a,b runs from start tag a through the end of element b (HTML
    also #name=x,y, by name= or id=). --info says which range, region or
    samples a fragment selects.

    Content that is not text/* (images, sound, aggregates such as
    multipart/related …) is not written to a terminal: give -o FILE, or
    -o - to write it there anyway; without, a one-line hint and exit
    status 2.
    """
    with _open(archive) as opened:
        result = opened.resolve(pdi, latest=latest)
    if isinstance(result, Generic):
        _print_generic(result)
        return
    selection = result.fragment
    if info:
        _print_info(result)
    elif output is None and not _is_text_media(result.media_type) and sys.stdout.isatty():
        click.echo(
            f"pdi: {result.pdi} is {result.media_type}, binary output that can mess up a terminal:"
            " not written; give -o FILE, or -o - to write it to the terminal anyway",
            err=True,
        )
        ctx.exit(EXIT_USAGE)
    if selection is not None and selection.past_end:
        click.echo(f"warning: {result.pdi} lies wholly past the end{_extent(selection)}: it selects nothing",
                   err=True)
    elif selection is not None and selection.clamped and not info:
        click.echo(f"warning: {result.pdi} reaches past the end: clamped to it", err=True)
    if not info:
        _write_out(result.data, output)
    if selection is not None and selection.past_end:
        ctx.exit(EXIT_PAST_END)

@click.command("ls")
@click.argument("pattern", required=False)
@click.option("--series", "-s", help="Only this series.")
@click.option("--limit", type=click.IntRange(min=0), help="At most this many names.")
@click.option("--offset", type=click.IntRange(min=0), default=0, help="Skip this many names.")
@archive_option
def ls_cmd(
    pattern: str | None, series: str | None, limit: int | None, offset: int, archive: str
) -> None:
    """List names in date, then serial order.

    PATTERN is a PDI with wildcards (urn:pdi://x.us/2026/*/*/*), or a series name.
    """
    if pattern is not None and ":" not in pattern:
        series, pattern = pattern, None
    with _open(archive) as opened:
        for name in opened.ls(pattern, series=series, limit=limit, offset=offset):
            click.echo(str(name))

@click.command("cite")
@click.argument("citation")
@click.option("--json", "as_json", is_flag=True, help="Print both ends and the check as JSON.")
@archive_option
def cite_cmd(citation: str, as_json: bool, archive: str) -> None:
    """Resolve both ends of CITATION (A@position=B#fragment) and check the quotation.

    Says whether the text of B's fragment stands in A at the position,
    counted in A's default scheme (char: code points of the CRLF-canonical
    text). Exit status 0 when it does or cannot be checked (an image, or B
    not in this archive: "unchecked"), 3 when A holds other text there.
    """
    with _open(archive) as opened:
        result = opened.cite(citation)
    check = result.check
    fields = result.to_json()
    if as_json:
        click.echo(json.dumps(fields, ensure_ascii=False))
    else:
        for key in ("citing", "cited", "position"):
            click.echo(f"{key}\t{fields[key]}")
        for key in ("quote", "found"):
            if fields[key] is not None and (key == "quote" or check.status == "mismatch"):
                click.echo(f"{key}\t{json.dumps(fields[key], ensure_ascii=False)}")
        click.echo(f"check\t{check.status}: {check.detail}")
    if check.status == "mismatch":
        raise IntegrityError(f"the quotation is not at {fields['position']} in {fields['citing']}: {check.detail}")

@click.command("meta")
@click.argument("pdi")
@click.argument("statements", nargs=-1, metavar="[KEY=VALUE]...")
@click.option("--who", help="Who makes the statements (default: $PDI_USER, then $USER).")
@click.option("--history", is_flag=True, help="Print every statement ever made, oldest first.")
@archive_option
def meta_cmd(
    pdi: str, statements: tuple[str, ...], who: str | None, history: bool, archive: str
) -> None:
    """Add statements (Dublin Core: title=, creator=, date= … or free keys) about PDI, or show them."""
    pairs = []
    for statement in statements:
        key, sep, value = statement.partition("=")
        if not sep:
            raise ParseError(f"{statement!r} is not KEY=VALUE", text=statement, rule="statement")
        pairs.append((key, value))
    with _open(archive) as opened:
        for key, value in pairs:
            opened.annotate(pdi, key, value, who=who)
        if history:
            for record in opened.history(pdi):
                click.echo(f"{record.at}\t{record.who}\t{record.key}\t{record.value}")
        elif not pairs:
            for key, value in opened.meta(pdi).items():
                click.echo(f"{key}\t{value}")

@click.command("verify")
@click.option("--remove-unreferenced", "remove", is_flag=True,
              help="Also delete blobs no name holds (left by killed deposits), if untouched for --older-than.")
@click.option("--older-than", default=3600.0, show_default=True, type=click.FloatRange(min=0),
              help="Seconds a blob must be untouched before --remove-unreferenced deletes it.")
@archive_option
def verify_cmd(remove: bool, older_than: float, archive: str) -> None:
    """Recompute every stored representation's SHA-256 and check the catalog; exit 3 on any problem.

    Problems print one a line: the kind (missing, altered, size, or
    catalog-… for damage to the catalog itself: the database's own
    integrity check and pdi's invariants such as gap-free serials), the
    name, and what is wrong.
    """
    with _open(archive) as opened, _progress("verifying") as progress:
        report = opened.verify(progress)
        if remove:
            removed = opened.remove_unreferenced(older_than)
            temporary = sum(1 for name in removed if name.startswith("tmp/"))
            click.echo(f"removed {plural(len(removed) - temporary, 'unreferenced blob')}"
                       f" and {plural(temporary, 'temporary file')}")
            report.unreferenced = sorted(set(report.unreferenced) - set(removed))
    for problem in report.problems:
        for name in problem.names:
            click.echo(f"{problem.kind}\t{name}\t{problem.detail}")
    if report.unreferenced:
        unreferenced = len(report.unreferenced)
        click.echo(f"note: {plural(unreferenced, 'stored blob')} {'belongs' if unreferenced == 1 else 'belong'}"
                   " to no name (left by interrupted deposits; harmless)")
    click.echo(
        f"checked {plural(report.checked_representations, 'representation')} in"
        f" {plural(report.checked_blobs, 'blob')}: {plural(len(report.problems), 'problem')}"
    )
    if not report.ok:
        raise IntegrityError(
            f"verify found {plural(len(report.problems), 'problem')}"
            " (missing or altered blobs, or damage to the catalog)"
        )

@click.command("export")
@click.argument("directory")
@click.option("--series", "-s", help="Only this series and its subseries.")
@archive_option
def export_cmd(directory: str, series: str | None, archive: str) -> None:
    """Write the archive (or a series) to DIRECTORY as a BagIt bag."""
    with _open(archive) as opened, _progress("exporting") as progress:
        count = opened.export_bag(directory, series=series, progress=progress)
    click.echo(f"exported {plural(count, 'representation')} to {directory}")

@click.command("import")
@click.argument("directory")
@archive_option
def import_cmd(directory: str, archive: str) -> None:
    """Check the BagIt bag DIRECTORY and import every name and byte in it (all or nothing)."""
    with _open(archive) as opened, _progress("importing") as progress:
        count = opened.import_bag(directory, progress=progress)
    click.echo(f"imported {plural(count, 'new representation')} into {opened.location}")


def register(cli: click.Group) -> None:
    """Add this module's commands to the top-level ``pdi`` group."""
    for command in (
        init_cmd,
        series_group,
        add_cmd,
        version_cmd,
        get_cmd,
        ls_cmd,
        cite_cmd,
        meta_cmd,
        verify_cmd,
        export_cmd,
        import_cmd,
    ):
        cli.add_command(command)
