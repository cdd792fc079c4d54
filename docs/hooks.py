"""MkDocs hooks: the reference pages written from the code itself, so the manual cannot drift from it.

A page holds a marker comment on a line of its own, and the build puts there:

- ``<!-- cli-reference -->``: every command and subcommand of ``pdi`` (the
  click group of :mod:`pdi.cli`, every command loaded), with its usage, its
  help and its options and arguments as ``pdi COMMAND --help`` prints them;
- ``<!-- http-api-reference -->``: every operation of the resolver's
  ``/openapi.json``, asked of the app in process (a throw-away archive);
- ``<!-- exit-codes-from-errors -->``: the classes of :mod:`pdi.errors` (and
  the commands' own), each with its exit status, HTTP status and title.

tests/test_docs_build.py builds the site and checks that each command and
each path is there.
"""

from __future__ import annotations

import functools
import html
import json
import re
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import click

CLI_MARKER = "<!-- cli-reference -->"
API_MARKER = "<!-- http-api-reference -->"
EXIT_MARKER = "<!-- exit-codes-from-errors -->"
#: the width click formats help at in these pages
WIDTH = 72


#: A note for a reader of the page in the repository (where the reference is not written), dropped from the site.
IN_REPOSITORY = re.compile(r"<!-- in-repository -->.*?<!-- /in-repository -->\n?", re.S)


def on_page_markdown(markdown: str, **_: Any) -> str:
    """Put the generated reference where a page's marker stands; drop what is for readers of the repository."""
    markdown = IN_REPOSITORY.sub("", markdown)
    if CLI_MARKER in markdown:
        markdown = markdown.replace(CLI_MARKER, cli_reference())
    if API_MARKER in markdown:
        markdown = markdown.replace(API_MARKER, api_reference())
    if EXIT_MARKER in markdown:
        markdown = markdown.replace(EXIT_MARKER, exit_reference())
    return markdown


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
def cli_reference() -> str:
    out: list[str] = []
    for path, command, ctx in commands():
        level = "#" * min(2 + path.count(" "), 4)
        out.append(f"{level} {path} {{ #{anchor(path)} }}\n")
        out.append("```text\n" + command.get_usage(ctx).rstrip() + "\n```\n")
        formatter = ctx.make_formatter()
        command.format_help_text(ctx, formatter)
        text = formatter.getvalue().rstrip()
        if text:
            out.append('<pre class="pdi-help">' + html.escape(_dedent(text)) + "</pre>\n")
        if isinstance(command, click.Group):
            subs = [(n, command.get_command(ctx, n)) for n in command.list_commands(ctx)]
            rows = [(f'<a href="#{anchor(f"{path} {n}")}"><code>{html.escape(f"{path} {n}")}</code></a>',
                     html.escape(sub.get_short_help_str(limit=200)))
                    for n, sub in subs if sub is not None and not sub.hidden]
            out.append(_table(("command", "what it does"), rows))
        params = command.get_params(ctx)
        arguments = [p for p in params if isinstance(p, click.Argument)]
        if arguments:
            args = [(f"<code>{html.escape(a.make_metavar(ctx))}</code>",
                     "yes" if a.required else "no",
                     "any number" if a.nargs == -1 else str(a.nargs)) for a in arguments]
            out.append(_table(("argument", "required", "how many"), args))
        options = [r for p in params if isinstance(p, click.Option) and (r := p.get_help_record(ctx))]
        if options:
            rows = [(f"<code>{html.escape(names)}</code>", html.escape(text)) for names, text in options]
            out.append(_table(("option", "what it does"), rows))
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
    """``/openapi.json`` as the app answers it, asked in process of an app over an empty archive."""
    from starlette.testclient import TestClient

    from pdi.archive import Archive
    from pdi.server import create_app

    with tempfile.TemporaryDirectory(prefix="pdi-docs-") as tmp:
        location = Path(tmp) / "archive"
        Archive.init(location).close()
        with TestClient(create_app(str(location))) as client:
            answer = client.get("/openapi.json")
        if answer.status_code != 200:
            raise RuntimeError(f"/openapi.json answered {answer.status_code}")
        document: dict[str, Any] = answer.json()
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
def api_reference() -> str:
    document = openapi_document()
    out = [f"Made from `/openapi.json` of pdi {html.escape(document['info'].get('version', ''))}"
           f" (OpenAPI {document['openapi']}): {len(document['paths'])} paths.\n"]
    for path, methods in document["paths"].items():
        out.append(f"## `{path}` {{ #{api_anchor('path', path)} }}\n")
        for method, op in methods.items():
            if not isinstance(op, dict) or "responses" not in op:
                continue
            out.append(f"### {method.upper()} `{path}` {{ #{api_anchor(method, path)} }}\n")
            if op.get("summary"):
                out.append(f"**{html.escape(op['summary'])}**\n")
            if op.get("description"):
                out.append('<pre class="pdi-help">' + html.escape(op["description"].strip()) + "</pre>\n")
            if op.get("security"):
                role = op.get("x-pdi-role")
                out.append("Needs a bearer token" + (f" with the role **{role}**" if role else "") + ".\n")
            params = op.get("parameters", [])
            if params:
                rows = [(f"<code>{html.escape(p['name'])}</code>", html.escape(p.get("in", "")),
                         "yes" if p.get("required") else "no", html.escape(_schema(p.get("schema"))),
                         html.escape(p.get("description", ""))) for p in params]
                out.append(_table(("parameter", "in", "required", "schema", "description"), rows))
            body = op.get("requestBody")
            if body:
                bodies = [(f"<code>{html.escape(media)}</code>", html.escape(_schema(spec.get("schema"))))
                          for media, spec in body.get("content", {}).items()]
                said = html.escape(body.get("description", ""))
                out.append("Request body" + (" (required)" if body.get("required") else "")
                           + (f": {said}" if said else "") + "\n")
                out.append(_table(("media type", "schema"), bodies))
            answers = []
            for status, answer in op["responses"].items():
                media = ", ".join(f"<code>{html.escape(m)}</code>" for m in answer.get("content", {}))
                headers = ", ".join(f"<code>{html.escape(h)}</code>" for h in answer.get("headers", {}))
                answers.append((str(status), html.escape(answer.get("description", "")), media, headers))
            out.append(_table(("status", "answer", "media types", "header fields"), answers))
    schemas = document.get("components", {}).get("schemas", {})
    if schemas:
        out.append("## Schemas { #schemas }\n")
        for name, schema in schemas.items():
            out.append(f"### {name} {{ #schema-{name.lower()} }}\n")
            out.append("```json\n" + json.dumps(schema, indent=2, ensure_ascii=False) + "\n```\n")
    return "\n".join(out)


# --- exit statuses ---------------------------------------------------------------------------


@functools.cache
def exit_reference() -> str:
    from pdi import errors
    from pdi.cli import load_all
    from pdi.cli.archive_cmd import PARTIAL_EXIT
    from pdi.cli.commands import EXIT_INTERRUPTED, EXIT_PAST_END, EXIT_USAGE

    load_all()  # every command's module: any error class one defines is a subclass by now
    found, todo = [], [errors.PDIError]
    while todo:
        cls = todo.pop()
        found.append(cls)
        todo.extend(cls.__subclasses__())
    rows = [(str(cls.exit_code), f"<code>{cls.__module__}.{cls.__name__}</code>", str(cls.http_status),
             html.escape(cls.title), html.escape((cls.__doc__ or "").strip().split("\n\n")[0]))
            for cls in sorted(found, key=lambda c: (c.exit_code, c.__module__, c.__name__))]
    own = [(str(EXIT_USAGE), "<code>pdi.cli.commands.EXIT_USAGE</code>", "", "(click's usage error)", ""),
           (str(EXIT_PAST_END), "<code>pdi.cli.commands.EXIT_PAST_END</code>", "416", "(a warning)", ""),
           (str(PARTIAL_EXIT), "<code>pdi.cli.archive_cmd.PARTIAL_EXIT</code>", "", "", ""),
           (str(EXIT_INTERRUPTED), "<code>pdi.cli.commands.EXIT_INTERRUPTED</code>", "", "interrupted", "")]
    rows = sorted([*rows, *own], key=lambda row: int(row[0]))
    return _table(("exit status", "class or constant", "HTTP status", "kind (title)", "what it is"), rows)
