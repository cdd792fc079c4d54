"""Text fragment commands: `pdi text FILE FRAGMENT` (issue 4)."""

from __future__ import annotations

import contextlib
import json
import mmap
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final

import click

from pdi._wording import MESSAGE_MOST, NAME_MOST, clipped
from pdi.cli.commands import named_charset
from pdi.errors import LimitError, NotFoundError, ParseError
from pdi.fragments import Range
from pdi.fragments.text import (
    TextFragment,
    TextIndex,
    evaluate_pdi,
    evaluate_rfc5147,
    evaluate_wilde,
    make_rfc5147,
    parse_pdi_text_fragment,
)
from pdi.fragments.text.index import Buffer

#: The most octets `pdi text` reads of a file that is not a regular file (a pipe), which it holds in memory.
MAX_STREAM: Final = 256 << 20


@contextlib.contextmanager
def _mapped(path: Path) -> Iterator[Buffer]:
    """The file's octets, memory-mapped (an empty file is ``b""``: it cannot be mapped); a pipe's, read whole (at
    most :data:`MAX_STREAM`)."""
    try:
        handle = path.open("rb")
    except FileNotFoundError:
        raise NotFoundError(f"no such file: {path}") from None
    except OSError as exc:
        raise NotFoundError(f"cannot read {path}: {exc.strerror}") from None
    with handle:
        found = os.fstat(handle.fileno())
        if not stat.S_ISREG(found.st_mode):  # a pipe (<(cmd), /dev/stdin) or a FIFO: no size to map, read as it comes
            data = handle.read(MAX_STREAM + 1)
            if len(data) > MAX_STREAM:
                raise LimitError(f"{path} is not a regular file and gives more than {MAX_STREAM} octets, the most"
                                 " pdi text holds of a pipe: save it to a file (which is mapped, not held)")
            yield data
            return
        size = found.st_size
        if size == 0:
            yield b""
            return
        with mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
            yield mapped


def _ranges(ranges: tuple[Range, ...]) -> list[dict[str, int]]:
    return [
        {"start": r.start, "end": r.end, "byte_start": r.byte_start, "byte_end": r.byte_end}
        for r in ranges
    ]


@click.command("text")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@click.argument("fragment", required=False)
@click.option(
    "--charset",
    default=None,
    callback=named_charset,
    help="Charset of FILE: any name or alias of the IANA registry (csUTF8, MS_Kanji, l1), or a "
    "text codec Python knows. Without it FILE declares none and is read as UTF-8; a check "
    "labelled US-ASCII then applies when every octet is ASCII.",
)
@click.option(
    "--syntax",
    type=click.Choice(["rfc5147", "wilde", "pdi"]),
    default="rfc5147",
    show_default=True,
    help="rfc5147: char=/line= with ;length=/;md5= checks (0-based, every line ending one "
    "character); wilde: char(n) line(a,b) match(bre), 1-based and closed, unions, lines end "
    "at CRLF only (draft §2.1.3); "
    "pdi: [char=|line=]a[,b] over the CRLF-canonical text, char half-open.",
)
@click.option("--json", "as_json", is_flag=True, help="Print ranges, text, clamped and integrity as JSON.")
@click.option(
    "--transcode",
    is_flag=True,
    help="Apply an integrity check labelled with another charset after transcoding (RFC 5147 §2.3).",
)
@click.option(
    "--make",
    "make",
    metavar="char=A[,B]|line=A[,B]",
    help="Instead of selecting, print the RFC 5147 fragment identifier of this selection of FILE.",
)
@click.option("--md5", is_flag=True, help="With --make: add an md5= integrity check.")
@click.option("--length", is_flag=True, help="With --make: add a length= integrity check.")
def text_command(
    file: Path,
    fragment: str | None,
    charset: str | None,
    syntax: str,
    as_json: bool,
    transcode: bool,
    make: str | None,
    md5: bool,
    length: bool,
) -> None:
    """Print the passage of text FILE that FRAGMENT identifies (a leading '#' is allowed).

    What the passage does not show is said on stderr: a selection clamped at
    the end, a check not made (for another charset: --transcode), a part ignored.

    Exit status: 0 success, 1 syntax error, 3 integrity check failed
    (RFC 5147 length=/md5=), 4 no such file, 6 unsupported (a charset
    that is neither registered nor a text codec, or an unknown
    PDI_TEXT_COUNTER value), 7 a pipe (<(cmd)) giving more than 256 MiB.
    """
    if (fragment is None) == (make is None):
        raise click.UsageError("give either FRAGMENT or --make SELECTION")
    if (md5 or length) and make is None:
        raise click.UsageError("--md5 and --length go with --make")
    with _mapped(file) as data:
        if make is not None:
            _make(data, charset, make, md5=md5, length=length)
            return
        assert fragment is not None
        text = fragment[1:] if fragment.startswith("#") else fragment
        _select(data, charset, text, syntax, as_json=as_json, transcode=transcode)


# A file that declares no charset is read as UTF-8 (RFC 2046 would assume
# US-ASCII, of which UTF-8 is a superset).
_UNDECLARED: Final = "utf-8"


def _make(data: Buffer, charset: str | None, spec: str, *, md5: bool, length: bool) -> None:
    selection = TextFragment.parse(spec)
    if selection.checks:
        raise ParseError("--make takes a selection without integrity checks", text=spec, rule="text-scheme")
    fragment = make_rfc5147(
        TextIndex(data, charset or _UNDECLARED),
        selection.scheme,
        selection.start,
        selection.end,
        is_range=selection.is_range,
        md5=md5,
        length=length,
    )
    click.echo(str(fragment))


#: The most lines said on stderr of one kind (parts ignored, checks not made): a fragment may hold thousands.
NOTES_MOST: Final = 5


def _at_most(lines: list[str]) -> list[str]:
    """``lines``, or the first :data:`NOTES_MOST` of them and a line saying how many more there were."""
    if len(lines) <= NOTES_MOST:
        return lines
    return [*lines[:NOTES_MOST], f"… and {len(lines) - NOTES_MOST:,} more like them"]


def _select(data: Buffer, declared: str | None, text: str, syntax: str, *, as_json: bool, transcode: bool) -> None:
    out: dict[str, Any]
    notes: list[str] = []  # what the passage alone does not show: said on stderr, as pdi get says it
    charset = declared or _UNDECLARED
    if syntax == "pdi":
        scheme, positions = parse_pdi_text_fragment(text)
        result = evaluate_pdi(scheme, positions, data, charset=charset)
        selected = result.text()
        out = {
            "ranges": _ranges(result.ranges),
            "text": selected,
            "clamped": result.clamped,
            "integrity": "unchecked",
            "canonicalized": result.canonicalized,
        }
    else:
        if syntax == "wilde":
            selection = evaluate_wilde(text, data, charset=charset)
        else:
            selection = evaluate_rfc5147(
                text, data, charset=charset, transcode=transcode, undeclared=declared is None
            )
        selected = selection.text
        notes += _at_most([f"warning: {clipped(part, MESSAGE_MOST)}: ignored" for part in selection.ignored])
        notes += _at_most([
            f"note: the integrity check {clipped(str(outcome.check), NAME_MOST)} was not made: "
            f"{clipped(outcome.detail, MESSAGE_MOST)}"
            + ("; --transcode applies it to the text encoded in that charset"
               if outcome.check.known and outcome.check.charset is not None and not transcode else "")
            for outcome in selection.checks
            if outcome.status == "unchecked"
        ])
        out = {
            "ranges": _ranges(selection.ranges),
            "text": selected,
            "clamped": selection.clamped,
            "integrity": selection.integrity,
        }
        if selection.ignored:
            out["ignored"] = list(selection.ignored)
    if out["clamped"]:
        notes.insert(0, f"warning: {clipped(text, NAME_MOST)} reaches past the end: clamped to it")
    for line in notes:
        click.echo(line, err=True)
    if as_json:
        click.echo(json.dumps(out, ensure_ascii=False))
    else:
        click.echo(selected, nl=False, color=True)  # the passage exactly: click strips ESC [ … m from a pipe


def register(cli: click.Group) -> None:
    """Add ``text`` to the top-level ``pdi`` group."""
    cli.add_command(text_command)
