"""`pdi token add|list|revoke` (bearer tokens of the write API), `pdi audit` (the audit log), `pdi withdraw`, `pdi embargo`.

Thin: each command calls :class:`pdi.archive.Archive` and prints. A new
token is printed once, alone on its line on standard output, so a script
can take it (``TOKEN=$(pdi token add ci --series S --role deposit)``); what
it is for goes to standard error.
"""

from __future__ import annotations

import json

import click

from pdi._wording import plural
from pdi.archive.store import EmbargoChange
from pdi.archive.tokens import ROLES
from pdi.cli.archive_cmd import archive_option
from pdi.cli.archive_io import open_archive, saying_what_is_near
from pdi.cli.commands import one_line


@click.group("token")
def token_group() -> None:
    """Bearer tokens of the write API: made, listed, revoked (only their SHA-256 is kept)."""


@token_group.command("add")
@click.argument("name")
@click.option("--role", type=click.Choice(ROLES), required=True,
              help="read: read the private series and embargoed names of its series (Authorization: Bearer, or in a browser signed in at /signin); mirror: also announce an archive holding a copy of its series (POST /api/mirrors, pdi mirror sync --announce); deposit: also mint and deposit; curate: also statements, withdrawal and embargoes; admin: also the audit log and purges (series and tokens are made here, on the command line).")
@click.option("--series", "-s", "series", multiple=True, metavar="SERIES",
              help="A series the token may write, with its subseries (repeatable); none: every series.")
@archive_option
def token_add(name: str, role: str, series: tuple[str, ...], archive: str) -> None:
    """Make the token NAME and print it, alone on its line: it is shown this once and never again."""
    with open_archive(archive) as opened:
        record, secret = opened.add_token(name, role=role, series=series)
    click.echo(secret)
    scope = ", ".join(record.series) or "every series"
    click.echo(f"token {record.name}: role {record.role}, {scope}; keep it now, it is not stored", err=True)


@token_group.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON array.")
@archive_option
def token_list(as_json: bool, archive: str) -> None:
    """Every token made: name, role, series, when and by whom made, when revoked (never the token)."""
    with open_archive(archive) as opened:
        records = opened.tokens()
    if as_json:
        click.echo(json.dumps([
            {"name": r.name, "role": r.role, "series": list(r.series), "created_at": r.created_at,
             "created_by": r.created_by, "revoked_at": r.revoked_at}
            for r in records
        ], indent=2))
        return
    for r in records:
        state = f"revoked {r.revoked_at}" if r.revoked_at else "live"
        click.echo(f"{r.name}\t{r.role}\t{' '.join(r.series) or '*'}\t{r.created_at}\t{one_line(r.created_by)}\t{state}")


@token_group.command("revoke")
@click.argument("name")
@archive_option
def token_revoke(name: str, archive: str) -> None:
    """Revoke the token NAME at once and for good (its name is never reused)."""
    with open_archive(archive) as opened:
        record = opened.revoke_token(name)
    click.echo(f"token {record.name} revoked {record.revoked_at}")


@click.command("audit")
@click.option("--after", type=click.IntRange(min=0), default=0, show_default=True,
              help="Only entries after this entry number.")
@click.option("--limit", type=click.IntRange(min=1, max=100_000), default=1000, show_default=True,
              help="At most this many entries (then --after the number of the last one printed).")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON array.")
@archive_option
def audit_cmd(after: int, limit: int, as_json: bool, archive: str) -> None:
    """The audit log, oldest first: who (a user, or token:NAME), when, what, and from where.

    It holds every write made through the write API (deposits, versions,
    formats, withdrawals, statements, annotations, announcements), and what
    is changed on the command line that others rely on: withdrawals and
    purges, embargoes, series access, tokens, mirrors, imports and repairs.
    A deposit's entry names the names it wrote and the embargo it set, if
    any. A deposit made on the command line (pdi add, pdi version) is in it
    when it embargoes what it deposits (--embargo-until), not otherwise; a
    statement made there (pdi meta) is not: their names, times and digests
    are in the catalog itself.
    """
    with open_archive(archive) as opened:
        entries = opened.audit(after, limit)
    if as_json:
        click.echo(json.dumps([
            e.to_json()
            for e in entries
        ], indent=2))
        return
    for e in entries:  # who, what and from where: a writer's words (a reason, $PDI_USER, a forwarded address)
        fields = (e.who, e.action, e.subject, e.detail, e.address or "-")
        click.echo("\t".join((str(e.id), e.at, *map(one_line, fields))))


@click.command("withdraw")
@click.argument("name")
@click.option("--reason", required=True, help="Why: kept with the tombstone and shown to whoever resolves the name.")
@click.option("--purge", is_flag=True,
              help="Also delete the octets (a legal takedown; a name already withdrawn may be purged later)."
                   " Bytes another name keeps stay for that name.")
@archive_option
def withdraw_cmd(name: str, reason: str, purge: bool, archive: str) -> None:
    """Withdraw NAME for good: a versioned name withdraws that version, a generic one the whole document.

    The name stays (never minted again, still listed) and resolves to its
    tombstone (exit status 11; N2R answers 410 Gone with the reason). The
    bytes are kept, unless --purge: then they are deleted, except where
    another name that keeps its octets holds the same bytes, and verify
    and export report the name as purged. The withdrawal (or purge) is in
    the audit log. A name withdrawn already is not withdrawn again (without
    --purge): its tombstone and reason stay, and the command says so; with
    --purge its octets are purged, and its tombstone keeps its first reason,
    which the command says beside the purge's.
    """
    with open_archive(archive) as opened:
        with saying_what_is_near(opened, name):
            record = opened.withdraw(name, reason, purge=purge)
        # a purge of a name withdrawn before: the first tombstone over it is the one it resolves to
        first = next((t for t in opened.withdrawals_of([record.key]) if t.version in (None, record.version)),
                     record) if purge else record
    what = "document" if record.version is None else f"version {record.version}"
    if record.earlier:
        click.echo(f"{name}: its {what} was withdrawn already, at {record.at}: {one_line(record.reason)} (nothing changed;"
                   " its tombstone keeps that reason)")
        return
    withdrew = f"the document {name}" if record.version is None else f"{what} of {name}"
    if first.id != record.id:
        click.echo(f"purged {withdrew} at {record.at}: {one_line(record.reason)} (withdrawn already, at {first.at}:"
                   f" {one_line(first.reason)}, the reason its tombstone keeps; pdi audit lists this purge with its"
                   " own)")
    else:
        click.echo(f"withdrew {withdrew} at {record.at}: {one_line(record.reason)}")
    if purge:
        kept = len(record.kept)
        click.echo("its octets are purged" + (
            f"; {plural(kept, 'blob')} {'stays' if kept == 1 else 'stay'}: other names hold the same bytes"
            if kept else ""
        ))


@click.command("embargo")
@click.argument("name")
@click.option("--until", "until", metavar="DATE",
              help="2027-01-01 (its start, GMT) or a time with its zone (2027-01-01T09:00:00Z).")
@click.option("--lift", is_flag=True, help="End NAME's own embargo now (a document's, or a version's).")
@click.option("--shorten", is_flag=True,
              help="With --until: allow a date earlier than the embargo in force (refused without it).")
@archive_option
def embargo_cmd(name: str, until: str | None, lift: bool, shorten: bool, archive: str) -> None:
    """Embargo NAME until a date: a generic name the whole document, a versioned name that version.

    Until then the resolver answers 403 to readers without a token whose
    series cover it (N2R, the API, the viewer, replay; search leaves it
    out); from then on it reads as any other name, by itself. Audited.

    A document's embargo and a version's own (pdi add --embargo-until sets
    the version's) are apart: one neither sets nor lifts the other. The
    command says what it changed and each embargo that still holds the
    name, with the name that lifts it; a --lift that would lift nothing
    while another embargo holds the name changes nothing and exits 5.
    A date earlier than NAME's own embargo in force shortens a sealing:
    refused (exit 5, naming both dates) without --shorten. Each change is
    in the audit log with the date before and after.
    """
    if lift == (until is not None):
        raise click.UsageError("give --until DATE or --lift")
    if shorten and lift:
        raise click.UsageError("--shorten goes with --until DATE (--lift ends an embargo as it is)")
    with open_archive(archive) as opened, saying_what_is_near(opened, name):
        change = opened.embargo(name, until, shorten=shorten)
    click.echo(f"{change.name}: {_embargo_done(change)}")
    for held, held_until in change.held:
        if change.version is None:
            click.echo(f"{change.name}: but the version {held} keeps its own embargo until {held_until}"
                       f" (pdi embargo {held} --lift ends that)")
        else:
            click.echo(f"{change.name}: but its document's embargo until {held_until} still covers it"
                       f" (pdi embargo {held} --lift ends that)")


def _embargo_done(change: EmbargoChange) -> str:
    """What ``pdi embargo`` changed of the name's own embargo, in words (what else holds it is said after)."""
    was = f" (was until {change.before})" if change.before is not None else ""
    if change.after is None:
        if change.before is None:
            return "no embargo to lift: it reads as any other name (nothing changed)"
        return f"embargo until {change.before} lifted" if not change.held else f"its own embargo until {change.before} lifted"
    if change.over:
        return (f"an embargo until {change.after} is over already" + ("" if change.held else
                ": it reads as any other name") + (was if change.changed else " (nothing changed)"))
    if not change.changed:
        return f"embargoed until {change.after} already (nothing changed)"
    return (f"embargoed until {change.after}" if not change.held else f"its own embargo set until {change.after}") + was


def register(cli: click.Group) -> None:
    """Add ``token``, ``audit``, ``withdraw`` and ``embargo`` to the ``pdi`` command."""
    cli.add_command(token_group)
    cli.add_command(audit_cmd)
    cli.add_command(withdraw_cmd)
    cli.add_command(embargo_cmd)
