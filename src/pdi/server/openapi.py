"""The OpenAPI 3.1 description of the resolver's machine routes, made from the app's own route table.

:func:`openapi` walks the Starlette app's routes: every route under
``/api/`` or ``/uri-res/`` and each method it takes becomes an operation.
What a handler's signature cannot say (its parameters, its body, its
answers, the role it needs) is declared once, beside the route's path, in
:data:`OPERATIONS`; a route with no entry there is still described, from its
handler's docstring, and a test fails until it has one. So the description
can list no route the app lacks and cannot miss one it has.

``/openapi.json`` serves the document; ``/api`` renders it as a page
(:func:`render_docs`) for people, without JavaScript.
"""

from __future__ import annotations

import inspect
import re
from dataclasses import dataclass, field
from typing import Any

from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import BaseRoute, Route

from pdi import __version__
from pdi.server.layout import esc, page

PROBLEM = {"application/problem+json": {"schema": {"$ref": "#/components/schemas/Problem"}}}


@dataclass(frozen=True)
class Param:
    """One parameter: its name, where it goes (``query``, ``header``, ``path``), whether required, what it is."""

    name: str
    description: str
    where: str = "query"
    required: bool = False
    schema: dict[str, Any] = field(default_factory=lambda: {"type": "string"})


@dataclass(frozen=True)
class Operation:
    """What a route does, beyond its path and method: summary, parameters, body, answers, and the role it needs."""

    summary: str
    params: tuple[Param, ...] = ()
    body: str | None = None  # a description of the request body; it is any media type
    answers: dict[int, str] = field(default_factory=dict)
    role: str | None = None  # the token role a write needs (pdi.archive.tokens.ROLES)
    tag: str = "read"


PDI_PARAM = Param("pdi", "A PDI (percent-encode all of it, as encodeURIComponent does).", required=True)
_IDEMPOTENCY = Param(
    "Idempotency-Key", "A retry with this key and the same request answers the first answer; another request: 422.",
    where="header",
)
_SERVICE = Param(
    "service", "An RFC 2169 service: N2R, I2R, N2L, N2Ls, N2C or N2Ns. The URN is the whole query string"
    " (a '#' written %23).", where="path", required=True,
    schema={"type": "string", "enum": ["N2R", "I2R", "N2L", "N2Ls", "N2C", "N2Ns"]},
)
_WRITTEN = {201: "Created: the names (application/json), Location the first name's N2R",
            200: "Nothing new stored: the same bytes as the latest version (unchanged), or a replayed answer"}

_OAI = Operation(
    "OAI-PMH 2.0: Dublin Core records of the catalog's documents, a set per series, for library harvesters",
    (Param("verb", "Identify, ListMetadataFormats, ListSets, ListIdentifiers, ListRecords or GetRecord", required=True),
     Param("metadataPrefix", "oai_dc"), Param("identifier", "A document's generic name (urn:pdi://…)"),
     Param("set", "A series"), Param("from", "A UTC datestamp, YYYY-MM-DD or YYYY-MM-DDThh:mm:ssZ"),
     Param("until", "A UTC datestamp, as from"), Param("resumptionToken", "The token of the page before")),
    answers={200: "text/xml: the OAI-PMH response, or its error element (badVerb, badArgument, badResumptionToken,"
                  " cannotDisseminateFormat, idDoesNotExist, noRecordsMatch, noSetHierarchy)"},
    tag="oai-pmh",
)

#: (method, path) -> what the route is. Each route of the app under /api/ and /uri-res/ has one.
OPERATIONS: dict[tuple[str, str], Operation] = {
    ("GET", "/uri-res/{service}"): Operation(
        "Resolve a PDI by RFC 2169: the resource (N2R, I2R), its locations (N2L, N2Ls), description (N2C), names (N2Ns)",
        (_SERVICE, Param("Range", "One byte range of N2R's answer (RFC 9110 §14)", where="header"),
         Param("If-None-Match", "The ETag held: 304 when it still is the answer", where="header"),
         Param("Accept", "N2R: application/json answers N2C's description (as does ?info after the name);"
               " for a generic name, the format it prefers (302 to it)", where="header")),
        answers={200: "The resource (with Memento-Datetime and the memento's Link, RFC 7089), description or list",
                 206: "A byte range of the resource",
                 300: "A generic name that Accept chooses no format of: a text/uri-list of every format of every version",
                 302: "N2L: the resource's URL; N2R of a generic name: the format Accept prefers;"
                 " a browser fragment (#:~:text=, #t=, #xywh=): the native name's N2R",
                 304: "Not modified", 410: "Withdrawn: the tombstone", 416: "Range not satisfiable",
                 501: "A service of RFC 2169 this resolver does not offer"},
    ),
    ("GET", "/api/resolve"): Operation(
        "What a name selects: media type, size, SHA-256, fragment ranges, region or samples; for a browser fragment"
        " (#:~:text=, #t=, #xywh=) also the native name it equals (equivalent)",
        (PDI_PARAM,), answers={200: "A JSON description", 404: "Not in the archive, or a text directive's text is not"
                                                                " in the document"},
    ),
    ("GET", "/api/annotation"): Operation(
        "The W3C Web Annotation (JSON-LD) of a fragment name or citation: a SpecificResource of the versioned PDI"
        " with TextQuote, TextPosition and Fragment selectors",
        (Param("pdi", "A fragment name (NAME#char=a,b, #:~:text=… …) or a citation A@p=B#f", required=True),),
        answers={200: "application/ld+json: the annotation"},
    ),
    ("POST", "/api/annotation"): Operation(
        "The names the posted W3C annotations (or Hypothesis export) point at in an archived document; writes"
        " nothing, needs no token",
        (Param("pdi", "The archived document the annotations were made on (else each target's source must be a"
                      " PDI)"),),
        body="JSON: an annotation, a list or page of them, or a Hypothesis export (annotations or rows)",
        answers={200: "JSON: for each target its status (found, moved, missing, selected), its name and a message"},
    ),
    ("GET", "/api/ls"): Operation(
        "A page of names, in listing order, and the next page's URL (a keyset cursor)",
        (Param("pattern", "A PDI pattern (wildcards * in the date, id, format, version)"),
         Param("series", "Only this series"),
         Param("limit", "Names a page (default 100, at most 10000)", schema={"type": "integer", "minimum": 0}),
         Param("offset", "Names to skip (prefer after=)", schema={"type": "integer", "minimum": 0}),
         Param("after", "The last name of the previous page")),
        answers={200: '{"names": [...], "next": URL or null}; also Link: <next>; rel="next"'},
    ),
    ("GET", "/api/meta"): Operation("The statements about a name, and their history", (PDI_PARAM,),
                                    answers={200: "JSON: current values and history"}),
    ("GET", "/api/cite"): Operation(
        "Check a citation A@origin=B#fragment: does the quotation stand at origin in A?",
        (Param("citation", "The citation", required=True),), answers={200: "JSON: both ends and the check"},
    ),
    ("GET", "/timegate/{target}"): Operation(
        "Memento TimeGate (RFC 7089 §4.1): the memento of a URL or a document nearest Accept-Datetime",
        (Param("target", "The original resource: a captured URL as it is (query included), a generic PDI, or its N2R URL",
               where="path", required=True),
         Param("Accept-Datetime", "An RFC 1123 date, e.g. Thu, 31 May 2007 20:35:00 GMT (default: the latest)",
               where="header")),
        answers={302: "Location: the memento; Vary: accept-datetime; Link: original, timemap, first/last/prev/next memento",
                 410: "Every memento of it was withdrawn"}, tag="memento",
    ),
    ("GET", "/timemap/link/{target}"): Operation(
        "Memento TimeMap (RFC 7089 §5): the mementos of a URL or a document, application/link-format, in pages"
        " (its first page: the mementos of the first --timemap-page captures, 1,000 by default)",
        (Param("target", "The original resource, as for the TimeGate", where="path", required=True),),
        answers={200: "application/link-format: original, self (with the page's from and until), next (the page"
                      " after it, type=application/link-format, also in the Link field), timegate and the page's"
                      " mementos with their datetimes, oldest first",
                 410: "Every memento of it was withdrawn"}, tag="memento",
    ),
    ("GET", "/timemap/link/page/{cursor}/{target}"): Operation(
        "A later page of a Memento TimeMap: the mementos of the next captures, linked rel=next and rel=prev",
        (Param("cursor", "Where the page starts: opaque, as a TimeMap's rel=\"next\" or rel=\"prev\" link"
                         " names it", where="path", required=True),
         Param("target", "The original resource, as for the TimeGate", where="path", required=True)),
        answers={200: "application/link-format: original, self (with the page's from and until), next and prev"
                      " (also in the Link field), timegate and the page's mementos",
                 400: "Not a cursor this resolver writes", 404: "No page there"}, tag="memento",
    ),
    ("GET", "/oai"): _OAI,
    ("POST", "/oai"): _OAI,
    ("GET", "/api/series"): Operation("The series of the archive", answers={200: "JSON: every series"}),
    ("GET", "/api/search"): Operation(
        "Full-text search: passages matching the words and \"phrases\" given, ranked, each named by its char fragment",
        (Param("q", "Words, and phrases in double quotes", required=True), Param("series", "Only this series"),
         Param("limit", "Hits a page", schema={"type": "integer", "minimum": 1}),
         Param("after", "The cursor of the previous page's last hit")),
        answers={200: "JSON: the hits (name with #char=a,b, snippet, marks) and the next page's URL"},
    ),
    ("GET", "/api/rfc5147"): Operation(
        "Evaluate an RFC 5147 fragment (its length and md5 checks too) on a text/plain name: the text it selects",
        (PDI_PARAM, Param("fragment", "An RFC 5147 fragment without '#', e.g. char=7,20;length=55,UTF-8",
                          required=True)),
        answers={200: "JSON: the selected text and its range", 422: "A length or md5 check failed"},
    ),
    ("GET", "/api/anchor"): Operation(
        "Find the passage a name cites in another version of the document: its name there, how found, the score",
        (Param("pdi", "The cited passage: a versioned name with a char, line, elt or name fragment ('#' as %23)",
               required=True),
         Param("to", "The version to look in: a number, or latest", required=True)),
        answers={200: "JSON: pdi (the passage's name in that version), method (exact, quote, fuzzy), score,"
                      " context, start, end, quote, found (422: the problem types passage-orphaned, passage-ambiguous)"},
    ),
    ("POST", "/api/deposit"): Operation(
        "Mint a name for today (GMT) and deposit the body as its first version",
        (Param("series", "The series to mint in", required=True),
         Param("format", "The format token; default: the one registered for Content-Type"),
         Param("id", "A foreign id to encapsulate instead of a daily serial"),
         Param("charset", "The body's charset (default: Content-Type's charset parameter)"),
         Param("embargo", "Embargo the version until this date or time (needs the role curate)"),
         _IDEMPOTENCY),
        body="The document's octets, streamed; Content-Type its media type",
        answers=_WRITTEN, role="deposit", tag="write",
    ),
    ("POST", "/api/batch"): Operation(
        "Many deposits in one request, all or nothing: each file part of a multipart/form-data body one document",
        (Param("series", "The series to mint in", required=True),
         Param("embargo", "Embargo every item until this date or time (needs the role curate)"), _IDEMPOTENCY),
        body="multipart/form-data: file parts (each its Content-Type), and an optional JSON field manifest"
             ' listing {"format", "id", "charset"} item by item',
        answers={201: '{"items": [{"pdi", "names", "version"}, ...]} in the parts\' order'},
        role="deposit", tag="write",
    ),
    ("POST", "/api/version"): Operation(
        "Deposit the body as a new version of a document",
        (Param("pdi", "The document's generic name", required=True), Param("format", "The format token"),
         Param("charset", "The body's charset"),
         Param("embargo", "Embargo the version until this date or time (needs the role curate)"), _IDEMPOTENCY),
        body="The new version's octets", answers=_WRITTEN, role="deposit", tag="write",
    ),
    ("POST", "/api/format"): Operation(
        "Add the body as another format of an existing version",
        (Param("pdi", "The versioned name", required=True), Param("format", "The format token", required=True),
         Param("charset", "The body's charset"), _IDEMPOTENCY),
        body="The format's octets", answers=_WRITTEN, role="deposit", tag="write",
    ),
    ("POST", "/api/statements"): Operation(
        "Make a statement key = value about a name (history is kept)",
        (PDI_PARAM, Param("key", "A Dublin Core term or a free key", required=True)),
        body="The value, UTF-8 text", answers={201: "The statement as stored"}, role="curate", tag="write",
    ),
    ("POST", "/api/withdraw"): Operation(
        "Withdraw a version (a versioned name) or a whole document (a generic name), saying why",
        (PDI_PARAM, Param("reason", "Why (or give it as the UTF-8 body)"),
         Param("purge", "true: also delete the octets (a legal takedown; needs the role admin),"
                        " except blobs another name keeps", schema={"type": "string", "enum": ["true", "false"]})),
        body="The reason, UTF-8 text (optional if reason= is given)",
        answers={201: "The tombstone (withdrawn.purged; kept: SHA-256 of blobs other names keep);"
                      " N2R of the name is 410 from now on"}, role="curate", tag="write",
    ),
    ("POST", "/api/embargo"): Operation(
        "Embargo a document (a generic name) or a version until a date; without until=, lift the embargo",
        (PDI_PARAM, Param("until", "A date (2027-01-01, its start in GMT) or a time with its zone")),
        answers={200: "{pdi, embargo_until}: readers without a token for the series get 403 until then"},
        role="curate", tag="write",
    ),
    ("GET", "/api/audit"): Operation(
        "The audit log: every write, who, when, what, from where",
        (Param("after", "Entries after this number", schema={"type": "integer", "minimum": 0}),
         Param("limit", "Entries (1 to 10000)", schema={"type": "integer", "minimum": 1})),
        answers={200: "A JSON array of entries"}, role="admin", tag="write",
    ),
}

#: The problem types other than about:blank (RFC 9457 §3.1.1), each described on the /api page under its id.
PROBLEM_TYPES: dict[str, str] = {
    "problem-passage-orphaned": "GET /api/anchor: the cited passage is not in the version asked for: not unchanged,"
    " its quote not found with its context, nothing similar enough. Extension members: cited, version, quote, notes."
    " (pdi anchor: exit status 12.)",
    "problem-passage-ambiguous": "GET /api/anchor: the cited passage stands in several places of that version and"
    " none fits the citation better; it is refused rather than guessed. Extension members: cited, version, quote,"
    " candidates (the places' names). (pdi anchor: exit status 13.)",
}

_COMMON = {
    400: "A syntax error in a parameter or the body (names what and where)",
    404: "No such name or page", 413: "A limit was exceeded", 415: "Unsupported format or media type",
    422: "An integrity check failed (or, of /api/anchor, a passage orphaned or ambiguous)", 503: "Busy (Retry-After) or a storage error",
}
_WRITE_COMMON = {401: "No live bearer token", 403: "The token's role or series does not cover this"}


#: Where the machine routes are: each one under these is described.
MACHINE_PREFIXES = ("/api/", "/uri-res/", "/timegate/", "/timemap/", "/oai")


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


def openapi(routes: list[BaseRoute]) -> dict[str, Any]:
    """The OpenAPI 3.1 document of the app's machine routes."""
    paths: dict[str, dict[str, Any]] = {}
    for method, path, op, handler in operations(routes):
        answers = {**op.answers, **_COMMON, **(_WRITE_COMMON if op.role else {})}
        entry: dict[str, Any] = {
            "operationId": f"{method.lower()}_{path.strip('/').replace('/', '_').replace('{', '').replace('}', '')}",
            "summary": op.summary,
            "tags": [op.tag],
            "parameters": [
                {"name": p.name, "in": p.where, "required": p.required or p.where == "path",
                 "description": p.description, "schema": p.schema}
                for p in op.params
            ],
            "responses": {
                str(status): ({"description": text, "content": PROBLEM} if status >= 400 else {"description": text})
                for status, text in sorted(answers.items())
            },
        }
        doc = inspect.getdoc(handler)
        if doc:
            entry["description"] = doc
        if op.body is not None:
            entry["requestBody"] = {"required": True, "description": op.body,
                                    "content": {"*/*": {"schema": {"type": "string", "format": "binary"}}}}
        if op.role is not None:
            entry["security"] = [{"bearer": []}]
            entry["x-pdi-role"] = op.role
        paths.setdefault(path, {})[method.lower()] = entry
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "pdi resolver",
            "version": __version__,
            "description": "Persistent document identifiers: RFC 2169 resolution, a JSON read API, and a write"
                           " API behind bearer tokens (pdi token add). Reading needs no token, except the names of"
                           " a private series or under an embargo: a token of any role whose series cover them"
                           " reads them (without one: 403, or 404 for a hidden series).",
        },
        "paths": paths,
        "components": {
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer",
                                           "description": "A token made with pdi token add"}},
            "schemas": {"Problem": {  # RFC 9457 §3.1
                "type": "object",
                "properties": {"type": {"type": "string"}, "title": {"type": "string"},
                               "status": {"type": "integer"}, "detail": {"type": "string"}},
            }},
        },
    }


def render_docs(document: dict[str, Any]) -> str:
    """The API described for people: each operation, its parameters, body, answers and the role it needs."""
    sections = []
    for path, methods in document["paths"].items():
        for method, op in methods.items():
            params = "".join(
                f"<tr><td><code>{esc(p['name'])}</code></td><td>{esc(p['in'])}</td>"
                f"<td>{'yes' if p['required'] else ''}</td><td>{esc(p['description'])}</td></tr>"
                for p in op["parameters"]
            )
            table = (
                '<table><thead><tr><th scope="col">parameter</th><th scope="col">in</th>'
                f'<th scope="col">required</th><th scope="col">what</th></tr></thead><tbody>{params}</tbody></table>'
                if params else ""
            )
            answers = "".join(
                f"<li><code>{esc(status)}</code> {esc(r['description'])}</li>" for status, r in op["responses"].items()
            )
            role = f'<p class="note">Needs a bearer token with the role <b>{esc(op["x-pdi-role"])}</b>.</p>' \
                if "x-pdi-role" in op else ""
            body = f"<p>Body: {esc(op['requestBody']['description'])}</p>" if "requestBody" in op else ""
            sections.append(
                f'<section id="{esc(op["operationId"])}"><h2><code>{esc(method.upper())} {esc(path)}</code></h2>'
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
        f'<section id="{esc(key)}"><h3><code>/api#{esc(key)}</code></h3><p>{esc(text)}</p></section>'
        for key, text in PROBLEM_TYPES.items()
    )
    problems_part = f"<h2>Problem types</h2><p>Besides <code>about:blank</code>:</p>{problems}"
    return page("pdi API", intro + "".join(sections) + problems_part)


class APIDocs:
    """``/openapi.json`` and ``/api``: the description of :attr:`routes` (the app's), made on first request."""

    def __init__(self) -> None:
        self.routes: list[BaseRoute] = []
        self._document: dict[str, Any] | None = None

    def document(self) -> dict[str, Any]:
        """The OpenAPI document, made once."""
        if self._document is None:
            self._document = openapi(self.routes)
        return self._document

    async def json(self, request: Request) -> Response:
        """The OpenAPI 3.1 description of the machine routes."""
        return JSONResponse(self.document())

    async def page(self, request: Request) -> Response:
        """The API described for people."""
        return HTMLResponse(render_docs(self.document()))

