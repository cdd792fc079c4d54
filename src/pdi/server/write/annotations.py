"""The annotation server: W3C Web Annotation Protocol over the catalog's annotations (an edge).

Implements the W3C *Web Annotation Protocol* (Recommendation, 23 February
2017, https://www.w3.org/TR/annotation-protocol/) over
:mod:`pdi.archive.kept_annotations` (what is kept, who may read it):

* §4, §4.1 one Annotation Container, ``/api/annotations/`` (its IRI ends in
  ``/``), an LDP Basic Container: ``GET``, ``HEAD``, ``OPTIONS`` (and
  ``POST``), each answer with ``Link: <http://www.w3.org/ns/ldp#BasicContainer>;
  rel="type"`` and ``<http://www.w3.org/TR/annotation-protocol/>;
  rel="http://www.w3.org/ns/ldp#constrainedBy"``, an ``ETag``, ``Allow``,
  ``Accept-Post`` and ``Vary: Accept, Prefer``;
* §4.2 its representation: ``["BasicContainer", "AnnotationCollection"]``
  with ``total``, ``first`` (the first page, embedded) and ``last`` (a
  link), paged :attr:`AnnotationServer.page_size` annotations a page;
  ``?iris=1`` lists IRIs, ``?iris=0`` (the default) whole annotations, and
  that IRI is the representation's ``id`` and its ``Content-Location``;
* §4.2.1 ``Prefer: return=representation; include="…"`` with
  ``http://www.w3.org/ns/ldp#PreferMinimalContainer`` (no page embedded:
  ``first`` and ``last`` are links), ``http://www.w3.org/ns/oa#PreferContainedIRIs``
  or ``…#PreferContainedDescriptions`` (both at once: 400), answered with
  ``Preference-Applied: return=representation``;
* §4.3 pages, ``?iris=I&page=N`` (from 0): ``AnnotationPage`` with
  ``partOf`` (the container's IRI and ``total``), ``startIndex``, ``next``
  and ``prev`` where there are such pages, ``items``;
* §3 each annotation's IRI, ``/api/annotations/{slug}``: ``GET``, ``HEAD``,
  ``OPTIONS``, with ``Link: <http://www.w3.org/ns/ldp#Resource>; rel="type"``
  (and ``oa#Annotation``), an ``ETag``, ``Allow`` and ``Vary: Accept``;
  ``If-None-Match`` answers ``304`` (the container's too). A ``304`` keeps ``Link``, ``Allow`` and
  ``Accept-Post``: RFC 9110 §15.4.5's "SHOULD NOT" is of representation metadata, and these describe the resource
  (§10.2), which §4.1 ("a Link header on all responses") and LDP 1.0 §4.2.1.4 ask on every answer; it carries no
  ``Content-Type``;
* §5.1, §5.2 ``POST`` to the container (``application/ld+json`` or
  ``application/json``, else 415) creates one: ``201``, ``Location`` its
  IRI, the annotation as kept (the server's ``id``, ``created``); a
  ``Slug`` names it where safe; ``If-Match`` and ``If-None-Match`` are
  conditions on the container (RFC 9110 §13.1.1, §13.1.2), compared with the
  current ``ETag`` of each representation of its description (the tag a
  client read, whichever ``?iris=``, ``Prefer`` and media type it read it
  with; not a page's), ``If-None-Match: *`` never holding: ``412``, checked
  again in the transaction that keeps the annotation;
* §5.3 ``PUT`` replaces it, §5.4 ``DELETE`` deletes it (``204``); both need
  ``If-Match`` with its current ``ETag`` (RFC 9110 §13.1.1): ``428``
  Precondition Required without one (RFC 6585 §3; the protocol's SHOULD made
  a MUST, so no change is ever lost to another), ``412`` when it is stale.
  A ``PUT`` whose ``id`` is not the annotation's IRI is ``409``. A ``PUT`` refused for breaking the protocol's
  constraints (``400``, ``409``, ``415``) names them, ``Link: <http://www.w3.org/TR/annotation-protocol/>;
  rel="http://www.w3.org/ns/ldp#constrainedBy"`` (LDP 1.0 §4.2.1.6), as the container's answers do.

Content negotiation (§3): JSON-LD compacted against the Web Annotation
context, ``application/ld+json; profile="http://www.w3.org/ns/anno.jsonld"``,
for an ``Accept`` that allows it (a ``profile`` parameter must then name the
anno or LDP context) or no ``Accept``; ``application/json`` when the client
prefers that; else ``406``. Answers say ``Cache-Control: no-cache`` (they
change) and are open to other origins (CORS: ``OPTIONS`` is the preflight).

Writes take a bearer token (:func:`pdi.server.write.api.bearer_writer`, never the
sign-in cookie) with the role ``curate`` over the series of each archived
document the annotation targets; reads are as the reader may read those
documents (:mod:`pdi.server.http.readers`). ``/api/annotation`` (one name's
annotation out, and the names posted annotations point at) is
:mod:`pdi.server.protocol.web_annotation`, unchanged.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any, Final

import anyio.to_thread
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from pdi._wording import shown_field
from pdi.archive import Archive
from pdi.archive.kept_annotations import CONTEXT, MAX_ANNOTATION, entity_tag, representation
from pdi.archive.store import AnnotationRecord
from pdi.errors import (
    ImmutabilityError,
    LimitError,
    NotFoundError,
    ParseError,
    PDIError,
    PreconditionError,
    UnsupportedError,
)
from pdi.interop.accept import MediaRange, choose, list_elements, parse_accept
from pdi.server.http import params
from pdi.server.http.bodies import read_json
from pdi.server.http.conditional import if_match_holds, tag_matches
from pdi.server.http.problems import Problem, on_pdi_error, on_problem
from pdi.server.write.api import bearer_writer

#: Where the container is (its IRI ends in "/", §4).
CONTAINER: Final = "/api/annotations/"
#: The media type of the Web Annotation profile (§3).
ANNOTATION_TYPE: Final = f'application/ld+json; profile="{CONTEXT}"'
LDP_CONTEXT: Final = "http://www.w3.org/ns/ldp.jsonld"
LDP: Final = "http://www.w3.org/ns/ldp#"
OA: Final = "http://www.w3.org/ns/oa#"
PREFER_MINIMAL: Final = LDP + "PreferMinimalContainer"
PREFER_IRIS: Final = OA + "PreferContainedIRIs"
PREFER_DESCRIPTIONS: Final = OA + "PreferContainedDescriptions"
#: Annotations a page holds (the server's discretion, §4.2).
DEFAULT_PAGE_SIZE: Final = 100
#: The highest page number read (a page past the last is 404 anyway).
MAX_PAGE: Final = 10**9

#: The protocol's constraints (§4.1), named by a container's every answer and a refused update (LDP 1.0 §4.2.1.6).
CONSTRAINED_BY: Final = f'<http://www.w3.org/TR/annotation-protocol/>; rel="{LDP}constrainedBy"'
CONTAINER_LINK: Final = f'<{LDP}BasicContainer>; rel="type", {CONSTRAINED_BY}'
#: A refusal of what the protocol's constraints forbid: an invalid annotation, a kept property changed, a context not
#: the anno one.
_CONSTRAINT_STATUSES: Final = frozenset({400, 409, 415})
ANNOTATION_LINK: Final = f'<{LDP}Resource>; rel="type", <{OA}Annotation>; rel="type"'
CONTAINER_ALLOW: Final = "GET, HEAD, OPTIONS, POST"
PAGE_ALLOW: Final = "GET, HEAD, OPTIONS"
ANNOTATION_ALLOW: Final = "GET, HEAD, OPTIONS, PUT, DELETE"
_EXPOSED: Final = "Allow, Content-Location, ETag, Link, Location, Preference-Applied, Accept-Post, Vary"
_CORS_HEADERS: Final = "Accept, Authorization, Content-Type, If-Match, If-None-Match, Prefer, Slug"
_OFFERED: Final = (ANNOTATION_TYPE, "application/json")
#: A POST's If-Match or If-None-Match that does not hold of the container (412).
CONTAINER_CHANGED: Final = ("the container is no longer in the state its If-Match names, or is in one its If-None-Match"
                            " names (If-None-Match: * never holds: the container always exists): read it again (ETag)")
#: RFC 9110 §5.6: OWS and BWS (spaces and tabs), token, quoted-string (a backslash quotes the character after it).
_OWS = r"[ \t]*"
_TOKEN = r"[!#$%&'*+.^_`|~0-9A-Za-z-]+"
_WORD = rf'(?:{_TOKEN}|"(?:[^"\\]|\\.)*")'
#: RFC 7240 §2: preference = token [ BWS "=" BWS word ] *( OWS ";" [ OWS parameter ] );
#: parameter = token [ BWS "=" BWS word ].
_PREFERENCE = re.compile(
    rf"{_OWS}({_TOKEN})(?:{_OWS}={_OWS}({_WORD}))?((?:{_OWS};(?:{_OWS}{_TOKEN}(?:{_OWS}={_OWS}{_WORD})?)?)*){_OWS}",
    re.DOTALL)
_PARAMETER = re.compile(rf";{_OWS}({_TOKEN})(?:{_OWS}={_OWS}({_WORD}))?", re.DOTALL)
_QUOTED_PAIR = re.compile(r"\\(.)", re.DOTALL)


def negotiate(accept: str | None) -> str:
    """The media type to answer in (module docstring); :class:`~pdi.errors.UnsupportedError` as ``406``."""
    ranges = parse_accept(accept)
    usable = [r for r in ranges if _profile_fits(r)]
    chosen = choose(usable, _OFFERED) if usable or not ranges else None
    if chosen is None:
        raise NotAcceptable(f"this answers {_OFFERED[0]} or application/json, not {(accept or '')[:120]!r}")
    return _OFFERED[chosen]


def _profile_fits(media_range: MediaRange) -> bool:
    """A range of ``application/ld+json`` with a profile fits only if the profile names the anno or LDP context."""
    if media_range.profile is None or (media_range.type, media_range.subtype) != ("application", "ld+json"):
        return True
    return bool({CONTEXT, LDP_CONTEXT} & set(re.split(r"[ \t]+", media_range.profile)))


class NotAcceptable(UnsupportedError):
    """An ``Accept`` that allows no representation this resource has (``406``, RFC 9110 §15.5.7)."""

    http_status = 406
    title = "not acceptable"


def preferences(fields: list[str]) -> tuple[bool, set[str]]:
    """What ``Prefer`` fields ask of a container (RFC 7240 §4.2; LDP §7.2): whether ``return=representation``,
    and the IRIs its ``include`` names.

    The fields are one list of preferences, in order (RFC 9110 §5.3), each read by RFC 7240 §2's grammar; one
    that does not fit it is not understood, and ignored. Only the first ``return`` counts ("If any preference is
    specified more than once, only the first instance is to be considered"): ``return=minimal,
    return=representation`` prefers a minimal answer. A preference's name is compared without regard to case, its
    value as written; ``include`` is a parameter of that ``return`` (``return=representation;
    include="…"``), never another preference's, and text in a quoted string is never read as a preference."""
    for name, value, parameters in _preference_list(", ".join(fields)):
        if name.lower() != "return":
            continue
        if value != "representation":
            return False, set()
        listed = next((v for k, v in parameters if k.lower() == "include"), "")
        include = {iri for iri in re.split(r"[ \t]+", listed) if iri}
        if {PREFER_IRIS, PREFER_DESCRIPTIONS} <= include:
            raise ParseError("Prefer may not include both PreferContainedIRIs and PreferContainedDescriptions"
                             " (Web Annotation Protocol §4.2.1)", rule="Prefer")
        return True, include
    return False, set()


def _preference_list(value: str) -> list[tuple[str, str, list[tuple[str, str]]]]:
    """The preferences of a ``Prefer`` list that fit RFC 7240 §2's grammar, in order: each its name, its value and
    its parameters (a quoted value unquoted; no value: ``""``, as §2 says an empty one is)."""
    found: list[tuple[str, str, list[tuple[str, str]]]] = []
    # each up to a comma outside a quoted string (a quote never closed quotes nothing), in one pass: a regular
    # expression read each quote never closed to the end again, 30 s of the event loop for 64 KB of "\ (2026-12-01)
    for element in list_elements(value):
        read = _PREFERENCE.fullmatch(element)
        if read is None:  # an empty list element (RFC 9110 §5.6.1), or one not understood
            continue
        parameters = [(m.group(1), _unquoted(m.group(2))) for m in _PARAMETER.finditer(read.group(3))]
        found.append((read.group(1), _unquoted(read.group(2)), parameters))
    return found


def _unquoted(word: str | None) -> str:
    """A token as it is, a quoted-string's content with its quoted-pairs read; none: ``""``."""
    if word is None:
        return ""
    return _QUOTED_PAIR.sub(r"\1", word[1:-1]) if word.startswith('"') else word


class AnnotationServer:
    """The container and annotation routes of the annotation server, over one archive."""

    def __init__(self, archive: Archive, *, base_url: str | None = None, page_size: int = DEFAULT_PAGE_SIZE) -> None:
        if not 1 <= page_size <= 10_000:
            raise LimitError(f"a page holds 1 to 10000 annotations, not {page_size}")
        self.archive = archive  # its reads are cheap catalog look-ups: they never wait for WorkLimits
        self.base_url = base_url
        self.page_size = page_size

    def routes(self) -> list[Route]:
        return [
            Route(CONTAINER, self.container, methods=["GET", "POST", "OPTIONS"]),
            Route(CONTAINER + "{slug}", self.annotation, methods=["GET", "PUT", "DELETE", "OPTIONS"]),
        ]

    # --- IRIs -----------------------------------------------------------------------------------
    def _base(self, request: Request) -> str:
        return (self.base_url or str(request.base_url)).rstrip("/")

    def _container_iri(self, request: Request, iris: bool) -> str:
        return f"{self._base(request)}{CONTAINER}?iris={int(iris)}"

    def _page_iri(self, request: Request, iris: bool, page: int) -> str:
        return f"{self._container_iri(request, iris)}&page={page}"

    def _annotation_iri(self, request: Request, slug: str) -> str:
        return f"{self._base(request)}{CONTAINER}{slug}"

    # --- the container ------------------------------------------------------------------------
    async def container(self, request: Request) -> Response:
        """The Annotation Container (Web Annotation Protocol §4): GET/HEAD its description or a page; POST an
        annotation to create it (§5.1); OPTIONS."""
        try:
            return await self._container(request)
        except (PDIError, Problem) as exc:
            # §4.1: the container's Link "on all responses", a refusal too
            answer = await _refusal(request, exc)
            if "page" not in request.query_params:  # as sent: a repeated page= is refused as a page's
                answer.headers["Link"] = CONTAINER_LINK
                answer.headers.setdefault("Allow", CONTAINER_ALLOW)
            return answer

    async def _container(self, request: Request) -> Response:
        page_param = params.optional(request, "page")
        if request.method == "OPTIONS":
            return _options(CONTAINER_ALLOW if page_param is None else PAGE_ALLOW,
                            CONTAINER_LINK if page_param is None else None, post=page_param is None)
        if request.method == "POST":
            if page_param is not None:
                refusal = Problem(405, "method not allowed", f"a page of the container is not written: POST to {CONTAINER}")
                refusal.headers["Allow"] = PAGE_ALLOW
                raise refusal
            return await self._create(request)
        media_type = negotiate(request.headers.get("accept"))
        iris_param = params.optional(request, "iris")
        if iris_param not in (None, "0", "1"):
            raise ParseError(f"iris= is 0 (whole annotations) or 1 (their IRIs), not {iris_param[:20]!r}", rule="iris")
        if page_param is not None:
            return await self._page(request, media_type, iris_param == "1", _page_number(page_param))
        wanted, include = preferences(request.headers.getlist("prefer"))
        iris = iris_param == "1" if iris_param is not None else (wanted and PREFER_IRIS in include)
        minimal = wanted and PREFER_MINIMAL in include

        def answer() -> Response:  # in a thread: the JSON of a page of annotations is long
            total, records = self.archive.annotations(0, 1 if minimal else self.page_size)
            body = self._description(request, iris, minimal, total, records)
            headers = {"Link": CONTAINER_LINK, "Allow": CONTAINER_ALLOW, "Accept-Post": ANNOTATION_TYPE,
                       "Content-Location": body["id"], "Vary": "Accept, Prefer"}
            if wanted:
                headers["Preference-Applied"] = "return=representation"
            return _answer(request, body, media_type, headers)

        return await anyio.to_thread.run_sync(answer)

    def _description(
        self, request: Request, iris: bool, minimal: bool, total: int, records: list[AnnotationRecord]
    ) -> dict[str, Any]:
        """The container's description (§4.2): ``total`` annotations, the first page's ``records`` embedded unless
        ``minimal`` (§4.2.1), as IRIs with ``iris``."""
        body: dict[str, Any] = {
            "@context": [CONTEXT, LDP_CONTEXT],
            "id": self._container_iri(request, iris),
            "type": ["BasicContainer", "AnnotationCollection"],
            "label": "The annotations of this archive",
            "total": total,
        }
        if total:
            if minimal:
                body["first"] = self._page_iri(request, iris, 0)
            else:
                body["first"] = self._page_body(request, iris, 0, total, records, embedded=True)
            body["last"] = self._page_iri(request, iris, _last_page(total, self.page_size))
        return body

    def _container_tags(self, request: Request) -> list[str]:
        """The ``ETag`` of every representation of the container's description as it is now, as ``GET`` of
        ``/api/annotations/`` sends them to this reader: with ``?iris=`` 0 or 1 (or ``Prefer`` choosing either),
        whole or minimal (``Prefer``, §4.2.1), in either media type. Its pages (``?page=N``) are resources of their
        own, and not among them. Read in the caller's transaction (the create's: :meth:`_create`)."""
        total, records = self.archive.annotations(0, self.page_size)
        return [_tag(self._description(request, iris, minimal, total, records), media_type)
                for iris in (False, True) for minimal in (False, True) for media_type in _OFFERED]

    async def _page(self, request: Request, media_type: str, iris: bool, page: int) -> Response:
        def answer() -> Response:  # in a thread: the JSON of a page of annotations is long
            total, records = self.archive.annotations(page * self.page_size, self.page_size)
            if page > _last_page(total, self.page_size):
                raise NotFoundError(f"the container has {_last_page(total, self.page_size) + 1} pages (from 0),"
                                    f" not page {page}")
            body = self._page_body(request, iris, page, total, records, embedded=False)
            return _answer(request, body, media_type, {"Allow": PAGE_ALLOW, "Vary": "Accept"})

        return await anyio.to_thread.run_sync(answer)

    def _page_body(
        self, request: Request, iris: bool, page: int, total: int, records: list[AnnotationRecord], *, embedded: bool
    ) -> dict[str, Any]:
        """An ``AnnotationPage`` (§4.3; Web Annotation Data Model §5.2): embedded in the container, or on its own."""
        body: dict[str, Any] = {} if embedded else {"@context": CONTEXT}
        body.update({"id": self._page_iri(request, iris, page), "type": "AnnotationPage"})
        if not embedded:
            body["partOf"] = {"id": self._container_iri(request, iris), "total": total}
        body["startIndex"] = page * self.page_size
        if page < _last_page(total, self.page_size):
            body["next"] = self._page_iri(request, iris, page + 1)
        if page > 0:
            body["prev"] = self._page_iri(request, iris, page - 1)
        body["items"] = [self._item(request, record, iris) for record in records]
        return body

    def _item(self, request: Request, record: AnnotationRecord, iris: bool) -> Any:
        iri = self._annotation_iri(request, record.slug)
        if iris:
            return iri
        shown = representation(record, iri)
        if shown.get("@context") == CONTEXT:
            del shown["@context"]  # the page's context says it
        return shown

    async def _create(self, request: Request) -> Response:
        # the container has representations: its If-Match and If-None-Match are evaluated (RFC 9110 §13.1.1,
        # §13.1.2), not refused as /api/deposit's If-Match is
        writer = await bearer_writer(self.archive, request, reads_if_match=True)
        params.only(request, frozenset())  # the Slug is a header (RFC 5023 §9.7): a ?slug= would be left unread
        media_type = negotiate(request.headers.get("accept"))
        slug = request.headers.get("slug")
        condition, none_match = request.headers.get("if-match"), request.headers.get("if-none-match")
        # RFC 9110 §13.2.1: preconditions are ignored where the answer without them, before the content is read,
        # is not 2xx: a Content-Type no annotation is sent as is 415 whatever If-Match says
        _annotation_kind(request)
        holds = None
        if condition is not None or none_match is not None:
            def holds() -> bool:  # in the create's own write transaction: no other conditional create slips in
                # the container always has a current representation: If-None-Match: * never holds, If-Match: * always
                # (§13.1.1, §13.1.2); with tags, those of its description's every representation (_container_tags)
                tags = self._container_tags(request)
                if condition is not None and not any(if_match_holds(condition, t) for t in tags):
                    return False
                return none_match is None or not any(tag_matches(none_match, t) for t in tags)

            # before the annotation is read, as RFC 9110 §13.2.1 has it (a stale tag is 412 whatever was sent);
            # the create checks again, in its transaction
            if not await anyio.to_thread.run_sync(holds):
                raise PreconditionError(CONTAINER_CHANGED)
        data = await _annotation_body(request)

        def create() -> Response:  # in a thread: the annotation kept, and its JSON written (up to MAX_ANNOTATION)
            record = self.archive.create_annotation(data, slug=slug, writer=writer, holds=holds)
            iri = self._annotation_iri(request, record.slug)
            return _answer(request, representation(record, iri), media_type,
                           _annotation_headers(record, media_type, Location=iri), status=201)

        return await anyio.to_thread.run_sync(create)

    # --- one annotation ---------------------------------------------------------------------
    async def annotation(self, request: Request) -> Response:
        """An annotation (Web Annotation Protocol §3): GET/HEAD it; PUT its new state (§5.3) or DELETE it (§5.4),
        with If-Match its ETag; OPTIONS."""
        try:
            return await self._annotation(request)
        except (PDIError, Problem) as exc:
            answer = await _refusal(request, exc)
            if request.method == "PUT" and answer.status_code in _CONSTRAINT_STATUSES:
                # LDP 1.0 §4.2.1.6: "to all responses to requests that fail due to violation of those constraints"
                answer.headers["Link"] = CONSTRAINED_BY
            return answer

    async def _annotation(self, request: Request) -> Response:
        slug = request.path_params["slug"]
        if request.method == "OPTIONS":
            return _options(ANNOTATION_ALLOW, ANNOTATION_LINK)
        if request.method in ("PUT", "DELETE"):
            return await self._change(request, slug)
        media_type = negotiate(request.headers.get("accept"))

        def answer() -> Response:  # in a thread: an annotation's JSON may be long (MAX_ANNOTATION)
            record = self.archive.annotation(slug)
            return _answer(request, representation(record, self._annotation_iri(request, slug)), media_type,
                           _annotation_headers(record, media_type))

        return await anyio.to_thread.run_sync(answer)

    async def _change(self, request: Request, slug: str) -> Response:
        writer = await bearer_writer(self.archive, request, reads_if_match=True)
        params.only(request, frozenset())  # the Slug is a header (RFC 5023 §9.7): a ?slug= would be left unread
        if request.method == "PUT" and "content-range" in request.headers:  # RFC 9110 §14.4: MUST be 400
            raise ParseError("a PUT with Content-Range would replace the annotation with a part of one: send it whole",
                             rule="Content-Range")
        condition = request.headers.get("if-match")
        # without If-Match the answer is 428 whatever else is asked: any other precondition is ignored (RFC 9110
        # §13.2.1); with it, If-None-Match is evaluated after it (§13.2.2), by the same check of the current tag
        if condition is None:
            raise Problem(428, "precondition required",
                          f"{request.method} of an annotation needs If-Match: the ETag it had when you read it")

        none_match = request.headers.get("if-none-match")

        def holds(tag: str) -> bool:  # the tag of either representation names the state it was read in
            tags = (tag, variant_tag(tag, "application/json"))
            return (any(if_match_holds(condition, t) for t in tags)
                    and (none_match is None or not any(tag_matches(none_match, t) for t in tags)))

        if request.method == "DELETE":
            await anyio.to_thread.run_sync(
                lambda: self.archive.delete_annotation(slug, holds=holds, writer=writer))
            return Response(status_code=204, headers=_cors({"Cache-Control": "no-cache"}))
        media_type = negotiate(request.headers.get("accept"))
        data = await _annotation_body(request)
        iri = self._annotation_iri(request, slug)
        if isinstance(data, dict) and "id" in data and data["id"] != iri:
            raise ImmutabilityError(f"the annotation's id is {iri}, not {str(data['id'])[:120]!r}: it may not change")

        def replace() -> Response:  # in a thread: the annotation kept, and its JSON written
            record = self.archive.replace_annotation(slug, data, holds=holds, writer=writer)
            return _answer(request, representation(record, iri), media_type, _annotation_headers(record, media_type))

        return await anyio.to_thread.run_sync(replace)


def _annotation_headers(record: AnnotationRecord, media_type: str, **more: str) -> dict[str, str]:
    return {"Link": ANNOTATION_LINK, "Allow": ANNOTATION_ALLOW, "ETag": variant_tag(entity_tag(record), media_type),
            "Vary": "Accept", **more}


def variant_tag(tag: str, media_type: str) -> str:
    """The strong ETag of an annotation's representation in ``media_type``: its state's ``tag`` as JSON-LD, a tag
    of its own as plain JSON. RFC 9110 §8.8.1: representations that differ only in their metadata, as with
    negotiated media types of one data format, need validators that tell them apart (found in review, 2026-11-27:
    a cache revalidating one could be told ``304`` of the other, and serve it with the wrong ``Content-Type``)."""
    return tag if media_type == _OFFERED[0] else tag[:-1] + '-json"'


def _page_number(text: str) -> int:
    if not text.isdigit() or not text.isascii() or len(text) > 10 or int(text) > MAX_PAGE:
        raise ParseError(f"page= is a page number from 0, not {text[:20]!r}", rule="page")
    return int(text)


def _last_page(total: int, size: int) -> int:
    return max(0, (total - 1) // size)


async def _refusal(request: Request, exc: PDIError | Problem) -> Response:
    """The problem answering ``exc``, readable by a script of another origin as every answer here is: a client's
    change flow turns on a 412 or a 428 it must be able to read (CORS)."""
    answer = await (on_problem(request, exc) if isinstance(exc, Problem) else on_pdi_error(request, exc))
    for name, value in _cors({}).items():
        answer.headers[name] = value
    return answer


def _cors(headers: dict[str, str]) -> dict[str, str]:
    """``headers`` and what lets a script of another origin read the answer (CORS; no cookie is ever read cross-site:
    the sign-in cookie is ``SameSite=Strict``)."""
    return {**headers, "Access-Control-Allow-Origin": "*", "Access-Control-Expose-Headers": _EXPOSED}


def _options(allow: str, link: str | None, *, post: bool = False) -> Response:
    """``OPTIONS`` (§3, §4.1): the methods, the type links, and a CORS preflight's answer."""
    headers = {"Allow": allow, "Access-Control-Allow-Methods": allow, "Access-Control-Allow-Headers": _CORS_HEADERS,
               "Access-Control-Max-Age": "600", "Cache-Control": "no-cache"}
    if link is not None:
        headers["Link"] = link
    if post:
        headers["Accept-Post"] = ANNOTATION_TYPE
    return Response(status_code=200, headers=_cors(headers))


def _answer(
    request: Request, body: dict[str, Any], media_type: str, headers: dict[str, str], *, status: int = 200
) -> Response:
    """``body`` as JSON in ``media_type``, with its strong ``ETag`` (unless given) and ``headers``; ``304`` to an
    ``If-None-Match`` that holds it (RFC 9110 §13.1.2)."""
    octets = _octets(body)
    tag = headers.get("ETag") or _tag(body, media_type, octets)
    fields = _cors({**headers, "ETag": tag, "Cache-Control": "no-cache"})
    held = request.headers.get("if-none-match")
    if status == 200 and held is not None and tag_matches(held, tag):
        return Response(status_code=304, headers=fields)
    return Response(octets, status_code=status, media_type=media_type, headers=fields)


def _octets(body: dict[str, Any]) -> bytes:
    return json.dumps(body, ensure_ascii=False, indent=1).encode("utf-8")


def _tag(body: dict[str, Any], media_type: str, octets: bytes | None = None) -> str:
    """The strong ``ETag`` of ``body`` sent as ``media_type`` (its ``octets``, if made already)."""
    return f'"{hashlib.sha256((octets if octets is not None else _octets(body)) + media_type.encode()).hexdigest()[:32]}"'


def _annotation_kind(request: Request) -> None:
    """An :class:`UnsupportedError` (``415``) unless the request's ``Content-Type`` is an annotation's."""
    sent = request.headers.get("content-type", "").split(";", 1)[0].strip(" \t")
    if sent.lower() not in ("application/ld+json", "application/json"):
        raise UnsupportedError(f"an annotation is sent as {ANNOTATION_TYPE} (or application/json), not"
                               f" {shown_field(sent, 80)}")


async def _annotation_body(request: Request) -> object:
    """The JSON of a posted or put annotation: ``application/ld+json`` or ``application/json``, at most
    :data:`~pdi.archive.kept_annotations.MAX_ANNOTATION` octets."""
    _annotation_kind(request)
    return await read_json(request, MAX_ANNOTATION, f"an annotation is at most {MAX_ANNOTATION} octets",
                           rule="annotation", unique_keys=True)
