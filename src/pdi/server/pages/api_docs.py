"""The OpenAPI 3.1 description of the resolver's machine routes, made from the app's own route table.

:func:`openapi` walks the Starlette app's routes: every route under
``/api/`` or ``/uri-res/`` and each method it takes becomes an operation.
What a handler's signature cannot say (its parameters, its body, its
answers, the role it needs) is declared once, beside the route's path, in
:data:`~pdi.server.pages.api_operations.OPERATIONS`; a route with no entry there is still described, from its
handler's docstring, and a test fails until it has one. So the description
can list no route the app lacks and cannot miss one it has.

The description is meant to be exact, not merely valid: each parameter's
schema takes what the server takes (its limits included; an optional one
empty is absent, as the server reads it), each answer has its media type,
schema and header fields, and every error status a route can give is
described as an RFC 9457 problem. A value whose grammar JSON Schema cannot
hold names a custom format (:data:`~pdi.server.pages.api_operations.FORMATS`);
the catalogue is :mod:`pdi.server.pages.api_operations`. tests/server/
test_server_schemathesis.py holds a running ``pdi serve`` to it with
schemathesis, an independent tester.

``/openapi.json`` serves the document; ``/api`` renders it as a page
(:func:`render_docs`) for people, without JavaScript.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Collection
from typing import Any

from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import BaseRoute, Route

from pdi import __version__
from pdi.server.http.cors import ALLOWED_HEADERS, EXPOSED, MAX_AGE, CrossOrigin
from pdi.server.http.site import site
from pdi.server.pages.api_operations import (
    BUSY,
    ERROR_HEADERS,
    ERRORS,
    FORMATS,
    OPERATIONS,
    PROBLEM,
    Operation,
    Param,
)
from pdi.server.pages.layout import esc, page

#: What some problem types of pdi's (RFC 9457 §3.1.1) say beyond their class's description (:func:`problem_types`).
PROBLEM_TYPES: dict[str, str] = {
    "problem-passage-orphaned": "GET /api/anchor: the cited passage is not in the version asked for: not unchanged,"
    " its quote not found with its context, nothing similar enough. Extension members: cited, version, quote, notes."
    " (pdi anchor: exit status 12.)",
    "problem-passage-ambiguous": "GET /api/anchor: the cited passage stands in several places of that version and"
    " none fits the citation better; it is refused rather than guessed. Extension members: cited, version, quote,"
    " candidates (the places' names). (pdi anchor: exit status 13.)",
}

#: The problem types of the resolver's own that no class of :mod:`pdi.errors` answers: id -> title, status, meaning.
OTHER_PROBLEM_TYPES: dict[str, tuple[str, int, str]] = {
    "problem-not-ready": ("not ready", 503, "GET /readyz: the catalog or the blob store did not answer within 2 s."
                          " Extension member: failed, the parts that failed (catalog, blobs)."),
    "problem-mementos-withdrawn": ("every memento withdrawn", 410, "GET /timegate/…, /timemap/link/…: the archive"
                                   " held mementos of this original resource (captures of the URL, versions of the"
                                   " document) and every one of them was withdrawn; their tombstones are at their"
                                   " own names. Extension member: withdrawn, how many mementos were."),
}


def problem_types() -> dict[str, tuple[str, int, str]]:
    """Every problem type the resolver answers besides ``about:blank``: its id on the ``/api`` page (the type's
    fragment) -> its title, its status and what it means, from the classes of :mod:`pdi.errors` (their
    ``problem_type``, ``title``, ``http_status`` and docstring) and :data:`PROBLEM_TYPES`."""
    from pdi.errors import PDIError

    found: dict[str, tuple[str, int, str]] = {}
    classes: list[type[PDIError]] = [PDIError]
    while classes:
        cls = classes.pop(0)
        classes.extend(cls.__subclasses__())
        key = cls.problem_type.partition("#")[2]
        if not key or key in found:
            continue
        said = PROBLEM_TYPES.get(key) or " ".join((cls.__doc__ or "").split("\n\n")[0].replace("``", "").split())
        if cls.http_status in (413, 415):
            said += f" ({cls.http_status} where the request sent content; 400 where it sent none.)"
        found[key] = (cls.title, cls.http_status, said)
    return {**found, **OTHER_PROBLEM_TYPES}


#: Where the machine routes are: each one under these is described.
MACHINE_PREFIXES = ("/api/", "/uri-res/", "/timegate/", "/timemap/", "/oai", "/healthz", "/readyz", "/metrics")


def _documented(route: BaseRoute) -> bool:
    return isinstance(route, Route) and route.path.startswith(MACHINE_PREFIXES)


def openapi_path(path: str) -> str:
    """A route's path as an OpenAPI path template: ``{target:path}`` is ``{target}``."""
    return re.sub(r"\{(\w+):\w+\}", r"{\1}", path)


def operations(routes: list[BaseRoute]) -> list[tuple[str, str, Operation, Any]]:
    """Each documented route's ``(method, path, operation, handler)``, in the app's order."""
    found = []
    for route in routes:
        if not _documented(route):
            continue
        assert isinstance(route, Route)
        for method in sorted(route.methods or {"GET"}):
            if method == "HEAD":
                continue
            path = openapi_path(route.path)
            known = OPERATIONS.get((method, path))
            if known is None:  # undocumented: its docstring at least (a test asks for an entry)
                doc = inspect.getdoc(route.endpoint) or path
                known = Operation(doc.splitlines()[0])
            found.append((method, path, known, route.endpoint))
    return found


def _parameter(p: Param) -> dict[str, Any]:
    entry: dict[str, Any] = {"name": p.name, "in": p.where, "required": p.required or p.where == "path",
                             "description": p.description, "schema": p.schema, **p.style}
    if p.examples:
        entry["examples"] = {f"example{i}": {"value": value} for i, value in enumerate(p.examples, 1)}
    return entry


def _responses(op: Operation) -> dict[str, Any]:
    """Each answer of ``op``: its successes with their media types, and each error as a problem."""
    answers: dict[int, dict[str, Any]] = {}
    for status, answer in op.answers.items():
        answers[status] = {"description": answer.description}
        if answer.media_type is not None:
            answers[status]["content"] = {answer.media_type: {"schema": answer.schema}}
        if answer.headers:
            answers[status]["headers"] = _headers(answer.headers)
    errors = (*op.errors, 408) if op.body is not None and 408 not in op.errors else op.errors
    for status in errors:
        answers[status] = {"description": op.error_text.get(status, ERRORS[status]),
                           "content": BUSY if status == 503 else PROBLEM}
        if status in ERROR_HEADERS:
            answers[status]["headers"] = _headers(ERROR_HEADERS[status])
    return {str(status): answers[status] for status in sorted(answers)}


def _headers(fields: dict[str, tuple[str, bool]]) -> dict[str, Any]:
    return {name: {"description": text, "required": required, "schema": {"type": "string", "minLength": 1}}
            for name, (text, required) in fields.items()}


def _cors_headers(policy: CrossOrigin) -> dict[str, Any]:
    """The CORS fields every answer of a read route carries under ``policy`` (:mod:`pdi.server.http.cors`), as an
    answer's ``headers``: never required, a request from an origin not listed gets none."""
    if policy.origins is None:
        allow = "*: a script of any origin may read this answer (Fetch standard, CORS protocol)."
    else:
        allow = ("The request's Origin, when it is one of the origins the resolver is configured with (pdi serve"
                 " --cors-origin); absent for any other. Such answers also say Vary: Origin.")
    fields = {"Access-Control-Allow-Origin": (allow, False),
              "Access-Control-Expose-Headers": (f"The fields a script may read beyond the safelisted ones: {EXPOSED}.",
                                                False)}
    return _headers(fields)


def _cors_said(policy: CrossOrigin) -> str:
    """What the description says of CORS under ``policy`` (the read routes: ``x-pdi-cors``)."""
    if not policy.on:
        return (" Scripts of other origins are given no answer: this resolver sends no CORS fields (pdi serve"
                " --cors-origin none).")
    whom = "any origin" if policy.origins is None else "the origins it is configured with (" + ", ".join(
        sorted(policy.origins)) + ")"
    return (f" The read routes (those marked x-pdi-cors: true) let a script of {whom} read every answer, a"
            " redirect's and a refusal's too, with the CORS protocol of the Fetch standard:"
            " Access-Control-Allow-Origin and Access-Control-Expose-Headers on each answer; a preflight (OPTIONS"
            " with Origin and Access-Control-Request-Method asking a method the route takes) is 204 with"
            f" Access-Control-Allow-Methods, Access-Control-Allow-Headers ({ALLOWED_HEADERS}) and"
            f" Access-Control-Max-Age ({MAX_AGE}). No answer says Access-Control-Allow-Credentials: a script"
            " reading with cookies is given nothing. The other routes (the write API) send no CORS field.")


def openapi(routes: list[BaseRoute], readable: Collection[BaseRoute] = (),
            cors: CrossOrigin | None = None) -> dict[str, Any]:
    """The OpenAPI 3.1 document of the app's machine routes; those of ``readable`` (the read routes,
    :class:`~pdi.server.http.cors.CrossOriginReads`) say the CORS fields ``cors`` (default: any origin) sends."""
    policy = cors if cors is not None else CrossOrigin()
    read = {(openapi_path(route.path), method) for route in readable if isinstance(route, Route)
            for method in route.methods or ()}
    cors_headers = _cors_headers(policy)
    paths: dict[str, dict[str, Any]] = {}
    for method, path, op, handler in operations(routes):
        entry: dict[str, Any] = {
            "operationId": f"{method.lower()}_{path.strip('/').replace('/', '_').replace('{', '').replace('}', '')}",
            "summary": op.summary,
            "tags": [op.tag],
            "parameters": [_parameter(p) for p in op.params],
            "responses": _responses(op),
        }
        doc = inspect.getdoc(handler)
        if doc:
            entry["description"] = doc
        if op.body is not None:
            entry["requestBody"] = {"required": op.body.required, "description": op.body.description,
                                    "content": op.body.content}
        if op.role is not None:
            entry["security"] = [{"bearer": []}]
            entry["x-pdi-role"] = op.role
        if (path, method) in read and policy.on:
            entry["x-pdi-cors"] = True
            for answer in entry["responses"].values():
                answer["headers"] = {**answer.get("headers", {}), **cors_headers}
        paths.setdefault(path, {})[method.lower()] = entry
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "pdi resolver",
            "version": __version__,
            "description": "Persistent document identifiers: RFC 2169 resolution, a JSON read API, and a write"
                           " API behind bearer tokens (pdi token add). Reading needs no token, except the names of"
                           " a private series or under an embargo: a token of any role whose series cover them"
                           " reads them (without one: 403, or 404 for a hidden series). Each query parameter is"
                           " given once (twice: 400). OPTIONS of any path answers, as every 405 does, with Allow:"
                           " the methods the path takes. A string parameter whose"
                           " grammar is beyond JSON Schema names a custom format, each described on the /api page"
                           " (/api#formats) and in x-pdi-formats." + _cors_said(policy),
        },
        "paths": paths,
        "x-pdi-formats": FORMATS,
        "components": {
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer",
                                           "description": "A token made with pdi token add"}},
            "schemas": {"Problem": {  # RFC 9457 §3.1; pdi.server.http.problems writes each member, and extensions
                "type": "object",
                "required": ["type", "title", "status", "detail"],
                "properties": {"type": {"type": "string"}, "title": {"type": "string"},
                               "status": {"type": "integer", "minimum": 400, "maximum": 599},
                               "detail": {"type": "string"}},
            }},
        },
    }


#: How a passage's characters are counted, precisely: the reference the Cite panels' plain words link to
#: (:data:`pdi.server.pages.layout.COUNTING_LINK`); the rules of PDI-GRAMMAR.md §3, docs/email.md §2 and
#: docs/pdf-text-layer.md §1.
COUNTING = (
    '<section id="counting"><h2>How the characters of a passage are counted</h2>'
    "<p><code>#char=a,b</code> names the characters after the first <var>a</var> up to and including the"
    " <var>b</var>th (a half-open range [<var>a</var>, <var>b</var>) of positions from 0); <code>#char=a</code>"
    " names the place after the first <var>a</var>. A character is a Unicode code point. The text counted is:</p><ul>"
    "<li>a text (<code>text/*</code>, and the source of HTML and XML): its CRLF-canonical text, decoded in its"
    " charset, every line end (CR LF, LF, CR, NEL) written CR LF, and CR and LF each counted as one character;"
    " RFC 5147's other form of the name counts each line end as one;</li>"
    "<li>an e-mail message: its body text (its first <code>text/plain</code> part that is no attachment, else"
    " the text a reader sees of its first <code>text/html</code> one, a line a block), transfer encoding"
    " removed, decoded and CRLF-canonical as a text's; its header fields and its attachments are not"
    " counted;</li>"
    "<li>a PDF: the text layer PDFium made of it at deposit, page after page from page 1, each line break in it"
    " CR LF (two characters) and a form feed (FF, U+000C, one character) between one page and the next.</li>"
    "</ul></section>"
)


#: The /api page's own style: an operation's path in its heading breaks only after a ``/`` (:func:`operation_heading`),
#: a problem type's only before a ``-`` (:func:`problem_heading`): each piece whole.
_STYLE = "code.path span{white-space:nowrap}"


def operation_heading(method: str, path: str) -> str:
    """An operation as its heading writes it (``GET /uri-res/{service}``): its method, then its path breakable only
    after a ``/`` (a ``<wbr>`` between its pieces, each whole: ``/uri-res/`` | ``{service}``), never at a hyphen of
    its own (at 320 px it read ``/uri-`` above ``res/``, which a reader could take for a hyphenation or copy as
    two words). Nothing is put into the text: a copy of it is the method and the path as written."""
    pieces = re.split(r"(?<=/)(?=.)", path)
    if len(pieces) > 1 and pieces[0] == "/":  # the leading / kept with the first segment: never "GET /" alone
        pieces[:2] = [pieces[0] + pieces[1]]
    spans = "<wbr>".join(f"<span>{esc(piece)}</span>" for piece in pieces)
    return f'<code class="path"><span>{esc(method.upper())}</span> {spans}</code>'


def problem_heading(key: str) -> str:
    """A problem type as its heading writes it (``/api#problem-passage-orphaned``): breakable only before a ``-`` (a
    ``<wbr>`` between its pieces, each whole: ``/api#problem-passage`` | ``-orphaned``), so that no line ends in a
    hyphen (at 320 px it read ``/api#problem-passage-`` above ``orphaned``, a word hyphenated to a reader, who
    copies the type to match it). Nothing is put into the text: a copy of it is the type as written."""
    pieces = re.split(r"(?=-)", f"/api#{key}")
    return '<code class="path">' + "<wbr>".join(f"<span>{esc(piece)}</span>" for piece in pieces if piece) + "</code>"


def render_docs(document: dict[str, Any]) -> str:
    """The API described for people: each operation, its parameters, body, answers and the role it needs."""
    sections = []
    for path, methods in document["paths"].items():
        for method, op in methods.items():
            params = "".join(
                f"""<tr><td data-label="parameter"><code>{esc(p['name'])}</code></td><td data-label="in">{esc(p['in'])}</td>"""
                f"""<td data-label="required">{'yes' if p['required'] else 'no'}</td>"""
                f"""<td data-label="what">{esc(p['description'])}</td></tr>"""
                for p in op["parameters"]
            )
            table = (  # cards on a phone, as the catalogue's tables are (layout.STYLE)
                '<table class="cards"><thead><tr><th scope="col">parameter</th><th scope="col">in</th>'
                f'<th scope="col">required</th><th scope="col">what</th></tr></thead><tbody>{params}</tbody></table>'
                if params else ""
            )
            answers = "".join(
                f"<li><code>{esc(status)}</code> {esc(r['description'])}</li>" for status, r in op["responses"].items()
            )
            role = f'<p class="note">Needs a bearer token with the role <b>{esc(op["x-pdi-role"])}</b>.</p>' \
                if "x-pdi-role" in op else ""
            if op.get("x-pdi-cors"):
                role += '<p class="note">A script of another origin may read it (CORS: see above).</p>'
            body = f"<p>Body: {esc(op['requestBody']['description'])}</p>" if "requestBody" in op else ""
            sections.append(
                f'<section id="{esc(op["operationId"])}"><h2>{operation_heading(method, path)}</h2>'
                f"<p>{esc(op['summary'])}</p>{role}{table}{body}<details><summary>Answers</summary>"
                f"<ul>{answers}</ul></details></section>"
            )
    intro = (
        f"<h1>{esc(document['info']['title'])} API <small>{esc(document['info']['version'])}</small></h1>"
        f"<p>{esc(document['info']['description'])} The machine-readable description is "
        '<a href="/openapi.json"><code>/openapi.json</code></a> (OpenAPI 3.1). Errors are RFC 9457 problem'
        " details (<code>application/problem+json</code>).</p>"
    )
    problems = "".join(
        f'<section id="{esc(key)}"><h3>{problem_heading(key)}</h3><p>“{esc(title)}”, {status}: {esc(text)}</p>'
        "</section>"
        for key, (title, status, text) in problem_types().items()
    )
    problems_part = (
        "<h2>Problem types</h2><p>An error of pdi's own has one of these types (a relative reference, resolved"
        " against the request's URL) and its title; any other problem (an unknown path, a method a route has not,"
        " a busy resolver) is of type <code>about:blank</code>, titled with its status's phrase (RFC 9457"
        f" §4.2.1).</p>{problems}"
    )
    formats = "".join(f"<dt><code>{esc(name)}</code></dt><dd>{esc(text)}</dd>"
                      for name, text in document.get("x-pdi-formats", {}).items())
    formats_part = (
        '<section id="formats"><h2>Formats</h2><p>The custom <code>format</code> of a string parameter whose'
        " grammar is beyond JSON Schema; the server checks it, and answers 400 (a syntax error, or a name of the"
        f" wrong kind), 404 or 415 (content it does not take) with a problem.</p><dl>{formats}</dl></section>"
    )
    return page("pdi API", intro + COUNTING + "".join(sections) + formats_part + problems_part, style=_STYLE)


class APIDocs:
    """``/openapi.json`` and ``/api``: the description of :attr:`routes` (the app's), made on first request."""

    def __init__(self, readable: Collection[BaseRoute] = (), cors: CrossOrigin | None = None) -> None:
        self.routes: list[BaseRoute] = []
        #: The read routes a script of another origin may read, and who may (:mod:`pdi.server.http.cors`).
        self.readable = readable
        self.cors = cors
        self._document: dict[str, Any] | None = None

    def document(self) -> dict[str, Any]:
        """The OpenAPI document, made once."""
        if self._document is None:
            self._document = openapi(self.routes, self.readable, self.cors)
        return self._document

    async def json(self, request: Request) -> Response:
        """The OpenAPI 3.1 description of the machine routes; under the path of a base URL (``/pdi``), with that
        path as its one server: without ``servers`` the server is ``/`` (OpenAPI 3.1 §4.8.1), the host's root,
        where a client made from it would miss the resolver."""
        prefix = site.get()
        if prefix:
            return JSONResponse({**self.document(), "servers": [{"url": prefix}]})
        return JSONResponse(self.document())

    async def page(self, request: Request) -> Response:
        """The API described for people."""
        return HTMLResponse(render_docs(self.document()))

