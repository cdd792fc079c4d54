"""`pdi registry add|remove|show|forget`: the archive's registry of series and their resolvers (:mod:`pdi.federation.registry`).

Kept unsigned in ``registry.json`` in the archive's directory (or the file
``--registry-file`` / ``$PDI_REGISTRY`` names); ``pdi serve`` signs it with
the archive's key and serves it at ``/.well-known/pdi-registry``. ``forget`` is of the
registries ``pdi serve --registry`` loads: the newest each was issued, recorded in the catalog
(:mod:`pdi.archive.registries`).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from pdi.cli.archive_cmd import archive_option

F = TypeVar("F", bound=Callable[..., Any])

registry_file_option: Callable[[F], F] = click.option(
    "--registry-file", "registry_file", metavar="PATH",
    help="The registry's file [env PDI_REGISTRY; default: registry.json in the archive's directory; a"
         " postgresql:// archive must name one].",
)


def _path(archive: str, given: str | None) -> Path:
    """The registry's file; one kept in the archive's directory only if there is an archive there (a mistyped
    --archive would otherwise read as an empty registry, and add would write one beside no archive)."""
    from pdi.cli.archive_io import open_archive
    from pdi.federation.registry import REGISTRY_ENV, registry_path

    path = registry_path(archive, given)
    if not (given or os.environ.get(REGISTRY_ENV)):
        with open_archive(archive):  # no archive there: refused, naming it and what to do (exit 4)
            pass
    return path


def _writable_path(archive: str, given: str | None) -> Path:
    """The registry's file, to be written: refused first (exit 8) when it is the archive's and this user may read
    the archive, not write it (a member of its group, read-only media)."""
    from pdi.archive import refuse_writing_in

    path = _path(archive, given)
    refuse_writing_in(archive, path)
    return path


@click.group("registry")
def registry_group() -> None:
    """The archive's registry: series and their resolvers, the authority first, then mirrors (add, remove, show);
    and forget, of the registries pdi serve --registry loads."""


@registry_group.command("add")
@click.argument("series")
@click.argument("base_url")
@click.option("--mirror", is_flag=True, help="BASE_URL mirrors SERIES (listed after the authority), rather than"
              " being its authority (listed first).")
@registry_file_option
@archive_option
def registry_add(series: str, base_url: str, mirror: bool, registry_file: str | None, archive: str) -> None:
    """Name BASE_URL (http or https, a pdi resolver) as the authority of SERIES, or with --mirror a mirror of it
    (in place of the same resolver spelt otherwise: 127.1 is 127.0.0.1, example.org. is example.org)."""
    from urllib.parse import urlsplit

    from pdi._addresses import browser_ipv4
    from pdi.federation.authorities import same_resolver
    from pdi.federation.registry import base_url as checked
    from pdi.federation.registry import read_registry_file, write_registry_file

    # a host that ends in a number is an IPv4 address, or a URL no browser follows (1.2.3.256): refused here
    browser_ipv4(urlsplit(checked(base_url)).hostname or "")
    path = _writable_path(archive, registry_file)
    registry = read_registry_file(path).with_resolver(series, base_url, mirror=mirror, same=same_resolver)
    write_registry_file(path, registry)
    click.echo(f"{series.lower()}\t" + "\t".join(registry.resolvers(series)))


@registry_group.command("remove")
@click.argument("series")
@click.argument("base_url", required=False)
@registry_file_option
@archive_option
def registry_remove(series: str, base_url: str | None, registry_file: str | None, archive: str) -> None:
    """Take BASE_URL (without it: every resolver) of SERIES off the registry; prints SERIES's resolvers left."""
    from pdi.federation.registry import read_registry_file, write_registry_file

    path = _writable_path(archive, registry_file)
    from pdi.federation.authorities import same_resolver

    registry = read_registry_file(path).without(series, base_url, same=same_resolver)
    write_registry_file(path, registry)
    left = registry.resolvers(series)
    if left:  # the series' line as it is now, as add prints it
        click.echo(f"{series.lower()}\t" + "\t".join(left))
    else:
        click.echo(f"{series.lower()} is off the registry: it lists no resolver of it now", err=True)


@registry_group.command("show")
@click.option("--jws", is_flag=True, help="Print it signed with the archive's key, as /.well-known/pdi-registry"
              " serves it (a compact JWS), to give to `pdi serve --registry FILE`.")
@click.option("--key-file", metavar="PATH", help="The signing key's file (as `pdi keys` reads it).")
@registry_file_option
@archive_option
def registry_show(jws: bool, key_file: str | None, registry_file: str | None, archive: str) -> None:
    """Print the registry: one line a series, its resolvers after it (the authority first); or --jws."""
    from pdi.federation.registry import read_registry_file, sign_registry

    registry = read_registry_file(_path(archive, registry_file))
    if jws:
        from pdi.archive.signing_key import key_path, load_key

        click.echo(sign_registry(load_key(key_path(archive, key_file)), registry))
        return
    if not registry.series:
        click.echo("pdi: the registry lists no series (pdi registry add SERIES BASE_URL)", err=True)
    for series, bases in sorted(registry.series.items()):
        click.echo(f"{series}\t" + "\t".join(bases))


@registry_group.command("forget")
@click.argument("source", metavar="FILE|URL")
@archive_option
def registry_forget(source: str, archive: str) -> None:
    """Forget the newest registry the archive recorded of FILE|URL (a pdi serve --registry), so that the next one
    loaded from it is taken however old: for an issuer who went back to an older registry on purpose.

    pdi serve records, in the archive, when the newest registry it loaded from each --registry was issued, and
    refuses one issued before it (a replay, which would point a series back at a resolver it has left), after a
    restart and in every worker and resolver sharing the archive. Stop those that load FILE|URL first: one still
    running refuses the older registry by what it holds, and records the newer again if it loads it. FILE|URL is
    named as pdi serve was given it (a file's path from any folder; a URL with or without its user and password).
    """
    from pdi._wording import shown_url
    from pdi.cli.archive_io import open_archive
    from pdi.federation.authorities import registry_source

    recorded = registry_source(source)
    with open_archive(archive) as opened:
        opened.refuse_if_read_only()
        issued = opened.forget_registry(recorded)
    click.echo(f"forgot\t{shown_url(source)}\t{issued}")
    click.echo(f"pdi: the next registry loaded from {shown_url(source)} is taken, issued before {issued} too, and"
               " recorded as its newest", err=True)


def register(cli: click.Group) -> None:
    """Add ``registry`` to the top-level ``pdi`` group."""
    cli.add_command(registry_group)
