"""What each machine route of the resolver is, declared beside its path: :data:`OPERATIONS` (the catalogue
:mod:`pdi.server.pages.api_docs` makes the OpenAPI description from).

An :class:`Operation` says what a handler's signature cannot: its
parameters (:class:`Param`, each schema taking what the server takes, its
limits included), its body (:class:`Body`), its answers (:class:`Answer`)
and the error statuses it can give (:data:`ERRORS`, each an RFC 9457
problem), the role it needs. A value whose grammar JSON Schema cannot hold
names a custom format (:data:`FORMATS`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pdi.archive import MAX_SEARCH_LIMIT
from pdi.archive.manifests import MANIFEST_PAGE, MAX_MANIFEST_PAGE
from pdi.server.protocol.memento_oaipmh import MAX_OAI_FORM
from pdi.server.protocol.resolver import MAX_LIST
from pdi.server.write.annotations import MAX_PAGE
from pdi.server.write.api import MAX_BATCH, MAX_KEY, MAX_STATEMENT

#: The ``Problem`` schema's media type: every error answer of every route is one (RFC 9457 §3).
PROBLEM = {"application/problem+json": {"schema": {"$ref": "#/components/schemas/Problem"}}}
#: 503: a problem (busy: Retry-After; a storage error), or uvicorn's own text when the connections are at
#: their limit (``pdi serve --max-connections``; uvicorn.protocols.http.flow_control.service_unavailable).
BUSY = {**PROBLEM, "text/plain": {"schema": {"type": "string", "const": "Service Unavailable"}}}


@dataclass(frozen=True)
class Param:
    """One parameter: its name, where it goes (``query``, ``header``, ``path``), whether required, its schema.

    ``examples`` show the form of a value (the PDI grammar's own examples, which an archive of that
    series would resolve); a tester sends them first.
    """

    name: str
    description: str
    where: str = "query"
    required: bool = False
    schema: dict[str, Any] = field(default_factory=lambda: {"type": "string"})
    examples: tuple[str, ...] = ()
    style: dict[str, Any] = field(default_factory=dict)  # style and explode, for a free-form query


@dataclass(frozen=True)
class Answer:
    """A successful answer: what it is, its body's media type and schema (none for a body-less answer), and its
    header fields: name -> (what it says, whether every such answer has it)."""

    description: str
    media_type: str | None = None
    schema: dict[str, Any] = field(default_factory=dict)
    headers: dict[str, tuple[str, bool]] = field(default_factory=dict)


@dataclass(frozen=True)
class Body:
    """A request body: what it is, whether it may be left out, and its media types with their schemas."""

    description: str
    content: dict[str, dict[str, Any]]
    required: bool = True


@dataclass(frozen=True)
class Operation:
    """What a route does, beyond its path and method: summary, parameters, body, answers, and the role it needs.

    ``answers`` are the route's successful and redirecting answers;
    ``errors`` every error status it can give, each an RFC 9457 problem
    (:data:`ERRORS` says what each means unless ``error_text`` says more).
    """

    summary: str
    params: tuple[Param, ...] = ()
    body: Body | None = None
    answers: dict[int, Answer] = field(default_factory=dict)
    errors: tuple[int, ...] = ()
    error_text: dict[int, str] = field(default_factory=dict)
    role: str | None = None  # the token role a write needs (pdi.archive.tokens.ROLES)
    tag: str = "read"


# --- the values parameters take -----------------------------------------------------------------
# The PDI grammar (specs/PDI-GRAMMAR.md: fragments, citations, %-escapes, calendar days, ISO 3166
# countries), a registered format token, an RFC 1123 date whose weekday is its own: these are beyond a
# JSON Schema that stays readable. Such a value's schema says its length limits and names a custom format
# (the formats below: each a grammar of specs/ or an RFC); the grammar itself is checked by the server,
# which answers 400 (a syntax error, or a name of the wrong kind: titled "unsupported") or 404 (no such name or
# series) with a problem.

#: The longest PDI the parser reads (pdi.identifier._syntax._MAX_LENGTH).
MAX_NAME = 1 << 20
#: The custom formats of string parameters, and what each is.
FORMATS: dict[str, str] = {
    "pdi": "A PDI (specs/PDI-GRAMMAR.md), with or without a fragment",
    "pdi-whole": "A PDI without a fragment: generic (no format) or versioned",
    "pdi-versioned": "A PDI with a format and a version, without a fragment",
    "pdi-text": "A versioned PDI of a text/plain representation, without a fragment",
    "pdi-pdf": "A versioned PDI of a PDF (application/pdf), its fragment ignored",
    "pdi-image": "A versioned PDI of a PNG, JPEG or TIFF image, without a fragment",
    "pdi-passage": "A versioned PDI with a char, line, elt or name fragment",
    "pdi-fragment": "A PDI with a fragment, or a citation",
    "pdi-pattern": "A PDI or a PDI pattern (wildcards * in the date, id, format, version), without a fragment",
    "pdi-citation": "A citation A@origin=B#fragment (PDI-GRAMMAR.md §3, Citations)",
    "pdi-series": "A series' name: components of letters, digits and '-', then an ISO 3166-1 alpha-2 country",
    "pdi-format": "A format token the registry knows (README, Format tokens)",
    "charset": "A charset name Python's codecs know (RFC 2978)",
    "pdi-moment": "A date (its start in GMT) or a time with its zone, ISO 8601 (pdi.archive.access.parse_until)",
    "http-date": "An RFC 1123 date (RFC 7089 §2.1.1) whose weekday is its own",
    "memento-target": "A URL as it was captured (query included), a generic PDI, or its N2R URL",
    "timemap-cursor": "Where a TimeMap page starts, as a TimeMap's rel=\"next\" or rel=\"prev\" link names it",
    "rfc5147": "An RFC 5147 fragment without '#': char= or line=, with optional length and md5 checks",
    "search-query": "Words, and phrases in double quotes, for SQLite's FTS5 tokenizer",
    "search-cursor": "The after= of a page of search results (its next URL)",
    "statement-key": "A Dublin Core term or a free key",
    "batch-manifest": 'A JSON array of {"format", "id", "charset"} objects, one for each file part',
}


def _name(fmt: str = "pdi") -> dict[str, Any]:
    """The schema of a PDI-like parameter of custom format ``fmt``."""
    return {"type": "string", "minLength": 1, "maxLength": MAX_NAME, "format": fmt}


_NAME = _name()
_SERIES = {"type": "string", "minLength": 1, "format": "pdi-series"}
_FORMAT = {"type": "string", "minLength": 1, "format": "pdi-format"}


def _optional(schema: dict[str, Any]) -> dict[str, Any]:
    """An optional parameter's schema: the server reads it empty as absent (``or None``, ``_integer``'s default)."""
    return {"anyOf": [{"type": "string", "maxLength": 0}, schema]}


_CHARSET = _optional({"type": "string", "minLength": 1, "format": "charset"})
_MOMENT = _optional({"type": "string", "minLength": 1, "format": "pdi-moment"})
#: What pdi.server.protocol.resolver._integer takes: up to 12 digits.
_COUNT = {"type": "integer", "minimum": 0, "maximum": 999_999_999_999}
_HTTP_DATE = {"type": "string", "minLength": 1, "format": "http-date"}

#: The draft's own examples of names (PDI-GRAMMAR.md §1-2).
_NAME_EXAMPLES = ("urn:pdi://oma.eop.gov.us/1999/09/16/15.text.1",
                  "urn:pdi://oma.eop.gov.us/1999/09/16/15.text.1#char=37,51")
PDI_PARAM = Param("pdi", "A PDI (percent-encode all of it, as encodeURIComponent does).", required=True,
                  schema=_NAME, examples=_NAME_EXAMPLES)
#: The name a write is about: a whole document or version.
_WHOLE = Param("pdi", "A generic or versioned PDI, without a fragment", required=True, schema=_name("pdi-whole"))
_IDEMPOTENCY = Param(
    "Idempotency-Key", "A retry with this key and the same request answers the first answer (with withdrawn, the"
    " tombstone, when what it wrote was withdrawn since); another request: 422. Send one with every write: after a"
    " 503 of problem type commit-unknown (the write may have been applied or not), the same request with the same"
    " key is answered with the first answer if it was, and made if it was not; without one, a retry may store it"
    " twice.",
    where="header", schema={"type": "string", "minLength": 1, "maxLength": MAX_KEY + 2,
                            "pattern": '^(?!""$)(?:"[\\x20-\\x7e]{1,255}"|[\\x20-\\x7e]{1,255})$'},
)
_ALLOW_EMPTY = Param("allow_empty", "true: deposit an empty body (0 octets) all the same; without it one is 400 and"
                     " nothing is deposited, as pdi add refuses an empty file without --allow-empty",
                     schema={"type": "string", "enum": ["true", "false", ""]})
_EMBARGO = Param("embargo", "Embargo the version until this date or time (needs the role curate); a moment past"
                 " embargoes nothing, and the answer's Warning header says so", schema=_MOMENT)

# --- the bodies answers carry --------------------------------------------------------------------
_JSON = "application/json"
_OBJECT: dict[str, Any] = {"type": "object"}
_STRINGS = {"type": "array", "items": {"type": "string"}}
_WRITTEN_BODY = {
    "type": "object", "required": ["pdi", "names", "version", "unchanged"],
    "properties": {"pdi": {"type": "string"}, "names": _STRINGS, "version": {"type": "integer"},
                   "unchanged": {"type": "boolean"},
                   # a replayed answer (Idempotency-Key) whose version was withdrawn since: its tombstone, as N2C's
                   "withdrawn": {"type": "object", "required": ["at", "reason", "who", "purged"],
                                 "properties": {"at": {"type": "string"}, "reason": {"type": "string"},
                                                "who": {"type": "string"}, "purged": {"type": "boolean"}}}},
}
_BATCH_BODY = {"type": "object", "required": ["items"], "properties": {"items": {
    "type": "array", "minItems": 1, "items": _WRITTEN_BODY}}}
_LOCATION = {"Location": ("The first name's N2R", True)}
_WRITTEN = {201: Answer("Created: the names; Location the first name's N2R", _JSON, _WRITTEN_BODY, _LOCATION),
            200: Answer("Nothing new stored: the same bytes as the latest version (unchanged), or a replayed answer",
                        _JSON, _WRITTEN_BODY, _LOCATION)}
_OCTETS = {"type": "string", "format": "binary"}
#: A write's body: any octets, any media type (Content-Type says which, or format= does).
_ANY_BODY = {"*/*": {"schema": _OCTETS}}
_TEXT_BODY = {"text/plain": {"schema": {"type": "string"}}}

# --- what each error status means --------------------------------------------------------------
ERRORS: dict[int, str] = {
    400: "A syntax error in a parameter, a header or the body, naming what and where: a parameter given more"
         " than once, a number out of its range (naming the range), a body malformed or cut short; on a route"
         " that writes, a parameter it does not take; Authorization: Bearer with no token, or with"
         " what is no b64token (invalid_request); titled"
         " unsupported, a name, fragment or parameter pdi cannot act on in a request that sends no content (a"
         " fragment scheme the media type has no reading for, a pattern where one name is needed)",
    401: "No live bearer token (WWW-Authenticate says why; another scheme than Bearer: no error code)",
    403: "The token's role or series does not cover this, or the name is private or under an embargo",
    404: "No such name, series or page",
    405: "Not a method of this route (Allow lists those it has)",
    406: "No representation the Accept field allows",
    408: "The body did not arrive in time (pdi serve --body-timeout seconds, and one more for every 500 octets),"
         " whoever sent it; Connection: close, and nothing was stored",
    409: "The name is immutable: a version or format that exists already, or octets its withdrawn latest version holds",
    410: "Withdrawn: the tombstone",
    412: "If-Match names an ETag that is not the current one, or (with it) If-None-Match names the current one;"
         " or If-Unmodified-Since is before the answer's Last-Modified; or If-Match sent with a write to a route"
         " that has no representation (/api/deposit, /api/version …), or with POST /oai or /api/octets: nothing is"
         " done",
    413: "The request's content is larger than the route takes (a body over the upload limit, a form too long); a"
         " limit exceeded by a request without content (a query too long, more work than the resolver's limits"
         " allow) is 400 titled limit exceeded",
    415: "The request's content is in a format, media type or charset this route does not take, or in a content"
         " coding (Content-Encoding: send the octets as they are; Accept-Encoding: identity says so): about a"
         " request's content only (RFC 9110 §15.5.16)",
    500: "Stored octets damaged (problem type stored-octets-damaged): they fail their SHA-256 or chunk digests, or"
         " are missing or cut short; pdi verify --repair mends them",
    416: "A fragment wholly past the end of the document (pdi get says the same and exits 9)",
    422: "An integrity check failed, or an Idempotency-Key was used before for another request",
    428: "If-Match is required (a write that replaces or deletes)",
    501: "A service of RFC 2169 this resolver does not offer",
    503: "Busy or a storage error (a database failing over): a problem with Retry-After; past the connection"
         " limit, uvicorn's text/plain; past one client address's share of the connections, a problem; a write whose"
         " commit got no answer (problem type commit-unknown): it may have been applied, so send it again only with"
         " the same Idempotency-Key (its first answer comes back if it was), or look first (GET /api/ls)",
    508: "Loop Detected (RFC 5842 §7.2): a name of a series this archive does not hold, whose every resolver known"
         " sends it back here, or round among themselves, none holding it (docs/reference/federation.md)",
}
#: The header fields of error answers (pdi.server.http.problems, pdi.server.write.api.Unauthorized).
ERROR_HEADERS: dict[int, dict[str, tuple[str, bool]]] = {
    401: {"WWW-Authenticate": ('Bearer realm="pdi", and the error when a bearer token was given (RFC 6750 §3)', True)},
    403: {"WWW-Authenticate": ('Bearer realm="pdi", error="insufficient_scope", when a bearer token was given whose'
                               " role or series does not cover this (RFC 6750 §3.1)", False)},
    405: {"Allow": ("The methods of this route", True)},
    415: {"Accept-Encoding": ("identity, when the content was refused for its Content-Encoding", False)},
    503: {"Retry-After": ("Seconds to wait, when the resolver is busy or its storage is not answering", False)},
}
#: What every route can answer: a method it has not, a limit, and busy or a storage error.
_ALWAYS = (400, 401, 405, 503)
#: The errors of a route that reads a name.
_READ = (*_ALWAYS, 403, 404, 410, 422, 500)
#: The errors of a write.
_WRITE = (*_READ, 409, 413, 415)

# --- the routes, one entry each ------------------------------------------------------------------
_SERVICE = Param(
    "service", "An RFC 2169 service: N2R, I2R, N2L, N2Ls, N2C or N2Ns (others of RFC 2169: 501). The URN is the"
    " whole query string (a '#' written %23), which OpenAPI 3.1 cannot describe: without one, 400.",
    where="path", required=True,
    schema={"type": "string", "enum": ["N2R", "I2R", "N2L", "N2Ls", "N2C", "N2Ns"]},
)
_URI_RES = Operation(
    "Resolve a PDI by RFC 2169: the resource (N2R, I2R), its locations (N2L, N2Ls), description (N2C), names (N2Ns)",
    (_SERVICE,
     Param("Range", "One byte range of N2R's answer (RFC 9110 §14)", where="header",
           schema={"type": "string"}),
     Param("If-None-Match", "The ETag held: 304 when it still is the answer", where="header",
           schema={"type": "string"}),
     Param("If-Match", "N2R: the answer only if its ETag is one of these (strong comparison), else 412",
           where="header", schema={"type": "string"}),
     Param("If-Modified-Since", "N2R: 304 when the answer's Last-Modified (its deposit) is not after this"
           " HTTP-date (ignored beside If-None-Match)", where="header", schema={"type": "string"}),
     Param("If-Unmodified-Since", "N2R: 412 when the answer's Last-Modified (its deposit) is after this"
           " HTTP-date (ignored beside If-Match)", where="header", schema={"type": "string"}),
     Param("Accept", "N2R: application/json answers N2C's description (as does ?info after the name);"
           " for a generic name, the format it prefers (302 to it). Any service: an Accept that weighs text/html"
           " above application/problem+json and application/json (a browser's) gets a refusal as an HTML page,"
           " its status the same (Vary: Accept)", where="header",
           schema={"type": "string"})),
    answers={200: Answer("The resource (with Memento-Datetime and the memento's Link, RFC 7089; a multipart/related"
                         " file with its boundary and type in Content-Type, RFC 2046 §5.1.1, RFC 2387 §3.1),"
                         " description (JSON) or list (text/uri-list)", "*/*", {},
                         headers={"PDI-Capture": ("I2R of a 1990s capture name this archive never kept, answered"
                                                  " with its capture of the same URL nearest that day: same-day,"
                                                  " later or earlier; asked=DAY; captured=NAME", False)}),
             206: Answer("A byte range of the resource; several ranges: multipart/byteranges, a part each (RFC 9110"
                         " §14.6)", "*/*", {}),
             300: Answer("A generic name that Accept chooses no format of: every format of every version",
                         "text/uri-list", {"type": "string"}),
             302: Answer("N2L: the resource's URL; N2R of a generic name: the format Accept prefers;"
                         " a browser fragment (#:~:text=, #t=, #xywh=): the native name's N2R; a name of a series"
                         " this archive does not hold: the same service at its authority, or a mirror when the"
                         " authority is down (from a registry or DNS NAPTR records: docs/reference/federation.md);"
                         " a 1990s capture name (I2R?urn:pdi://oma.eop.gov.us/…/http%3a…) held by another"
                         " resolver: the capture nearest its day there, PDI-Capture saying which",
                         headers={"Location": ("Where to", True),
                                  "PDI-Capture": ("A capture answering a name never kept: same-day, later or"
                                                  " earlier; asked=DAY; captured=NAME", False)}),
             304: Answer("Not modified"),
             # pdi.server.http.conditional.unsatisfiable: Content-Range: bytes */length and a problem, never stored;
             # a fragment wholly past the end: a problem (pdi.fragments.past_end_message), as pdi get's exit 9
             416: Answer("Range not satisfiable: of the Range field, a problem saying so, Content-Range the length"
                         " and Cache-Control: no-store; of a fragment wholly past the end, a problem saying so",
                         "application/problem+json", {"$ref": "#/components/schemas/Problem"})},
    errors=(*_READ, 412, 501, 508),
)
_RESOLVE = Operation(
    "What a name selects: media type, size, SHA-256, fragment ranges, region or samples; for a browser fragment"
    " (#:~:text=, #t=, #xywh=) also the native name it equals (equivalent)",
    (PDI_PARAM,), answers={200: Answer("A JSON description", _JSON, _OBJECT)}, errors=_READ,
    error_text={404: "Not in the archive, or a text directive's text is not in the document"},
)
_ANNOTATION_GET = Operation(
    "The W3C Web Annotation (JSON-LD) of a fragment name or citation: a SpecificResource of the versioned PDI"
    " with TextQuote, TextPosition and Fragment selectors",
    (Param("pdi", "A fragment name (NAME#char=a,b, #:~:text=… …) or a citation A@p=B#f", required=True,
           schema=_name("pdi-fragment")),),
    answers={200: Answer("The annotation", "application/ld+json", _OBJECT)}, errors=_READ,
)
_ANNOTATION_POST = Operation(
    "The names the posted W3C annotations (or Hypothesis export) point at in an archived document; writes"
    " nothing, needs no token",
    (Param("pdi", "The archived document the annotations were made on (else each target's source must be a"
                  " PDI)", schema=_optional(_NAME)),),
    body=Body("JSON: an annotation, a list or page of them, or a Hypothesis export (annotations or rows)",
              {_JSON: {"schema": {"type": ["object", "array"]}},
               "application/ld+json": {"schema": {"type": ["object", "array"]}}}),
    answers={200: Answer("For each target its status (found, moved, missing, selected), its name and a message",
                         _JSON, _OBJECT)},
    errors=_READ,
)
_ANNO_TYPE = 'application/ld+json; profile="http://www.w3.org/ns/anno.jsonld"'
_ANNO_MEDIA = {_ANNO_TYPE: {"schema": _OBJECT}, _JSON: {"schema": _OBJECT}}
_SLUG_PARAM = Param("slug", "The annotation's name in the container", where="path", required=True,
                    schema={"type": "string", "minLength": 1})
_PREFER = Param(
    "Prefer", 'return=representation; include="…": http://www.w3.org/ns/ldp#PreferMinimalContainer (no page'
    " embedded), http://www.w3.org/ns/oa#PreferContainedIRIs or …#PreferContainedDescriptions (the default)",
    where="header",
)
_ANNO_ACCEPT = Param("Accept", f"{_ANNO_TYPE} (the default) or {_JSON}", where="header")
_IF_NONE_MATCH = Param("If-None-Match", "The ETag held: 304 when it still is the answer", where="header")
_IF_MATCH = Param("If-Match", "The annotation's ETag when it was read (required)", where="header", required=True)
_ETAG = {"ETag": ("The representation's entity tag", True)}
_CONTAINER_GET = Operation(
    "The Annotation Container (W3C Web Annotation Protocol §4): an LDP Basic Container and AnnotationCollection"
    " of the annotations the reader may read (total, first page embedded, last), or one of its pages",
    (Param("iris", "1: pages list the annotations' IRIs; 0 (default): whole annotations",
           schema=_optional({"type": "string", "enum": ["0", "1"]})),
     Param("page", f"A page (AnnotationPage with partOf, startIndex, next, prev, items), from 0 to {MAX_PAGE}",
           schema=_optional({"type": "integer", "minimum": 0, "maximum": MAX_PAGE})),
     _PREFER, _ANNO_ACCEPT, _IF_NONE_MATCH),
    answers={200: Answer("The container (Link: ldp#BasicContainer type and ldp#constrainedBy; Content-Location its"
                         " IRI) or the page; Allow, Accept-Post", _ANNO_TYPE, _OBJECT,
                         headers={**_ETAG, "Allow": ("GET, HEAD, OPTIONS, POST", True)}),
             304: Answer("Not modified")},
    errors=(*_ALWAYS, 404, 406), tag="annotations",
)
_CONTAINER_POST = Operation(
    "Create an annotation (W3C Web Annotation Protocol §5.1): the server names it (Slug where safe), keeps an"
    " id it had as via, adds created",
    (Param("Slug", "The last path segment wished for (letters, digits, . _ -; at most 64), used when free",
           where="header"), _ANNO_ACCEPT,
     Param("If-Match", "Create only if the container is unchanged: the ETag of any representation GET"
           " /api/annotations/ sends now (?iris=0 or 1, whole or PreferMinimalContainer, either media type; not a"
           " page's), strong comparison, or *; else 412 (RFC 9110 §13.1.1)", where="header"),
     Param("If-None-Match", "412 when * (the container always exists) or when it names such a current ETag"
           " (RFC 9110 §13.1.2)", where="header")),
    body=Body("One Web Annotation; its archived targets (PDIs) must be in the archive", _ANNO_MEDIA),
    answers={201: Answer("The annotation as kept; Location and id its IRI", _ANNO_TYPE, _OBJECT,
                         headers={**_ETAG, "Location": ("The annotation's IRI", True)})},
    errors=(*_WRITE, 406, 412), error_text={405: "POST to a page of the container", 409: "A slug taken meanwhile",
                                            412: "If-Match names no current ETag of the container, or If-None-Match"
                                                 " is * or names one; nothing was created"},
    role="curate", tag="annotations",
)
_CONTAINER_OPTIONS = Operation(
    "The container's methods (Allow, Accept-Post, Link), and a CORS preflight's answer",
    answers={200: Answer("No body", headers={"Allow": ("The methods", True)})}, errors=(405, 503), tag="annotations",
)
_ANNOTATION_ONE = Operation(
    "An annotation (W3C Web Annotation Protocol §3), if the reader may read every archived document it targets",
    (_SLUG_PARAM, _ANNO_ACCEPT, _IF_NONE_MATCH),
    answers={200: Answer("The annotation; Link ldp#Resource type, Allow", _ANNO_TYPE, _OBJECT, headers=_ETAG),
             304: Answer("Not modified")},
    errors=(*_ALWAYS, 403, 404, 406, 410),
    error_text={403: "It targets a private or embargoed document the reader may not read", 410: "Deleted"},
    tag="annotations",
)
_ANNOTATION_PUT = Operation(
    "Replace an annotation's whole state (§5.3); If-Match its current ETag is required",
    (_SLUG_PARAM, _IF_MATCH, _ANNO_ACCEPT),
    body=Body("The annotation's new state (its id, if given, its IRI)", _ANNO_MEDIA),
    answers={200: Answer("The new state (modified), its new ETag", _ANNO_TYPE, _OBJECT, headers=_ETAG)},
    errors=(*_WRITE, 406, 412, 428),
    error_text={409: "A change of id, canonical or via", 410: "Deleted"}, role="curate", tag="annotations",
)
_ANNOTATION_DELETE = Operation(
    "Delete an annotation (§5.4); If-Match its current ETag is required; its IRI is never given again",
    (_SLUG_PARAM, _IF_MATCH),
    answers={204: Answer("Deleted: 410 from now on")},
    errors=(*_READ, 409, 412, 428), error_text={410: "Deleted before"}, role="curate", tag="annotations",
)
_ANNOTATION_OPTIONS = Operation(
    "An annotation's methods (Allow, Link), and a CORS preflight's answer",
    (_SLUG_PARAM,), answers={200: Answer("No body", headers={"Allow": ("The methods", True)})}, errors=(405, 503),
    tag="annotations",
)
_LS = Operation(
    "A page of names, in listing order, and the next page's URL (a keyset cursor)",
    (Param("pattern", "A PDI pattern (wildcards * in the date, id, format, version)", schema=_optional(_name("pdi-pattern"))),
     Param("series", "Only this series", schema=_optional(_SERIES)),
     Param("limit", f"Names a page (default 100, 1 to {MAX_LIST})",
           schema=_optional({"type": "integer", "minimum": 1, "maximum": MAX_LIST})),
     Param("offset", "Names to skip (prefer after=)", schema=_optional(_COUNT)),
     Param("after", "The last name of the previous page", schema=_optional(_name("pdi-versioned")))),
    answers={200: Answer('{"names": [...], "next": URL or null}; also Link: <next>; rel="next"', _JSON, {
        "type": "object", "required": ["names", "next"],
        "properties": {"names": _STRINGS, "next": {"type": ["string", "null"]}}},
        headers={"Link": ('<next>; rel="next" (RFC 8288), unless this is the last page', False)})},
    errors=(*_ALWAYS, 403, 404),
    error_text={400: ERRORS[400] + "; here, a fragment name, or a pattern of another series than series="},
)
_META = Operation("The statements about a name, and their history", (PDI_PARAM,),
                  answers={200: Answer("Current values and history", _JSON, {
                      "type": "object", "required": ["pdi", "meta", "history"],
                      "properties": {"pdi": {"type": "string"}, "meta": _OBJECT,
                                     "history": {"type": "array", "items": _OBJECT}}})},
                  errors=_READ)
_CITE = Operation(
    "Check a citation A@origin=B#fragment: does the quotation stand at origin in A?",
    (Param("citation", "The citation", required=True, schema=_name("pdi-citation"),
           examples=("urn:pdi://oma.eop.gov.us/1999/09/16/5.html.1@120=pdi://oma.eop.gov.us/1999/09/16/15.text.1"
                     "#char=37,51",)),),
    answers={200: Answer("Both ends and the check", _JSON, _OBJECT)}, errors=_READ,
)
_TIMEGATE = Operation(
    "Memento TimeGate (RFC 7089 §4.1): the memento of a URL or a document nearest Accept-Datetime",
    (Param("target", "The original resource: a captured URL as it is (query included), a generic PDI, or its N2R"
                     " URL", where="path", required=True,
           schema={"type": "string", "minLength": 1, "format": "memento-target"}),
     Param("Accept-Datetime", "An RFC 1123 date, e.g. Thu, 31 May 2007 20:35:00 GMT (default: the latest)",
           where="header", schema=_HTTP_DATE, examples=("Thu, 31 May 2007 20:35:00 GMT",))),
    answers={302: Answer("Location: the memento; Vary: accept-datetime; Link: original, timemap,"
                         " first/last/prev/next memento",
                         headers={"Location": ("The memento", True), "Vary": ("accept-datetime", True),
                                  "Link": ("original, timemap, first/last/prev/next memento (RFC 7089 §2.2)", True)})},
    errors=_READ, error_text={410: "Every memento of it was withdrawn"}, tag="memento",
)
_TIMEMAP = Operation(
    "Memento TimeMap (RFC 7089 §5): the mementos of a URL or a document, application/link-format, in pages"
    " (its first page: the mementos of the first --timemap-page captures, 1,000 by default)",
    (Param("target", "The original resource, as for the TimeGate", where="path", required=True,
           schema={"type": "string", "minLength": 1, "format": "memento-target"}),),
    answers={200: Answer("Original, self (with the page's from and until), next (the page after it,"
                         " type=application/link-format, also in the Link field), timegate and the page's mementos"
                         " with their datetimes, oldest first", "application/link-format", {"type": "string"},
                         headers={"Link": ('rel="next" (and rel="prev") of the pages around it', False)})},
    errors=_READ, error_text={410: "Every memento of it was withdrawn"}, tag="memento",
)
_TIMEMAP_PAGE = Operation(
    "A later page of a Memento TimeMap: the mementos of the next captures, linked rel=next and rel=prev",
    (Param("cursor", "Where the page starts: opaque, as a TimeMap's rel=\"next\" or rel=\"prev\" link names it",
           where="path", required=True,
           # pdi.server.protocol.memento_oaipmh.Mementos.page: after~N (a document's versions) or after~DAY~SERIES (a URL's captures)
           schema={"type": "string", "minLength": 1, "format": "timemap-cursor",
                   "pattern": "^after~(?:[0-9]{1,12}|[0-9]{4}-[0-9]{2}-[0-9]{2}~[A-Za-z0-9.-]{1,253})$"}),
     Param("target", "The original resource, as for the TimeGate", where="path", required=True,
           schema={"type": "string", "minLength": 1, "format": "memento-target"})),
    answers={200: Answer("Original, self (with the page's from and until), next and prev (also in the Link field),"
                         " timegate and the page's mementos", "application/link-format", {"type": "string"},
                         headers={"Link": ('rel="next" and rel="prev" of the pages around it', False)})},
    errors=_READ, error_text={400: "Not a cursor this resolver writes", 404: "No page there",
                              410: "Every memento of it was withdrawn"}, tag="memento",
)
_OAI_ARGUMENTS = Param(
    "arguments", "The verb (Identify, ListMetadataFormats, ListSets, ListIdentifiers, ListRecords, GetRecord) and"
    " its arguments: metadataPrefix (oai_dc), identifier (a generic name), set (a series), from and until (UTC"
    " datestamps), resumptionToken. Any query is answered: OAI-PMH (§3.6) answers a wrong one with 200 and its"
    " error element (badVerb, badArgument, badResumptionToken, cannotDisseminateFormat, idDoesNotExist,"
    " noRecordsMatch, noSetHierarchy).",
    schema={"type": "object"},
    style={"style": "form", "explode": True},
)
_OAI_XML = {200: Answer("The OAI-PMH response, or its error element", "text/xml", {"type": "string"})}
_OAI_GET = Operation(
    "OAI-PMH 2.0: Dublin Core records of the catalog's documents, a set per series, for library harvesters",
    (_OAI_ARGUMENTS,), answers=_OAI_XML, errors=_ALWAYS, tag="oai-pmh",
    error_text={400: "Authorization: Bearer without a token (OAI-PMH's own errors are 200 XML)",
                401: "A bearer token that is not live, as on every route (OAI-PMH's own errors are 200 XML)"},
)
_OAI_POST = Operation(
    _OAI_GET.summary, (_OAI_ARGUMENTS,),
    body=Body("The arguments as a form (§3.1.1.2); an empty body is read as no verb (badVerb)",
              {"application/x-www-form-urlencoded": {
                  "schema": {"type": "object"}}}, required=False),
    answers=_OAI_XML, errors=(*_ALWAYS, 412, 413, 415), tag="oai-pmh",
    error_text={400: "Authorization: Bearer without a token (OAI-PMH's own errors are 200 XML)",
                401: "A bearer token that is not live, as on every route (OAI-PMH's own errors are 200 XML)",
                412: "If-Match sent: /oai has no representation of its own to match (RFC 9110 §13.1.1)",
                413: f"The form is more than {MAX_OAI_FORM} octets",
                415: "A body that is not application/x-www-form-urlencoded"},
)
_SERIES_LIST = Operation(
    "The series of the archive",
    answers={200: Answer("Every series", _JSON, {"type": "object", "required": ["series"],
                                                 "properties": {"series": {"type": "array", "items": _OBJECT}}})},
    errors=_ALWAYS,
)
_MANIFEST = Operation(
    "A page of a series' signed manifest: each name (of a day, or every day) with its SHA-256 and size, as a"
    " compact JWS (RFC 7515) signed with EdDSA (RFC 8037) by the archive's key (GET /api/keys)",
    (Param("series", "The series", required=True, schema=_SERIES, examples=("oma.eop.gov.us",)),
     Param("day", "Only the names minted on this GMT day, YYYY-MM-DD (default: every day)",
           schema=_optional({"type": "string", "minLength": 10, "maxLength": 10, "format": "date"})),
     Param("after", "The previous page's \"next\" (a versioned name)", schema=_optional(_name("pdi-versioned"))),
     Param("limit", f"Names a page (default {MANIFEST_PAGE}, 1 to {MAX_MANIFEST_PAGE})",
           schema=_optional({"type": "integer", "minimum": 1, "maximum": MAX_MANIFEST_PAGE}))),
    answers={200: Answer(
        "A compact JWS; its payload {type, series, day, after, next, names: [{name, format, version, sha256, size}"
        " or {name, format, version, withdrawn}]} lists only what the reader may see (docs/reference/signatures.md)",
        "application/jose", {"type": "string", "pattern": "^[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+$"},
        headers={"Link": ('<next>; rel="next" (RFC 8288), unless this is the last page', False)})},
    errors=(*_ALWAYS, 403, 404),
    error_text={404: "No such series, or the archive has no signing key (pdi keys init)",
                400: ERRORS[400] + "; here, after= that is not a versioned name"},
)
_MANIFEST_TSR = Operation(
    "An RFC 3161 timestamp of the manifest page GET /api/manifest answers to the same query (pdi serve --tsa URL):"
    " asked of the time-stamping authority once a page, then kept",
    _MANIFEST.params,
    answers={200: Answer("A DER TimeStampResp (RFC 3161 §2.4.2) of the JWS's octets", "application/timestamp-reply",
                         {"type": "string", "format": "binary"})},
    errors=(*_ALWAYS, 403, 404),
    error_text={404: "No such series, no signing key, or the resolver names no TSA (pdi serve --tsa)",
                400: ERRORS[400] + "; here, after= that is not a versioned name"},
)
_ELEMENT_INDEX = Operation(
    "The parse kept of an SGML document: its element index, whose SHA-256 the series' signed manifest gives"
    " (element_index), for a mirror that cannot make the same parse (docs/reference/mirrors.md)",
    (Param("pdi", "An SGML document's name, versioned, without a fragment", required=True,
           schema=_name("pdi-versioned"), examples=("urn:pdi://oma.eop.gov.us/1999/09/16/15.sgml.1",)),
     _IF_NONE_MATCH),
    answers={200: Answer(
        "The element index (pdi's own sealed layout, magic PDIM; at most 8 MiB and one octet per octet of the"
        " document), under the name's access rules as N2R reads it. It may change (pdi reindex --elements with"
        " other DTDs): a public name's is no-cache, revalidated by its ETag; a private or embargoed name's"
        " private, no-store", "application/octet-stream", {"type": "string", "format": "binary"},
        headers={"X-PDI-SHA256": ("The index's SHA-256 (what the manifest entry's element_index signs)", True),
                 "ETag": ("A strong entity tag: the index's SHA-256, quoted", True)}),
             304: Answer("Not modified: If-None-Match names the index's ETag")},
    errors=_READ,
    error_text={404: "No such name or series, or no parse of it is kept (not SGML, not parsed here, or by an"
                     " earlier reading)"},
)
_MANY_OCTETS = Operation(
    "The stored octets of up to 1000 versioned names in one answer, for a mirror's sync (pdi mirror sync): one"
    " multipart/mixed part a name, in the order asked, each its octets or the problem N2R would answer",
    body=Body("JSON: {\"names\": [versioned names]}, at most 1 MiB",
              {_JSON: {"schema": {"type": "object", "required": ["names"], "properties": {"names": {
                  "type": "array", "minItems": 1, "maxItems": 1000, "items": _name("pdi-whole")}}}}}),
    answers={200: Answer(
        "multipart/mixed (RFC 2046 §5.1), the boundary the SHA-256 of the names asked; each part has"
        " Content-Location (the name), Content-Length, and either Content-Type the record's media type and"
        " X-PDI-SHA256 with the octets (read by verified chunks), or application/problem+json (RFC 9457) with the"
        " status and detail N2R would answer (404, 403, 410 …). A reader without a token gets public names only;"
        " never cached (no-store). docs/reference/mirrors.md", "multipart/mixed", {"type": "string", "format": "binary"})},
    errors=(*_ALWAYS, 412, 413, 415),
    error_text={400: "The body is not JSON, or not {\"names\": [...]} of 1 to 1000 strings",
                412: "If-Match sent: /api/octets has no representation of its own to match (RFC 9110 §13.1.1)",
                413: "The body is more than 1 MiB"},
)
#: An archive's base URL as pdi records it: http(s)://host[:port][/path].
_BASE_URL = {"type": "string", "pattern": "^https?://[a-z0-9]+([.-][a-z0-9]+)*(:[1-9][0-9]{0,3})?(/[A-Za-z0-9._~-]+)*/?$"}
_MIRROR_ANNOUNCE = Operation(
    "An archive announces that it holds a copy of a series (pdi mirror sync --announce URL): recorded here as a"
    " peer, its keys pinned, listed by N2Ls (within 5 s), polled by pdi mirror audit",
    body=Body("JSON: {\"series\": S, \"base_url\": \"http(s)://…\", \"keys\": the announcing archive's JWK set},"
              " at most 64 KiB",
              {_JSON: {"schema": {"type": "object", "required": ["series", "base_url", "keys"], "properties": {
                  "series": _SERIES, "base_url": _BASE_URL, "keys": {
                      "type": "object", "required": ["keys"], "properties": {"keys": {
                          "type": "array", "minItems": 1, "maxItems": 8, "items": {
                              "type": "object", "required": ["kty", "crv", "x"], "properties": {
                                  "kty": {"const": "OKP"}, "crv": {"const": "Ed25519"},
                                  # 32 octets in unpadded base64url (its last character's low bits zero)
                                  "x": {"type": "string", "pattern": "^[A-Za-z0-9_-]{42}[AEIMQUYcgkosw048]$"}}}}}}}}}}),
    answers={201: Answer("Recorded now: {series, base_url, role: peer, keys, added_at}", _JSON, _OBJECT),
             200: Answer("Recorded already, with the same keys", _JSON, _OBJECT)},
    errors=(*_ALWAYS, 403, 404, 409, 412, 413, 415), role="mirror", tag="write",
    error_text={400: "The body is not the object above (the detail names the member), or a base URL that is not"
                     " http(s)://host[:port][/path]",
                403: "The token's role is below mirror, or its series do not cover S",
                404: "S is not registered here", 409: "That base URL is recorded for S already with other keys"},
)
_MIRROR_WITHDRAW = Operation(
    "An archive withdraws its announcement: this one forgets it as a peer of the series (never the origin a"
    " series is mirrored from here, nor a peer another token announced or the operator recorded)",
    (Param("series", "The series", required=True, schema=_SERIES),
     Param("base_url", "The base URL announced", required=True, schema=_BASE_URL)),
    answers={204: Answer("Forgotten")},
    errors=(*_ALWAYS, 403, 404, 412), role="mirror", tag="write",
    error_text={403: "The token's role is below mirror, its series do not cover S, or base_url is the origin or"
                     " was recorded by another token or by the operator",
                404: "That base URL is not recorded as holding S"},
)
_KEYS = Operation(
    "The archive's public signing key, a JWK set (RFC 7517 §5; kty OKP, crv Ed25519, RFC 8037), kid its RFC 7638"
    " thumbprint; also at /.well-known/pdi-keys",
    answers={200: Answer("The JWK set", "application/jwk-set+json", {
        "type": "object", "required": ["keys"], "properties": {"keys": {"type": "array", "items": _OBJECT}}})},
    errors=(*_ALWAYS, 404), error_text={404: "The archive has no signing key (pdi keys init)"},
)
_SEARCH = Operation(
    "Full-text search: passages matching the words and \"phrases\" given, ranked, each named by its char fragment",
    (Param("q", "Words, and phrases in double quotes", required=True,
           schema={"type": "string", "minLength": 1, "format": "search-query"}, examples=('truths "self-evident"',)),
     Param("series", "Only this series", schema=_optional(_SERIES)),
     Param("limit", f"Hits a page (1 to {MAX_SEARCH_LIMIT})",
           schema=_optional({"type": "integer", "minimum": 1, "maximum": MAX_SEARCH_LIMIT})),
     Param("after", "The next of the page before: how many hits came before this page",
           schema=_optional({"type": "string", "minLength": 1, "format": "search-cursor"}))),
    answers={200: Answer("The hits (name with #char=a,b, snippet, marks), the next page's URL, and how many names' text is not indexed yet (pending)", _JSON, _OBJECT)},
    errors=(*_ALWAYS, 403, 404),
)
_RFC5147 = Operation(
    "Evaluate an RFC 5147 fragment (its length and md5 checks too) on a text/plain name: the text it selects",
    (Param("pdi", "A text/plain name, versioned, without a fragment", required=True, schema=_name("pdi-text")),
     Param("fragment", "An RFC 5147 fragment without '#', e.g. char=7,20;length=55,UTF-8", required=True,
           schema={"type": "string", "minLength": 1, "format": "rfc5147"},
           examples=("char=7,20", "line=10,20"))),
    answers={200: Answer("The selected text and its range", _JSON, _OBJECT)}, errors=_READ,
    error_text={422: "A length or md5 check failed"},
)
_PDF_PAGE = Operation(
    "A page of a PDF's text layer (docs/pdf-text-layer.md) with each character's box, as PDFium gives it:"
    " what the viewer lays over the page pdf.js draws (a page of more than 200,000 characters is limit exceeded)",
    (Param("pdi", "A PDF's name, versioned (a fragment is ignored)", required=True, schema=_name("pdi-pdf")),
     Param("page", "The page, from 1", required=True, schema={"type": "string", "pattern": "^[1-9][0-9]{0,6}$"},
           examples=("1",))),
    answers={200: Answer("page, pages, start (its offset in the layer's text), text (the page's text T(n)),"
                         " boxes (left, bottom, right, top in points, or null, per character), crop (the CropBox clipped to the MediaBox),"
                         " rotation (the page's /Rotate as PDFium reads it: 0, 90, 180 or 270 degrees clockwise; the"
                         " viewer turns the page by it)", _JSON, _OBJECT)},
    errors=_READ,
)
_IMAGE_PREVIEW = Operation(
    "An image shrunk to at most 4,096 pixels on its longer side by libvips (in a bounded child process): what the"
    " viewer shows of an image too large for a browser to decode (docs/reference/viewer.md)",
    (Param("pdi", "A PNG, JPEG or TIFF image's name, versioned", required=True, schema=_name("pdi-image")),),
    answers={200: Answer("The preview: JPEG, or PNG where the image has alpha (an ETag; Cache-Control immutable, or"
                         " private, no-store as N2R's answer of the image read with a token)",
                         "image/jpeg", {"type": "string", "format": "binary"}),
             304: Answer("Not modified")},
    errors=_READ,
)
_ANCHOR = Operation(
    "Find the passage a name cites in another version of the document: its name there, how found, the score",
    (Param("pdi", "The cited passage: a versioned name with a char, line, elt or name fragment ('#' as %23)",
           required=True, schema=_name("pdi-passage")),
     # pdi.archive.anchoring._version_choice: stripped, "latest" in any case, or a positive number
     Param("to", "The version to look in: a number, or latest", required=True,
           schema={"type": "string", "pattern": "^\\s*(?:[Ll][Aa][Tt][Ee][Ss][Tt]|0*[1-9][0-9]*)\\s*$"},
           examples=("latest", "2"))),
    answers={200: Answer("pdi (the passage's name in that version), method (exact, quote, fuzzy), score,"
                         " context, start, end, quote, found", _JSON, _OBJECT)},
    errors=_READ, error_text={422: "The problem types passage-orphaned, passage-ambiguous"},
)
#: A deposit's 404 (pdi.errors.SeriesNotRegisteredError).
_UNREGISTERED = ("The series is not registered here (problem type series-not-registered): only the archive's keeper"
                 " registers one; GET /api/series lists those that are. Nothing is deposited")
_DEPOSIT = Operation(
    "Mint a name for today (GMT) and deposit the body as its first version",
    (Param("series", "The series to mint in", required=True, schema=_SERIES),
     Param("format", "The format token; default: the one registered for Content-Type", schema=_optional(_FORMAT)),
     Param("id", "A foreign id to encapsulate instead of a daily serial",
           schema={"type": "string"}),
     Param("charset", "The body's charset (default: Content-Type's charset parameter)", schema=_CHARSET),
     _EMBARGO, _ALLOW_EMPTY, _IDEMPOTENCY),
    body=Body("The document's octets, streamed; Content-Type its media type", _ANY_BODY),
    answers=_WRITTEN, errors=(*_WRITE, 412), role="deposit", tag="write", error_text={404: _UNREGISTERED},
)
_BATCH = Operation(
    "Many deposits in one request, all or nothing: each file part of a multipart/form-data body one document",
    (Param("series", "The series to mint in", required=True, schema=_SERIES), _EMBARGO,
     Param("allow_empty", "true: deposit an empty file part (0 octets) all the same; without it one is 400 (item N)"
                          " and nothing is deposited", schema={"type": "string", "enum": ["true", "false", ""]}),
     _IDEMPOTENCY),
    body=Body(f'File parts (each its Content-Type; at most {MAX_BATCH}), and an optional JSON field manifest listing'
              ' {"format", "id", "charset"} item by item', {"multipart/form-data": {"schema": {
                  "type": "object", "required": ["file"],
                  "properties": {"manifest": {"type": "string", "format": "batch-manifest"},
                                 "file": {"type": "string", "format": "binary"}}},
                                          "encoding": {"file": {"contentType": "text/plain"}}}}),
    answers={201: Answer("The items in the parts' order, each as a deposit answers it: an item whose id is minted today"
                         " with these bytes in its latest version is that name, unchanged true, nothing stored for it",
                         _JSON, _BATCH_BODY),
             200: Answer("Nothing new stored: every item held already, each unchanged true", _JSON,
                         _BATCH_BODY)},
    errors=(*_WRITE, 412), role="deposit", tag="write",
    error_text={400: "A parameter given more than once, an item refused (item N: why), a part that is a field but"
                     " for one manifest (part N), or the body malformed,"
                     " cut short before its closing boundary (--BOUNDARY--) or ending before its Content-Length:"
                     " the problem says which and where, and nothing is deposited",
                404: _UNREGISTERED,
                413: f"The body is more than the upload limit (pdi serve --max-upload-mib), or holds more than {MAX_BATCH}"
                     " file parts: nothing is deposited"},
)
_VERSION = Operation(
    "Deposit the body as a new version of a document",
    (Param("pdi", "The document's generic name", required=True, schema=_name("pdi-whole")),
     Param("format", "The format token", schema=_optional(_FORMAT)), Param("charset", "The body's charset", schema=_CHARSET),
     _EMBARGO, _ALLOW_EMPTY, _IDEMPOTENCY),
    body=Body("The new version's octets", _ANY_BODY), answers=_WRITTEN, errors=(*_WRITE, 412), role="deposit", tag="write",
)
_FORMAT_ADD = Operation(
    "Add the body as another format of an existing version",
    (Param("pdi", "The versioned name", required=True, schema=_name("pdi-versioned")),
     Param("format", "The format token", required=True, schema=_FORMAT),
     Param("charset", "The body's charset", schema=_CHARSET), _ALLOW_EMPTY, _IDEMPOTENCY),
    body=Body("The format's octets", _ANY_BODY), answers=_WRITTEN, errors=(*_WRITE, 412), role="deposit", tag="write",
)
_STATEMENTS = Operation(
    "Make a statement key = value about a name (history is kept)",
    (_WHOLE, Param("key", "A Dublin Core term or a free key", required=True,
                      schema={"type": "string", "minLength": 1, "format": "statement-key"})),
    body=Body(f"The value: text in the charset of its Content-Type, UTF-8 if none (at most {MAX_STATEMENT} octets)", _TEXT_BODY, required=False),
    answers={201: Answer("The statement as stored", _JSON, _OBJECT)}, errors=(*_WRITE, 412), role="curate", tag="write",
)
_WITHDRAW = Operation(
    "Withdraw a version (a versioned name) or a whole document (a generic name), saying why",
    (_WHOLE, Param("reason", "Why (or give it as the body, text)", schema={"type": "string"}),
     Param("purge", "true: also delete the octets (a legal takedown; needs the role admin),"
                    " except blobs another name keeps", schema={"type": "string", "enum": ["true", "false", ""]})),
    body=Body(f"The reason: text in the charset of its Content-Type, UTF-8 if none (at most {MAX_STATEMENT} octets; none if reason= is given)", _TEXT_BODY,
              required=False),
    answers={201: Answer("The tombstone (withdrawn.purged; kept: SHA-256 of blobs other names keep);"
                         " N2R of the name is 410 from now on", _JSON, _OBJECT),
             200: Answer("Withdrawn before (without purge=true): that tombstone, its reason kept; nothing was"
                         " recorded", _JSON, _OBJECT)},
    errors=(*_WRITE, 412), role="curate", tag="write",
)
_EMBARGO_SET = Operation(
    "Embargo a document (a generic name) or a version until a date, or lift its embargo (lift=true); the"
    " parameters are the query's alone (a request with a body is refused, 400), and one of until and lift is given",
    (_WHOLE, Param("until", "A date (2027-01-01, its start in GMT) or a time with its zone", schema=_MOMENT),
     Param("lift", "true: lift the name's own embargo (refused with until, and without either)",
           schema={"type": "string", "enum": ["true", "false", ""]}),
     Param("shorten", "true: allow an until earlier than the name's own embargo in force (refused without it)",
           schema={"type": "string", "enum": ["true", "false", ""]})),
    answers={200: Answer("{pdi, embargo_until, changed, before, held}: readers without a token for the series get"
                         " 403 until then; embargo_until is the name's own embargo in force or its document's, the"
                         " later (null: none in force); before, its own embargo before (null: none); held, each"
                         " other embargo in force that still holds it, [{pdi, embargo_until}] (a version's"
                         " document, a document's versions: one neither sets nor lifts the other)",
                         _JSON, _OBJECT)},
    error_text={409: "An until earlier than the name's own embargo in force, without shorten=true (the detail names"
                     " both), or a lift that would lift nothing in force while another embargo still holds the name"
                     " (the detail names it and the name that lifts it): nothing changed"},
    errors=(*_WRITE, 412), role="curate", tag="write",
)
_AUDIT = Operation(
    "The audit log: every write, who, when, what, from where (the whole archive's: an admin token of every series)",
    (Param("after", "Entries after this number", schema=_optional(_COUNT)),
     Param("limit", "Entries (1 to 10000)", schema=_optional({"type": "integer", "minimum": 1, "maximum": 10_000}))),
    answers={200: Answer("The entries", _JSON, {"type": "array", "items": _OBJECT})},
    errors=(*_ALWAYS, 403), role="admin", tag="write",
)

_HEALTHZ = Operation(
    "Alive: the worker answers (no catalog or blob store is touched); for a load balancer or a watchdog",
    answers={200: Answer("ok", "text/plain", {"type": "string", "const": "ok\n"})},
    errors=(400, 401, 405), tag="operate",
)
_READYZ = Operation(
    "Ready: the catalog answers a query and the blob store lists a name, each within 2 s",
    answers={200: Answer("Both reachable", _JSON, {
        "type": "object", "required": ["status", "checked"],
        "properties": {"status": {"const": "ready"}, "checked": {"type": "array", "items": {"type": "string"}}}})},
    errors=_ALWAYS, error_text={503: "Not ready: the problem's failed member names each part that failed"
                                        " (catalog, blobs), its detail says how"},
    tag="operate",
)
_METRICS = Operation(
    "Prometheus metrics of every worker, in the text exposition format (pdi serve --metrics-token says who may"
    " read them; without one, clients on the server's loopback addresses not forwarded by a proxy)",
    answers={200: Answer("The metrics", "text/plain", {"type": "string"})},
    errors=(403, 405), error_text={403: "Not open to this client: without the metrics token, or not from the"
                                        " server's own machine"},
    tag="operate",
)

#: (method, path) -> what the route is. Each route of the app under /api/, /uri-res/, /timegate/, /timemap/
#: and /oai has one.
OPERATIONS: dict[tuple[str, str], Operation] = {
    ("GET", "/uri-res/{service}"): _URI_RES,
    ("GET", "/api/resolve"): _RESOLVE,
    ("GET", "/api/annotation"): _ANNOTATION_GET,
    ("POST", "/api/annotation"): _ANNOTATION_POST,
    ("GET", "/api/annotations/"): _CONTAINER_GET,
    ("POST", "/api/annotations/"): _CONTAINER_POST,
    ("OPTIONS", "/api/annotations/"): _CONTAINER_OPTIONS,
    ("GET", "/api/annotations/{slug}"): _ANNOTATION_ONE,
    ("PUT", "/api/annotations/{slug}"): _ANNOTATION_PUT,
    ("DELETE", "/api/annotations/{slug}"): _ANNOTATION_DELETE,
    ("OPTIONS", "/api/annotations/{slug}"): _ANNOTATION_OPTIONS,
    ("GET", "/api/ls"): _LS,
    ("GET", "/api/meta"): _META,
    ("GET", "/api/cite"): _CITE,
    ("GET", "/timegate/{target}"): _TIMEGATE,
    ("GET", "/timemap/link/{target}"): _TIMEMAP,
    ("GET", "/timemap/link/page/{cursor}/{target}"): _TIMEMAP_PAGE,
    ("GET", "/oai"): _OAI_GET,
    ("POST", "/oai"): _OAI_POST,
    ("GET", "/api/series"): _SERIES_LIST,
    ("GET", "/api/manifest"): _MANIFEST,
    ("GET", "/api/manifest.tsr"): _MANIFEST_TSR,
    ("POST", "/api/octets"): _MANY_OCTETS,
    ("GET", "/api/element-index"): _ELEMENT_INDEX,
    ("GET", "/api/keys"): _KEYS,
    ("GET", "/api/search"): _SEARCH,
    ("GET", "/api/rfc5147"): _RFC5147,
    ("GET", "/api/pdf/page"): _PDF_PAGE,
    ("GET", "/api/image/preview"): _IMAGE_PREVIEW,
    ("GET", "/api/anchor"): _ANCHOR,
    ("POST", "/api/deposit"): _DEPOSIT,
    ("POST", "/api/batch"): _BATCH,
    ("POST", "/api/version"): _VERSION,
    ("POST", "/api/format"): _FORMAT_ADD,
    ("POST", "/api/statements"): _STATEMENTS,
    ("POST", "/api/withdraw"): _WITHDRAW,
    ("POST", "/api/embargo"): _EMBARGO_SET,
    ("GET", "/api/audit"): _AUDIT,
    ("POST", "/api/mirrors"): _MIRROR_ANNOUNCE,
    ("DELETE", "/api/mirrors"): _MIRROR_WITHDRAW,
    ("GET", "/healthz"): _HEALTHZ,
    ("GET", "/readyz"): _READYZ,
    ("GET", "/metrics"): _METRICS,
}
