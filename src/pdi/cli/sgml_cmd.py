"""`pdi sgml add|list`: the archive's own SGML DTDs (:mod:`pdi.archive.sgml_dtds`).

Kept in ``sgml/`` in the archive's directory (or the folder ``--sgml-folder``
/ ``$PDI_SGML_CATALOG`` names): a catalog and the DTDs and entities it names,
which ``onsgmls`` reads before the system's catalogs when an SGML document is
deposited (and whenever one is read anew).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from pdi.cli.archive_cmd import archive_option

F = TypeVar("F", bound=Callable[..., Any])

sgml_folder_option: Callable[[F], F] = click.option(
    "--sgml-folder", "sgml_folder", metavar="DIR",
    help="The archive's SGML folder [env PDI_SGML_CATALOG; default: sgml in the archive's directory; a"
         " postgresql:// archive must name one].",
)


def _folder(archive: str, given: str | None) -> Path:
    from pdi.archive.sgml_dtds import SGML_ENV, sgml_folder
    from pdi.errors import UnsupportedError

    folder = sgml_folder(archive, given)
    if folder is None:
        raise UnsupportedError(f"the archive at {archive} has no directory to keep SGML DTDs in: name a folder with"
                               f" --sgml-folder or ${SGML_ENV} (every pdi that deposits or reads it must be given it)")
    return folder


@click.group("sgml")
def sgml_group() -> None:
    """The archive's own SGML DTDs, read before the system's when SGML is parsed (add, list).

    An SGML document's #elt= passages are its elements as OpenSP's onsgmls
    reads them given its DTD. A DTD the system's catalogs lack (a court's,
    a publisher's: -//ACME//DTD Filing//EN) is added to the archive's own
    folder, with its public identifier, before the documents that name it are
    deposited; it is kept there for good (never replaced), and pdi backup
    copies it.
    """


@sgml_group.command("add")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--public-id", "public", metavar="ID",
              help='The public identifier documents name it by (-//ACME//DTD Filing//EN): the catalog sends it to'
                   ' FILE. Without it FILE is kept for a DTD that names it by file name (SYSTEM "filing.ent").')
@click.option("--name", metavar="NAME", help="The file's name in the folder (default: FILE's own name).")
@sgml_folder_option
@archive_option
def sgml_add(file: Path, public: str | None, name: str | None, sgml_folder: str | None, archive: str) -> None:
    """Copy the DTD (or entity file) FILE into the archive's SGML folder; prints its name, SHA-256 and identifiers.

    Nothing there is ever changed: the same FILE again is no change, but
    another file of the same name, or the public identifier sent to another
    file, is refused (exit 5), since a document deposited with the first must
    read the same later. Documents deposited before are not read anew.
    A new FILE is read by onsgmls first, as a DTD with the folder's catalog
    and files: one it reports an error in is refused with that error
    (FILE:LINE:COLUMN), and nothing is written; add the modules a DTD names
    before it.
    """
    from pdi.archive import refuse_writing_in
    from pdi.archive.sgml_dtds import add_dtd

    folder = _folder(archive, sgml_folder)
    refuse_writing_in(archive, folder)  # a member of the archive's group, or read-only media: before onsgmls runs
    added = add_dtd(folder, file, public=public, name=name)
    click.echo("\t".join([added.name, f"sha256:{added.sha256}", *added.public]))


@sgml_group.command("list")
@sgml_folder_option
@archive_option
def sgml_list(sgml_folder: str | None, archive: str) -> None:
    """Print each file of the archive's SGML folder: its name, SHA-256 and the public identifiers sent to it."""
    from pdi.archive.sgml_dtds import dtd_files
    from pdi.cli.commands import one_line

    folder = _folder(archive, sgml_folder)
    files = dtd_files(folder)
    if not files:
        click.echo(f"pdi: {folder} holds no DTD (pdi sgml add FILE --public-id ID)", err=True)
    for found in files:
        click.echo("\t".join([found.name, f"sha256:{found.sha256}", *(one_line(p) for p in found.public)]))


def register(cli: click.Group) -> None:
    """Add ``sgml`` to the top-level ``pdi`` group."""
    cli.add_command(sgml_group)
