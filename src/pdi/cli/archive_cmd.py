"""Archive-wide commands: `pdi init`, `series`, `verify`, `export`, `import`.

Thin: each command parses its arguments, calls :class:`pdi.archive.Archive`,
and prints. :data:`archive_option` is the ``--archive`` option every command
that deposits or reads the archive uses (the other command modules too);
:func:`pdi.cli.archive_io.open_archive` opens it. Depositing is :mod:`pdi.cli.deposit_cmd`,
reading :mod:`pdi.cli.read_cmd`.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, TypeVar

import click

from pdi._wording import MESSAGE_MOST, NAME_MOST, clipped, plural
from pdi.archive import (
    DEFAULT_LOCATION,
    Archive,
    resolve_location,
)
from pdi.cli.archive_io import open_archive
from pdi.errors import (
    ImmutabilityError,
    IntegrityError,
    NotFoundError,
    ParseError,
    PDIError,
    UnsupportedError,
)

if TYPE_CHECKING:
    from pdi.archive.fixity import Problem, VerifyReport
    from pdi.wacz_signing import Identity, WaczKey

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


def checked_base_url(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """A click callback: ``value``, a resolver's base URL an option gives (``pdi serve --base-url``, ``pdi mirror sync
    --announce``), refused as ``pdi mirror add`` refuses one (:func:`pdi.archive.mirroring.base_url`: an absolute
    http or https URL with a host, no query, fragment or user) before anything is done, naming it; as given."""
    if value is None:
        return None
    from pdi.archive.mirroring import base_url
    from pdi.errors import ParseError

    try:
        base_url(value)
    except ParseError as exc:
        raise click.BadParameter(exc.message, ctx, param) from None
    return value


@contextmanager
def progress_bar(description: str) -> Iterator[Callable[[int, int], None]]:
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


#: What a folder an archive is made in may hold already: a file system's own (the top of a disk, ext4's).
_FOLDER_OWN = frozenset({"lost+found"})
#: What a ``pdi init`` that stopped early leaves, empty, before its catalog is made: made again.
_INIT_LEFT = frozenset({"blobs", "tmp"})


def _refuse_a_folder_of_other_things(where: str) -> None:
    """Refuse to make an archive in ``where``, a folder that holds no archive but other things (an archivist's
    documents, another program's files): pdi would write its catalog and folders among them, and a later ``rm -r``
    of the archive, or a backup of it, would take them too. A new or empty folder is made an archive; so is the top of
    a disk (its ``lost+found``), and a folder that only a ``pdi init`` stopped early left things in."""
    folder = Path(where)
    if "://" in where or not folder.is_dir():
        return  # a database, or a folder made anew (a file there: the archive's opening says so)
    try:
        names = sorted(e.name + ("/" if e.is_dir(follow_symlinks=False) else "") for e in os.scandir(folder)
                       if e.name not in _FOLDER_OWN
                       and not (e.name in _INIT_LEFT and e.is_dir(follow_symlinks=False) and not any(os.scandir(e))))
    except OSError:
        return  # unreadable: the archive's opening says why, as ever
    if not names:
        return
    shown = ", ".join(clipped(n, 60) for n in names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")
    raise ImmutabilityError(
        f"{where} is not empty and holds no archive ({plural(len(names), 'entry', 'entries')}: {shown}): pdi init"
        " makes an archive only in a new or empty folder, never among other files; give a new one, such as"
        f" pdi init {shlex.quote(str(folder / 'pdi-archive'))}")


@click.command("init")
@click.argument("location", required=False, metavar="[DIR|URL]")
@click.option("--blobs", metavar="s3://BUCKET/PREFIX",
              help="Keep the blobs in this S3-compatible store (the bucket must exist); endpoint and"
                   " keys from AWS_ENDPOINT_URL, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY.")
@click.option("--backup", "backup_dest", metavar="DEST",
              help="Before migrating an existing archive, back it up into DEST as pdi backup DEST does (an empty"
                   " or new directory, or a backup of this archive); a failed backup migrates nothing. An archive"
                   " already at this pdi's schema version is not backed up.")
@click.option("--no-migrate", "no_migrate", is_flag=True,
              help="Make the archive if there is none, but migrate no existing one: an older one is refused"
                   " (exit 8), as every other command refuses it (what the systemd unit runs before pdi serve).")
@archive_option
def init_cmd(location: str | None, blobs: str | None, backup_dest: str | None, no_migrate: bool,
             archive: str) -> None:
    """Create an archive at DIR or in a postgresql:// database (default: --archive; both: refused).

    Its blobs live beside the catalog (files, or rows of the database) unless
    --blobs names an S3-compatible store; the choice is recorded in the
    catalog and later commands find it there. Running it again on an
    existing archive only migrates its schema forward (a note on stderr
    says the archive was there already, and that it was left as it was or
    migrated from which schema version; with --backup, the line about the
    backup says so), and no other command does: each of them refuses an archive older than this pdi (exit 8). After
    installing a newer pdi, stop every older release that uses the archive and
    run this once, with --backup DEST to keep the archive as the older pdi
    left it (pdi docs how-to/upgrade). A catalog newer than this pdi knows is
    refused (exit 8); --blobs naming another store than the archive was made
    with is refused (exit 5), naming both and what to do. A DIR there already
    that holds other files and no archive is refused (exit 5), naming what
    it holds: nothing is written among them. An empty one (or the top of a
    disk, its lost+found aside) is made an archive.

    A new DIR is its owner's alone whatever the umask (0700, its files
    0600); a DIR there already keeps its mode, and its group may read what
    pdi makes in it if it is shared with that group (0750). The modes of an
    existing archive are left as they are: what of it every local user can
    read is said on stderr (pdi docs reference/backup).
    """
    if no_migrate and backup_dest is not None:
        raise click.UsageError("--backup backs an archive up before migrating it, and --no-migrate migrates none:"
                               " give one of them")
    given = click.get_current_context().get_parameter_source("archive")
    if location is not None and given is click.core.ParameterSource.COMMANDLINE and location != archive:
        # two archives named: the one left out was made nowhere, and a later command with the same --archive
        # would not find it (PDI_ARCHIVE, a default, gives way to DIR)
        raise click.UsageError(f"two archives given, {location} and --archive {archive}: give one of them")
    from pdi.archive.backup import schema_version_at
    from pdi.archive.store import SCHEMA_VERSION
    from pdi.errors import PDIError

    where = location or resolve_location(archive)
    try:
        found = schema_version_at(where)  # the archive there before (None: none), to say what init did to it
    except PDIError:
        if backup_dest is not None:  # never migrated unbacked: said as the backup's look at it says it
            raise
        found = -1  # one that cannot be read as it is (newer than this pdi …): Archive.init says why, as ever
    if found is None:
        _refuse_a_folder_of_other_things(where)
    if backup_dest is not None:
        from pdi.archive import refuse_writing_in
        from pdi.archive.backup import backup

        if found is not None and found < SCHEMA_VERSION:
            refuse_writing_in(where, where)  # a migration this user may not make: said before the backup
            backup(where, backup_dest)
            click.echo(f"backed up the archive at schema version {found} to {backup_dest} before migrating it")
        else:  # nothing to migrate (or no archive yet): said, so that DEST is not looked for in vain
            why = "there is no archive yet" if found is None else f"it is at schema version {found} already"
            click.echo(f"not backed up to {backup_dest}: {why}, nothing to migrate (pdi backup makes one)", err=True)
    with Archive.init(where, blobs=blobs, migrate=not no_migrate) as opened:
        reached = opened.schema_version()
        click.echo(f"archive at {opened.location} (schema version {reached})")
        # there already: left as it was, or migrated forward, said as a note (with --backup, its own line says so)
        if found is not None and found >= 0 and backup_dest is None:
            click.echo("note: the archive was there already: " + (
                "left as it was" if found == reached else f"migrated from schema version {found} to {reached}"),
                err=True)
        _tell_open_to_others(opened.location)
        tell_case_folding(opened)


def tell_case_folding(opened: Archive, *, restored_from: str | None = None) -> None:
    """Say on stderr when the PostgreSQL database of ``opened`` folds only ASCII letters to lower case in its full-text
    search (its ``LC_CTYPE`` is ``C``): its ``pdi search`` then tells ``École`` from ``école``, where SQLite's does not,
    and only a database made with another character type mends it. ``restored_from``: the backup ``pdi restore`` has
    just restored there, which the advice then names."""
    from pdi.archive.catalog.opening import is_postgres_url

    if not is_postgres_url(opened.location):
        return
    folding = opened.search_case_folding()
    if folding is None:
        return
    ctype, folds = folding
    if not folds:
        move = ("and move the archive there (pdi backup DEST, then pdi restore DEST --to its URL)"
                if restored_from is None else
                f"and restore the backup there instead (pdi restore {shlex.quote(restored_from)} --to its URL)")
        click.echo(f"pdi: warning: the database's LC_CTYPE is {ctype}: its full-text search folds only ASCII letters to"
                   " lower case, so pdi search école does not find École; make a database with a UTF-8 one (createdb"
                   f" --template template0 --lc-ctype C.UTF-8) {move}; pdi docs reference/postgresql, 'Its character"
                   " type'", err=True)


def _tell_open_to_others(location: str) -> None:
    """Say on stderr what of the directory archive at ``location`` every local user can read (what an earlier pdi
    made under the umask 022): ``pdi init`` makes a new archive its owner's alone, but changes no mode of one there
    already (an operator may have chosen them), so it says how to close it."""
    from pdi.archive.catalog.opening import is_postgres_url
    from pdi.archive.modes import readable_by_others

    if is_postgres_url(location):
        return
    found = readable_by_others(Path(location))
    if found:
        shown = ", ".join(f"{name} ({mode:04o})" for name, mode in found)
        click.echo(f"pdi: warning: every local user can read the archive at {location}: {shown}. pdi init makes a"
                   " new archive its owner's alone but changes no mode of one there already: chmod -R go-rwx"
                   f" {shlex.quote(location)} makes it so (to share it with its group: chmod -R g-w,o-rwx); pdi docs"
                   " reference/backup, 'Who can read an archive'", err=True)

@click.group("series")
def series_group() -> None:
    """Register and list document series (issuing authority, ISO 3166 country last)."""

@series_group.command("add")
@click.argument("name")
@click.option("--parent", help="Delegate NAME as a subseries of this registered series.")
@click.option("--authority", default="", help="Who issues names in this series (free text).")
@archive_option
def series_add(name: str, parent: str | None, authority: str, archive: str) -> None:
    """Register the series NAME, e.g. oma.eop.gov.us (last component: a country code).

    A series is registered once: adding it again as it is changes nothing
    (said on stderr, exit 0); with another --parent or --authority than
    recorded, it is refused (exit 5), naming what is recorded. No command
    removes or renames a series: its names are cited, and never retracted
    (pdi docs reference/deposit, "A series is for good").
    """
    from pdi.archive import canonical_series

    with open_archive(archive) as opened:
        held = opened.find_series(canonical_series(name))
        # asked again as it is (a script run twice): nothing changes, and that is no conflict; otherwise exit 5
        record = opened.add_series(name, parent=parent, authority=authority, exist_ok=True)
    under = f" under {record.parent}" if record.parent else ""
    click.echo(f"series {record.name}{under}")
    if held is not None:
        click.echo(f"pdi: series {record.name} is registered already (since {record.created_at}): nothing changed",
                   err=True)

@series_group.command("ls")
@archive_option
def series_ls(archive: str) -> None:
    """List the registered series (a private one: who may read it, after a tab)."""
    with open_archive(archive) as opened:
        access = opened.series_access()
        for record in opened.series():
            parent = f"\t(under {record.parent})" if record.parent else ""
            shown = "" if access[record.name] == "public" else f"\t{access[record.name]}"
            click.echo(f"{record.name}{parent}{shown}")

@series_group.command("access")
@click.argument("name")
@click.argument("access", type=click.Choice(("public", "private", "hidden")))
@archive_option
def series_access(name: str, access: str, archive: str) -> None:
    """Choose who may read the series NAME and its subseries.

    public: anyone (the default). private: the resolver answers 403 to a
    reader without a token whose series cover it (any role; 'pdi token add
    NAME --role read --series …' makes one that only reads). hidden: the
    same, but 404, as for a name never minted: even existence is private.
    A subseries is as private as the most private series above it. The
    command line, reading the archive itself, is never restricted.
    """
    with open_archive(archive) as opened:
        record = opened.set_series_access(name, access)
    click.echo(f"series {record.name}: {record.access}")
@click.command("verify")
@click.argument("manifests", nargs=-1, metavar="[MANIFEST]...")
@click.option("--signatures", is_flag=True,
              help="Check the signed MANIFESTs (files of JWS lines, - for standard input, or /api/manifest URLs,"
                   " followed page by page) instead: each signature with the archive's key (or --key), and each"
                   " name's digest against the catalog and the stored octets.")
@click.option("--key", metavar="JWK|FILE|URL",
              help="With --signatures: the public key to check with, a JWK or JWK set (JSON text, a file or a URL"
                   " such as https://resolver/api/keys); default: the archive's own (pdi keys show).")
@click.option("--key-file", "key_file", metavar="PATH",
              help="With --signatures and no --key: the archive's private key file [env PDI_SIGNING_KEY].")
@click.option("--tsa-ca", "tsa_ca", metavar="CA.pem", type=click.Path(exists=True, dir_okay=False),
              help="With --signatures: check each manifest file's RFC 3161 timestamp (FILE.tsr) was signed by a"
                   " time-stamping authority this CA certifies (openssl ts -verify).")
@click.option("--repair", is_flag=True,
              help="Fetch each missing or altered blob again from its series' origin or a peer (pdi mirror add),"
                   " check it against that archive's signed manifest, and replace it (an audit line each).")
@click.option("--repair-from", "repair_from", metavar="DIR|URL",
              help="Put each missing or altered blob right from another copy of this archive: one restored from a"
                   " backup (pdi restore BACKUP --to DIR), its folder or postgresql:// URL; each blob checked"
                   " against the catalog's SHA-256 (an audit line each).")
@click.option("--remove-unreferenced", "remove", is_flag=True,
              help="Also delete blobs no name holds (left by killed deposits), if untouched for --older-than.")
@click.option("--older-than", default=3600.0, show_default=True, type=click.FloatRange(min=0),
              help="Seconds a blob must be untouched before --remove-unreferenced deletes it.")
@archive_option
def verify_cmd(manifests: tuple[str, ...], signatures: bool, key: str | None, key_file: str | None,
               tsa_ca: str | None, repair: bool, repair_from: str | None, remove: bool, older_than: float,
               archive: str) -> None:
    """Recompute every stored representation's SHA-256 and check the catalog; exit 3 on any problem.

    Problems print one a line: the kind (missing, altered, size,
    unpurged for octets a purge left, or catalog-… for damage to the
    catalog itself: the database's own integrity check and pdi's
    invariants such as gap-free serials), the name, and what is wrong.
    Names whose octets were purged (pdi withdraw --purge) print as purged,
    with when, and are not problems. Each blob's check (when, and whether its
    bytes were whole) is recorded in the catalog; the resolver's document
    page shows when each format was last verified.

    With --signatures, the signed manifests named (pdi manifest, or a
    resolver's /api/manifest) are checked instead: a manifest whose
    signature does not verify prints as signature (nothing it lists is
    trusted); a name whose digest or size differs from the catalog's, or is
    not there, as manifest-digest, manifest-size, manifest-missing; octets
    that do not hash to the digest as altered or missing. A manifest
    file's RFC 3161 timestamp beside it (FILE.tsr, pdi manifest --tsa) is
    checked to be of the file, and with --tsa-ca its signature too; one
    that is not prints as timestamp. Exit 3 on any.

    With --repair, each missing or altered blob is fetched from its
    series' origin or a peer (pdi mirror add), checked against that
    archive's signed manifest and the catalog's digest, and replaced;
    it prints as repaired (with where from), or unrepaired and why. A row
    of the table a SQLite catalog keeps of its serial names for the resolver
    that says what its other tables do not (catalog-serial-names) is put
    right by making that table again from them. Exit 3 only for problems
    left unrepaired.

    With --repair-from, each missing or altered blob is read from another
    copy of this archive (a backup restored: pdi restore BACKUP --to DIR,
    then --repair-from DIR), checked against the catalog's SHA-256, and
    replaced; it prints as repaired (from that copy), or unrepaired and why
    (then --repair, if given, asks the mirrors). Exit 3 only for problems
    left unrepaired.
    """
    if signatures and (repair or repair_from):
        raise click.UsageError("--repair and --repair-from go with a verify of the stored blobs, not with"
                               " --signatures")
    if signatures:
        _verify_signatures(manifests, key, key_file, tsa_ca, archive)
        return
    if manifests or key or key_file or tsa_ca:
        raise click.UsageError("MANIFEST, --key, --key-file and --tsa-ca go with --signatures")
    with contextlib.ExitStack() as stack:
        opened = stack.enter_context(open_archive(archive))
        if repair or repair_from or remove:  # they write: refused before the check (a group's member, read-only media)
            opened.refuse_if_read_only()
        # the copy opened before the check, which may take hours: one that is no archive is said at once
        copy = stack.enter_context(_copy_to_repair_from(repair_from)) if repair_from else None
        with progress_bar("verifying") as progress:
            report = opened.verify(progress)
            if remove:
                removed = opened.remove_unreferenced(older_than)
                temporary = sum(1 for name in removed if name.startswith(("tmp/", "staging/")))
                click.echo(f"removed {plural(len(removed) - temporary, 'unreferenced blob')}"
                           f" and {plural(temporary, 'temporary file')}")
                report.unreferenced = sorted(set(report.unreferenced) - set(removed))
        for problem in report.problems:
            for name in problem.names:
                click.echo(_problem_line(problem.kind, name, problem.detail))
        if copy is not None and repair_from and report.problems:
            _repair_from_copy(report, opened, copy, repair_from)
    if repair and report.problems:
        _repair(report, archive)
    for note in report.purged:
        click.echo(_problem_line("purged", note.names[0], f"{note.detail} (withdrawn; not a problem)"))
    if report.unreferenced:
        unreferenced = len(report.unreferenced)
        kept = (f"; kept: touched within the last {older_than:g} s (--older-than), perhaps a deposit under way"
                if remove else "")
        click.echo(f"note: {plural(unreferenced, 'stored blob')} {'belongs' if unreferenced == 1 else 'belong'}"
                   f" to no name (left by interrupted deposits; harmless){kept}")
    click.echo(
        f"checked {plural(report.checked_representations, 'representation')} in"
        f" {plural(report.checked_blobs, 'blob')}: {plural(len(report.problems), 'problem')}"
    )
    if not report.ok:
        raise IntegrityError(
            f"verify found {plural(len(report.problems), 'problem')}"
            " (missing or altered blobs, or damage to the catalog)"
        )

def _problem_line(kind: str, name: str, detail: str) -> str:
    """One line of what ``pdi verify`` found: its kind, the name (a blob's, a file's, a URL's: a mirror's origin or
    a bag gave it) and the detail (which may quote another server's or a file's words), each escaped and cut in its
    middle when long (:func:`pdi._wording.clipped`), so that the three columns stay one line of a terminal."""
    return f"{kind}\t{clipped(name, NAME_MOST)}\t{clipped(detail, MESSAGE_MOST)}"


def _repair(report: VerifyReport, archive: str) -> None:
    """``pdi verify --repair``: :func:`pdi.network.polls.repair`, and a table kept for speed made again from the
    catalog's tables (:meth:`~pdi.archive.Archive.repair_derived`); the problems put right leave the
    report."""
    from pdi.archive.checks import DERIVED_PROBLEM
    from pdi.network.polls import repair

    derived = [p for p in report.problems if p.kind == DERIVED_PROBLEM]
    with open_archive(archive) as opened:
        if derived:
            opened.repair_derived()
            for problem in derived:
                click.echo(f"repaired\t{clipped(problem.names[0], NAME_MOST)}\tits row of serial_names made again from the catalog's"
                           " tables")
            report.problems = [p for p in report.problems if p not in derived]
        done = repair(opened, report.problems)
    for name, source in done.repaired:
        click.echo(_problem_line("repaired", name, f"from {source}, checked against its signed manifest"))
    for name, why in done.failed:
        click.echo(_problem_line("unrepaired", name, why))
    fixed = {name for name, _ in done.repaired}
    report.problems = [p for p in report.problems if not (p.kind in ("missing", "altered") and fixed & set(p.names))]


def _copy_to_repair_from(source: str) -> Archive:
    """The archive ``--repair-from`` names, opened; a :class:`NotFoundError` saying what it must be when it is none."""
    from pdi.archive.catalog.opening import is_postgres_url

    if not is_postgres_url(source) and not (Path(source) / "catalog.sqlite").exists() and not (
            Path(source) / "pdi-backup.json").exists():  # a backup's own refusal says how to restore it
        raise NotFoundError(f"--repair-from {source}: no archive there (no catalog.sqlite): name another copy of"
                            f" this archive, such as a backup restored there (pdi restore BACKUP --to {source})")
    return open_archive(source)


def _repair_from_copy(report: VerifyReport, opened: Archive, copy: Archive, source: str) -> None:
    """``pdi verify --repair-from``: each missing or altered blob read, by verified chunks, from the archive at
    ``source`` (a backup restored) under one of its names, and written over the damaged copy
    (:meth:`~pdi.archive.Archive.replace_blob`, which refuses octets of any other SHA-256); the problems put right
    leave the report, the others print as unrepaired. A URL's password is shown nowhere, nor kept in the audit."""
    from pdi.archive.catalog.opening import shown_location

    fixed: set[str] = set()
    shown = shown_location(source)
    for problem in report.problems:
        if problem.kind not in ("missing", "altered") or not problem.names:
            continue
        why = ""
        for name in problem.names:
            try:
                with copy.open_octets(name) as found:
                    if found.record.sha256 != problem.sha256:
                        why = f"{shown} holds {name} with another SHA-256 ({found.record.sha256})"
                        continue
                    opened.replace_blob(problem.sha256, found.reader.chunks(0, found.size),
                                        f"{name} from {shown} (another copy of this archive)")
            except PDIError as exc:
                why = f"{shown}: {exc}"
                continue
            click.echo(_problem_line("repaired", name, f"from {shown}, its SHA-256 checked"))
            fixed.add(problem.sha256)
            break
        else:
            click.echo(_problem_line("unrepaired", problem.names[0], why))
    report.problems = [p for p in report.problems if not (p.kind in ("missing", "altered") and p.sha256 in fixed)]


def _verify_signatures(manifests: tuple[str, ...], key: str | None, key_file: str | None, tsa_ca: str | None,
                       archive: str) -> None:
    """``pdi verify --signatures``: :mod:`pdi.cli.manifest_check`, printed one problem a line."""
    from pdi.cli.manifest_check import SignatureReport, check_signatures, public_keys, refuse

    if not manifests:
        raise click.UsageError("--signatures checks the manifests named: give files (pdi manifest -o), - or URLs;"
                               " or signed WACZ files")
    waczs = [m for m in manifests if m.lower().endswith(".wacz") and "://" not in m]
    manifests = tuple(m for m in manifests if m not in waczs)
    wacz_problems = [_check_wacz_signature(path) for path in waczs]
    if manifests:
        with open_archive(archive) as opened:
            report = check_signatures(opened, manifests, public_keys(key, opened, key_file), tsa_ca,
                                      own_key=key is None)
    else:
        report = SignatureReport()
    report.problems[:0] = [p for p in wacz_problems if p is not None]
    for source, when, by_ca in report.stamped:
        click.echo(f"timestamped\t{source}\t{when}" + ("" if by_ca else " (the TSA's signature unchecked: --tsa-ca)"))
    for source, looked in report.unstamped:  # not a problem (a timestamp is optional), but not a check either
        click.echo(f"{source}: no RFC 3161 timestamp beside it ({looked}): --tsa-ca had nothing to check", err=True)
    for problem in report.problems:
        for name in problem.names:
            click.echo(_problem_line(problem.kind, name, problem.detail))
    click.echo(f"checked {plural(report.manifests, 'manifest')} listing {plural(report.names, 'name')}"
               + (f" and {plural(len(waczs), 'WACZ file')}" if waczs else "")
               + f": {plural(len(report.problems), 'problem')}")
    refuse(report)


def _check_wacz_signature(path: str) -> Problem | None:
    """A WACZ's signature and files checked (:func:`pdi.interop.warc.wacz_signature`): printed when it holds,
    the problem (kind ``wacz-signature``, or ``wacz-unsigned``) when not."""
    from pdi.archive.fixity import Problem
    from pdi.errors import PDIError
    from pdi.interop.warc import wacz_signature

    try:
        checked = wacz_signature(path, resources=True)
    except PDIError as exc:
        return Problem("wacz-signature", "", (path,), str(exc))
    if checked is None or not checked.signed:
        return Problem("wacz-unsigned", "", (path,), "the WACZ has no signature (datapackage-digest.json's signedData)")
    click.echo(f"wacz-signed\t{path}\t{checked.describe()}")
    return None


@click.command("export")
@click.argument("directory", required=False)
@click.option("--series", "-s", metavar="S", help="Only this series (for a bag: and its subseries).")
@click.option("--wacz", "wacz", metavar="OUT.wacz",
              help="Write the web pages and other documents whose id is a URL as a WACZ instead of a bag"
                   " (- for standard output).")
@click.option("--work-dir", "work_dir", metavar="DIR",
              type=click.Path(exists=True, file_okay=False, dir_okay=True, writable=True),
              help="WACZ: make the work files (WARC, index) in DIR [default: beside OUT.wacz; $TMPDIR when"
                   " OUT.wacz is -, /dev/stdout, a named pipe or a device].")
@click.option("--sign/--no-sign", "sign", default=None,
              help="WACZ: sign it with the archive's WACZ key (pdi keys init --wacz) [default: sign when the"
                   " archive has one].")
@click.option("--key-file", "key_file", metavar="PATH",
              help="WACZ: the WACZ key's file [env PDI_WACZ_KEY; default: wacz-key.pem in the archive's directory].")
@click.option("--domain-cert", "domain_cert", metavar="CHAIN.pem",
              help="WACZ: sign in the domain-identity form: the WACZ key's certificate for a domain, then its CA's"
                   " (PEM); with --tsa and --tsa-chain.")
@click.option("--tsa", metavar="URL", help="WACZ, with --domain-cert: the RFC 3161 time-stamping authority.")
@click.option("--tsa-chain", "tsa_chain", metavar="CHAIN.pem",
              help="WACZ, with --domain-cert: the TSA's certificate, then its CA's (PEM).")
@archive_option
def export_cmd(directory: str | None, series: str | None, wacz: str | None, work_dir: str | None,
               sign: bool | None, key_file: str | None, domain_cert: str | None, tsa: str | None,
               tsa_chain: str | None, archive: str) -> None:
    """Write the archive (or a series) to DIRECTORY as a BagIt bag, or with --wacz as a WACZ file.

    The WACZ (1.1.1) holds one WARC with a response record for each part of
    each archived page (every version), dated by the capture's WARC-Date
    when it was imported from a WARC, else by its deposit; its CDXJ index;
    pages/pages.jsonl with each page's PDI; and datapackage.json. pywb,
    ReplayWeb.page and `wacz validate` open it. Never overwrites. Its WARC
    and index are written first in a work folder beside OUT.wacz (on the
    disk the WACZ goes to, which then needs room for both: about twice the
    WACZ's size), or in --work-dir DIR; in $TMPDIR when OUT.wacz is - (the
    standard output), /dev/stdout, a named pipe or a device. The work folder
    is removed however the export ends; a disk that fills fails it (exit 8)
    naming the folder and about the room needed, and leaves no WACZ.

    Either is its owner's alone whatever the umask (folders 0700, files
    0600), as it may hold a private series' documents: to share a bag with
    its group, chmod -R g+rX DIRECTORY (a WACZ: chmod g+r OUT.wacz). A WACZ
    written to - is of the file the shell made.

    Either reads one snapshot of the catalog: what is deposited or
    withdrawn while it runs is not seen. A name purged meanwhile whose
    octets were in files or S3 fails it (exit 8): export again.

    When the archive has a WACZ key (pdi keys init --wacz), or with --sign,
    datapackage-digest.json is signed as the WACZ signing specification's
    anonymous form says (ECDSA P-384 of the datapackage.json's hash, with
    the public key); ReplayWeb.page shows the signature, and pdi import and
    pdi verify --signatures check it. --no-sign leaves it unsigned.

    With --domain-cert, --tsa and --tsa-chain, it is signed in the
    specification's domain-identity form instead (the key's certificate
    for a domain and an RFC 3161 timestamp of the signature), the form
    authsign, and so `wacz validate --verify-auth`, checks.
    """
    if (directory is None) == (wacz is None):
        raise click.UsageError("give DIRECTORY (a bag) or --wacz OUT.wacz, not both")
    signing = (sign, key_file, domain_cert, tsa, tsa_chain)
    if wacz is None and any(given is not None for given in (*signing, work_dir)):
        raise click.UsageError("--sign, --no-sign, --key-file, --domain-cert, --tsa, --tsa-chain and --work-dir go"
                               " with --wacz")
    if wacz is not None and (wacz.endswith(("/", os.sep)) or Path(wacz).is_dir()):
        raise click.UsageError(f"--wacz names the WACZ file to write, not a directory: {wacz}")
    if (domain_cert is None) != (tsa is None) or (domain_cert is None) != (tsa_chain is None):
        raise click.UsageError("--domain-cert, --tsa and --tsa-chain go together (the domain-identity form)")
    if domain_cert is not None and sign is False:
        raise click.UsageError("--domain-cert signs: it does not go with --no-sign")
    from pdi.archive import refuse_writing_in

    for written in (directory, wacz, work_dir):  # one named inside an archive this user may only read: said first
        if written is not None and written != "-":
            refuse_writing_in(archive, written)
    if wacz is not None:
        from pdi.interop.wacz import export_wacz

        identity = _identity(domain_cert, tsa, tsa_chain)
        with contextlib.ExitStack() as stack:
            output = _wacz_output(wacz, stack)
            opened = stack.enter_context(open_archive(archive))
            progress = stack.enter_context(progress_bar("exporting"))
            key = _wacz_key(opened.location, True if identity is not None else sign, key_file)
            done = export_wacz(opened, output, series=series, progress=progress, key=key, identity=identity,
                               work_dir=work_dir)
        click.echo(f"exported {plural(done.pages, 'page')} and {plural(done.documents, 'other document')}"
                   f" ({plural(done.records, 'WARC record')}) to {'standard output' if wacz == '-' else wacz}",
                   err=not isinstance(output, str))
        if key is not None:
            from pdi.wacz_signing import public_key_id

            click.echo(f"signed with the WACZ key {public_key_id(key.public)}", err=True)
        return
    assert directory is not None
    with open_archive(archive) as opened, progress_bar("exporting") as progress:
        count = opened.export_bag(directory, series=series, progress=progress)
    click.echo(f"exported {plural(count, 'representation')} to {directory}")

def _wacz_output(wacz: str, stack: contextlib.ExitStack) -> str | BinaryIO:
    """What ``--wacz`` names: a path, or the stream of ``-`` (standard output) or of a descriptor's path
    (``/dev/stdout``, ``/dev/fd/N``: written through the descriptor where it stands, never reopened)."""
    from pdi._files import descriptor_of

    descriptor = None if wacz == "-" else descriptor_of(wacz)
    if wacz != "-" and descriptor is None:
        return wacz
    if os.isatty(descriptor) if descriptor is not None else sys.stdout.isatty():
        raise click.UsageError(f"--wacz {wacz}: standard output is a terminal; redirect it, or give a file")
    sys.stdout.flush()
    if descriptor is None:
        return sys.stdout.buffer
    return stack.enter_context(open(os.dup(descriptor), "wb"))


def _identity(domain_cert: str | None, tsa: str | None, tsa_chain: str | None) -> Identity | None:
    """The domain-identity form's certificates and TSA (:class:`pdi.wacz_signing.Identity`), or ``None``."""
    if domain_cert is None or tsa is None or tsa_chain is None:
        return None
    from pdi.timestamping import request_timestamp
    from pdi.wacz_signing import Identity

    def read(path: str, what: str) -> str:
        try:
            with open(path, "rb") as fh:
                data = fh.read(1 << 20)
            return data.decode("ascii")
        except FileNotFoundError:
            raise click.BadParameter(f"no file {path}", param_hint=what) from None
        except (OSError, UnicodeDecodeError) as exc:
            raise click.BadParameter(f"cannot read {path} as a PEM file: {exc}", param_hint=what) from None

    return Identity(read(domain_cert, "--domain-cert"), read(tsa_chain, "--tsa-chain"),
                    lambda data: request_timestamp(tsa, data)[0])


def _wacz_key(location: str, sign: bool | None, key_file: str | None) -> WaczKey | None:
    """The key ``pdi export --wacz`` signs with: ``None`` with --no-sign, or (no --sign) when there is none."""
    if sign is False:
        return None
    from pdi.archive.signing_key import load_wacz_key, wacz_key_path

    try:
        path = wacz_key_path(location, key_file)
    except UnsupportedError:  # a postgresql:// archive with no key file named
        if sign:
            raise
        return None
    if sign is None and not path.exists():
        return None
    return load_wacz_key(path)


#: pdi import --partial: the whole records before a file's damage were imported, the rest dropped
PARTIAL_EXIT = 14


@click.command("import")
@click.argument("source", metavar="BAG|FILE.warc[.gz]|FILE.wacz")
@click.option("--series", "-s", metavar="S",
              help="WARC/WACZ, or a bag another tool made: deposit the captures or payload files in series S (required for them; a bag pdi exported carries its own, and is refused with one).")
@click.option("--max-mb", type=click.FloatRange(min=0, min_open=True), default=50.0, show_default=True,
              help="WARC/WACZ: largest record payload, decoded (MB); larger ones are listed, not imported;"
                   " 4x for a page with its parts.")
@click.option("--max-expansion", type=click.FloatRange(min=1), default=100.0, show_default=True,
              help="WARC/WACZ: refuse a gzip member or ZIP entry that decompresses to more than this many times"
                   " its size (past its first MiB); leave out a record whose payload decodes to more than this many"
                   " times the record.")
@click.option("--max-seconds", type=click.FloatRange(min=0, min_open=True), default=3600.0, show_default=True,
              help="WARC/WACZ: refuse a file whose records take longer than this to read and check.")
@click.option("--partial", is_flag=True,
              help="WARC/WACZ: a damaged or cut file gives the whole records before the damage (exit status 14).")
@click.option("--force", is_flag=True,
              help="A bag pdi exported: import a version whose octets a version of its document withdrawn here"
                   " holds (refused otherwise, exit status 5).")
@archive_option
def import_cmd(source: str, series: str | None, max_mb: float, max_expansion: float, max_seconds: float,
               partial: bool, force: bool, archive: str) -> None:
    """Import a BagIt bag, or the captures of a WARC or WACZ file.

    A bag (a directory, BagIt RFC 8493) is checked whole first: every
    payload manifest (md5, sha1, sha224, sha256, sha384 or sha512) lists
    every file under data/ with its checksum right, every tag manifest's
    files match, fetch.txt lists nothing, the Payload-Oxum is right. A bag
    pdi exported brings every name and byte in it (all or nothing), but no
    format new here to a version withdrawn here, nor a version to a document
    withdrawn whole here (refused whole, exit status 11), nor, unless
    --force, a version whose octets a version of its document withdrawn
    here holds (exit status 5), as pdi version refuses them. Each SGML
    document it brings keeps the parse the bag carries of it (its element
    index, checked against its octets), else one made here as a deposit
    makes it, so that its #elt= is answered at once; one not kept is
    printed ("unparsed") and its #elt= refused until pdi reindex
    --elements keeps one. A bag
    another tool made needs --series S: its payload files become new
    documents of S minted today (all or nothing), each named by its path
    under data/ (a serial when the path cannot be an id), in the format its
    name says unless its bytes contradict it (then application/octet-stream),
    with the statements bagit:path and bag-info:<label> for each label of
    bag-info.txt; each PDI is printed. A .warc, .warc.gz or .wacz file needs --series S:
    every record is first read whole and its digests checked (a damaged
    record is an error naming its offset, and nothing is deposited); then
    each captured HTML page, with the records it uses (found by their URLs
    nearest its WARC-Date; in pdi's own WACZ, the records its export marked
    as the page's; redirects and revisits followed), becomes an
    MHTML aggregate deposited as urn:pdi://S/YYYY/MM/DD/<page URL>.related
    on the GMT day of its WARC-Date, and each other record no page uses (a
    PDF, an image) is deposited as itself. Each PDI is printed as it is
    deposited; the WARC's digests, dates and record ids become statements
    (pdi meta). Importing the same file again deposits nothing new.

    A stranger's file is read within bounds: a header line of 256 KiB, a
    record's header blocks of 1 MiB and 10,000 lines, --max-expansion, a
    WACZ's ZIP directory of 10,000 files and 16 MiB, --max-seconds (exit
    status 7 past one). A file cut short or damaged is
    refused naming the record and its offset (exit status 1, or 3 for a
    digest), and nothing is imported; with --partial the whole records
    before the damage are imported, the damage is printed ("dropped: ..."),
    and the exit status is 14.
    """
    from pdi.interop.warc import is_web_archive

    if not is_web_archive(source):
        from pdi.archive.bagit import is_pdi_export

        bag = Path(source)
        if not (bag / "bagit.txt").is_file():  # neither a web archive by its name nor a bag: say which is asked
            what = "a directory with no bagit.txt" if bag.is_dir() else "a file named neither .warc, .warc.gz nor .wacz"
            if not bag.exists():
                raise NotFoundError(f"no file or directory {source}")
            raise ParseError(f"{source} is {what}: pdi import reads WARC (.warc, .warc.gz) and WACZ (.wacz) files"
                             " and BagIt bags", rule="import")
        foreign = not is_pdi_export(bag)
        if series is not None and not foreign:
            raise click.UsageError("--series is for WARC and WACZ files and for bags other tools made;"
                                   " a bag carries its own series when pdi exported it")
        if series is None and foreign:
            raise click.UsageError(f"{source} is a bag pdi did not export: importing its payload files"
                                   " needs --series S (the series to deposit them in)")
        if force and foreign:
            raise click.UsageError("--force is for a bag pdi exported (its versions' octets a withdrawn version"
                                   " here holds)")
        with open_archive(archive) as opened, progress_bar("importing") as progress:
            try:
                count = opened.import_bag(source, progress=progress, series=series, force=force,
                                          deposited=lambda name, _path: click.echo(str(name)))
            except ImmutabilityError as exc:
                raise exc.forced_by("pdi import --force imports them under the bag's names") from None
        what = "new document" if series is not None else "new representation"
        from pdi.archive.bagit.imports import BagImported

        # a bag pdi exported: the names it lists that were here already
        held = count.unchanged if isinstance(count, BagImported) else 0
        click.echo(f"imported {plural(count, what)} into {opened.location}"
                   + (f" ({held} unchanged: held already, byte for byte)" if held else ""), err=series is not None)
        for name, why in count.unparsed if isinstance(count, BagImported) else ():
            click.echo(f"unparsed\t{name}\t{why}; its #elt= is refused until pdi reindex --elements keeps a parse",
                       err=True)
        return
    if not Path(source).exists():  # said before --series is asked for, as of a bag: the path is what to mend first
        raise NotFoundError(f"no file {source}")
    if series is None:
        raise click.UsageError(f"importing {source} needs --series S (the series to deposit its captures in)")
    if force:
        raise click.UsageError("--force is for a bag pdi exported, not a WARC or WACZ file")
    from pdi.capture.values import Limits
    from pdi.interop.warc import Imported, ReadLimits, import_warc, wacz_signature

    # a signed WACZ whose datapackage was changed is refused here (exit 3), its files' hashes as it is read
    signature = wacz_signature(source) if source.lower().endswith(".wacz") and Path(source).is_file() else None
    limits = Limits(max_resource_bytes=int(max_mb * 1024 * 1024), max_total_bytes=int(4 * max_mb * 1024 * 1024))

    def deposited(item: Imported) -> None:
        click.echo(str(item.name))
        for failure in item.failures:
            click.echo(f"missing from {clipped(item.url, NAME_MOST)}: {clipped(failure, MESSAGE_MOST)}", err=True)  # a stranger's
        for warning in item.warnings:
            click.echo(f"warning: {clipped(warning, MESSAGE_MOST)}", err=True)  # names a stranger's URL

    with open_archive(archive) as opened, progress_bar("importing") as progress:
        done, plan = import_warc(opened, source, series, limits=limits, progress=progress, deposited=deposited,
                                 bounds=ReadLimits(max_expansion=max_expansion, max_seconds=max_seconds),
                                 partial=partial)
        waiting = opened.pending_index(series=series) if done else 0  # read while the archive is open
    # the bar counts the file's bytes as it is checked, then the deposits
    for reason in plan.skipped:
        click.echo(f"not imported: {clipped(reason, MESSAGE_MOST)}", err=True)
    if signature is not None:
        click.echo(f"{source}: {signature.describe()}", err=True)
    pages = sum(1 for d in done if d.page)
    new = sum(1 for d in done if not d.unchanged)
    click.echo(f"imported {plural(pages, 'page')} and {plural(len(done) - pages, 'other resource')}"
               f" from {plural(plan.records, 'WARC record')} ({new} new, {len(done) - new} unchanged)", err=True)
    if waiting:  # the import leaves full text to the indexer (pdi.interop.warc): resolvable now, searched later
        click.echo(f"index pending: the text of {plural(waiting, 'document')} of {series} waits for the indexer"
                   " (`pdi index`, or `pdi serve --indexer`); until then `pdi search` does not find it", err=True)
    for damage in plan.dropped:
        click.echo(f"dropped: {clipped(damage, MESSAGE_MOST)}", err=True)
    if plan.dropped:
        click.get_current_context().exit(PARTIAL_EXIT)


def register(cli: click.Group) -> None:
    """Add ``init``, ``series``, ``verify``, ``export`` and ``import`` to the top-level ``pdi`` group."""
    for command in (init_cmd, series_group, verify_cmd, export_cmd, import_cmd):
        cli.add_command(command)
