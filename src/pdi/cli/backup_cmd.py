"""`pdi backup DEST` and `pdi restore SRC`: a consistent copy of a live archive, and the archive again from it.

Thin: each parses its arguments, calls :mod:`pdi.archive.backup` or :mod:`pdi.archive.restore`, and prints.
"""

from __future__ import annotations

import shlex

import click

from pdi._wording import plural
from pdi.archive import resolve_location
from pdi.cli.archive_cmd import archive_option, progress_bar, tell_case_folding


@click.command("backup")
@click.argument("dest", metavar="DEST")
@click.option("--copy", "copy", is_flag=True,
              help="Copy blob files even on the same file system (a hard link shares the archive's disk blocks).")
@archive_option
def backup_cmd(dest: str, copy: bool, archive: str) -> None:
    """Back up the archive to the directory DEST while deposits go on; again into DEST: only what is new.

    \b
    SQLite: the catalog by SQLite's online backup API (one commit's state),
    then each blob file it names, hard-linked when DEST is on the same file
    system (else copied), each checked against its SHA-256 as it streams.
    PostgreSQL: pg_dump -Fc of the database (one snapshot, blobs included;
    pg_dump at least the server's version, Debian's postgresql-client-N).
    Blobs in S3: each object the catalog names is copied into DEST/blobs.

    A second backup into the same DEST copies only the blobs not there yet
    and replaces the catalog copy atomically (written beside, then renamed);
    one backup into a DEST runs at a time (a second one meanwhile: exit 8).
    Recovery point: the moment the backup began (started_at in
    DEST/pdi-backup.json): every deposit acknowledged before it is in the
    backup. Recovery time: pdi restore copies and hashes the blobs at
    about disk speed (--link: hard-links them, seconds), or runs
    pg_restore; then pdi verify re-hashes everything. DEST must be empty,
    new, or a pdi backup of this same archive, outside the archive (else exit 5, and
    DEST is left as it was); a damaged blob: exit 3; not enough space,
    pg_dump missing or older than the server: exit 8 (the previous backup
    is kept). The keys and the registry kept beside a SQLite catalog
    (signing-key.pem, wacz-key.pem, registry.json) are backed up with it
    (the keys mode 0600) and restored with it; a file $PDI_SIGNING_KEY,
    $PDI_WACZ_KEY or $PDI_REGISTRY names (a PostgreSQL archive's) is not.
    A key the backup holds that the archive no longer has is kept, with a
    warning on standard error, never removed: a lost key cannot be made
    again (put it back, or remove it from DEST by hand if it was retired).
    See pdi docs how-to/backup.
    """
    from pdi.archive.backup import backup

    with progress_bar("copying blobs") as progress:
        done = backup(resolve_location(archive), dest, copy=copy, progress=progress)
    kept = f", {done.blobs_present} there already" if done.blobs_present else ""
    beside = f"; with {', '.join(done.beside)} from beside the catalog" if done.beside else ""
    click.echo(f"backed up the {done.kind} archive to {dest}: catalog as of {done.started_at},"
               f" {plural(done.blobs_copied, 'blob')} copied ({done.octets_copied} octets),"
               f" {done.blobs_linked} hard-linked{kept}{beside}")
    for warning in done.warnings:  # a key kept that the archive no longer has, or replaced by another
        click.echo(f"pdi: warning: {warning}", err=True)


@click.command("restore")
@click.argument("source", metavar="SRC")
@click.option("--to", "to", metavar="DIR|URL",
              help="Where to restore: a new or empty directory, or an empty PostgreSQL database"
                   " (default: where the backup was taken from).")
@click.option("--link/--copy", "link", default=False,
              help="--link: hard-link the blob files when SRC is on the same file system (seconds, whatever their"
                   " size), the restored archive then sharing each with the backup: a blob changed in the one"
                   " is changed in the other. Default: --copy, every blob file copied.")
@click.option("--blobs", "blobs", metavar="s3://BUCKET/PREFIX",
              help="For an archive whose blobs are in S3: restore them into this bucket (it must exist), not the"
                   " one the archive records; every blob is uploaded there from SRC/blobs.")
def restore_cmd(source: str, to: str | None, link: bool, blobs: str | None) -> None:
    """Restore the backup in SRC (made by pdi backup) to an empty place; then run pdi verify on it.

    SQLite: the blob files (copied, each checked against its SHA-256, so
    that a restore drill shares no file with its backup; --link hard-links
    them when on the same file system), the keys and the registry the
    backup holds, then the catalog (SQLite's backup API, renamed into place
    last). PostgreSQL: pg_restore into the empty database --to names (made
    beforehand: createdb; one whose LC_CTYPE is C, where the search folds
    only ASCII letters, is said on stderr). Blobs kept in S3 that the bucket has lost are
    uploaded again from SRC/blobs; with --blobs, all of them into another
    bucket, which the restored archive then records (a restore drill beside
    a live archive must use its own bucket: two archives sharing one would
    each take the other's newer blobs for unreferenced). A place that holds
    an archive already is refused (exit 5); one a failed restore left is
    restored to. It ends by printing the pdi verify command to run, its
    location quoted for the shell.
    """
    from pdi.archive.restore import restore
    from pdi.archive.store import SCHEMA_VERSION

    with progress_bar("restoring blobs") as progress:
        where, done = restore(source, to, link=link, progress=progress, blobs=blobs)
    restored = f"restored the {done.kind} archive to {where}: {plural(done.blobs_copied, 'blob')} copied," \
               f" {done.blobs_linked} hard-linked"
    if done.beside:
        restored += f", {', '.join(done.beside)} put back beside the catalog"
    if done.shares_blob_store:  # a drill beside the live archive: the two must not remove each other's blobs
        restored += (f"; its blobs are in {done.blob_store}, the bucket of the archive the backup was taken from:"
                     " while that archive is in use, never run pdi verify --remove-unreferenced in either"
                     " (each would delete what the other deposited since), or restore with --blobs into a"
                     " bucket of its own")
    schema = done.schema_version  # restored as the backup held it
    if schema is not None and schema < SCHEMA_VERSION:  # a rollback: this pdi's commands refuse it, but pdi init
        click.echo(f"{restored}; its catalog is at schema version {schema}, older than this pdi's {SCHEMA_VERSION}:"
                   " check it with the release that wrote it (every command of this pdi but pdi init refuses it,"
                   f" exit 8), or run pdi init --archive {shlex.quote(where)} to migrate it here")
    else:  # a command to copy into a shell: a postgresql:// URL's ? and & quoted
        click.echo(f"{restored}; now run: pdi verify --archive {shlex.quote(where)}")
        if done.kind == "postgres":  # pg_restore keeps no database's character type: --to's own is what searches
            from pdi.archive import Archive

            with Archive.open(where) as opened:
                tell_case_folding(opened, restored_from=source)


def register(cli: click.Group) -> None:
    """Add ``backup`` and ``restore`` to the top-level ``pdi`` group."""
    for command in (backup_cmd, restore_cmd):
        cli.add_command(command)
