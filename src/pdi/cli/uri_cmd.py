"""URI commands: `pdi uri parse|resolve|normalize` (issue 2)."""

from __future__ import annotations

import json

import click

from pdi import uri as uri_core
from pdi.cli.commands import one_line
from pdi.errors import ParseError

_IRI_OPTION = click.option(
    "--iri",
    is_flag=True,
    help="Map an IRI to a URI first: non-ASCII characters become %-encoded UTF-8, a web host IDNA's xn-- form "
    "(RFC 3987 §3.1).",
)


def _as_uri(text: str, iri: bool) -> str:
    """``text``, mapped from an IRI first with ``iri`` (RFC 3987 §3.1)."""
    return uri_core.iri_to_uri(text) if iri else text


def _said_of_iri(error: ParseError, iri: str) -> ParseError:
    """``error``, raised on the URI ``iri`` was mapped to, said of ``iri`` as typed: its offset that of the character
    (or of the host) whose %-escapes (or IDNA form) hold the offset."""
    if error.offset is None or iri.isascii() or error.text != uri_core.iri_to_uri(iri):
        return error
    shift = 0  # how much longer the URI is than the IRI, up to the change looked at
    for start, end, replacement in uri_core.iri_changes(iri):
        if error.offset < start + shift:
            break
        if error.offset < start + shift + len(replacement):
            return ParseError(error.reason, text=iri, offset=start, rule=error.rule)
        shift += len(replacement) - (end - start)
    return ParseError(error.reason, text=iri, offset=min(error.offset - shift, len(iri)), rule=error.rule)


@click.group("uri")
def uri_group() -> None:
    """Parse, resolve and normalize URIs (RFC 3986; RFC 2396 resolution as a mode)."""


@uri_group.command("parse")
@click.argument("text", metavar="URI")
@click.option("--json", "as_json", is_flag=True, help="Print the components as one JSON object.")
@click.option(
    "--lenient",
    is_flag=True,
    help="Split with the RFC 3986 Appendix B expression instead of checking the grammar.",
)
@_IRI_OPTION
def parse_command(text: str, as_json: bool, lenient: bool, iri: bool) -> None:
    """Print the components of URI (a URI reference, strict RFC 3986 grammar).

    Absent components print as null in JSON and as a dash otherwise; present
    but empty ones as "". Exit status 1 (syntax error) names the rule and the
    offset that broke it.
    """
    uri = _as_uri(text, iri)
    try:
        parsed = uri_core.split(uri) if lenient else uri_core.parse(uri)
    except ParseError as exc:
        raise _said_of_iri(exc, text) if iri else exc from None
    fields: dict[str, str | None] = {
        "scheme": parsed.scheme,
        "authority": parsed.authority,
        "userinfo": parsed.userinfo,
        "host": parsed.host,
        "host_type": parsed.host_type,
        "port": parsed.port,
        "path": parsed.path,
        "query": parsed.query,
        "fragment": parsed.fragment,
    }
    if as_json:
        click.echo(json.dumps(fields, ensure_ascii=False))
        return
    for name, value in fields.items():
        shown = "-" if value is None else one_line(json.dumps(value, ensure_ascii=False))  # JSON escapes C0 only
        click.echo(f"{name:<10} {shown}")


@uri_group.command("resolve")
@click.argument("base")
@click.argument("reference", metavar="REF")
@click.option(
    "--rfc",
    type=click.Choice(["3986", "2396"]),
    default="3986",
    show_default=True,
    help="Which RFC's §5.2 results to give.",
)
@click.option(
    "--non-strict",
    is_flag=True,
    help="Drop a scheme in REF that equals BASE's (the non-strict parser of RFC 3986 §5.2.2).",
)
def resolve_command(base: str, reference: str, rfc: str, non_strict: bool) -> None:
    """Resolve REF against the absolute URI BASE, for any scheme, and print the result."""
    click.echo(uri_core.resolve(base, reference, rfc=int(rfc), strict=not non_strict))


@uri_group.command("normalize")
@click.argument("text", metavar="URI")
@_IRI_OPTION
def normalize_command(text: str, iri: bool) -> None:
    """Print the RFC 3986 §6.2.2/§6.2.3 normal form of URI (used to compare URIs)."""
    try:
        normal = uri_core.normalize(_as_uri(text, iri))
    except ParseError as exc:
        raise _said_of_iri(exc, text) if iri else exc from None
    click.echo(normal)


def register(cli: click.Group) -> None:
    """Add this module's commands to the top-level ``pdi`` group."""
    cli.add_command(uri_group)
