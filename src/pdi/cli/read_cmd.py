"""Reading: `pdi get` (bytes, passages, --info), `pdi ls`, `pdi cite` and `pdi meta`.

Thin: each command resolves names through :class:`pdi.archive.Archive` and
prints; what `pdi get` does is :func:`pdi.cli.get_run.run_get` (also run
without click, by :mod:`pdi.cli.fast_get`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import click

from pdi._wording import clipped
from pdi.cli.archive_cmd import archive_option
from pdi.cli.archive_io import open_archive, saying_what_is_near
from pdi.cli.commands import one_line
from pdi.cli.get_run import run_get
from pdi.errors import CitationMismatchError, ParseError

if TYPE_CHECKING:
    from pdi.archive.store import WithdrawalRecord
    from pdi.identifier import PDI


@click.command("get")
@click.argument("pdi")
@click.option("--output", "-o", type=click.Path(dir_okay=False, writable=True, allow_dash=True),
              help="Write the bytes to this file; '-' is standard output, also when it is a terminal.")
@click.option("--latest", is_flag=True, help="Use the newest version, whatever PDI says.")
@click.option("--info", is_flag=True, help="Print the name, media type, size and SHA-256 instead (with a "
              "fragment: its size, and the size and SHA-256 of the stored representation; "
              "'search-index pending' while its text waits for `pdi index`; on SGML, whether its DTD "
              "was found and how many errors onsgmls reported; of an e-mail or a capture, its parts).")
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
    it) selects nothing: a warning, and exit status 9. A char= or line=
    fragment of one position (line=2: the place before the third line, RFC
    5147) is a position, which selects nothing: nothing is written, exit
    status 0, and a note on stderr says so and how a line is written
    (line=2,3); --info says its range is empty. On an image,
    #rect=(x1,y1),(x2,y2)[,frame] (the default scheme) gives the whole
    image and #crop=… the cut-out pixels as PNG; on audio, #sec=a,b (the
    default) or #msec=a,b gives those samples as WAV; on a video (WebM, MP4,
    Ogg), #sec=a,b or #msec=a,b gives the whole video and --info the
    interval, duration, frame size and codecs, and #rect=(x1,y1),(x2,y2),t
    (or crop=) the region of the first frame at or after t milliseconds,
    cut out as PNG; on HTML, XML and
    SGML, #elt=a,b runs from start tag a through the end of element b
    (HTML also #name=x,y, by name= or id=; SGML's elements are those
    OpenSP's onsgmls reports given the document's DTD, omitted tags
    included); on a PDF, #char=a,b and #line=a,b
    give the text of its text layer (made at deposit), #search=%22w%22
    the first place any of the words stands in it, #rect and
    #viewrect=l,t,w,h[,page] the characters of a region, and #page=n and
    #nameddest=x the whole PDF; on an e-mail, #char=a,b and #line=a,b give
    its body's text and #part=N (cid:ID, a file name, their reserved
    characters %-escaped: #part=schedule%2Etxt, as --info prints each
    part's) a part's octets, that
    of a message of more than 32 MiB written as it is decoded, never held
    (pdi docs email). --info says which range, region, samples
    or page a fragment selects, and a PDF's text layer (or that it has
    none: cite a scan by page and region), and of SGML whether its DTD was
    found and how many errors the parser reported. A fragment a browser writes
    (#:~:text=…, #t=…, #xywh=…) is read as the native fragment it equals,
    which a note on stderr names.

    Content that is not text/* (images, sound, aggregates such as
    multipart/related …) is not written to a terminal: give -o FILE, or
    -o - to write it there anyway; without, a one-line hint and exit
    status 2.
    """
    code = run_get(pdi, output=output, latest=latest, info=info, archive=archive)
    if code:
        ctx.exit(code)

@click.command("ls")
@click.argument("pattern", required=False)
@click.option("--series", "-s", help="Only this series.")
@click.option("--limit", type=click.IntRange(min=0), help="At most this many names.")
@click.option("--offset", type=click.IntRange(min=0), default=0,
              help="Skip this many names (which costs reading them: page with --after).")
@click.option("--after", metavar="PDI",
              help="Start after this versioned name: the last one a page printed (as cheap at any depth).")
@click.option("--long", "-l", "long", is_flag=True,
              help="Print each name's state after a tab: 'live', or 'withdrawn' (it resolves to its tombstone).")
@click.option("--live", is_flag=True, help="Only names in service (not withdrawn).")
@click.option("--withdrawn", is_flag=True, help="Only withdrawn names.")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON array of the names (with --long, of objects: "
              "name, state, and withdrawn: null or its tombstone's at, reason, who and purged).")
@archive_option
def ls_cmd(
    pattern: str | None, series: str | None, limit: int | None, offset: int, after: str | None,
    long: bool, live: bool, withdrawn: bool, as_json: bool, archive: str,
) -> None:
    """List names in date, then serial order, as the catalog is read.

    PATTERN is a PDI with wildcards (urn:pdi://x.us/2026/*/*/*), or a series
    name. A day lists its serial names by serial, then its names with a
    foreign id by id. Names print as they are read, a page of the catalog
    at a time, so a listing of millions starts at once and holds one page
    in memory; --json writes the array the same way.

    A withdrawn name is listed as any other (it is never minted again):
    --long says which are withdrawn, a tab after the name ('live' or
    'withdrawn', so the first column is the plain listing); --live or
    --withdrawn keeps one kind, --offset and --limit then counting the names
    kept. pdi get NAME says why a name was withdrawn.
    """
    if live and withdrawn:
        raise click.UsageError("--live and --withdrawn together would list nothing: give one")
    if pattern is not None and ":" not in pattern:
        series, pattern = pattern, None
    if pattern is not None:
        _whole_pattern(pattern)
    if after is not None:
        from pdi.identifier import PDI

        try:
            PDI.parse(after)
        except ParseError as exc:  # the offset is into the option's value: say which
            raise exc.within("--after: ") from None
    with open_archive(archive) as opened:
        if long or live or withdrawn:
            state = "live" if live else "withdrawn" if withdrawn else None
            marked = opened.iter_ls_withdrawn(pattern, state=state, series=series, limit=limit, offset=offset,
                                              after=after)
            _echo_pieces(_json_listing(_states(marked, long)) if as_json else _state_lines(marked, long))
            return
        if not as_json:  # a page of names a write, each page one string the catalog made
            for text in opened.iter_name_text(pattern, series=series, limit=limit, offset=offset, after=after):
                click.echo(text, nl=False)
            return
        _echo_pieces(_json_listing(opened.iter_names(pattern, series=series, limit=limit, offset=offset,
                                                     after=after)))


def _echo_pieces(pieces: Iterator[str]) -> None:
    """Write ``pieces``, :data:`_LINES_AT_ONCE` of them a write (each write flushes the output)."""
    pending: list[str] = []
    for piece in pieces:
        pending.append(piece)
        if len(pending) == _LINES_AT_ONCE:
            click.echo("".join(pending), nl=False)
            pending = []
    click.echo("".join(pending), nl=False)


def _state_lines(marked: Iterator[tuple[PDI, WithdrawalRecord | None]], long: bool) -> Iterator[str]:
    """`pdi ls --long`'s lines (a name, a tab, its state), or the plain listing's (a name) of a kept kind."""
    for name, tomb in marked:
        yield f"{name}\t{'live' if tomb is None else 'withdrawn'}\n" if long else f"{name}\n"


def _states(marked: Iterator[tuple[PDI, WithdrawalRecord | None]], long: bool) -> Iterator[Any]:
    """`pdi ls --json`'s items: with --long, each name's state and its tombstone as N2C describes one."""
    for name, tomb in marked:
        if not long:
            yield str(name)
        else:
            yield {"name": str(name), "state": "live" if tomb is None else "withdrawn",
                   "withdrawn": None if tomb is None else {"at": tomb.at, "reason": tomb.reason, "who": tomb.who,
                                                           "purged": tomb.purged}}


#: A name cut short after its series, year, month or day (no unique id): what it would list is a pattern of it.
_CUT_SHORT = re.compile(r"((?:urn:)?pdi://[^/?#]+)((?:/[0-9*]+){0,3})/?", re.IGNORECASE)


def _whole_pattern(pattern: str) -> None:
    """Refuse a name cut short before its unique id, naming the pattern that lists what it covers."""
    cut = _CUT_SHORT.fullmatch(pattern)
    if cut is None:
        return
    parts = cut.group(2).count("/")
    listed = cut.group(1) + cut.group(2) + "/*" * (4 - parts)
    raise ParseError(f"{pattern} stops before the unique id: to list what it covers, give a wildcard for each"
                     f" part left out: pdi ls '{listed}'", text=pattern, rule="resource-identifier")


def _json_listing(names: Iterator[Any]) -> Iterator[str]:
    """What `pdi ls --json` prints, piece by piece: a JSON array of the names (or of --long's objects), one a line."""
    import json

    first = True
    for name in names:
        yield ("[" if first else ",\n") + json.dumps(name, ensure_ascii=False)
        first = False
    yield "[]\n" if first else "]\n"


#: How many names `pdi ls --json` writes at once (each write flushes the output).
_LINES_AT_ONCE = 1000

@click.command("cite")
@click.argument("citation")
@click.option("--json", "as_json", is_flag=True, help="Print both ends and the check as JSON.")
@archive_option
def cite_cmd(citation: str, as_json: bool, archive: str) -> None:
    """Resolve both ends of CITATION (A@position=B#fragment) and check the quotation.

    Says whether the text of B's fragment stands in A at the position,
    counted in A's default scheme (char: code points of the CRLF-canonical
    text). Exit status 0 when it does or cannot be checked (an image, or B
    of a series this archive does not mint: "unchecked"), 3 when A holds
    other text there or B's passage is empty (#char=5,5: it quotes
    nothing), 4 when A is not here (of whatever series: the position is
    checked in A), or B is of a series minted here but not here.
    """
    import json

    with open_archive(archive) as opened:
        result = opened.cite(citation)
    from pdi.cli.get_run import say_lenient

    say_lenient(citation)
    check = result.check
    fields = result.to_json()
    if as_json:
        click.echo(json.dumps(fields, ensure_ascii=False))
    else:
        for key in ("citing", "cited", "position"):
            click.echo(f"{key}\t{fields[key]}")
        for key in ("quote", "found"):
            if fields[key] is not None and (key == "quote" or check.status == "mismatch"):
                # the documents' text: JSON quotes it, escaping C0 only; a bidi override or a separator is shown
                click.echo(f"{key}\t{one_line(json.dumps(fields[key], ensure_ascii=False))}")
        click.echo(f"check\t{check.status}: {one_line(check.detail)}")
    if check.status == "mismatch":
        raise CitationMismatchError(f"the quotation is not at {fields['position']} in {fields['citing']}: {check.detail}")

@click.command("meta")
@click.argument("pdi")
@click.argument("statements", nargs=-1, metavar="[KEY=VALUE]...")
@click.option("--who", help="Who makes the statements (default: $PDI_USER, else $USER, else $LOGNAME, else the account's name).")
@click.option("--history", is_flag=True, help="Print every statement ever made, oldest first.")
@archive_option
def meta_cmd(
    pdi: str, statements: tuple[str, ...], who: str | None, history: bool, archive: str
) -> None:
    """Add statements (Dublin Core: title=, creator=, date= … or free keys) about PDI, or show them.

    Each statement added is said on stderr (who made it, and when); the
    current statements, or with --history every one, print on stdout (none:
    a note on stderr says so; a statement is about exactly the name it was
    made of, so a version's are not its generic name's). Statements given
    together are made together: one refused, none is.
    """
    pairs = []
    for statement in statements:
        key, sep, value = statement.partition("=")
        if not sep:
            raise ParseError(f"'{clipped(statement)}' is not KEY=VALUE", text=statement, rule="statement")
        pairs.append((key, value))
    with open_archive(archive) as opened, saying_what_is_near(opened, pdi):
        for made in opened.annotate_all(pdi, pairs, who=who):  # all of them or, one refused, none
            click.echo(f"stated {made.key}={one_line(made.value)} about {made.subject}"
                       f" (by {one_line(made.who)} at {made.at})", err=True)
        # a value (a bag's bag-info.txt, a WARC's headers, a curator's request) and who stated it are a
        # stranger's: escaped, each on its line and in its column
        if history:
            records = opened.history(pdi)
            for record in records:
                click.echo(f"{record.at}\t{one_line(record.who)}\t{record.key}\t{one_line(record.value)}")
            if not records:
                _say_none_stated(pdi)
        elif not pairs:
            current = opened.meta(pdi)
            for key, value in current.items():
                click.echo(f"{key}\t{one_line(value)}")
            if not current:
                _say_none_stated(pdi)


def _say_none_stated(pdi: str) -> None:
    """Say on stderr that nothing is stated about ``pdi``, which is in the archive: a statement is about the name it
    was made of, so those of a version are not shown for its document's generic name, nor those of a name for a
    passage of it (as ``pdi search`` says on stderr that it found nothing)."""
    from pdi.identifier import PDI

    parsed = PDI.parse(pdi)
    name = one_line(clipped(str(parsed)))
    if parsed.fragment is not None:
        whole = one_line(clipped(str(parsed.without_fragment())))
        where = f"; a statement is about the name it was made of: those about {whole} are shown by pdi meta '{whole}'"
    elif parsed.format is None:
        where = ("; a statement is about the name it was made of: those about a version are shown by pdi meta and"
                 f" the version's name, which pdi get '{name}' lists")
    else:
        where = ""
    click.echo(f"note: nothing is stated about {name}{where}", err=True)


def register(cli: click.Group) -> None:
    """Add ``get``, ``ls``, ``cite`` and ``meta`` to the top-level ``pdi`` group."""
    for command in (get_cmd, ls_cmd, cite_cmd, meta_cmd):
        cli.add_command(command)
