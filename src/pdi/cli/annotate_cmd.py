"""``pdi annotate``: W3C Web Annotations of names, out and back in (:mod:`pdi.interop.annotation`).

``pdi annotate --export NAME`` prints the annotation of a fragment name, a
citation or a browser fragment (``#:~:text=``, ``#t=``, ``#xywh=``) as JSON-LD.
``pdi annotate --import FILE [--pdi DOCUMENT]`` reads a W3C annotation, a
list or page of them, or a Hypothesis export, and prints for each target the
name of the passage it points at; a quote that is not in the document is
printed as ``missing`` and makes the exit status 4 (not found).
``pdi annotate --native NAME`` prints the native name a browser fragment equals.
"""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING

import click

from pdi import untrusted_json
from pdi._wording import plural
from pdi.cli import one_line
from pdi.cli.archive_cmd import archive_option
from pdi.cli.archive_io import open_archive
from pdi.errors import LimitError, NotFoundError, StoreError

if TYPE_CHECKING:
    from pdi.archive import Archive
    from pdi.interop.annotation import TargetResult

#: The largest annotation file read (octets).
MAX_FILE = 64 << 20


@click.command("annotate")
@click.option("--export", "export_name", metavar="NAME",
              help="Print the W3C Web Annotation (JSON-LD) of this fragment name or citation.")
@click.option("--import", "import_file", metavar="FILE",
              help="Read annotations (W3C, or a Hypothesis export; '-' for stdin) and print the names they point at.")
@click.option("--pdi", "document", metavar="DOCUMENT",
              help="With --import: the archived document (a versioned PDI) the annotations were made on;"
                   " without it each target's source must be a PDI.")
@click.option("--native", "native_name", metavar="NAME",
              help="Print the native name a browser fragment (#:~:text=, #t=, #xywh=) equals.")
@click.option("--json", "as_json", is_flag=True, help="With --import or --native: print JSON (--export prints JSON always).")
@archive_option
def annotate_cmd(
    export_name: str | None, import_file: str | None, document: str | None,
    native_name: str | None, as_json: bool, archive: str,
) -> None:
    """Export a name as a W3C Web Annotation, or find the names annotations point at.

    Exactly one of --export, --import and --native. Exit status 4 when an
    imported quote is not in its document, or when no text directive of a
    --native name is found (one of several not found is a 'missing:' line,
    exit 0, as the resolver answers the directives it finds).
    """
    chosen = [x for x in (export_name, import_file, native_name) if x is not None]
    if len(chosen) != 1:
        raise click.UsageError("give exactly one of --export NAME, --import FILE and --native NAME")
    if document is not None and import_file is None:
        raise click.UsageError("--pdi goes with --import")
    with open_archive(archive) as opened:
        if export_name is not None:
            from pdi.interop.annotation import export_annotation

            click.echo(json.dumps(export_annotation(opened, export_name), ensure_ascii=False, indent=1))
            return
        if native_name is not None:
            _print_native(opened, native_name, as_json)
            return
        assert import_file is not None
        results = _imported(opened, import_file, document)
    if as_json:
        click.echo(json.dumps([r.to_json() for r in results], ensure_ascii=False))
    else:
        for r in results:
            shown = str(r.name) if r.name is not None else "-"
            click.echo(f"{r.status}\t{shown}\t{one_line(r.message)}")
        if not results:  # an empty list, or an export of nothing: said, where nothing was printed at all
            source = "standard input" if import_file == "-" else import_file
            click.echo(f"note: {source} holds no annotation: nothing was looked for", err=True)
    missing = [r for r in results if r.status == "missing"]
    if missing:
        sys.stdout.flush()
        one = len(missing) == 1
        raise NotFoundError(f"{len(missing)} of {plural(len(results), 'quote')}"
                            f" {'is not in its document' if one else 'are not in their documents'}")


def _print_native(opened: Archive, native_name: str, as_json: bool) -> None:
    """``--native``: the native name of each directive of a browser fragment (exit 4 when none was found)."""
    from pdi.interop.aliases import native_names

    alias = native_names(opened, native_name)
    if as_json:
        click.echo(json.dumps(alias.to_json(), ensure_ascii=False))
    else:
        notes = iter(alias.notes)  # one note for each directive not found, in order
        for found in alias.natives:
            click.echo(str(found) if found is not None else f"missing: {one_line(next(notes, ''))}")
    alias.native  # noqa: B018  (raises NotFoundError, exit 4, when no directive was found)


def _read(path: str) -> bytes:
    """The octets of the file ``path`` (``-``: standard input), at most :data:`MAX_FILE` of them (and one more)."""
    if path == "-":
        return sys.stdin.buffer.read(MAX_FILE + 1)
    try:
        with open(path, "rb") as f:
            return f.read(MAX_FILE + 1)
    except FileNotFoundError:
        raise NotFoundError(f"no such file: {path}") from None
    except IsADirectoryError:
        raise click.UsageError(f"{path} is a directory: --import reads one file of annotations") from None
    except OSError as exc:
        raise StoreError(f"cannot read {path}: {exc.strerror}") from None


def _imported(opened: Archive, import_file: str, document: str | None) -> list[TargetResult]:
    """``--import``: the file read (at most :data:`MAX_FILE` octets) as JSON, and each target's result."""
    from pdi.interop.annotation import import_annotations

    raw = _read(import_file)
    if len(raw) > MAX_FILE:
        raise LimitError(f"an annotation file is at most {MAX_FILE} octets")
    data = untrusted_json.loads(raw, "<stdin>" if import_file == "-" else import_file, rule="annotation",
                                unique_keys=True)
    return import_annotations(opened, data, document=document)


def register(cli: click.Group) -> None:
    """Add ``annotate`` to the top-level ``pdi`` group."""
    cli.add_command(annotate_cmd)
