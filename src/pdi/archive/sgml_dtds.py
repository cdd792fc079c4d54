"""An archive's own SGML DTDs: the folder ``onsgmls`` reads them from, before the system's catalogs.

An archivist's SGML names its own DTD (a court's, a publisher's) by a public
identifier (``-//ACME//DTD Filing//EN``) that no Debian package installs.
Without it no omitted tag is inferred and ``#elt=`` counts the elements
otherwise. The archive keeps such DTDs in a folder of its own
(:data:`SGML_FOLDER`, ``sgml/`` in a directory archive's directory, or the
folder ``$PDI_SGML_CATALOG`` names: a PostgreSQL archive has no directory):
a catalog file (OASIS TR9401, ``PUBLIC "-//ACME//DTD Filing//EN"
"filing.dtd"``, as Debian's catalogs are written) and the files it names,
plain files side by side, so that a DTD's own ``SYSTEM "filing.ent"`` finds
its modules. :class:`pdi.fragments.markup.sgml.SgmlCatalog` is how the parser
is given it (``-c``, and ``-D``: the folder is one ``-R`` lets it read).

Fifty years: a document's element index is made at deposit with the DTD then
in the folder, and a later reading (``pdi reindex --elements``, a document
with no index) must read it the same, so the folder only grows
(:func:`add_dtd`): a file is never replaced by other octets, a public
identifier never sent to another file, and each file is written read-only (of the archive's
rule, :mod:`pdi.archive.modes`: 0400, or 0440 in a folder shared with its group);
``pdi backup`` copies the folder and ``pdi restore`` puts it back.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from pdi.archive.blobs.files import fsync_dir, write_new
from pdi.archive.modes import make_folder, modes_in
from pdi.errors import (
    ImmutabilityError,
    LimitError,
    NotFoundError,
    ParseError,
    StoreError,
    UnsupportedError,
)
from pdi.fragments.markup.sgml import CATALOG_FILE, SgmlCatalog, dtd_errors

__all__ = ["MAX_DTD", "SGML_ENV", "SGML_FOLDER", "DtdFile", "add_dtd", "catalog_entries", "dtd_files",
           "kept_for", "parse_state", "public_identifier", "sgml_catalog_of", "sgml_folder"]

#: The environment variable naming the archive's SGML folder (for any archive; a PostgreSQL archive needs it).
SGML_ENV = "PDI_SGML_CATALOG"
#: The folder of a directory archive that holds its SGML catalog and DTDs.
SGML_FOLDER = "sgml"
#: The largest DTD or entity file taken (octets): the largest DTDs (TEI P3's, DocBook's) are a few hundred KiB.
MAX_DTD = 16 << 20
#: The catalog's largest size read (octets).
MAX_CATALOG = 4 << 20
#: A file name in the folder: letters, digits, ``.``, ``_``, ``-``, not beginning with a dot, at most 100.
_FILE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}\Z")
#: A public identifier: a minimum literal (ISO 8879 §10.1.7: letters, digits, space and ``'()+,-./:=?``), its
#: white space taken as one space (as the parser reads it), at most 240 characters (the reference syntax's LITLEN).
_MINIMUM_DATA = re.compile(r"[A-Za-z0-9 '()+,\-./:=?]+\Z")
#: A catalog's tokens (TR9401 §6): a literal in either quotes, a comment ``--…--``, or a word.
_TOKEN = re.compile(r"\"([^\"]*)\"|'([^']*)'|--.*?(?:--|\Z)|([^\s\"']+)", re.S)
#: TR9401 entry keywords, with how many parameters each takes (so an entry of another kind is stepped over).
_ENTRY_PARAMETERS = {"PUBLIC": 2, "SYSTEM": 2, "ENTITY": 2, "DOCTYPE": 2, "LINKTYPE": 2, "NOTATION": 2,
                     "SGMLDECL": 1, "DOCUMENT": 1, "CATALOG": 1, "BASE": 1, "OVERRIDE": 1, "DELEGATE": 2,
                     "DTDDECL": 2}


@dataclass(frozen=True)
class DtdFile:
    """A file of the archive's SGML folder: its name, the public identifiers the catalog sends to it, its size
    and SHA-256 (what ``pdi sgml list`` prints, and a backup's copy is checked against)."""

    name: str
    public: tuple[str, ...]
    size: int
    sha256: str


def sgml_folder(location: str, given: str | None = None) -> Path | None:
    """The SGML folder of the archive at ``location``: ``given``, else ``$PDI_SGML_CATALOG``, else ``sgml`` in a
    directory archive; ``None`` for a PostgreSQL archive without either (only the system's catalogs are read)."""
    named = given or os.environ.get(SGML_ENV)
    if named:
        return Path(named)
    if "://" in location:
        return None
    return Path(location) / SGML_FOLDER


def sgml_catalog_of(location: str) -> SgmlCatalog | None:
    """What the parser is given of the archive at ``location`` (:func:`sgml_folder`), or ``None``."""
    folder = sgml_folder(location)
    return None if folder is None else SgmlCatalog(os.path.abspath(folder))


def parse_state(location: str) -> str:
    """What an SGML parse of the archive at ``location`` is made with, as a SHA-256 that changes when that may:
    whether ``onsgmls`` is found, the files of its SGML folder (names and sizes: the folder only grows) and of
    the system's catalogs (``$SGML_CATALOG_FILES``: Debian's ``update-catalog`` rewrites them as a DTD package
    is installed). A mirror's sync tries a parse it could not keep again at once when this changes
    (:mod:`pdi.network.mirrors`)."""
    from pdi.fragments.markup.sgml import onsgmls_path

    said = [f"onsgmls {onsgmls_path()}"]
    folder = sgml_folder(location)
    with contextlib.suppress(OSError):
        if folder is not None:
            said += sorted(f"{e.name} {e.stat(follow_symlinks=False).st_size}" for e in os.scandir(folder))
    for catalog in os.environ.get("SGML_CATALOG_FILES", "/etc/sgml/catalog").split(":"):
        with contextlib.suppress(OSError):
            info = os.stat(catalog)
            said.append(f"{catalog} {info.st_size} {info.st_mtime_ns}")
    return hashlib.sha256("\n".join(said).encode("utf-8", "surrogateescape")).hexdigest()


def kept_for(location: str, public: str) -> str | None:
    """The file of the SGML folder of the archive at ``location`` that its catalog sends the public identifier
    ``public`` to (the first entry, as the parser takes it), or ``None`` (none, or no folder to read)."""
    folder = sgml_folder(location)
    if folder is None or not folder.is_dir():
        return None
    wanted = " ".join(public.split())
    try:
        entries = catalog_entries(_catalog_text(folder))
    except (StoreError, LimitError):
        return None
    return next((name for identifier, name in entries if identifier == wanted), None)


def public_identifier(text: str) -> str:
    """``text`` as a public identifier is read (ISO 8879 §10.1.7: white space taken as one space, none at the
    ends); a :class:`~pdi.errors.ParseError` saying which character is not one a minimum literal may hold."""
    normal = " ".join(text.split())
    if not normal:
        raise ParseError("a public identifier is empty", rule="public-identifier")
    if len(normal) > 240:
        raise ParseError(f"a public identifier of {len(normal)} characters is longer than SGML's 240 (LITLEN)",
                         rule="public-identifier")
    if not _MINIMUM_DATA.match(normal):
        at = next(i for i, c in enumerate(normal) if not _MINIMUM_DATA.match(c))
        raise ParseError(f"{normal[at]!r} at character {at + 1} of the public identifier {normal!r} is none of"
                         " the characters a public identifier may hold (ISO 8879 §10.1.7: letters, digits, space"
                         " and '()+,-./:=?)", text=normal, offset=at, rule="public-identifier")
    return normal


def catalog_entries(text: str) -> list[tuple[str, str]]:
    """The ``PUBLIC`` entries of the TR9401 catalog ``text``, in order: each public identifier (as
    :func:`public_identifier` reads it, any characters kept) and the file it names. Comments and entries of
    other kinds are stepped over; an entry cut short at the end is left out."""
    tokens: list[tuple[str, bool]] = []  # (text, is a literal)
    for found in _TOKEN.finditer(text):
        if found.group(0).startswith("--"):
            continue
        literal = found.group(1) if found.group(1) is not None else found.group(2)
        tokens.append((literal, True) if literal is not None else (found.group(3), False))
    entries: list[tuple[str, str]] = []
    at = 0
    while at < len(tokens):
        word, literal = tokens[at]
        keyword = word.upper() if not literal else ""
        parameters = _ENTRY_PARAMETERS.get(keyword)
        if parameters is None:
            at += 1
            continue
        taken = tokens[at + 1 : at + 1 + parameters]
        if len(taken) < parameters:
            break
        if keyword == "PUBLIC":
            entries.append((" ".join(taken[0][0].split()), taken[1][0]))
        at += 1 + parameters
    return entries


def _catalog_text(folder: Path) -> str:
    try:
        with (folder / CATALOG_FILE).open("rb") as f:
            data = f.read(MAX_CATALOG + 1)
    except FileNotFoundError:
        return ""
    except OSError as exc:
        raise StoreError(f"cannot read {folder / CATALOG_FILE}: {exc.strerror or exc}") from exc
    if len(data) > MAX_CATALOG:
        raise LimitError(f"{folder / CATALOG_FILE} is larger than {MAX_CATALOG:,} octets: not read")
    return data.decode("utf-8", "replace")


def dtd_files(folder: Path) -> list[DtdFile]:
    """The files of the archive's SGML folder (its catalog left out), by name, each with the public identifiers
    the catalog sends to it; none when there is no folder. The folder is checked first
    (:meth:`~pdi.fragments.markup.sgml.SgmlCatalog.checked`)."""
    SgmlCatalog(str(folder)).checked()
    if not folder.is_dir():
        return []
    public: dict[str, list[str]] = {}
    for identifier, name in catalog_entries(_catalog_text(folder)):
        public.setdefault(name, []).append(identifier)
    found = []
    for entry in sorted(os.scandir(folder), key=lambda e: e.name):
        if entry.name == CATALOG_FILE or entry.name.startswith("."):
            continue
        digest = hashlib.sha256()
        with open(entry.path, "rb") as f:
            while block := f.read(1 << 20):
                digest.update(block)
        found.append(DtdFile(entry.name, tuple(public.get(entry.name, ())), entry.stat().st_size, digest.hexdigest()))
    return found


#: What onsgmls says of a file or public text a DTD names that it could not find (OpenSP's messages).
_MISSED: Final = ("cannot find", "cannot open", "cannot generate system identifier",
                   "no system identifier could be generated")


def add_dtd(folder: Path, source: Path, *, public: str | None = None, name: str | None = None) -> DtdFile:
    """Copy the DTD (or entity) file ``source`` into the archive's SGML folder as ``name`` (default: its own
    name), and with ``public`` have the catalog send that public identifier to it; the folder is made if there
    is none. What is there already is never changed: the same octets under the same name, or the same
    identifier for the same file, is no change; another file of that name, or the identifier sent to another
    file, is an :class:`~pdi.errors.ImmutabilityError` (a document deposited with the first must read the same
    later). ``source`` larger than :data:`MAX_DTD`, or not a plain file, is refused before anything is written, and
    so is one ``onsgmls`` reports errors in, read as a DTD with the folder's catalog and files
    (:func:`~pdi.fragments.markup.sgml.dtd_errors`): a :class:`~pdi.errors.ParseError` giving its first (``FILE:LINE:
    COLUMN: message``)."""
    name = name or source.name
    if not _FILE_NAME.match(name) or name == CATALOG_FILE:
        raise ParseError(f"{name!r} cannot name a file of the SGML folder: letters, digits, '.', '_' and '-', not"
                         f" beginning with a dot, at most 100, and not {CATALOG_FILE!r} (name it with --name)",
                         rule="file-name")
    identifier = public_identifier(public) if public is not None else None
    try:
        with source.open("rb") as f:
            if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
                raise UnsupportedError(f"{source} is not a plain file")
            data = f.read(MAX_DTD + 1)
    except FileNotFoundError:
        raise NotFoundError(f"no file {source}") from None
    except OSError as exc:
        raise StoreError(f"cannot read {source}: {exc.strerror or exc}") from exc
    if len(data) > MAX_DTD:
        raise LimitError(f"{source} is larger than {MAX_DTD >> 20} MiB, more than any DTD pdi takes")
    target = folder / name
    catalog = catalog_entries(_catalog_text(folder)) if folder.is_dir() else []
    if identifier is not None:
        for known, file in catalog:
            if known == identifier and file != name:
                raise ImmutabilityError(f"the archive's SGML catalog already sends {identifier!r} to {file!r}: a"
                                        " document deposited with it must read the same later, so it is never"
                                        " sent to another file")
    if not os.path.lexists(target):  # a new file: read by onsgmls first, as a document's parse will read it
        errors = dtd_errors(data, name, SgmlCatalog(str(folder)) if folder.is_dir() else None, shown=str(source))
        if errors:
            more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
            # what to do, where onsgmls missed a file the DTD names (not for a DTD whose own text is wrong)
            hint = "; a module or entity file it names is added first" if any(
                said in error for error in errors for said in _MISSED) else ""
            raise ParseError(f"{source} is not a DTD onsgmls reads, so it was not added: {errors[0]}{more}{hint}",
                             rule="dtd")
    try:  # of the rule of the folder it is made in (an archive's: pdi.archive.modes), whatever the umask
        make_folder(folder, modes_in(folder.parent).folder, parents=True)
    except OSError as exc:
        raise StoreError(f"cannot make the SGML folder {folder}: {exc.strerror or exc}") from exc
    SgmlCatalog(str(folder)).checked()
    modes = modes_in(folder)
    _write_new(target, data, modes.file & ~0o222)
    if identifier is not None and (identifier, name) not in catalog:
        _append_entry(folder, identifier, name, modes.file)
    listed = [f for f in dtd_files(folder) if f.name == name]
    return listed[0]


def _write_new(target: Path, data: bytes, mode: int) -> None:
    """Write ``data`` to ``target``, read-only (``mode``), never over another file: the same octets there already
    are kept."""
    try:
        with target.open("rb") as f:
            there = f.read(MAX_DTD + 1)
    except FileNotFoundError:
        there = None
    except OSError as exc:
        raise StoreError(f"cannot read {target}: {exc.strerror or exc}") from exc
    if there is not None:
        if there != data:
            raise ImmutabilityError(
                f"the archive's SGML folder holds another {target.name} (sha256 {hashlib.sha256(there).hexdigest()}):"
                " a document deposited with it must read the same later, so it is never replaced; add this one"
                " under another name (--name) and public identifier")
        return
    partial = target.with_name(f".{target.name}.partial")
    try:
        partial.unlink(missing_ok=True)
        write_new(partial, data, mode)
        os.link(partial, target)  # (never over a file another process put there meanwhile)
    except FileExistsError:
        raise ImmutabilityError(f"{target} was made meanwhile by another process: add it again to compare") from None
    except OSError as exc:
        raise StoreError(f"cannot write {target}: {exc.strerror or exc}") from exc
    finally:
        partial.unlink(missing_ok=True)
    fsync_dir(target.parent)


def _append_entry(folder: Path, identifier: str, name: str, mode: int) -> None:
    """Add ``PUBLIC "identifier" "name"`` to the folder's catalog (written beside and renamed into place): a new
    catalog of ``mode``, one there already of its own mode (an operator's ``chmod`` kept), whatever the umask."""
    text = _catalog_text(folder)
    if text and not text.endswith("\n"):
        text += "\n"
    if not text:
        text = "-- The archive's own SGML catalog (OASIS TR9401), kept by pdi sgml add: entries are only added --\n"
    text += f'PUBLIC "{identifier}" "{name}"\n'
    partial = folder / f".{CATALOG_FILE}.partial"
    try:
        with contextlib.suppress(FileNotFoundError):
            mode = stat.S_IMODE(os.stat(folder / CATALOG_FILE).st_mode)
        partial.unlink(missing_ok=True)
        write_new(partial, text.encode("utf-8"), mode)
        os.replace(partial, folder / CATALOG_FILE)
    except OSError as exc:
        partial.unlink(missing_ok=True)
        raise StoreError(f"cannot write {folder / CATALOG_FILE}: {exc.strerror or exc}") from exc
    fsync_dir(folder)

