"""Reading: `pdi get` (bytes, passages, --info), `pdi ls`, `pdi cite` and `pdi meta`.

Thin: each command resolves names through :class:`pdi.archive.Archive` and
prints; ``--info`` prints :func:`pdi.archive.describe.describe` as lines.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import click

from pdi._wording import plural
from pdi.archive import (
    Generic,
    Resolved,
)
from pdi.cli import EXIT_PAST_END, EXIT_USAGE, one_line
from pdi.cli.archive_cmd import archive_option, open_archive, write_out
from pdi.errors import IntegrityError, ParseError

if TYPE_CHECKING:
    from pdi.fragments.pdf import TextLayer
    from pdi.fragments.video import VideoInfo


def _print_generic(generic: Generic) -> None:
    """Every version of a generic PDI: a comment line each (number, deposit time), then its format names."""
    click.echo(f"# {generic.pdi}")
    for version in generic.versions:
        click.echo(f"# version {version.number}, deposited {version.created_at}")
        for name in version.formats:
            click.echo(str(name))


def _print_info(
    result: Resolved, *, pending: bool = False, layer: TextLayer | None = None,
    sgml: tuple[bool, int] | None = None, video: VideoInfo | None = None, message: dict[str, Any] | None = None,
) -> None:
    """``pdi get --info``: one ``key<TAB>value`` line per fact of :func:`pdi.archive.describe.describe`.

    ``pending``: the stored text waits in the indexer's queue (a ``search-index<TAB>pending`` line);
    ``layer``: a PDF's text layer (a ``text-layer`` line); ``sgml``: an SGML document's parse at deposit
    (an ``sgml-parse`` line: DTD found or not, and onsgmls's error count); ``video``: what
    ffprobe read of a video at deposit (a ``video`` line); ``message``: an e-mail's facts (``from``, ``to``,
    ``date``, ``subject``, ``message-id``, ``in-reply-to``, ``references``, ``body`` and a ``part`` line a part).
    """
    from pdi.archive.describe import describe

    about = describe(result, text_layer=layer, video=video, message=message)
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
    click.echo(f"kept\t{stored['kept']}")
    if stored["line_ending"]:  # a text kept CRLF-canonical only (deposited before schema 4)
        click.echo(f"original-line-endings\t{stored['line_ending']}")
    if (t := about.get("text_layer")) is not None:
        if t["empty"]:
            click.echo(f"text-layer\tnone on its {plural(t['pages'], 'page')}: no text layer: cite by page and region")
        else:
            click.echo(f"text-layer\t{plural(t['characters'], 'character')} on {plural(t['pages'], 'page')},"
                       f" {t['bytes']} octets in UTF-8, sha256 {t['sha256']}")
    elif about["stored"]["media_type"] == "application/pdf":
        from pdi.archive.content import PDF_LAYER_UP_TO

        click.echo("text-layer\tnone made at deposit (PDFium could not read it, or it was over"
                   f" {PDF_LAYER_UP_TO >> 20} MiB): cite by page and region")
    if sgml is not None:
        dtd_found, errors = sgml
        how = "DTD found" if dtd_found else "no DTD found: parsed without one (every element undefined, content ANY)"
        click.echo(f"sgml-parse\t{how}; {plural(errors, 'parser error')} (OpenSP onsgmls)")
    if (v := about.get("video")) is not None:
        picture = f"{v['width']}x{v['height']} {v['video_codec']}" if v["video_codec"] else "no picture"
        sound = ", ".join(v["audio_codecs"]) or "no sound"
        click.echo(f"video\t{v['duration_ms'] / 1000:.3f} s, {picture}, {sound} ({v['container']})")
    elif about["stored"]["media_type"].startswith("video/"):
        click.echo("video\tffprobe cannot read it (not WebM, MP4 or Ogg, or not what it says): no time fragments")
    if (m := about.get("message")) is not None:
        _print_message(m)
    elif about["stored"]["media_type"] == "message/rfc822":
        click.echo("message\tPython's email cannot read it within pdi's limits (deposited with --force): no body text")
    if pending:  # resolvable now; `pdi search` finds its text once `pdi index` (or serve's indexer) has read it
        click.echo("search-index\tpending")
    if selection is None:
        return
    for span in selection["ranges"] if selection["scheme"] != "part" else ():
        click.echo(f"range\tchar={span['start']},{span['end']} (octets {span['byte_start']} to {span['byte_end']})")
    if (r := selection["region"]) is not None and about["stored"]["media_type"].startswith("video/"):
        click.echo(f"region\t({r['x1']},{r['y1']}),({r['x2']},{r['y2']}) of the first frame at or after"
                   f" {r['frame'] / 1000:.3f} s ({r['width']}x{r['height']} pixels), cut out as PNG")
    elif (r := selection["region"]) is not None:
        click.echo(f"region\t({r['x1']},{r['y1']}),({r['x2']},{r['y2']}) of frame {r['frame']}"
                   f" ({plural(r['frames'], 'frame')} of {r['width']}x{r['height']} pixels)")
    if (i := selection["interval"]) is not None and about["stored"]["media_type"].startswith("video/"):
        click.echo(f"interval\t{i['start'] / 1000:.3f} s to {i['end'] / 1000:.3f} s of {i['length'] / 1000:.3f} s"
                   f" (milliseconds {i['start']} to {i['end']}; the answer is the whole video)")
    elif (i := selection["interval"]) is not None:
        click.echo(f"interval\tsample frames {i['start']} to {i['end']} of {i['length']}"
                   f" ({i['start'] / i['rate']:.3f} s to {i['end'] / i['rate']:.3f} s at {i['rate']} Hz,"
                   f" {plural(i['channels'], 'channel')})")
    if selection["scheme"] == "part":
        span = selection["ranges"][0]
        click.echo(f"part\t{span['start']} of the message: {span['byte_end']} octets, transfer encoding removed")
    if (p := selection.get("page")) is not None and not selection["past_end"]:
        click.echo(f"page\t{p['number']} of {p['pages']} ({p['width']:g} x {p['height']:g} points)")
    if selection["clamped"]:
        click.echo("clamped\ttrue")
    if selection["past_end"]:
        click.echo("past-end\ttrue")


def _print_message(m: dict[str, Any]) -> None:
    """The lines of an e-mail's facts (docs/email.md)."""
    for key in ("from", "to", "cc", "date", "subject"):
        if m[key] is not None:
            click.echo(f"{key}\t{one_line(m[key])}")
    if m["message_id"]:
        click.echo(f"message-id\t{m['message_id']}")
    if m["in_reply_to"]:
        click.echo(f"in-reply-to\t{' '.join(m['in_reply_to'])}")
    if m["references"]:
        click.echo(f"references\t{' '.join(m['references'])}")
    body = m["body"]
    if body is None:
        click.echo("body\tnone: no text/plain or text/html part that is not an attachment (char= selects nothing)")
    else:
        charset = f"; charset={body['charset']}" if body["charset"] else ""
        click.echo(f"body\tpart {body['part']} ({body['media_type']}{charset}):"
                   f" {plural(body['characters'], 'character')} of body text (char= and line= count on it)")
    for part in m["parts"]:
        names = [f"filename {one_line(part['filename'])!r}" if part["filename"] else "",
                 f"cid:{part['content_id']}" if part["content_id"] else "",
                 f"location {one_line(part['location'])}" if part["location"] else "",
                 part["disposition"] or ""]
        named = ", ".join(n for n in names if n)
        click.echo(f"part\t{part['part']}: {part['media_type']}" + (f" ({named})" if named else ""))
    for defect in m["defects"]:
        click.echo(f"defect\t{defect}")


def _is_text_media(media_type: str) -> bool:
    """Whether content of ``media_type`` is text/*, which may be written to a terminal."""
    return media_type.split(";", 1)[0].strip().lower().startswith("text/")


def _refuse_binary_on_terminal(ctx: click.Context, result: Resolved, output: str | None) -> None:
    """Exit with a hint when content that is not text/* would go to a terminal without ``-o``."""
    if output is None and not _is_text_media(result.media_type) and sys.stdout.isatty():
        click.echo(
            f"pdi: {result.pdi} is {result.media_type}, binary output that can mess up a terminal:"
            " not written; give -o FILE, or -o - to write it to the terminal anyway",
            err=True,
        )
        ctx.exit(EXIT_USAGE)


@click.command("get")
@click.argument("pdi")
@click.option("--output", "-o", type=click.Path(dir_okay=False, writable=True, allow_dash=True),
              help="Write the bytes to this file; '-' is standard output, also when it is a terminal.")
@click.option("--latest", is_flag=True, help="Use the newest version, whatever PDI says.")
@click.option("--info", is_flag=True, help="Print the name, media type, size and SHA-256 instead (with a "
              "fragment: its size, and the size and SHA-256 of the stored representation; "
              "'search-index pending' while its text waits for `pdi index`; on SGML, whether its DTD "
              "was found and how many errors onsgmls reported).")
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
    default) or #msec=a,b gives those samples as WAV; on a video (WebM, MP4,
    Ogg), #sec=a,b or #msec=a,b gives the whole video and --info the
    interval, duration, frame size and codecs, and #rect=(x1,y1),(x2,y2),t
    (or crop=) the region of the first frame at or after t milliseconds,
    cut out as PNG; on HTML, XML and
    SGML, #elt=a,b runs from start tag a through the end of element b
    (HTML also #name=x,y, by name= or id=; SGML's elements are those
    OpenSP's onsgmls reports given the document's DTD, omitted tags
    included); on a PDF, #char=a,b and #line=a,b
    give the text of its text layer (made at deposit) and #page=n and
    #nameddest=x the whole PDF. --info says which range, region, samples
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
    with open_archive(archive) as opened:
        if "#" in pdi:  # perhaps a browser fragment (no fragment, no alias: its module stays unloaded)
            from pdi.interop.aliases import alias_fragment, native_names

            if alias_fragment(pdi) is not None:  # a browser fragment: the native name it equals
                native = str(native_names(opened, pdi).native)
                click.echo(f"note: {one_line(pdi)} is {native}", err=True)
                pdi = native
        located = opened.locate(pdi, latest=latest)
        if isinstance(located, Generic):
            _print_generic(located)
            return
        if located.pdi.fragment is None:  # the whole representation: streamed, never held
            if info:
                _print_info(located, pending=opened.index_pending_of(located.record),
                            layer=opened.text_layer_of(located.record), sgml=opened.sgml_parse_of(located.record),
                            video=opened.video_of(located.record), message=opened.message_of(located.record))
            else:
                _refuse_binary_on_terminal(ctx, located, output)
                with opened.open_octets(pdi, latest=latest) as whole:
                    write_out(whole.reader.chunks(), output)
            return
        result = opened.resolve(pdi, latest=latest)
        assert not isinstance(result, Generic)
        pending = info and opened.index_pending_of(result.record)  # read while the archive is open
        layer = opened.text_layer_of(result.record) if info else None
        sgml = opened.sgml_parse_of(result.record) if info else None
        video = opened.video_of(result.record) if info else None
        message = opened.message_of(result.record) if info else None
    selection = result.fragment
    if info:
        _print_info(result, pending=pending, layer=layer, sgml=sgml, video=video, message=message)
    else:
        _refuse_binary_on_terminal(ctx, result, output)
    if selection is not None and selection.past_end:
        from pdi.fragments import past_end_message

        click.echo(f"warning: {past_end_message(result.pdi, selection)}", err=True)
    elif selection is not None and selection.clamped and not info:
        click.echo(f"warning: {result.pdi} reaches past the end: clamped to it", err=True)
    if not info:
        write_out(result.data, output)
    if selection is not None and selection.past_end:
        ctx.exit(EXIT_PAST_END)

@click.command("ls")
@click.argument("pattern", required=False)
@click.option("--series", "-s", help="Only this series.")
@click.option("--limit", type=click.IntRange(min=0), help="At most this many names.")
@click.option("--offset", type=click.IntRange(min=0), default=0,
              help="Skip this many names (which costs reading them: page with --after).")
@click.option("--after", metavar="PDI",
              help="Start after this versioned name: the last one a page printed (as cheap at any depth).")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON array of the names.")
@archive_option
def ls_cmd(
    pattern: str | None, series: str | None, limit: int | None, offset: int, after: str | None,
    as_json: bool, archive: str,
) -> None:
    """List names in date, then serial order, as the catalog is read.

    PATTERN is a PDI with wildcards (urn:pdi://x.us/2026/*/*/*), or a series
    name. A day lists its serial names by serial, then its names with a
    foreign id by id. Names print as they are read, a page of the catalog
    at a time, so a listing of millions starts at once and holds one page
    in memory; --json writes the array the same way.
    """
    if pattern is not None and ":" not in pattern:
        series, pattern = pattern, None
    with open_archive(archive) as opened:
        names = opened.iter_names(pattern, series=series, limit=limit, offset=offset, after=after)
        pending: list[str] = []
        for piece in _listing(names, as_json):
            pending.append(piece)
            if len(pending) == _LINES_AT_ONCE:
                click.echo("".join(pending), nl=False)
                pending = []
        click.echo("".join(pending), nl=False)


def _listing(names: Iterator[str], as_json: bool) -> Iterator[str]:
    """What `pdi ls` prints, piece by piece: a name a line, or a JSON array of them, a name a line."""
    if not as_json:
        for name in names:
            yield f"{name}\n"
        return
    import json

    first = True
    for name in names:
        yield ("[" if first else ",\n") + json.dumps(name, ensure_ascii=False)
        first = False
    yield "[]\n" if first else "]\n"


#: How many names `pdi ls` writes at once (each write flushes the output).
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
    not in this archive: "unchecked"), 3 when A holds other text there.
    """
    import json

    with open_archive(archive) as opened:
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
    with open_archive(archive) as opened:
        for key, value in pairs:
            opened.annotate(pdi, key, value, who=who)
        if history:
            for record in opened.history(pdi):
                click.echo(f"{record.at}\t{record.who}\t{record.key}\t{record.value}")
        elif not pairs:
            for key, value in opened.meta(pdi).items():
                click.echo(f"{key}\t{value}")


def register(cli: click.Group) -> None:
    """Add ``get``, ``ls``, ``cite`` and ``meta`` to the top-level ``pdi`` group."""
    for command in (get_cmd, ls_cmd, cite_cmd, meta_cmd):
        cli.add_command(command)
