"""`pdi mirror add|ls|remove|sync|audit`: series copied from other pdi resolvers, checked against their signed
manifests, and compared with every peer. Thin: the network side is :mod:`pdi.network.mirrors`, what is
recorded :mod:`pdi.archive.mirroring`."""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator
from typing import TYPE_CHECKING

import click

from pdi._wording import MESSAGE_MOST, NAME_MOST, clipped, plural, shown_url
from pdi.cli.archive_cmd import archive_option, checked_base_url
from pdi.cli.archive_io import open_archive
from pdi.errors import IntegrityError, NotFoundError, RemoteError

if TYPE_CHECKING:
    from pdi.archive.fixity import Problem
    from pdi.network.polls import Disagreement


@click.group("mirror")
def mirror_group() -> None:
    """Mirror series of other pdi resolvers: add, sync, audit (pdi docs how-to/mirrors)."""


@mirror_group.command("add")
@click.argument("base_url", metavar="BASE_URL")
@click.option("--series", "-s", "series", required=True, metavar="S", help="The series mirrored (or held by a peer).")
@click.option("--key", metavar="JWK|FILE|URL",
              help="The archive's public key (a JWK or JWK set: JSON text, a file or a URL); default: fetched now"
                   " from BASE_URL/api/keys and printed, for you to compare with what its operator says.")
@click.option("--peer", is_flag=True,
              help="BASE_URL holds a copy of S (this archive is its origin, or another mirror): list it in N2Ls and"
                   " audit it; nothing is copied from it but repairs.")
@click.option("--token-file", "token_file", metavar="FILE", type=click.Path(dir_okay=False),
              help="Read BASE_URL with the token in FILE (mode 0600): a read token of that archive for S, so that"
                   " its private and embargoed names are copied too, under its access rules. The catalog records"
                   " the file's path, never the token.")
@click.option("--token-env", "token_env", metavar="VARIABLE", is_flag=False, flag_value="PDI_MIRROR_TOKEN",
              help="Read BASE_URL with the token in this environment variable of each sync (alone:"
                   " $PDI_MIRROR_TOKEN); recorded by its name.")
@click.option("--no-check", "no_check", is_flag=True,
              help="Record it without reading BASE_URL's manifest of S now (it is down, say; give --key): a series"
                   " it does not hold, a key not its own or a token it refuses is then found by the first sync.")
@archive_option
def mirror_add(base_url: str, series: str, key: str | None, peer: bool, token_file: str | None,
               token_env: str | None, no_check: bool, archive: str) -> None:
    """Record that this archive mirrors series S from the pdi resolver at BASE_URL, pinning its public key.

    Every later sync, audit and repair checks that archive's signed
    manifests with the key pinned now, never with one fetched later; its
    manifest of S is read once now (not with --no-check), so that a series
    it does not hold or a key that is not its own is refused at once. The
    series is registered here if it is not; no name is ever minted in it
    here (deposits in it are refused: only its origin mints; a warning says
    so when the series holds documents this archive minted). Adding it
    again with another --token-file or --token-env records where its token
    is kept now.
    """
    from pdi.archive import canonical_series
    from pdi.archive.mirroring import base_url as checked_base
    from pdi.cli.manifest_check import public_keys
    from pdi.network.mirror_access import describe_source, token_source
    from pdi.network.peers import check_origin, fetch_keys, key_text

    base = checked_base(base_url)
    source = token_source(token_file, token_env)
    canonical = canonical_series(series)
    with open_archive(archive) as opened:
        opened.refuse_if_read_only()  # a member of the archive's group, or read-only media: before asking BASE_URL
        try:
            keys = fetch_keys(base) if key is None else public_keys(key, opened, None)
        except RemoteError as exc:
            if not no_check or key is not None:
                raise
            # --no-check is for an origin that is down, and its key must then be given: said with the refusal
            raise RemoteError(f"{exc.message}; --no-check reads nothing else of {shown_url(base)}: give its key"
                              " with --key JWK|FILE|URL") from exc
        role = "peer" if peer else "origin"
        refused = opened.mirror_refusal(canonical, base, role, key_text(keys), source)
        if refused is not None:  # what this archive refuses, before the other is asked
            raise refused
        held = 0
        if not peer:
            if not no_check:  # it must hold the series and sign with that key: said now, not at the first sync
                check_origin(base, canonical, keys, source)
            held = opened.minted_here(canonical)
        record = opened.add_mirror(series, base, role, key_text(keys), source)
        # as recorded: added again without a token, it keeps the one recorded before (said below)
        record = next((m for m in opened.mirrors(canonical) if (m.base_url, m.role) == (record.base_url, role)), record)
    for k in keys:
        click.echo(f"key\t{k.thumbprint}\tx={k.x}")
    click.echo(f"{record.role}\t{record.series}\t{shown_url(record.base_url)}"
               + (f"\ttoken from {describe_source(record.token_source)}" if record.token_source else ""))
    if key is None:
        click.echo("compare the key above with the one that archive's operator publishes (pdi keys show)", err=True)
    if held:
        click.echo(f"pdi: warning: {canonical} holds {plural(held, 'document')} this archive minted: from now on only"
                   f" {base} mints in it (deposits in it here are refused), and what it does not list stays here"
                   " unchecked by its manifests. If this archive is the series' origin and"
                   f" {base} holds a copy, undo it (pdi mirror remove {base} --series {canonical}) and add that"
                   " archive with --peer.", err=True)


@mirror_group.command("ls")
@click.option("--series", "-s", "series", metavar="S", help="Only this series.")
@archive_option
def mirror_ls(series: str | None, archive: str) -> None:
    """List the recorded origins and peers: series, role, base URL, when last synced, where its token is kept."""
    from pdi.network.mirror_access import describe_source

    with open_archive(archive) as opened:
        for record in opened.mirrors(series):
            token = "no token" if record.token_source is None else f"token from {describe_source(record.token_source)}"
            # a peer holds a copy and is never synced from: "never synced" read as a sync still to run
            synced = record.synced_at or ("never synced" if record.role == "origin" else "a copy: not synced from")
            click.echo(f"{record.series}\t{record.role}\t{shown_url(record.base_url)}\t{synced}\t{token}")


@mirror_group.command("remove")
@click.argument("base_url", metavar="BASE_URL")
@click.option("--series", "-s", "series", required=True, metavar="S",
              help="The series BASE_URL was recorded for.")
@archive_option
def mirror_remove(base_url: str, series: str, archive: str) -> None:
    """Forget BASE_URL as an origin or peer of S (the names already copied stay).

    Forgetting S's origin, this archive may mint in S again (pdi add, the
    write API), which it says; a later pdi mirror add of S warns of what it
    minted meanwhile.
    """
    from pdi.archive.mirroring import recorded_url

    url = recorded_url(base_url)
    with open_archive(archive) as opened:
        opened.refuse_if_read_only()
        was_origin = any(m.base_url == url and m.role == "origin" for m in opened.mirrors(series))
        opened.remove_mirror(series, url)
    click.echo(f"removed\t{series}\t{shown_url(base_url)}")
    if was_origin:
        click.echo(f"pdi: {series} is mirrored from nowhere now: this archive may mint in it again (the names copied"
                   f" from {shown_url(url)} stay)", err=True)


@mirror_group.command("sync")
@click.option("--series", "-s", "series", metavar="S", help="Only this series (default: every mirrored series).")
@click.option("--announce", "announce_as", metavar="URL", callback=checked_base_url,
              help="This archive's own base URL: announce it to each origin (POST /api/mirrors) so that the origin"
                   " lists it among the locations; needs the origin's token.")
@click.option("--token-file", type=click.Path(dir_okay=False), metavar="FILE",
              help="With --announce: the file holding the token the origin issued to this mirror (role mirror);"
                   " default $PDI_ORIGIN_TOKEN, else the token recorded by pdi mirror add --token-file.")
@click.option("--key-file", type=click.Path(dir_okay=False), metavar="FILE",
              help="With --announce: this archive's signing key (default as for pdi keys show).")
@click.option("--max-seconds", type=click.FloatRange(min=0, min_open=True), default=86_400.0, show_default=True,
              help="Stop a series' sync after this long (exit 7): what it fetched is kept, the next sync goes on.")
@click.option("--retry-parses", is_flag=True,
              help="Try again now the SGML parses that syncs could not keep lately (else not before an hour after"
                   " the last refusal, doubled at each one, unless the origin's parse or this archive's DTDs change).")
@archive_option
def mirror_sync(series: str | None, announce_as: str | None, token_file: str | None, key_file: str | None,
                max_seconds: float, retry_parses: bool, archive: str) -> None:
    """Copy what each origin lists and this archive does not hold yet, every blob checked against the
    origin's signed manifest; exit 3 if a manifest or a blob is refused (what was checked is kept).

    Safe to kill and run again: names are kept a batch (one transaction)
    at a time, and names held already are not fetched again. Without a
    token (pdi mirror add --token-file), what an origin keeps private or
    under embargo is not listed to this archive, nor copied, and a name held
    that it hides since (no longer listed) is withheld here from readers
    without access until it lists it again; with one, it is listed, and kept
    under the same access rules (the series' access, each embargo).
    An SGML document's parse is kept only if it is byte for byte the one
    its origin signs (else "unparsed": its #elt= is refused here until a
    later sync finds it so, once the origin's DTD is added: pdi sgml add;
    one refused is not tried again for an hour, doubled at each refusal).
    With --announce URL, each origin is first told that URL holds a copy
    (its N2Ls then lists it), with this archive's public key.
    """
    import os
    from pathlib import Path

    from pdi.network.mirrors import sync
    from pdi.network.peers import announce

    problems = 0
    with open_archive(archive) as opened:
        opened.refuse_if_read_only()  # before any origin is asked
        origins = [m for m in opened.mirrors(series) if m.role == "origin"]
        if not origins:
            raise NotFoundError("this archive mirrors no series" + (f" {series}" if series else "") + " (pdi mirror add)")
        if announce_as is not None:
            from pdi.archive.signing_key import key_path, load_key
            from pdi.network.mirror_access import describe_source, read_token

            given = (Path(token_file).read_text(encoding="utf-8") if token_file
                     else os.environ.get("PDI_ORIGIN_TOKEN", "")).strip()
            if not given and any(record.token_source is None for record in origins):
                raise click.UsageError("--announce needs the origin's token: --token-file FILE or $PDI_ORIGIN_TOKEN"
                                       " (or the one recorded by pdi mirror add --token-file)")
            public = load_key(key_path(opened.location, key_file)).public
            for record in origins:
                # the token given, else the one this origin is read with (a token of role mirror reads too)
                token = given or read_token(str(record.token_source))
                sent = (f"the one in {token_file}" if token_file else "the one in $PDI_ORIGIN_TOKEN" if given else
                        f"the one pdi mirror add recorded to read {record.series} with (from"
                        f" {describe_source(str(record.token_source))})")
                new = announce(record, announce_as, [public], token, sent)
                click.echo(f"announced\t{record.series}\tto {shown_url(record.base_url)}\t{'new' if new else 'known already'}")
        for record in origins:
            # each problem told as it is found, never all held: an origin may list ten million names
            with _few_collections():
                report = sync(opened, record, max_seconds=max_seconds, tell=_tell_problem, retry_parses=retry_parses)
            problems += len(report.problems)
            click.echo(f"{record.series}\tfrom {shown_url(record.base_url)}: {plural(report.listed, 'name')} listed,"
                       f" {report.copied} new ({plural(report.octets, 'octet')}), {report.held} held already,"
                       f" {report.withdrawn} withdrawn ({report.tombstoned} withdrawn here now),"
                       f" {len(report.withheld)} not copied (withdrawn here),"
                       f" {plural(report.access_changes, 'access rule')} changed,"
                       f" {plural(len(report.problems), 'problem')}")
            if report.put_off:
                click.echo(f"{record.series}\t{plural(report.put_off, 'SGML parse')} refused lately not tried again"
                           " yet (pdi mirror sync --retry-parses tries now)")
            if report.hidden or report.shown_again:
                click.echo(f"{record.series}\tread from {shown_url(record.base_url)} as anyone:"
                           f" {plural(report.hidden, 'name')} held here that it no longer lists withheld from readers"
                           f" without access (until it lists them again), {report.shown_again} listed again shown"
                           " again")
            if record.token_source is None:
                click.echo(f"{record.series}\tread from {shown_url(record.base_url)} as anyone: names private or under embargo"
                           " there are not listed to this archive (pdi mirror add BASE_URL --series S --token-file"
                           " FILE)", err=True)
    if problems:
        raise IntegrityError(f"sync refused {plural(problems, 'name')} (not kept; the others were)")


@mirror_group.command("audit")
@click.option("--series", "-s", "series", metavar="S", help="Only this series (default: every series with peers).")
@archive_option
def mirror_audit(series: str | None, archive: str) -> None:
    """Compare this archive's digests with every origin's and peer's signed manifest (LOCKSS-style); each
    name they disagree on prints with who holds which digest; exit 3 on any. One read without a token is not
    compared on names private or under embargo here, which it lists to no one (said on standard error); an
    origin read so that does not list a name shown here shows it to no one: `hidden` there, a disagreement."""
    from pdi.network.polls import audit

    found = 0
    with open_archive(archive) as opened:
        names = sorted({m.series for m in opened.mirrors(series)})
        if not names:
            raise NotFoundError("no origin nor peer is recorded" + (f" for {series}" if series else "") + " (pdi mirror add)")
        peers = {(m.series, m.base_url) for m in opened.mirrors(series) if m.role == "peer"}
        for name in names:
            report = audit(opened, name, _tell_disagreement)
            for where, why in report.unreachable:
                click.echo(f"unreachable\t{clipped(shown_url(where), NAME_MOST)}\t{clipped(why, MESSAGE_MOST)}")
            found += report.disagreed + len(report.unreachable)
            reached = len(report.peers) - len(report.unreachable)
            missed = f" ({len(report.unreachable)} unreachable)" if report.unreachable else ""
            if reached:
                click.echo(f"{name}\t{plural(report.names, 'name')} compared with {plural(reached, 'peer')}{missed}:"
                           f" {plural(report.disagreed, 'disagreement')}")
            else:  # the names held here alone: nothing was compared
                click.echo(f"{name}\tno peer reached{missed}: nothing compared")
            for where, count in report.unlisted.items():  # not disagreements: it may withhold them as this does
                shown = clipped(shown_url(where), NAME_MOST)
                peer = " --peer" if (report.series, where) in peers else ""
                click.echo(f"{name}\tread from {shown} as anyone: {plural(count, 'name')} private or under embargo"
                           f" here not listed to this archive, not compared (pdi mirror add {shown} --series"
                           f" {name}{peer} --token-file FILE, a token of that archive, compares them)", err=True)
            for where, count in report.hidden.items():  # disagreements: told why they are likely to be
                shown = clipped(shown_url(where), NAME_MOST)
                click.echo(f"{name}\tread from {shown} as anyone: {plural(count, 'name')} shown here to anyone"
                           " that it lists to no one (hidden: embargoed or made private there since copied here;"
                           " the next pdi mirror sync withholds them here)", err=True)
    if found:
        raise IntegrityError(f"the audit found {plural(found, 'disagreement or unreachable peer', 'disagreements or unreachable peers')}")


@contextlib.contextmanager
def _few_collections() -> Iterator[None]:
    """While a sync runs: the objects made before it (modules, the archive's) out of the cyclic collector's sight
    (:func:`gc.freeze`), and a young collection every 50,000 new objects, not 700. A sync makes many objects that
    live a while (each manifest page's entries, each batch's records), and each collection holds the GIL, stopping
    every thread fetching and writing: a sync of 10,000 names made about 380 collections, 0.5 s of its time
    under load (docs/benchmarks.md, Mirrors). Put back as it was after, for a process that goes on."""
    threshold = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(50_000, *threshold[1:])
    try:
        yield
    finally:
        gc.set_threshold(*threshold)
        gc.unfreeze()


def _tell_problem(problem: Problem) -> None:
    """One line a name a sync refused (or could not follow), as it is found."""
    for name in problem.names:  # a stranger's words: their control characters shown, never sent on
        click.echo(f"{problem.kind}\t{clipped(name, NAME_MOST)}\t{clipped(problem.detail, MESSAGE_MOST)}")


def _tell_disagreement(disagreement: Disagreement) -> None:
    """One line of a name the audit found held differently: who holds which digest."""
    held = "; ".join(f"{who}={digest}" for who, digest in disagreement.holders.items())
    click.echo(f"disagree\t{clipped(disagreement.name, NAME_MOST)}\t{clipped(held, MESSAGE_MOST)}")


def register(cli: click.Group) -> None:
    """Add ``mirror`` to the top-level ``pdi`` group."""
    cli.add_command(mirror_group)
