"""The manual's reference pages written from the code itself, so that they cannot drift from it.

A page holds a marker comment on a line of its own, and :func:`fill` puts there:

- ``<!-- cli-reference -->``: every command and subcommand of ``pdi`` (the
  click group of :mod:`pdi.cli`, every command loaded), with its usage, its
  help and its options and arguments as ``pdi COMMAND --help`` prints them;
- ``<!-- http-api-reference -->``: every operation of the resolver's
  ``/openapi.json``, made by the app in process (a throw-away archive);
- ``<!-- exit-codes-from-errors -->``: the classes of :mod:`pdi.errors` (and
  the commands' own), each with its exit status, HTTP status and title.

Two forms of one text: the site's (``site=True``: Markdown with HTML tables and
anchors, which docs/hooks.py gives mkdocs when it builds the site) and plain text
(``pdi docs reference/cli``, ``reference/http-api``, ``reference/exit-codes``,
which print the pages whole). A note for a reader of the page in the repository
(where nothing is written in) is dropped from both.
"""

from __future__ import annotations

import functools
import html
import json
import re
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click

__all__ = [
    "API_MARKER",
    "CLI_MARKER",
    "EXIT_MARKER",
    "anchor",
    "api_anchor",
    "api_reference",
    "cli_reference",
    "commands",
    "exit_reference",
    "fill",
    "openapi_document",
]

CLI_MARKER = "<!-- cli-reference -->"
API_MARKER = "<!-- http-api-reference -->"
EXIT_MARKER = "<!-- exit-codes-from-errors -->"
#: the width click formats help at in these pages
WIDTH = 72

#: A note for a reader of the page in the repository (where the reference is not written), dropped.
IN_REPOSITORY = re.compile(r"<!-- in-repository -->.*?<!-- /in-repository -->\n?", re.S)


def fill(markdown: str, *, site: bool) -> str:
    """``markdown`` (a page of the manual) with the generated reference where its marker stands, in the site's form
    or as plain text, and without what is for readers of the repository."""
    markdown = IN_REPOSITORY.sub("", markdown)
    for marker, made in ((CLI_MARKER, cli_reference), (API_MARKER, api_reference), (EXIT_MARKER, exit_reference)):
        if marker in markdown:
            markdown = markdown.replace(marker, made(site=site))
    return markdown


@dataclass(frozen=True)
class _Form:
    """How the reference is written: the site's Markdown with HTML, or plain text."""

    site: bool

    def esc(self, text: str) -> str:
        return html.escape(text) if self.site else text

    def code(self, text: str) -> str:
        return f"<code>{html.escape(text)}</code>" if self.site else text

    def heading(self, level: int, text: str, anchor: str) -> str:
        return f"{'#' * level} {text}" + (f" {{ #{anchor} }}" if self.site else "") + "\n"

    def pre(self, text: str) -> str:
        if self.site:
            return '<pre class="pdi-help">' + html.escape(text) + "</pre>\n"
        return "```text\n" + text + "\n```\n"

    def link(self, anchor: str, text: str) -> str:
        return f'<a href="#{anchor}">{text}</a>' if self.site else text

    def table(self, header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
        if self.site:
            return _table(header, rows)
        # a row a list item: its first cell, then each other one that says something, named by its column
        lines = []
        for first, *rest in rows:
            said = "; ".join(cell if name in ("what it does", "description", "answer") else f"{name}: {cell}"
                             for name, cell in zip(header[1:], rest, strict=True) if cell)
            lines.append(f"- {first}" + (f": {said}" if said else ""))
        return "\n".join(lines) + "\n"


# --- the command line ------------------------------------------------------------------------


def commands() -> list[tuple[str, click.Command, click.Context]]:
    """Every command under ``pdi`` (groups too), depth first in the order ``--help`` lists them."""
    from pdi.cli import cli, load_all

    load_all()
    found: list[tuple[str, click.Command, click.Context]] = []

    def walk(command: click.Command, ctx: click.Context, path: str) -> None:
        found.append((path, command, ctx))
        if isinstance(command, click.Group):
            for name in command.list_commands(ctx):
                sub = command.get_command(ctx, name)
                if sub is not None and not sub.hidden:
                    walk(sub, context(sub, name, ctx), f"{path} {name}")

    walk(cli, context(cli, "pdi", None), "pdi")
    return found


def context(command: click.Command, name: str, parent: click.Context | None) -> click.Context:
    """The context ``pdi … NAME --help`` runs in: the command's own settings (``-h`` as ``--help``), our width."""
    settings = {**command.context_settings, "terminal_width": WIDTH, "max_content_width": WIDTH}
    return click.Context(command, info_name=name, parent=parent, **settings)


def anchor(path: str) -> str:
    """The id a command's heading gets (``pdi series add`` → ``pdi-series-add``)."""
    return path.replace(" ", "-")


@functools.cache
def cli_reference(*, site: bool = True) -> str:
    """Every command's usage, help, subcommands, arguments and options, in the site's form or as plain text."""
    form = _Form(site)
    out: list[str] = []
    for path, command, ctx in commands():
        out.append(form.heading(min(2 + path.count(" "), 4), path, anchor(path)))
        out.append("```text\n" + command.get_usage(ctx).rstrip() + "\n```\n")
        formatter = ctx.make_formatter()
        command.format_help_text(ctx, formatter)
        text = formatter.getvalue().rstrip()
        if text:
            out.append(form.pre(_dedent(text)))
        if isinstance(command, click.Group):
            subs = [(n, command.get_command(ctx, n)) for n in command.list_commands(ctx)]
            rows = [(form.link(anchor(f"{path} {n}"), form.code(f"{path} {n}")),
                     form.esc(sub.get_short_help_str(limit=200)))
                    for n, sub in subs if sub is not None and not sub.hidden]
            out.append(form.table(("command", "what it does"), rows))
        params = command.get_params(ctx)
        arguments = [p for p in params if isinstance(p, click.Argument)]
        if arguments:
            args = [(form.code(a.make_metavar(ctx)), "yes" if a.required else "no",
                     "any number" if a.nargs == -1 else str(a.nargs)) for a in arguments]
            out.append(form.table(("argument", "required", "how many"), args))
        options = [r for p in params if isinstance(p, click.Option) and (r := p.get_help_record(ctx))]
        if options:
            rows = [(form.code(names), form.esc(text)) for names, text in options]
            out.append(form.table(("option", "what it does"), rows))
    return "\n".join(out)


def _dedent(text: str) -> str:
    lines = text.split("\n")
    indent = min((len(line) - len(line.lstrip()) for line in lines if line.strip()), default=0)
    return "\n".join(line[indent:] for line in lines)


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    head = "".join(f"<th>{h}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{cell}</td>" for cell in row) + "</tr>" for row in rows)
    return f"<table>\n<thead><tr>{head}</tr></thead>\n<tbody>{body}</tbody>\n</table>\n"


# --- the HTTP API ----------------------------------------------------------------------------


@functools.cache
def openapi_document() -> dict[str, Any]:
    """The document ``/openapi.json`` answers, made by the app (``app.state.openapi``) over an empty archive."""
    from pdi.archive import Archive
    from pdi.server import create_app

    with tempfile.TemporaryDirectory(prefix="pdi-docs-") as tmp:
        location = Path(tmp) / "archive"
        Archive.init(location).close()
        app = create_app(str(location))
        try:
            document: dict[str, Any] = app.state.openapi()
        finally:
            app.state.archive.close()
    return document


def _schema(schema: dict[str, Any] | None) -> str:
    if not schema:
        return ""
    if "$ref" in schema:
        return str(schema["$ref"]).rsplit("/", 1)[-1]
    kind = schema.get("type", "")
    if isinstance(kind, list):
        kind = " or ".join(kind)
    if kind == "array":
        kind = f"array of {_schema(schema.get('items'))}"
    extra = [f"{key} {json.dumps(schema[key])}" for key in ("format", "enum", "const", "minimum", "maximum",
                                                             "maxLength", "pattern", "default")
             if key in schema]
    if "anyOf" in schema or "oneOf" in schema:
        kind = " or ".join(_schema(s) for s in schema.get("anyOf", schema.get("oneOf", [])))
    return " ".join([kind or "any", *(f"({e})" for e in extra)]).strip()


def api_anchor(method: str, path: str) -> str:
    slug = "".join(ch if ch.isalnum() else "-" for ch in path.lower()).strip("-")
    return f"{method.lower()}-{slug}"


@functools.cache
def api_reference(*, site: bool = True) -> str:
    """Every path and operation of ``/openapi.json``, then its schemas, in the site's form or as plain text."""
    form = _Form(site)
    document = openapi_document()
    out = [f"Made from `/openapi.json` of pdi {form.esc(document['info'].get('version', ''))}"
           f" (OpenAPI {document['openapi']}): {len(document['paths'])} paths.\n"]
    for path, methods in document["paths"].items():
        out.append(form.heading(2, f"`{path}`", api_anchor("path", path)))
        for method, op in methods.items():
            if not isinstance(op, dict) or "responses" not in op:
                continue
            out.append(form.heading(3, f"{method.upper()} `{path}`", api_anchor(method, path)))
            if op.get("summary"):
                out.append(f"**{form.esc(op['summary'])}**\n")
            if op.get("description"):
                out.append(form.pre(op["description"].strip()))
            if op.get("security"):
                role = op.get("x-pdi-role")
                out.append("Needs a bearer token" + (f" with the role **{role}**" if role else "") + ".\n")
            params = op.get("parameters", [])
            if params:
                rows = [(form.code(p["name"]), form.esc(p.get("in", "")), "yes" if p.get("required") else "no",
                         form.esc(_schema(p.get("schema"))), form.esc(p.get("description", ""))) for p in params]
                out.append(form.table(("parameter", "in", "required", "schema", "description"), rows))
            body = op.get("requestBody")
            if body:
                bodies = [(form.code(media), form.esc(_schema(spec.get("schema"))))
                          for media, spec in body.get("content", {}).items()]
                said = form.esc(body.get("description", ""))
                out.append("Request body" + (" (required)" if body.get("required") else "")
                           + (f": {said}" if said else "") + "\n")
                out.append(form.table(("media type", "schema"), bodies))
            answers = []
            for status, answer in op["responses"].items():
                media = ", ".join(form.code(m) for m in answer.get("content", {}))
                headers = ", ".join(form.code(h) for h in answer.get("headers", {}))
                answers.append((str(status), form.esc(answer.get("description", "")), media, headers))
            out.append(form.table(("status", "answer", "media types", "header fields"), answers))
    schemas = document.get("components", {}).get("schemas", {})
    if schemas:
        out.append(form.heading(2, "Schemas", "schemas"))
        for name, schema in schemas.items():
            out.append(form.heading(3, name, f"schema-{name.lower()}"))
            out.append("```json\n" + json.dumps(schema, indent=2, ensure_ascii=False) + "\n```\n")
    return "\n".join(out)


# --- exit statuses ---------------------------------------------------------------------------


@functools.cache
def exit_reference(*, site: bool = True) -> str:
    """Each exit status with its error class or constant, HTTP status, title and what it is."""
    from pdi import errors
    from pdi.cli import load_all
    from pdi.cli.archive_cmd import PARTIAL_EXIT
    from pdi.cli.commands import EXIT_INTERRUPTED, EXIT_PAST_END, EXIT_USAGE

    form = _Form(site)
    load_all()  # every command's module: any error class one defines is a subclass by now
    found, todo = [], [errors.PDIError]
    while todo:
        cls = todo.pop()
        found.append(cls)
        todo.extend(cls.__subclasses__())
    rows = [(str(cls.exit_code), form.code(f"{cls.__module__}.{cls.__name__}"), str(cls.http_status),
             form.esc(cls.title), form.esc((cls.__doc__ or "").strip().split("\n\n")[0]))
            for cls in sorted(found, key=lambda c: (c.exit_code, c.__module__, c.__name__))]
    own = [(str(EXIT_USAGE), form.code("pdi.cli.commands.EXIT_USAGE"), "", "(click's usage error)", ""),
           (str(EXIT_PAST_END), form.code("pdi.cli.commands.EXIT_PAST_END"), "416", "(a warning)", ""),
           (str(PARTIAL_EXIT), form.code("pdi.cli.archive_cmd.PARTIAL_EXIT"), "", "", ""),
           (str(EXIT_INTERRUPTED), form.code("pdi.cli.commands.EXIT_INTERRUPTED"), "", "interrupted", "")]
    rows = sorted([*rows, *own], key=lambda row: int(row[0]))
    return form.table(("exit status", "class or constant", "HTTP status", "kind (title)", "what it is"), rows)

