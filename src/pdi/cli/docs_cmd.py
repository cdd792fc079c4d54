"""`pdi docs [PAGE] [--to DIR]`: the manual's pages and the deployment files, from the pdi that runs.

A ``--help`` text that sends its reader to the manual names the page as ``pdi docs PAGE`` (``pdi docs
how-to/operate``, ``pdi docs deploy/nginx.conf``): an operator who installed pdi's wheel with pipx has no
checkout, so the page must come from pdi itself. The wheel carries the manual's text as ``pdi/data/docs/``:
``setup.py`` copies it there from the checkout's ``docs/`` at build time (the one source stays ``docs/``, which
the sdist holds whole), by the patterns of :data:`pdi._manual.MANUAL_FILES`, which ``setup.py`` reads too. Run
from a checkout (``src/`` on the path, or an editable install), pdi reads ``docs/`` itself by the same patterns;
``tests/test_package.py`` checks that the wheel holds exactly those files, octet for octet.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import sys
from collections.abc import Iterator
from importlib.resources.abc import Traversable
from pathlib import Path

import click

from pdi._files import make_partial
from pdi._manual import selected
from pdi.errors import ImmutabilityError, NotFoundError, StoreError

#: Where the wheel keeps them, inside the package.
PACKAGED = "data/docs"
#: What a file that starts so is written as (``--to``): a script, executable by all; anything else readable by all.
SCRIPT_MAGIC = b"#!"
#: Where a comment's first sentence ends: a full stop before a space or the end.
SENTENCE_END = re.compile(r"\.(?=\s|$)")


def _walk(root: Traversable, prefix: str = "") -> Iterator[tuple[str, Traversable]]:
    for entry in root.iterdir():
        if entry.is_dir():
            yield from _walk(entry, f"{prefix}{entry.name}/")
        elif entry.is_file():
            yield f"{prefix}{entry.name}", entry


def manual() -> dict[str, Traversable]:
    """The manual's files, by their path under ``docs/`` (sorted): the wheel's copy, else a checkout's ``docs/``."""
    from importlib.resources import files

    root: Traversable = files("pdi").joinpath(PACKAGED)
    if not root.is_dir():
        checkout = Path(__file__).resolve().parents[3] / "docs"  # src/pdi/cli/docs_cmd.py -> the checkout's docs/
        if not (checkout / "index.md").is_file():
            raise NotFoundError("this pdi holds no manual (pdi/data/docs is missing from its package, and it runs"
                                " from no checkout): install a wheel built by python -m build")
        root = checkout
    return dict(sorted((name, entry) for name, entry in _walk(root) if selected(name)))


def title(octets: bytes) -> str:
    """A file's title: a page's first heading, else its first comment line (past a script's ``#!`` line); a comment
    whose first sentence runs on over the next comment lines (``deploy/pdi-admin``'s) gives that whole sentence."""
    lines = octets.decode("utf-8", "replace").splitlines()
    for at, line in enumerate(lines[:3]):
        if line.startswith("# "):
            words = line[2:].strip()
            if words.endswith("."):
                return words
            for more in lines[at + 1:]:
                if not more.startswith("# "):
                    return words
                words += " " + more[2:].strip()
                end = SENTENCE_END.search(words)
                if end:
                    return words[: end.start() + 1]
            return words
    return ""


def find(pages: dict[str, Traversable], asked: str) -> tuple[str, list[str], bool]:
    """The folder ``asked`` names and the files in it, or the folder of the one file it names (``.md`` may be left
    off) and that file, and whether it named a file; a leading ``docs/`` (as the manual names its files) is allowed. Only the manual's own paths
    are looked up, so no ``..`` or absolute path can reach past it."""
    wanted = asked.removeprefix("docs/").rstrip("/")
    for name in (wanted, f"{wanted}.md"):
        if name in pages:
            return name.rpartition("/")[0], [name], True
    inside = [name for name in pages if wanted and name.startswith(f"{wanted}/")]
    if inside:
        return wanted, inside, False
    from pdi._wording import printable

    raise NotFoundError(f"the manual has no page or folder {printable(asked)!r}: pdi docs lists them")


#: What a reference page holds where the site's build writes the reference in from the code
#: (:mod:`pdi.cli.reference_pages`): the commands' help, /openapi.json, the exit statuses.
MARKERS = (b"<!-- cli-reference -->", b"<!-- http-api-reference -->", b"<!-- exit-codes-from-errors -->")


def text_of(name: str, entry: Traversable) -> bytes:
    """The file ``name`` of the manual as it is, or a reference page whole (``reference/cli.md``,
    ``reference/http-api.md``, ``reference/exit-codes.md``): its reference written in as plain text where its
    marker stands, as the site's build writes it in, and its note for readers of the repository left out."""
    octets = entry.read_bytes()
    if not name.endswith(".md") or not any(marker in octets for marker in MARKERS):
        return octets
    from pdi.cli.reference_pages import fill

    return fill(octets.decode("utf-8"), site=False).encode("utf-8")


def write_into(dest: Path, files: dict[str, bytes]) -> list[Path]:
    """Write ``files`` (path under ``dest`` -> octets) into ``dest``, made if need be: every one or none, and never
    over anything there (a file made there meanwhile too: each is linked into place, not renamed over it)."""
    there = [name for name in files if os.path.lexists(dest / name)]
    if there:
        shown = ", ".join(str(dest / name) for name in there[:3]) + (" …" if len(there) > 3 else "")
        verb = "exists" if len(there) == 1 else "exist"
        raise ImmutabilityError(f"pdi docs --to never overwrites: {shown} {verb} (nothing was written)")
    made: list[Path] = []
    try:
        for name, octets in files.items():
            target = dest / name
            target.parent.mkdir(parents=True, exist_ok=True)
            partial = target.with_name(f".{target.name}.pdi-partial")
            # made new here and written through its descriptor, never by its name (found in review, 2026-12-02: a
            # link another user put there was written through); then linked into place only if the name still
            # holds the file written (its device and inode, which no other file takes while it is open), and the place
            # only kept if it does
            fd, written = make_partial(partial, 0o755 if octets.startswith(SCRIPT_MAGIC) else 0o644, str(target))
            try:
                with open(fd, "wb", closefd=False) as out:
                    out.write(octets)
                if _identity(partial) != written:
                    raise OSError(errno.EEXIST, "replaced by another file while it was written", str(partial))
                os.link(partial, target)
                if _identity(target) != written:
                    os.unlink(target)
                    raise OSError(errno.EEXIST, "replaced by another file while it was written", str(partial))
            finally:
                os.close(fd)
                with contextlib.suppress(OSError):
                    if _identity(partial) == written:
                        partial.unlink()
            made.append(target)
    except (OSError, StoreError) as exc:
        for target in made:
            target.unlink(missing_ok=True)
        if isinstance(exc, StoreError):  # a partial file's name held by a link or another user's file: named
            raise StoreError(f"{exc} (nothing was kept)") from exc
        where = f" {exc.filename}" if exc.filename else ""
        raise StoreError(f"cannot write into {dest}:{where} {exc.strerror or exc} (nothing was kept)") from exc
    return made


def _identity(path: Path) -> tuple[int, int]:
    """The device and inode of ``path`` itself (a link's own, not its file's)."""
    found = os.lstat(path)
    return found.st_dev, found.st_ino


@click.command("docs")
@click.argument("page", metavar="[PAGE]", required=False)
@click.option("--to", "to", metavar="DIR", type=click.Path(file_okay=False, path_type=Path),
              help="Write PAGE (a folder's files; with no PAGE, the whole manual) into DIR, made if need be,"
                   " instead of printing it; never over a file there.")
def docs_cmd(page: str | None, to: Path | None) -> None:
    """The manual's pages and the deployment files (nginx, systemd units), from the installed package.

    With no PAGE, lists every page and file, a line each: its path, a tab,
    its title. PAGE, as a help text names it (pdi docs how-to/operate,
    pdi docs deploy/nginx.conf; .md may be left off), is written to
    standard output octet for octet, but for the reference pages the
    site's build completes (reference/cli, reference/http-api,
    reference/exit-codes): their reference is written in from the
    commands' help, the resolver's /openapi.json and the exit statuses, as
    plain text. A folder (deploy) lists its files.
    With --to DIR, PAGE is written into DIR instead (a folder's files
    under their own names; a script, such as deploy/pdi-admin, executable),
    and the path of each file written is printed. A file there already is
    never overwritten: exit 5, and nothing is written. A page the manual
    lacks: exit 4. The same pages are in the docs folder of pdi's source
    and sdist, from which mkdocs builds the manual's site.
    """
    from pdi.cli.commands import one_line

    pages = manual()
    folder, names, one_file = ("", list(pages), False) if page is None else find(pages, page)
    if to is not None:
        cut = len(folder) + 1 if folder else 0
        for path in write_into(to, {name[cut:]: text_of(name, pages[name]) for name in names}):
            click.echo(one_line(str(path)))
    elif one_file:
        sys.stdout.buffer.write(text_of(names[0], pages[names[0]]))
        sys.stdout.buffer.flush()
    else:
        listed = _listed_titles(pages)
        for name in names:
            click.echo(f"{name}\t{one_line(title(pages[name].read_bytes()) or listed.get(name, ''))}")


#: A row of a folder's README table: its first cell, which names the files in backquotes, and its second.
_ROW = re.compile(r"^\|([^|]*)\|([^|]*)\|")


def _listed_titles(pages: dict[str, Traversable]) -> dict[str, str]:
    """The titles of files that have none of their own (the specifications' sources: ``specs/000_….txt``), as the
    table of their folder's ``README.md`` gives them: the document its row names them with (``RFC 5147, URI
    Fragment Identifiers for the text/plain Media Type (XML source)``)."""
    titles: dict[str, str] = {}
    for readme in (name for name in pages if name.endswith("README.md")):
        folder = readme[: -len("README.md")]
        for line in pages[readme].read_bytes().decode("utf-8", "replace").splitlines():
            row = _ROW.match(line)
            if row is None:
                continue
            document = row.group(2).replace("*", "").strip()
            for file in re.findall(r"`([^`/]+)`", row.group(1)):
                if folder + file in pages:
                    titles.setdefault(folder + file, document)
    return titles


def register(cli: click.Group) -> None:
    """Add ``docs`` to the top-level ``pdi`` group."""
    cli.add_command(docs_cmd)
