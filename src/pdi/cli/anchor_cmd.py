"""``pdi anchor``: find a cited passage in another version of its document (:mod:`pdi.archive.anchoring`).

``pdi anchor 'urn:pdi://…/3.text.1#char=120,164' --to latest`` prints the
passage's name in that version (``…/3.text.2#char=131,175``) and, on a
second line, how it was found: ``exact`` (the text around it is unchanged),
``quote`` (its exact text, told apart by its context) or ``fuzzy`` (a
similar text, with its score). ``--json`` prints the whole answer.

Exit status 0: found (a fuzzy answer, such as a list item renumbered from
"3." to "4.", with its score); 12: the passage is orphaned (not in that
version); 13: it is ambiguous (several places fit as well; they are
listed); the other statuses are those of every ``pdi`` command.
"""

from __future__ import annotations

import json

import click

from pdi.cli import one_line
from pdi.cli.archive_cmd import archive_option
from pdi.cli.archive_io import open_archive


@click.command("anchor")
@click.argument("name")
@click.option("--to", "to", required=True, metavar="VERSION|latest|NAME", help="The version to find the passage in: a number, latest (the newest not withdrawn), or that version's name.")
@click.option("--json", "as_json", is_flag=True, help="Print the answer as JSON.")
@archive_option
def anchor_cmd(name: str, to: str, as_json: bool, archive: str) -> None:
    """Find the passage NAME cites (NAME#char=a,b, #line=a,b, #elt=… or #name=…) in the version --to names.

    Prints the passage's name there (a char range of that version's
    CRLF-canonical text; line= when NAME cites lines and they map whole) and
    how it was found (exact, quote or fuzzy, with a score; a list item whose
    only change is its number, "3." become "4.", is fuzzy). Exit status 0:
    found; 12: orphaned (not in that version; a note on stderr says each
    way of finding it that was not tried, and why); 13: ambiguous (several
    places fit as well; listed on stderr).
    """
    from pdi.archive.anchoring import anchor, version_named

    to_version = version_named(name, to)  # --to as a version's own name: its number
    from pdi.errors import OrphanedError

    with open_archive(archive) as opened:
        try:
            answer = anchor(opened, name, to_version)
        except OrphanedError as exc:  # why not, as /api/anchor's problem says it: each method skipped, a line
            notes = exc.details.get("notes")
            for note in notes if isinstance(notes, list) else ():
                click.echo(f"note: {one_line(str(note))}", err=True)
            raise
    from pdi.cli.get_run import say_lenient

    say_lenient(name)
    if as_json:
        click.echo(json.dumps(answer.to_json()))
        return
    click.echo(str(answer.target))
    how = f"found by {answer.method}: score {answer.score:.3f}, context {answer.context:.3f}"
    if answer.method == "fuzzy":
        how += f"; the text now reads: {one_line(answer.found)}"
    click.echo(how)


def register(cli: click.Group) -> None:
    """Add ``anchor`` to the top-level ``pdi`` group."""
    cli.add_command(anchor_cmd)
