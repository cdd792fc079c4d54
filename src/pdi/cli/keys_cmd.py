"""`pdi keys init|show` (the archive's Ed25519 signing key, and with --wacz its ECDSA P-384 WACZ key) and `pdi manifest` (a series' names and digests, signed).

Thin: where the key is kept is :mod:`pdi.archive.signing_key`, what a
manifest lists :meth:`pdi.archive.Archive.manifest_page`, the JWS
:mod:`pdi.signing`. The private key is never printed.
"""

from __future__ import annotations

import datetime
import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import click

from pdi.cli.archive_cmd import archive_option
from pdi.cli.archive_io import open_archive, write_out

F = TypeVar("F", bound=Callable[..., Any])

#: ``--key-file PATH`` of ``pdi keys``: the private key's file (the WACZ key's with ``--wacz``); falls back to
#: ``$PDI_SIGNING_KEY`` (``$PDI_WACZ_KEY``), then the archive's directory.
key_file_option: Callable[[F], F] = click.option(
    "--key-file", "key_file", metavar="PATH",
    help="The private key's file (PKCS#8 PEM) [env PDI_SIGNING_KEY, with --wacz PDI_WACZ_KEY; default:"
         " signing-key.pem, with --wacz wacz-key.pem, in the archive's directory; a postgresql:// archive must"
         " name one].",
)
#: ``--key-file PATH`` of a command that signs with the Ed25519 key alone (``pdi manifest``).
signing_key_file_option: Callable[[F], F] = click.option(
    "--key-file", "key_file", metavar="PATH",
    help="The signing key's file (PKCS#8 PEM) [env PDI_SIGNING_KEY; default: signing-key.pem in the archive's"
         " directory; a postgresql:// archive must name one].",
)
#: ``--wacz``: the WACZ key (ECDSA P-384, what the WACZ signing specification and ReplayWeb.page accept).
wacz_option: Callable[[F], F] = click.option(
    "--wacz", "wacz", is_flag=True,
    help="The key that signs WACZ exports (ECDSA P-384, as the WACZ signing specification asks) instead.",
)


@click.group("keys")
def keys_group() -> None:
    """The archive's signing keys, Ed25519 for manifests and ECDSA P-384 for WACZ exports: made once, shown."""


@keys_group.command("init")
@wacz_option
@key_file_option
@archive_option
def keys_init(wacz: bool, key_file: str | None, archive: str) -> None:
    """Make the archive's signing key (Ed25519) and print its public JWK; never over an existing key.

    The private key is written as PKCS#8 PEM, mode 0600, to signing-key.pem
    in the archive's directory, or to --key-file / $PDI_SIGNING_KEY (which a
    PostgreSQL archive needs: it has no directory). It signs the manifests
    the resolver serves at /api/manifest and `pdi manifest` writes; keep a
    copy somewhere safe, as a lost key cannot be made again.

    With --wacz, the archive's WACZ key is made instead (ECDSA P-384; the WACZ
    signing specification's signatures are ECDSA, not Ed25519): wacz-key.pem,
    or --key-file / $PDI_WACZ_KEY; `pdi export --wacz` then signs with it.
    Its public key (base64 SubjectPublicKeyInfo, as a signed WACZ carries it)
    is printed.
    """
    from pdi.archive import refuse_writing_in
    from pdi.archive.signing_key import create_key, create_wacz_key, key_path, wacz_key_path
    from pdi.wacz_signing import public_key_id

    if wacz:
        with open_archive(archive) as opened:
            path = wacz_key_path(opened.location, key_file)
        refuse_writing_in(archive, path)  # a member of the archive's group, or read-only media: said first
        made = create_wacz_key(path)
        click.echo(made.public)
        click.echo(f"WACZ key {public_key_id(made.public)} written to {path} (mode 0600); keep a copy safe", err=True)
        return
    with open_archive(archive) as opened:
        path = key_path(opened.location, key_file)
    refuse_writing_in(archive, path)
    key = create_key(path)
    click.echo(json.dumps(key.public.jwk()))
    click.echo(f"signing key {key.public.thumbprint} written to {path} (mode 0600); keep a copy safe", err=True)


@keys_group.command("show")
@click.option("--jwks", is_flag=True, help="Print the JWK set (RFC 7517 §5) the resolver serves at /api/keys.")
@wacz_option
@key_file_option
@archive_option
def keys_show(jwks: bool, wacz: bool, key_file: str | None, archive: str) -> None:
    """Print the public key: its JWK (RFC 8037), then x (the raw key, base64url) and kid (RFC 7638 thumbprint).

    With --wacz: the WACZ key's public key, base64 of its SubjectPublicKeyInfo
    (the "publicKey" of a signed WACZ's datapackage-digest.json), and its id.
    """
    from pdi.archive.signing_key import key_path, load_key, load_wacz_key, wacz_key_path
    from pdi.signing import jwk_set
    from pdi.wacz_signing import public_key_id

    if wacz:
        if jwks:
            raise click.UsageError("--jwks is for the Ed25519 key; the WACZ key is not a JOSE key pdi serves")
        with open_archive(archive) as opened:
            wacz_key = load_wacz_key(wacz_key_path(opened.location, key_file))
        click.echo(wacz_key.public)
        click.echo(f"id\t{public_key_id(wacz_key.public)}")
        return
    with open_archive(archive) as opened:
        key = load_key(key_path(opened.location, key_file))
    if jwks:
        click.echo(json.dumps(jwk_set([key.public])))
        return
    click.echo(json.dumps(key.public.jwk()))
    click.echo(f"x\t{key.public.x}")
    click.echo(f"kid\t{key.public.thumbprint}")


@click.command("manifest")
@click.option("--series", "-s", required=True, metavar="S", help="The series.")
@click.option("--day", "-d", metavar="YYYY-MM-DD", help="Only the names minted on this GMT day (default: every day).")
@click.option("--after", metavar="PDI", help="Start after this versioned name (the previous page's \"next\").")
@click.option("--limit", default=1000, show_default=True, type=click.IntRange(1, 10_000),
              help="Names a page lists at most.")
@click.option("--all", "every_page", is_flag=True, help="Every page, one JWS a line (else the first page only).")
@click.option("--output", "-o", metavar="FILE", help="Write to FILE (whole, or not at all) instead of standard output.")
@click.option("--tsa", metavar="URL",
              help="Also have FILE's SHA-256 stamped by this RFC 3161 time-stamping authority; its answer is"
                   " written to FILE.tsr (needs --output).")
@signing_key_file_option
@archive_option
def manifest_cmd(series: str, day: str | None, after: str | None, limit: int, every_page: bool,
                 output: str | None, tsa: str | None, key_file: str | None, archive: str) -> None:
    """Write the signed manifest of a series (a day of it, or every day): a compact JWS (RFC 7515, EdDSA).

    Its payload (JSON) lists each versioned name with its format, version,
    sha256 and size (a withdrawn one: when, and no digest), and "next",
    the cursor of the following page (null on the last). The same JWS as
    GET /api/manifest?series=S&day=D; `pdi verify --signatures FILE` checks it.
    With --tsa, a trusted timestamp (RFC 3161) of the file is kept beside it.
    A FILE.tsr of the file it replaces is removed (and said, unless --tsa
    writes a new one): one of these very octets is kept. A manifest that
    lists no names (a day none was minted on) is signed all the same, and
    said on standard error.
    """
    from pdi.archive.signing_key import key_path, load_key
    from pdi.signing import manifest_payload, sign_manifest

    when = _day(day)
    if tsa is not None and (output in (None, "-") or not _plain_or_new(output)):
        raise click.UsageError("--tsa stamps a file: give --output FILE, a file (the timestamp goes to FILE.tsr;"
                               " a pipe or a device cannot be read back to be stamped)")
    if output not in (None, "-"):  # a FILE inside an archive this user may only read: said before the key is read
        from pdi.archive import refuse_writing_in

        refuse_writing_in(archive, output)
    with open_archive(archive) as opened:
        key = load_key(key_path(opened.location, key_file))

        listed = [0]

        def pages() -> Iterator[bytes]:
            cursor = after
            while True:
                page = opened.manifest_page(series, day=when, after=cursor, limit=limit)
                listed[0] += len(page.entries)
                payload = manifest_payload(page.series, page.day, list(page.entries), after=page.after,
                                           next_after=page.next, access=page.access,
                                           rules=page.rules)
                yield (sign_manifest(key, payload) + "\n").encode("ascii")
                if not every_page or page.next is None:
                    return
                cursor = page.next

        if output in (None, "-") or not _plain_or_new(output):  # standard output, a descriptor, a device
            write_out(pages(), output)
            removed = None
        else:
            removed = _write_manifest(Path(output), pages(), output)
    if not listed[0] and after is None:  # signed all the same (a day with no names is a fact); said, as a typo may be
        minted = f" minted on {day}" if day else ""
        click.echo(f"pdi: the manifest lists no names: {series} holds none{minted} (pdi ls --series {series} lists"
                   " those it holds)", err=True)
    stamped = False
    try:
        if tsa is not None:
            assert output is not None
            _stamp(Path(output), tsa)
            stamped = True
    finally:
        if removed is not None and not stamped:  # no --tsa, or the TSA failed: the file is kept unstamped
            click.echo(f"removed {removed}: it is not a timestamp of the new {output} (pdi manifest --tsa URL stamps"
                       " it)", err=True)


def _plain_or_new(output: str | None) -> bool:
    """Whether ``output`` is a regular file or nothing yet (no device, pipe or descriptor of this process)."""
    from pdi._files import descriptor_of, written_in_place

    return output is not None and descriptor_of(output) is None and not written_in_place(output)


def _write_manifest(path: Path, pages: Iterator[bytes], shown: str) -> Path | None:
    """Write the manifest file ``path`` whole (:func:`pdi._files.written_whole`); the timestamp beside it
    (``FILE.tsr``, of the file it replaces) is removed just before the new file takes its name, unless it is a
    timestamp of the new file's very octets (a manifest made again with nothing changed), so that no reader finds
    the file with a timestamp of another (found by a tester, 2026-11-30: made again without --tsa, the manifest failed its check).
    The timestamp removed, if one was."""
    from pdi._files import written_whole
    from pdi.errors import StoreError
    from pdi.timestamping import TSR_SUFFIX

    stamp = path.with_name(path.name + TSR_SUFFIX)
    with written_whole(path, shown) as partial:
        with partial.open("wb") as f:
            for piece in pages:
                f.write(piece)
        if not stamp.is_file() or _stamps(stamp, partial):
            return None
        try:
            stamp.unlink()
        except OSError as exc:
            raise StoreError(f"cannot remove {stamp}, which is not a timestamp of the new {shown}:"
                             f" {exc.strerror or exc}; {shown} was left as it was: make its folder writable (or"
                             " remove the file), then run it again") from exc
        return stamp


def _stamps(stamp: Path, data: Path) -> bool:
    """Whether the file ``stamp`` is an RFC 3161 timestamp of the octets of ``data`` (one that cannot be read is
    not)."""
    from pdi.errors import PDIError
    from pdi.rfc3161 import MAX_RESPONSE, read_response

    try:
        with stamp.open("rb") as f:
            read_response(f.read(MAX_RESPONSE + 1)).check(data.read_bytes())
    except (OSError, PDIError):
        return False
    return True


def _stamp(path: Path, tsa: str) -> None:
    """Have ``path`` stamped by the TSA ``tsa`` and write its answer to ``path.tsr``; say when it stamped it."""
    from pdi._files import written_whole
    from pdi.timestamping import TSR_SUFFIX, request_timestamp

    response, stamp = request_timestamp(tsa, path.read_bytes())
    target = path.with_name(path.name + TSR_SUFFIX)
    with written_whole(target, str(target)) as partial:
        partial.write_bytes(response)
    click.echo(f"timestamped {stamp.iso} by {tsa}: {target}", err=True)


def _day(text: str | None) -> datetime.date | None:
    if text is None:
        return None
    try:
        if not re.fullmatch(r"[0-9]{4}-[0-9]{2}-[0-9]{2}", text):  # (fromisoformat reads 2024-W01-1, 20240101 too)
            raise ValueError(text)
        return datetime.date.fromisoformat(text)
    except ValueError as exc:
        raise click.BadParameter(f"{text!r} is not a day (YYYY-MM-DD)", param_hint="--day") from exc


def register(cli: click.Group) -> None:
    """Add ``keys`` and ``manifest`` to the top-level ``pdi`` group."""
    for command in (keys_group, manifest_cmd):
        cli.add_command(command)
