"""Depositing: `pdi add` (mint a name and deposit) and `pdi version` (a new version, or new formats).

Thin: reads the files (or standard input), tells their formats from their
names unless ``--format`` says, calls :class:`pdi.archive.Archive` and prints
the names it minted, or the names that already hold the same bytes.
"""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import functools
import io
import itertools
import mimetypes
import os
import stat
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO, cast

import click

from pdi.archive import (
    Content,
    Deposit,
    Resolved,
    is_text_format,
)
from pdi.cli.archive_cmd import archive_option
from pdi.cli.archive_io import open_archive, saying_what_is_near
from pdi.cli.commands import named_charset
from pdi.errors import ImmutabilityError, NotFoundError, PDIError, StoreError, UnsupportedError
from pdi.identifier import PDI

if TYPE_CHECKING:
    from pdi.archive import Archive
    from pdi.mail.mbox import MboxMessage


def _open_file(path: str, stack: contextlib.ExitStack) -> BinaryIO:
    """A file to deposit ('-' = standard input), open for reading as a stream: never read whole."""
    if path == "-":
        if sys.stdin.isatty():  # else a prompt-less terminal looks like a hung command (and Ctrl-D at once: empty)
            click.echo("pdi: reading the document from standard input: type or paste it, then press Ctrl-D at the"
                       " start of a line to end it", err=True)
        return sys.stdin.buffer
    try:
        f = stack.enter_context(open(path, "rb"))  # noqa: SIM115 - closed by the stack
    except FileNotFoundError as exc:
        raise NotFoundError(f"cannot read {path}: no such file") from exc
    except IsADirectoryError as exc:
        raise click.UsageError(_directory_refusal(path)) from exc
    except OSError as exc:
        raise StoreError(f"cannot read {path}: {exc.strerror}") from exc
    return cast(BinaryIO, _Reading(f, path))


class _Reading(io.RawIOBase):
    """A file being deposited: a read error names the file (not a bare OSError mid-deposit)."""

    def __init__(self, f: BinaryIO, path: str) -> None:
        super().__init__()
        self._f = f
        self._path = path

    def readable(self) -> bool:
        return True

    def read(self, size: int = -1) -> bytes:
        try:
            return self._f.read(size)
        except OSError as exc:
            raise StoreError(f"cannot read {self._path}: {exc.strerror}") from exc

    def readline(self, size: int | None = -1) -> bytes:
        # the file's own, from its buffer: io.RawIOBase's reads an octet a call (an mbox of 256 MiB, the most one
        # deposit takes, was cut in two minutes of 268 million calls)
        try:
            return self._f.readline(-1 if size is None else size)
        except OSError as exc:
            raise StoreError(f"cannot read {self._path}: {exc.strerror}") from exc

    def fileno(self) -> int:
        return self._f.fileno()

    def peek(self, size: int = 0) -> bytes:
        """The octets the next read gives, not consumed (at least one unless at the end): :func:`_refuse_empty`."""
        try:
            return cast(bytes, self._f.peek(size))  # type: ignore[attr-defined]  # open(…, "rb"): a BufferedReader
        except OSError as exc:
            raise StoreError(f"cannot read {self._path}: {exc.strerror}") from exc


_ALLOW_EMPTY_HELP = "Deposit a FILE that is empty (0 octets) all the same: it is refused, else."


def _refuse_empty(stream: BinaryIO, path: str) -> None:
    """Refuse ``stream`` (the file ``path``, ``-``: standard input) when it holds no octet, before anything is
    deposited: an empty document is most often a mistake (a ``cat`` that failed into a pipe, Ctrl-D at once at a
    terminal), and a name minted for it is never taken back (``--allow-empty`` deposits one that is meant, as the
    write API's ``allow_empty=true`` does). Nothing is consumed: the octets looked at are read again."""
    peek = getattr(stream, "peek", None)
    if peek is not None:
        empty = peek(1) == b""
    elif stream.seekable():  # (a test's stand-in for standard input: bytes in hand)
        at = stream.tell()
        empty = stream.read(1) == b""
        stream.seek(at)
    else:
        return
    if empty:
        what = "standard input gave no octets" if path == "-" else f"{path} is empty (0 octets)"
        raise click.UsageError(f"{what}: nothing was deposited (--allow-empty deposits an empty document)")


#: Inputs at least this large (or of unknown size, from a pipe) get a progress bar on a terminal.
PROGRESS_FROM = 32 << 20


def _total_size(streams: list[BinaryIO]) -> int | None:
    """The octets the streams will give, when every one is a regular file; else ``None``."""
    total = 0
    for stream in streams:
        try:
            st = os.fstat(stream.fileno())
        except (OSError, ValueError, io.UnsupportedOperation):
            return None
        if not stat.S_ISREG(st.st_mode):
            return None
        total += st.st_size
    return total


@contextlib.contextmanager
def _progress(streams: list[BinaryIO], show: bool | None) -> Iterator[Callable[[int], None] | None]:
    """A progress bar on standard error (octets, rate, time left) for a large deposit; a callback for it.

    Shown when standard error is a terminal and the input is large or of
    unknown size, unless ``show`` says otherwise (--progress/--no-progress).
    """
    total = _total_size(streams)
    if show is None:
        show = sys.stderr.isatty() and (total is None or total >= PROGRESS_FROM)
    if not show:
        yield None
        return
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        DownloadColumn,
        Progress,
        TextColumn,
        TimeRemainingColumn,
        TransferSpeedColumn,
    )

    columns = [TextColumn("depositing"), BarColumn(), DownloadColumn(), TransferSpeedColumn(), TimeRemainingColumn()]
    with Progress(*columns, console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task("deposit", total=total)
        yield lambda n: bar.advance(task, n)


def _directory_refusal(path: str) -> str:
    """What ``pdi add DIR`` (or ``pdi version NAME DIR``) is told: a directory is not a file, and what to do."""
    return (f"{path} is a directory: pdi deposits files, not a directory (its files, each a document:"
            f" pdi add -s SERIES {path}/*; a bag pdi exported: pdi import {path})")


def _not_a_directory(path: str, token: str) -> str:
    """``token``, the format given for ``path``, once ``path`` is known not to be a directory."""
    if path != "-" and os.path.isdir(path):
        raise click.UsageError(_directory_refusal(path))
    return token


def _guess_format(path: str) -> str:
    from pdi import formats

    if path == "-":  # no name to tell it by (mimetypes reads none in "-")
        raise click.UsageError(f"standard input ('-') has no name to tell its format by: give --format {_SOME_TOKENS}")
    if os.path.isdir(path):
        raise click.UsageError(_directory_refusal(path))
    media_type, encoding = mimetypes.guess_type(path, strict=False)
    if Path(path).suffix.lower() in _AGGREGATE_SUFFIXES:
        # A saved web page is an RFC 2557 aggregate, stored as `pdi capture` stores it.
        media_type = "multipart/related"
    if encoding is not None:
        # notes.txt.gz holds compressed bytes: its format is the compression's.
        media_type = _COMPRESSED.get(encoding)
    if media_type is None and Path(path).suffix.lower() == ".msg":
        # Outlook's own file (a compound file, MS-OXMSG), no RFC 5322 message: --format rfc822 would be refused
        raise click.UsageError(f"cannot tell the format of {path} from its name: a .msg file is Outlook's own format,"
                               " not an e-mail message (RFC 5322) pdi reads: save the message from the mail program"
                               " as .eml and add that, or keep this file's octets as they are with --format"
                               " octet-stream")
    if media_type is None:
        raise click.UsageError(f"cannot tell the format of {path} from its name: give --format {_SOME_TOKENS}")
    try:
        return formats.token_for(_REGISTERED.get(media_type, media_type))
    except UnsupportedError as exc:  # a name whose media type has no token (.tar, .py, .mkv): said as one with none
        raise click.UsageError(f"cannot tell the format of {path} from its name: its media type {media_type}"
                               f" has no format token; give --format {_SOME_TOKENS}") from exc


#: What a refusal that asks for --format says it takes: the common tokens, and a media type (its token is taken).
_SOME_TOKENS = ("with its format token (text, html, xml, pdf, png, image+jpeg, gif, wav, audio+mpeg, video+mp4,"
                " rfc822, mbox, octet-stream …) or its media type (text/plain)")


def _token_of(given: str) -> str:
    """The format token ``--format`` gave: itself, or, given a registered media type (``text/plain``), its token,
    said in a note on stderr (a media type whose token is unknown is refused as the token it is)."""
    from pdi import formats

    token = formats.media_type_token(given)
    if token is None:
        return given
    click.echo(f"note: --format {given} is a media type: its format token {token} is used", err=True)
    return token


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


def _say_if_over(embargo: str | None, archive: Archive, deposits: list[Deposit]) -> None:
    """Say on stderr when ``--embargo-until`` named a moment past by the archive's clock: the embargo is over already,
    and what was deposited reads as any other name (as ``pdi embargo --until`` says of such a moment), or, of a
    version an embargo in force holds all the same (its document's), that embargo. ``deposits``: the ones made, an
    unchanged one apart (:func:`_refuse_unset` said what holds it)."""
    if embargo is None:
        return
    from pdi.archive.access import parse_until
    from pdi.archive.naming import timestamp

    until = parse_until(embargo)
    if until > timestamp(archive.now()):
        return
    made = [deposit for deposit in deposits if not deposit.unchanged]
    held = [(deposit[0], archive.embargo_in_force(deposit[0])) for deposit in made]
    for name, in_force in held:
        if in_force is not None:
            click.echo(f"warning: an embargo until {until} is over already: it set nothing, and {name} is embargoed"
                       f" until {in_force} all the same", err=True)
    if any(in_force is None for _, in_force in held):
        click.echo(f"warning: an embargo until {until} is over already: what was deposited reads as any other name"
                   " (pdi embargo NAME --until DATE embargoes it)", err=True)


def _refuse_unset(embargo: str | None, archive: Archive, deposit: Deposit, *, refuse: bool = True) -> str | None:
    """Of a deposit answered unchanged (nothing stored, so nothing embargoed) whose ``--embargo-until`` asked for an
    embargo: refuse it (exit 5, its name not printed) when the version is not embargoed until then (none in force,
    or one that ends earlier), naming what holds and how to set one, for a depositor who believed it sealed is
    the danger; else (an embargo in force until then or later, or a moment past) say on stderr that none was set
    and what holds the version. Not ``refuse`` (a message of an mbox, whose batch is written already): what the
    refusal would say, printed as a warning and answered, for the caller to refuse the whole (``None`` where
    nothing is refused)."""
    if embargo is None or not deposit.unchanged:
        return None
    from pdi.archive.access import parse_until
    from pdi.archive.naming import timestamp

    until = parse_until(embargo)
    name = deposit[0]
    in_force = archive.embargo_in_force(name)
    unset = f"no embargo was set: version {deposit.version} already holds these bytes, so nothing was deposited"
    if in_force is not None and in_force >= until:
        click.echo(f"note: {unset}; {name} is embargoed until {in_force} already", err=True)
        return None
    stands = "reads as any other name" if in_force is None else f"is embargoed only until {in_force}"
    if until <= timestamp(archive.now()):
        click.echo(f"warning: an embargo until {until} is over already, and {unset}; {name} {stands}"
                   " (pdi embargo NAME --until DATE embargoes it)", err=True)
        return None
    said = f"{name}: {unset}, and it {stands}: pdi embargo {name} --until {embargo} embargoes it"
    if not refuse:
        click.echo(f"warning: {said}", err=True)
        return str(name)
    raise ImmutabilityError(said)


def _print_deposit(deposit: Deposit, how_to_force: str, archive: Archive | None = None) -> int:
    """Print the names a deposit answers with (how many); when it stored nothing, say so on stderr; with
    ``archive``, note on stderr a PDF whose pages pdi does not cite (:func:`_page_tree_notes`)."""
    if deposit.unchanged:
        generic = dataclasses.replace(deposit[0], format=None, version=None).canonical()
        click.echo(
            f"unchanged: version {deposit.version} of {generic} already holds these bytes;"
            f" nothing was deposited ({how_to_force})",
            err=True,
        )
    for name in deposit:
        click.echo(str(name))
    if archive is not None:
        _page_tree_notes(deposit, archive)
    return len(deposit)


def _page_tree_notes(deposit: Deposit, archive: Archive) -> None:
    """A note on stderr for each PDF of ``deposit`` whose page tree PDFium and pdf.js may read differently: kept
    whole, pdi cites no page or region of it (:func:`pdi.fragments.pdf_positions.page_tree_said`)."""
    for name in deposit:
        if (name.format or "").lower() != "pdf":
            continue
        located = archive.locate(name)
        layer = archive.text_layer_of(located.record) if isinstance(located, Resolved) else None
        if layer is not None and layer.page_tree:
            from pdi.fragments.pdf_positions import page_tree_said

            click.echo(f"note: {name}: {page_tree_said(layer.page_tree)}: pdi cites no page or region of it"
                       " (page=, rect=, viewrect=, nameddest=), only the whole PDF and passages of its text", err=True)

@click.command("add")
@click.argument("files", metavar="FILE...", nargs=-1, required=True)
@click.option("--series", "-s", required=True, help="A registered series.")
@click.option("--format", "-f", "format_",
              help="Format token of every FILE (text, pdf, image+jpeg; a media type, text/plain, is taken as its"
                   " token; default: from each file's name).")
@click.option("--id", "foreign_id",
              help="A mnemonic or foreign id (URL, DOI) instead of the next daily serial (one FILE only).")
@click.option("--charset", help="The charset of a text file (default: BOM, else UTF-8).", callback=named_charset)
@click.option("--force", is_flag=True,
              help="Deposit even when the bytes contradict the format or charset.")
@click.option("--progress/--no-progress", default=None,
              help="Show a progress bar on standard error (default: for large input on a terminal).")
@click.option("--embargo-until", "embargo", metavar="DATE",
              help="Embargo the version it deposits from its deposit until DATE (2027-01-01, or a time with its"
                   " zone): the resolver answers 403 to readers without a token for the series until then. It is"
                   " the version's own embargo: pdi embargo VERSIONED-NAME --lift lifts it, the generic name's"
                   " --lift does not.")
@click.option("--serial", is_flag=True,
              help="Name an e-mail by the next daily serial, not by its Message-ID (mid:ID).")
@click.option("--allow-empty", is_flag=True, help=_ALLOW_EMPTY_HELP)
@archive_option
def add_cmd(
    files: tuple[str, ...], series: str, format_: str | None, foreign_id: str | None,
    charset: str | None, force: bool, progress: bool | None, embargo: str | None, serial: bool, allow_empty: bool,
    archive: str,
) -> None:
    """Mint a PDI for each FILE ('-' = stdin) today (GMT) and deposit it; prints each PDI as it is made.

    Each FILE is a document of its own, deposited in turn (pdi add -s
    SERIES *.pdf): stdout has one line a file, in the order given: the
    name minted for it (an mbox: one line a message). Every file's format
    is told from its name (or --format), and every file that cannot be
    read is named, before the first is deposited.
    Several files are not all or none (unlike an mbox): a file that is
    refused stops the command there; the files before it stay deposited,
    their names printed; the error names the file, its place and how many
    were deposited before it, and the exit status is its refusal's. To go
    on, mend the refused file and add it and the files after it, or add
    only the files after it; never add again those before it: a file added
    again gets a second name.

    The bytes are checked against the format (its file signature, by
    libmagic) and the charset (bytes that are UTF-8 but declared latin-1 or
    another one-byte charset); a text's and an XML file's octets must all be
    in its charset or encoding (XML's: its byte-order mark, else its
    encoding declaration, else UTF-8), else it is a syntax error naming the
    first that is not (exit 1); a PDF must open in PDFium, which makes
    its text layer (char=, line= and search count on it), and one whose
    page tree PDFium and pdf.js may read differently is noted on stderr:
    no page or region of it is cited; a WebM, MP4 or
    Ogg video must be one ffprobe (Debian's ffmpeg) reads as that
    container, and its duration, frame size and codecs are kept (sec=,
    msec= and --info read them): a contradiction is refused with exit 3
    unless --force. With --id naming a document minted today whose latest
    version holds the same bytes, nothing is deposited: its name is
    printed (and a note on stderr), exit 0; so --embargo-until then
    embargoes nothing: unless the version is embargoed until that date
    already (said on stderr), it is refused with exit 5, naming the embargo
    in force and how to set one (pdi embargo NAME --until DATE). Other bytes, or --force, are
    refused with exit 5: a name is minted once (pdi version deposits a
    new version of it).

    A FILE of no octets (standard input that gave none: a cat that
    failed into a pipe) is refused before anything is deposited (exit 2)
    unless --allow-empty (standard input or a named pipe among several
    files: at its turn, when it is read); standard input read from a
    terminal is asked for on stderr (end it with Ctrl-D).

    The bytes are stored exactly as they are, streamed (in bounded
    memory, but a PDF is held whole while PDFium reads it, and a video is
    copied to a temporary file for ffprobe), with a progress bar for large input on a terminal.

    An e-mail (.eml, format rfc822) must be a message Python's email
    reads (one of more than 32 MiB, or of more than 2,000,000 lines, is
    checked by its structure, as it is read, in bounded memory: kept in a
    temporary file meanwhile, whatever its size); it is named by its Message-ID (the foreign id mid:ID, RFC 2392;
    --serial: the next serial), so the reader's thread page finds it. An
    mbox (.mbox, or --format mbox) is cut into its messages as Python's
    mailbox module cuts it, and each is deposited as a document of its
    own, format rfc822, named so, all or none (pdi docs email). It must
    begin with a From_ line (RFC 4155; blank lines before it are passed
    over): a line before it would be in no message, and is a syntax error
    naming it (a single message is deposited with --format rfc822). With
    --embargo-until, a message deposited before (answered unchanged) and
    not embargoed until then is said on stderr, and after the names the
    command exits 5 (the messages minted now are embargoed).
    """
    if len(files) > 1 and foreign_id is not None:
        raise click.UsageError(f"--id names one document, and {len(files)} files were given: give one FILE with"
                               " --id (several files are each named by the next daily serial)")
    if files.count("-") > 1:  # a usage error before any file's (the format of '-' is never told by its name)
        raise click.UsageError("standard input ('-') can be read once only")
    if format_ is not None:
        format_ = _token_of(format_)
    # every file that cannot be read named (a missing README said missing, not of a format its name cannot tell),
    # then every file's format, and a directory said, before the first is deposited
    _check_readable(files)
    tokens = [_guess_format(file) if format_ is None else _not_a_directory(file, format_) for file in files]
    if not allow_empty:
        _check_not_empty(files)  # and every file that is empty
    with contextlib.ExitStack() as stack:
        opened = _opener(archive, stack)
        if len(files) > 1:
            opened()  # an archive that cannot be opened is said as itself, not as a file's refusal
        printed = 0  # names printed so far (an mbox prints one a message)
        made: list[Deposit] = []  # the deposits, as the warning of an embargo over already says them
        for number, (file, token) in enumerate(zip(files, tokens, strict=True), 1):
            try:
                if token.lower() == "mbox":
                    printed += _add_mbox(file, series, foreign_id, serial, force, embargo, opened, made)
                else:
                    printed += _add_file(file, token, format_ is not None, series, foreign_id, charset, force,
                                         progress, embargo, serial, allow_empty, opened, made)
            except (PDIError, click.ClickException) as exc:
                if len(files) == 1:
                    raise
                raise _said_of_place(exc, file, number, len(files), printed) from None
        _say_if_over(embargo, opened(), made)


def _unreadable(path: str) -> tuple[type[PDIError], str] | None:
    """Why ``path`` (not ``-``, not a directory) cannot be read as a file to deposit, with the class of that
    refusal (:class:`NotFoundError` for no such file, else :class:`StoreError`, as opening it at its turn says),
    or ``None``. A regular file is opened and closed (what open(2) says, whoever runs pdi: root reads a file of
    mode 000); a named pipe or a character device (``/dev/stdin``, a shell's ``<(…)``) is not opened before its
    turn (an open and close would let a pipe's writer write to no reader), only its permission asked."""
    try:
        mode = os.stat(path).st_mode
        if stat.S_ISSOCK(mode):
            return StoreError, "a socket, not a file"
        if stat.S_ISFIFO(mode) or stat.S_ISCHR(mode):
            if not os.access(path, os.R_OK):
                return StoreError, os.strerror(errno.EACCES)
            return None
        os.close(os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NOCTTY | os.O_NONBLOCK))
    except (FileNotFoundError, NotADirectoryError):
        return NotFoundError, "no such file"
    except OSError as exc:
        return StoreError, exc.strerror or str(exc)
    return None


def _check_readable(files: tuple[str, ...]) -> None:
    """Refuse, before the first file is deposited, every one of ``files`` that cannot be read (one file: as opening
    it says, ``cannot read a.pdf: no such file``; several: each named, in the order given, the refusal of the first
    one's class: exit 4 where it is missing, else 8). A file removed or locked after this look is still refused at
    its turn, by its opening."""
    bad = [(file, *why) for file in files if file != "-" and (why := _unreadable(file)) is not None]
    if not bad:
        return
    kind = bad[0][1]
    if len(files) == 1:
        raise kind(f"cannot read {files[0]}: {bad[0][2]}")
    raise kind(f"{len(bad)} of the {len(files)} files cannot be read, so none was deposited: "
               + "; ".join(f"{file}: {why}" for file, _, why in bad))


def _empty(path: str) -> bool:
    """Whether ``path`` (not ``-``) is a regular file of no octets: its size says 0 and a read gives none (a file
    of ``/proc`` says 0 and has octets). A named pipe or a character device is not read before its turn."""
    try:
        info = os.stat(path)
        if not stat.S_ISREG(info.st_mode) or info.st_size:
            return False
        with open(path, "rb") as f:
            return f.read(1) == b""
    except OSError:  # (said by _check_readable, or by its opening at its turn)
        return False


def _check_not_empty(files: tuple[str, ...]) -> None:
    """Refuse, before the first file is deposited, every one of ``files`` that is empty (exit 2; one file: as
    :func:`_refuse_empty` says it; several: each named, in the order given). Standard input, a named pipe and a
    file emptied after this look are refused at their turn, by :func:`_refuse_empty`."""
    empty = [file for file in files if file != "-" and _empty(file)]
    if not empty:
        return
    if len(files) == 1:
        raise click.UsageError(f"{files[0]} is empty (0 octets): nothing was deposited"
                               " (--allow-empty deposits an empty document)")
    raise click.UsageError(f"{len(empty)} of the {len(files)} files {'is' if len(empty) == 1 else 'are'} empty"
                           f" (0 octets), so none was deposited: {', '.join(empty)}"
                           " (--allow-empty deposits an empty document)")


def _opener(location: str, stack: contextlib.ExitStack) -> Callable[[], Archive]:
    """The archive at ``location``, opened (on ``stack``) when first asked for, and the same one after."""

    @functools.cache
    def opened() -> Archive:
        return stack.enter_context(open_archive(location))

    return opened


def _said_of_place(
    exc: PDIError | click.ClickException, file: str, number: int, of: int, printed: int,
) -> PDIError | click.ClickException:
    """The refusal of file ``number`` (from 1) of ``of`` given to one ``pdi add``, said of it: its name, its place,
    how many were deposited before it and how many after it were not tried (``a.pdf, file 2 of 3 (the 1 before it
    deposited, its name printed; the 1 after it not tried): …``), in place of the file's name that begins it. The
    names ``printed`` are counted where they are not one a file (an mbox before it: ``the 2 before it deposited,
    their 3 names printed``)."""
    before, after = number - 1, of - number
    names = ("its name" if before == 1 else "their names") if printed == before else (
        f"{'its' if before == 1 else 'their'} {printed} names")
    told = [f"the {before} before it deposited, {names} printed" if before else "none before it"]
    if after:
        told.append(f"the {after} after it not tried")
    place = f"{_source(file)}, file {number} of {of} ({'; '.join(told)}): "
    message = exc.message
    cut = len(_source(file)) + 2 if message.startswith(_source(file) + ": ") else 0
    if isinstance(exc, PDIError):
        return exc.within(place, cut)
    text = place + message[cut:]
    # (the refusals click says of a file here are usage errors: an mbox of no message; a directory given --format)
    return click.UsageError(text, exc.ctx) if isinstance(exc, click.UsageError) else click.ClickException(text)


def _add_file(
    file: str, token: str, format_given: bool, series: str, foreign_id: str | None, charset: str | None,
    force: bool, progress: bool | None, embargo: str | None, serial: bool, allow_empty: bool,
    opened: Callable[[], Archive], made: list[Deposit],
) -> int:
    """`pdi add FILE` of one file that is not an mbox: deposited as ``token``, its name printed (how many names:
    one); an empty one refused unless ``allow_empty``."""
    if serial and foreign_id is not None:
        raise click.UsageError("--serial and --id name the document two ways: give one")
    with contextlib.ExitStack() as stack:
        stream = _open_file(file, stack)
        if not allow_empty:
            _refuse_empty(stream, file)
        data: BinaryIO | Iterator[bytes] = stream
        if not format_given and _guessed_xml(token):  # a .tei of the SGML days reads as XML by its name alone
            head = stream.read(1 << 20)
            said = _sgml_note(head, file)
            if said is not None:
                click.echo(said, err=True)
            data = itertools.chain([head], iter(functools.partial(stream.read, 1 << 16), b""))
        elif token.lower() in ("rfc822", "header") and foreign_id is None and not serial:
            # a message is named by its Message-ID (RFC 2392 mid:), so that its thread can find it
            from pdi.mail.message import head_message_id, mid_name

            head = stream.read(1 << 20)
            foreign_id, why = mid_name(head_message_id(head))
            if why is not None:
                click.echo(f"note: {_source(file)}: {why}", err=True)
            data = itertools.chain([head], iter(functools.partial(stream.read, 1 << 16), b""))
        content = Content(data, token, charset, _source(file))
        archive = opened()
        shown = stack.enter_context(_progress([stream], progress))
        try:
            deposit = archive.deposit(
                series, [content], foreign_id=foreign_id, force=force, progress=shown, embargo_until=embargo
            )
        except ImmutabilityError as exc:  # the octets of a withdrawn version under --id: a forced version holds them
            # (and other octets under an --id in use: pdi version deposits them as the next version of its name)
            import shlex

            raise exc.forced_by("pdi version --force deposits them as a new version").versioned_by(
                f"pdi version {exc.minted} {shlex.quote(file)} deposits them as its next version") from None
        earlier = archive.held_the_same_day(deposit)
    _refuse_unset(embargo, archive, deposit)
    made.append(deposit)
    printed = _print_deposit(deposit, "pdi version --force deposits them as a new version", archive)
    if earlier is not None:
        click.echo(_second_name_warning(deposit[0], earlier, foreign_id is not None), err=True)
    return printed


def _guessed_xml(token: str) -> bool:
    """Whether a format token guessed from a file's name is XML's (``xml``, ``tei+xml``, any ``+xml``) but not
    XHTML's, whose passages are read as HTML's."""
    from pdi import formats

    try:
        return formats.media_family(formats.media_type_for(token)) == "xml" and token.lower() != "sgml"
    except Exception:  # a token no media type is known for: not XML's
        return False


def _sgml_note(head: bytes, path: str) -> str | None:
    """The note ``pdi add`` gives when a file its name says is XML holds no XML declaration and is no well-formed
    XML in ``head`` (its first MiB), but begins with a document type declaration: SGML, most likely (TEI P3's
    ``.tei`` files are), which only ``--format sgml`` reads passages of. ``None`` for any other file."""
    import re
    import xml.parsers.expat

    start = head.removeprefix(b"\xef\xbb\xbf").lstrip()
    if not re.match(rb"<!DOCTYPE\s", start, re.IGNORECASE):
        return None
    parser = xml.parsers.expat.ParserCreate()
    try:
        parser.Parse(head, False)  # (not final: a file longer than its head is judged by what was read)
    except xml.parsers.expat.ExpatError as exc:
        if _fifth_edition_xml(head):
            return None
        where = f"line {exc.lineno}, column {exc.offset + 1}"
        return (f"note: {_source(path)} is not well-formed XML ({xml.parsers.expat.ErrorString(exc.code)}, {where})"
                " and begins with a document type declaration: if it is SGML (as TEI P3's .tei files are), deposit"
                " it with --format sgml, which #elt passages of it need; deposited as its name says")
    return None


def _fifth_edition_xml(head: bytes) -> bool:
    """Whether ``head``, which expat (of XML 1.0 Fourth Edition's names) refused, is well-formed as far as it goes
    with the Fifth Edition's names, as ``#elt`` reads it (:mod:`pdi.fragments.markup.xml_names`)."""
    import codecs
    import xml.parsers.expat

    from pdi.fragments.markup.reading import xml_encoding
    from pdi.fragments.markup.xml_names import fourth_edition_text

    try:
        text = codecs.getincrementaldecoder(xml_encoding(head)[0])().decode(head, final=False)
    except (LookupError, UnicodeDecodeError):
        return False
    rewritten = fourth_edition_text(text)
    if rewritten is None:
        return False
    parser = xml.parsers.expat.ParserCreate()
    try:
        parser.Parse(rewritten.text, False)  # a str is read as UTF-8, whatever its declaration says
    except xml.parsers.expat.ExpatError:
        return False
    return True


def _second_name_warning(minted: PDI, earlier: PDI, named: bool, message: str | None = None) -> str:
    """What ``pdi add`` says when the octets it just named were already held under another name of the day
    (``named``: the deposit gave --id, so the advice to give one is left out; ``message``: the place in an mbox
    of the message so named, whose advice is its Message-ID instead)."""
    from pdi._wording import NAME_MOST, clipped

    advice = "" if named else "; with --id ID, adding the same file again mints nothing new"
    if message is not None and not named:
        advice = "; without --serial, each message is named by its Message-ID and adding the mbox again mints nothing new"
    return (f"warning: {message + ': ' if message else ''}{clipped(str(earlier), NAME_MOST)} already holds these"
            " octets (deposited today);"
            f" {clipped(str(minted), NAME_MOST)} is a second permanent"
            f" name for them (every pdi add mints a name, never taken back{advice})")

#: The most octets of messages one `pdi add FILE.mbox` deposits (all held until the one batch is written).
MBOX_UP_TO = 256 << 20


def _add_mbox(
    file: str, series: str, foreign_id: str | None, serial: bool, force: bool, embargo: str | None,
    opened: Callable[[], Archive], made: list[Deposit],
) -> int:
    """`pdi add FILE.mbox`: each message of the mbox a document of its own (format rfc822), all or none (``force``:
    unchecked, all or none still); how many names are printed.

    Each is named by its Message-ID (mid:ID) unless ``serial``; a message whose Message-ID an earlier one
    of the mbox had, or that has none, by the next serial.
    """
    from pdi.errors import LimitError
    from pdi.mail.mbox import split_mbox
    from pdi.mail.message import head_message_id, mid_name

    if foreign_id is not None:
        raise click.UsageError("an mbox is deposited as one document per message: --id names one document")
    with contextlib.ExitStack() as stack:
        stream = _open_file(file, stack)
        items: list[tuple[list[Content], str | None]] = []
        places: list[str] = []  # each message's, as its refusals name it
        seen: set[str | None] = set()
        total = 0
        for message in _said_of_file(split_mbox(stream), file):
            total += len(message.data)
            if total > MBOX_UP_TO:
                raise LimitError(f"{_source(file)}: its messages pass {MBOX_UP_TO:,} octets (the most one pdi add"
                                 f" deposits) at message {message.number + 1:,} (line {message.line:,}):"
                                 " split the mbox")
            where = f"{_source(file)}: message {message.number + 1} (From_ line {message.line})"
            mid, why = mid_name(None if serial else head_message_id(message.data[: 1 << 20]))
            if why is not None:
                click.echo(f"note: {where}: {why}", err=True)
            if mid is not None and mid in seen:
                mid = None
            seen.add(mid)
            items.append(([Content(message.data, "rfc822", None, where)], mid))
            places.append(where)
        if not items:
            raise click.UsageError(f"{_source(file)} holds no message: no line starts with 'From '")
        archive = opened()
        # the same mbox again (a script run twice, a list's archive that grew): a message already deposited today
        # is answered as pdi add MSG.eml answers it, by the archive's one rule (unchanged); forced, a name is
        # minted once, as there. All or none, forced or not: a message deposited on its own before a later one
        # failed stayed, its name never printed, and the same command again failed on it at once
        try:
            deposits = archive.deposit_batch(series, items, embargo_until=embargo, force=force, unchanged=True)
        except PDIError as exc:
            raise _said_of_message(exc, places) from None
        # a message given a second permanent name is said so, as pdi add FILE says it of a file (one indexed
        # look-up a message minted now): an mbox added again with --serial mints every message again
        earlier = [archive.held_the_same_day(deposit) for deposit in deposits]
    printed = sum(_print_deposit(deposit, "pdi version --force deposits them as a new version") for deposit in deposits)
    unsealed = [name for deposit in deposits if (name := _refuse_unset(embargo, archive, deposit, refuse=False))]
    made.extend(deposits)
    for place, deposit, held in zip(places, deposits, earlier, strict=True):
        if held is not None:
            click.echo(_second_name_warning(deposit[0], held, not serial, place), err=True)
    if unsealed:
        # the messages minted now are embargoed and their names printed (the batch is written: all or none), but a
        # depositor who believed every message sealed is the danger, as of one file: exit 5, after the names
        shown = ", ".join(unsealed[:3]) + (f" and {len(unsealed) - 3:,} more" if len(unsealed) > 3 else "")
        raise ImmutabilityError(
            f"{_source(file)}: {len(unsealed):,} of its {len(deposits):,} messages were deposited before and are not"
            f" embargoed until {embargo} ({shown}: each said above); the messages minted now are: pdi embargo NAME"
            f" --until {embargo} embargoes each of the others")
    return printed


def _said_of_file(messages: Iterator[MboxMessage], file: str) -> Iterator[MboxMessage]:
    """The mbox's messages, a refusal of the cutting (too many, one too large; what comes before its first From_
    line) said of ``file``."""
    import shlex

    from pdi.errors import LimitError, ParseError

    source = _source(file)
    try:
        yield from messages
    except LimitError as exc:
        raise LimitError(f"{source}: {exc}") from None
    except ParseError as exc:  # no From_ line first: one message named .mbox, or an mbox that lost its first one
        raise ParseError(f"{source}: {exc.reason}; nothing was deposited (if it is one message, not an mbox,"
                         f" pdi add {shlex.quote(file)} --format rfc822 deposits it)", offset=exc.offset,
                         rule=exc.rule) from None


def _said_of_message(exc: PDIError, places: list[str]) -> PDIError:
    """A batch's refusal of its item N (``item N: …``, counted from 0) said of the mbox's message N + 1 and its
    From_ line, as its content checks and its limits name it (``list.mbox: message 2 (From_ line 7): …``)."""
    if exc.item is None or exc.item >= len(places):
        return exc
    place = places[exc.item] + ": "
    said = exc.item_said("")
    return said.within(place, len(place) if said.message.startswith(place) else 0)


@click.command("version")
@click.argument("pdi")
@click.argument("files", nargs=-1, required=True)
@click.option("--format", "-f", "formats_", multiple=True,
              help="Format of each FILE, in order (default: from the file names).")
@click.option("--charset", help="The charset of the text files among FILES.", callback=named_charset)
@click.option("--add-format", is_flag=True,
              help="Add FILES as new formats (same content) of the version PDI names (a versioned name,"
              " ID.FORMAT.VERSION; a generic one is refused, exit 1), instead of depositing a new version. Your word"
              " is taken that FILES hold the same content: no content is compared across formats, and a format once"
              " added stays; other content is a new version.")
@click.option("--force", is_flag=True, help=_FORCE_HELP)
@click.option("--progress/--no-progress", default=None,
              help="Show a progress bar on standard error (default: for large input on a terminal).")
@click.option("--embargo-until", "embargo", metavar="DATE",
              help="Embargo the new version until DATE (2027-01-01, or a time with its zone).")
@click.option("--allow-empty", is_flag=True, help=_ALLOW_EMPTY_HELP)
@archive_option
def version_cmd(
    pdi: str, files: tuple[str, ...], formats_: tuple[str, ...], charset: str | None,
    add_format: bool, force: bool, progress: bool | None, embargo: str | None, allow_empty: bool, archive: str,
) -> None:
    """Deposit FILES as the next version of PDI (every format it is to have); prints the PDIs.

    When the latest version has the same formats with the same bytes and
    charsets, nothing is deposited: its
    names are printed, with a note on stderr, and the exit status is 0
    (--embargo-until then embargoes nothing: unless the version is embargoed
    until that date already, it is refused with exit 5, naming the embargo
    in force and how to set one, pdi embargo NAME --until DATE);
    --force deposits a new version all the same. The same bytes in a
    latest version that was withdrawn are refused, naming it and its
    withdrawal (exit 5; --force deposits them as a new version), and a
    document withdrawn whole takes no new version (exit 11), nor does a
    withdrawn version take a format (--add-format, exit 11). The bytes are checked
    as for pdi add (exit 3 unless --force); an empty FILE is refused (exit 2)
    unless --allow-empty. (pdi's own version: pdi --version.)
    """
    if formats_ and len(formats_) != len(files):
        raise click.UsageError("give one --format per FILE, or none")
    if files.count("-") > 1:
        raise click.UsageError("standard input ('-') can be read once only")
    _check_readable(files)  # a missing file said missing before its name is asked its format
    tokens = [_token_of(given) for given in formats_] or [_guess_format(f) for f in files]
    with contextlib.ExitStack() as stack:
        streams = [_open_file(f, stack) for f in files]
        for stream, file in zip(streams, files, strict=True):
            if not allow_empty:
                _refuse_empty(stream, file)
        contents = [
            Content(s, t, charset if charset and is_text_format(t) else None, _source(f))
            for s, f, t in zip(streams, files, tokens, strict=True)
        ]
        opened = stack.enter_context(open_archive(archive))
        stack.enter_context(saying_what_is_near(opened, pdi))
        shown = stack.enter_context(_progress(streams, progress))
        if add_format:
            for c in contents:
                name = opened.add_format(
                    pdi, c.data, format=c.format, charset=c.charset, force=force,
                    source=c.source, progress=shown,
                )
                click.echo(str(name))
        else:
            try:
                deposit = opened.add_version(pdi, contents, force=force, progress=shown, embargo_until=embargo)
            except ImmutabilityError as exc:  # the octets of the withdrawn latest version
                raise exc.forced_by("--force deposits them as a new version") from None
            _refuse_unset(embargo, opened, deposit)
            _print_deposit(deposit, "--force deposits them as a new version", opened)
            _say_if_over(embargo, opened, [deposit])


def register(cli: click.Group) -> None:
    """Add ``add`` and ``version`` to the top-level ``pdi`` group."""
    for command in (add_cmd, version_cmd):
        cli.add_command(command)
