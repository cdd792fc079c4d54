"""Depositing: `pdi add` (mint a name and deposit) and `pdi version` (a new version, or new formats).

Thin: reads the files (or standard input), tells their formats from their
names unless ``--format`` says, calls :class:`pdi.archive.Archive` and prints
the names it minted, or the names that already hold the same bytes.
"""

from __future__ import annotations

import dataclasses
import mimetypes
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from pdi.archive import (
    MAX_REPRESENTATION_BYTES,
    Content,
    Deposit,
    is_text_format,
)
from pdi.cli.archive_cmd import archive_option, open_archive
from pdi.errors import LimitError, NotFoundError, StoreError

if TYPE_CHECKING:
    pass


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
    with open_archive(archive) as opened:
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
    with open_archive(archive) as opened:
        if add_format:
            for c in contents:
                name = opened.add_format(
                    pdi, c.data, format=c.format, charset=c.charset, force=force, source=c.source
                )
                click.echo(str(name))
        else:
            deposit = opened.add_version(pdi, contents, force=force)
            _print_deposit(deposit, "--force deposits them as a new version")


def register(cli: click.Group) -> None:
    """Add ``add`` and ``version`` to the top-level ``pdi`` group."""
    for command in (add_cmd, version_cmd):
        cli.add_command(command)
