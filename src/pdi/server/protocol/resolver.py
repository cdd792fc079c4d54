"""The resolver for machines: RFC 2169 services and the JSON read API (an edge, read-only).

RFC 2169 ("A Trivial Convention for using HTTP in URN Resolution"): the URN
is the whole query string, ``GET /uri-res/<service>?<urn>``. :class:`Resolver`
holds one handler per service in :attr:`Resolver.services`; each takes the
name and the base URL and answers, so it can be called, and tested, without
an app. :class:`ReadAPI` answers ``/api/…`` with JSON.

Services that read (and hash) a whole representation (``N2R``, ``I2R``,
``N2C``) run within the resolver's :class:`~pdi.server.process.limits.WorkLimits`;
the others answer from the catalog on Starlette's own threads. ``N2R`` of a
name with a format is an :class:`~pdi.server.process.cache.Entity` that never
changes: the resolver keeps it in its :class:`~pdi.server.process.cache.ResponseCache`,
from which :class:`~pdi.server.process.cache.CachedAnswers` answers the next request
for the same name before any routing. What a name with a format is answered with (the whole entity, or a large
one streamed, and the headers that say which stored bytes it is) is :mod:`pdi.server.protocol.entity_answers`'s.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Mapping
from typing import Any, Final, Protocol
from urllib.parse import quote

import anyio
import anyio.to_thread
from starlette.datastructures import URL
from starlette.requests import Request
from starlette.responses import (
    JSONResponse,
    PlainTextResponse,
    RedirectResponse,
    Response,
)
from starlette.routing import Route

from pdi._wording import clipped
from pdi.archive import Archive, Generic, Resolved
from pdi.archive.describe import describe
from pdi.errors import NotFoundError, ParseError, PDIError, WithdrawnError
from pdi.fragments import past_end_message
from pdi.identifier import PDI
from pdi.interop.accept import choose, parse_accept, preference
from pdi.interop.memento import LINK_FORMAT
from pdi.server.http.conditional import (
    entity_tag,
)
from pdi.server.http.params import integer, optional, required
from pdi.server.http.problems import Problem
from pdi.server.http.readers import PRIVATE
from pdi.server.http.site import at, site_path
from pdi.server.process.cache import (
    N2L_PATH,
    NOSNIFF,
    SHARED_VALIDATOR_FIELDS,
    Entity,
    Fact,
    Fixed,
    ResponseCache,
    Validator,
    accept_negotiates,
    cache_key,
    fact_of,
    located,
    respond,
)
from pdi.server.process.limits import ArchiveHandlers, WorkLimits
from pdi.server.protocol.entity_answers import (
    ARCHIVED_CONTENT_POLICY,
    NO_HEADERS,
    Large,
    PartAnswer,
    RawResponse,
    aggregate_type,
    check_if_match,
    entity_response,
    names_of,
    shared_answer,
    streamed_part_response,
    streamed_response,
    video_time,
    whole_entity,
    with_clip,
)
from pdi.server.protocol.memento_oaipmh import Mementos
from pdi.server.protocol.mirrored import Locations
from pdi.server.protocol.plain import NotPublic, PlainAnswers
from pdi.server.protocol.rfc2169 import n2r_path, n2r_url, rfc2169_query, sturdy, urn_from_query

#: RFC 2169 services this resolver answers, and the others it knows of (501).
SERVICES = ("N2R", "I2R", "N2L", "N2Ls", "N2C", "N2Ns")
OTHER_SERVICES = ("N2Rs", "N2Cs", "L2R", "L2Ns", "L2Ls", "L2L", "L2C", "I2L", "I2Ls", "I2C", "I2N", "I2Ns", "I2Rs")
#: Services that read (and hash) a whole representation: they run within :class:`WorkLimits`.
EXPENSIVE_SERVICES = frozenset({"N2R", "I2R", "N2C"})
#: The largest ``limit`` of /api/ls.
MAX_LIST = 10_000

#: ``handler(name, base_url, request_headers)``: one RFC 2169 service.
Handler = Callable[[str, str, Mapping[str, str]], Response]
#: How long a shared cache may keep an answer that can change: a generic name's list of
#: formats grows with each new version. A name with a format never changes (immutable).
GENERIC_MAX_AGE = 60


class NotHeld(Protocol):
    """Who answers a name this resolver does not hold (:class:`pdi.server.protocol.elsewhere.Elsewhere`), else raises
    the ``error`` it was not found with (and what the archive holds near it, as it says)."""

    async def service(self, request: Request, service: str, name: str, error: NotFoundError) -> Response: ...


class Resolver:
    """RFC 2169 resolution over one archive: ``{service: handler}``, each ``handler(name, base_url, headers)``."""

    def __init__(
        self, archive: Archive, work: WorkLimits, base_url: str | None = None, cache: ResponseCache | None = None
    ) -> None:
        self.archive = archive
        self.work = work
        self.base_url = base_url
        #: The base URL's path (``/pdi``; empty at a host's root): the paths of the answers the cache keeps are made
        #: under it here, as the connection sends them again without the app's middleware (:mod:`pdi.server.http.site`)
        self.site = site_path(base_url)
        self._site = self.site.encode("latin-1")
        self.cache = cache if cache is not None else ResponseCache(0)
        self.mementos = Mementos(archive)
        self.locations = Locations(archive)
        #: public_answer's answers to a serial name spelled canonically, from the catalog's row alone
        self.plain = PlainAnswers(archive, ARCHIVED_CONTENT_POLICY, self.locations.origin_at_once, self._site)
        self._bases: dict[tuple[str, tuple[str, int | None] | None, bytes], str] = {}
        #: the not-found path's answers from other resolvers (set by create_app), or None
        self.elsewhere: NotHeld | None = None
        self.services: dict[str, Handler] = {
            "N2R": self.n2r, "I2R": self.n2r, "N2C": self.n2c,
            "N2L": self.n2l, "N2Ls": self.n2ls, "N2Ns": self.n2ns,
        }

    async def endpoint(self, request: Request) -> Response:
        """``/uri-res/{service}?{urn}``: :meth:`_endpoint`; a name it does not hold, from :attr:`elsewhere` if it
        can (:mod:`pdi.server.protocol.elsewhere`: another series' resolver, a capture of a legacy name), else its
        ``404`` saying what the archive holds near the name."""
        try:
            return await self._endpoint(request)
        except NotFoundError as exc:
            if self.elsewhere is None or not request.url.query:
                raise
            return await self.elsewhere.service(request, request.path_params["service"],
                                                urn_from_query(request.url.query), exc)

    async def _endpoint(self, request: Request) -> Response:
        """``/uri-res/{service}?{urn}``: the service's handler, on the pool its cost calls for.

        A URN with a browser fragment (``#:~:text=``, ``#t=``, ``#xywh=``:
        :mod:`pdi.interop.aliases`) is answered ``302`` to the ``N2R`` (for
        ``N2C``, ``N2Ls`` and ``N2Ns``, the same service) of the native name it equals.
        """
        service = request.path_params["service"]
        handler = self.services.get(service)
        if handler is None:
            if service in OTHER_SERVICES:
                raise Problem(501, "not implemented", f"this resolver does not offer the RFC 2169 service {service}")
            # (RFC 2169 §2 names the service in the URL's path, and a path is case-sensitive (RFC 3986 §6.2.2.1):
            # /uri-res/n2r is not /uri-res/N2R)
            raise NotFoundError(f"no RFC 2169 service '{clipped(service)}' (try N2R, I2R, N2L, N2Ls, N2C, N2Ns;"
                                " the names are case-sensitive)")
        query = request.url.query
        if not query:
            raise ParseError(f"{service} takes the URN as the query string: /uri-res/{service}?urn:pdi://…",
                             rule="query")
        base = self.base_url if self.base_url is not None else str(request.base_url)
        headers = request.headers
        name, inflection = split_inflection(urn_from_query(query))
        from pdi.interop.aliases import alias_fragment, native_names

        if alias_fragment(name) is not None:  # a browser fragment: on to the native name it equals
            native = (await self.work.run(native_names, self.archive, name)).native
            # N2L and I2R on to the native name's N2R; N2C, N2Ls and N2Ns to its own answer of the same service
            to = "N2C" if inflection is not None else ("N2R" if service in ("N2R", "I2R", "N2L") else service)
            return RedirectResponse(f"/uri-res/{to}?{sturdy(rfc2169_query(str(native)))}", status_code=302)
        # what the cache holds now: an answer made from the catalog after it forgot (a generation moved on) is not kept
        epoch = self.cache.epoch
        if service in ("N2R", "I2R"):
            if inflection is not None:  # ?info: what N2C answers, as ARK resolvers do
                return _varying(await self.work.run(self.n2c, name, base, headers))
            negotiated = accept_negotiates(headers.get("accept", "").lower().encode("latin-1", "replace"))
            if_match = headers.get("if-match")
            if "if-none-match" in headers and not negotiated and if_match is None and "if-unmodified-since" not in headers:
                # a cache that holds the bytes asks whether they changed: the catalog answers that
                validator = await anyio.to_thread.run_sync(self.validator, name)
                unchanged = None if validator is None else respond(validator, headers.get("if-none-match"), None, None)
                if validator is not None and unchanged is not None:
                    if validator.shared and _key(request):  # the next revalidation needs no catalog either
                        self.cache.put(_key(request), validator, epoch=epoch)
                    return RawResponse(*unchanged)
            found = await self.work.run(self.representation, name, base, headers.get("accept"))
            if if_match is not None:
                check_if_match(if_match, found)
            if isinstance(found, Large):
                if request.method == "HEAD":  # the catalog knows every field but a whole multipart file's own
                    # Content-Type parameters, for which its first chunk is read (aggregate_type)
                    return streamed_response(self.archive, found.resolved, headers, found.headers, head=True,
                                             content_type=found.content_type)
                # opening it reads and checks its first chunk: off the event loop, as every read is
                return await anyio.to_thread.run_sync(functools.partial(
                    streamed_response, self.archive, found.resolved, headers, found.headers,
                    content_type=found.content_type))
            if isinstance(found, PartAnswer):
                return streamed_part_response(found, headers, head=request.method == "HEAD")
            if isinstance(found, Entity):
                if found.shared and not negotiated and _key(request):  # never an answer only a token's holder may
                    # read, nor one Accept chose (the cache's key is the name alone), nor one without a Host
                    self.cache.put(_key(request), found, epoch=epoch)
                return entity_response(found, headers)
            return found
        if inflection is not None:
            raise ParseError(f"{service} takes a name alone: ?{inflection} is an inflection of N2R only",
                             text=query[:200], rule="inflection")
        if service in EXPENSIVE_SERVICES:
            return await self.work.run(handler, name, base, headers)
        if service == "N2L":
            answered = await anyio.to_thread.run_sync(self.location, name, base)
            if not isinstance(answered, Fixed):
                return answered
            if answered.shared and _key(request):  # a versioned name's location never changes: the next N2L
                self.cache.put(b"N2L " + _key(request), answered, epoch=epoch)  # needs no catalog
            return RawResponse(answered.status, list(answered.headers), answered.body)
        return await anyio.to_thread.run_sync(handler, name, base, headers)

    def public_answer(
        self, path: bytes, scheme: str, server: tuple[str, int | None] | None, host: bytes, query: bytes,
        revalidating: bool = False,
    ) -> Entity | Validator | Fixed | None:
        """The answer to anyone of an N2R (or I2R) or N2L ``GET`` of ``path`` with this query string and ``Host``,
        made in the calling thread (the event loop's:
        :class:`~pdi.server.process.connection.CachedAnswerProtocol`) when it is the plain case, else ``None``
        (the request goes on to :meth:`endpoint`, which says what it is).

        The plain case: a versioned name without fragment or inflection that
        the catalog tells in one statement (:meth:`~pdi.archive.Archive.read_public`:
        anyone may read it now, not withdrawn, its octets a blob file or a
        small blob's catalog row, checked against their chunk digests when
        they are read). N2R's
        answer is the :class:`Entity` :meth:`representation` makes for an
        anonymous request (:func:`whole_entity`, the memento's headers: not
        for a capture of a URL, whose memento may be dated by a statement),
        N2L's the :class:`Fixed` ``302`` of :meth:`location`; N2R's when
        ``revalidating`` (the request has ``If-None-Match``), the
        :class:`Validator` of :meth:`validator`, its octets not read. ``scheme``,
        ``server`` (the connection's local address) and ``host`` make the
        base URL as Starlette makes ``request.base_url``. A damaged or
        missing blob, a busy catalog, any error: ``None``, and the resolver
        says it as it does.
        """
        n2l = path == _N2L
        if n2l or revalidating:  # what never changes about the name may be known already: no catalog
            if _NOT_ALONE.search(query) is not None:  # a fragment, an inflection (or an alias): the resolver
                return None
            known = self.cache.fact(query)
            if known is not None:
                if not n2l:
                    return known.validator()
                made = known.fixed()
                if made is None:  # its location follows from its name: learnt now
                    made = _fixed(known.names, True, known.etag, self._site)
                    self._learn(query, made)
                return made
        most = min(self.cache.max_entry_bytes, STREAM_FROM)
        try:
            plain = self.plain.answer(  # a serial name spelled canonically: from the catalog's row alone
                query, n2l, revalidating, most,
                None if n2l or revalidating else
                self.base_url if self.base_url is not None else self._base(scheme, server, host))
            if isinstance(plain, NotPublic):
                return None  # read_public or locate_public would find no more: the resolver's endpoint says it
            if plain is not None:
                if isinstance(plain, Entity):  # the fact of the name as asked: kept with what was known of it
                    self.cache.learn_told(query, plain.etag, False)  # (its N2L's Location), packed without a Fact
                elif plain.etag is not None:  # N2L's 302 or a 304's validator of the name as asked, whose fact
                    self.cache.learn_told(query, plain.etag, n2l, self._site)  # was not known (above): packed
                return plain
            if not (n2l or revalidating) and _NOT_ALONE.search(query) is not None:  # as for N2L above: asked only
                return None  # now, a name the plain path answers having none (a serial name's pattern holds none)
            parsed = PDI.parse(urn_from_query(query.decode()).strip())  # as Archive.locate parses it
            if n2l or revalidating:
                located = self.archive.locate_public(parsed)
                if located is None:
                    return None
                kept: Entity | Validator | Fixed = (
                    _fixed_location(located, True, self._site) if n2l else _validator_of(located, shared=True))
            else:
                found = self.archive.read_public(parsed, most=most)
                if found is None or not self.mementos.dated_by_deposit(found):
                    return None
                base = self.base_url if self.base_url is not None else self._base(scheme, server, host)
                kept = whole_entity(found, self._about(found, base))
        except (PDIError, UnicodeDecodeError):
            return None
        self._learn(query, kept)
        return kept

    def public_told(self, path: bytes, query: bytes, if_none_match: str | None) -> tuple[int, bytes, bytes] | bool:
        """N2L's ``302`` (``path``, N2L's) or the ``304`` of an N2R (or I2R) ``GET`` with ``If-None-Match`` of a name
        no fact is kept for yet, told by its digest alone (:meth:`PlainAnswers.digest`, the catalog's one row), as
        status, header lines as sent and body: the octets :meth:`public_answer`'s :class:`Fixed` or
        :class:`Validator` give (:func:`~pdi.server.process.cache.wire`,
        :func:`~pdi.server.process.cache.validated_wire`), made as a second asking makes them, from the name's fact
        (learnt now: :meth:`~pdi.server.process.cache.ResponseCache.learn_told`, then
        :meth:`~pdi.server.process.cache.ResponseCache.known_wire`), with no answer object made.

        ``True``: not told here (another spelling, a mirrored series, a fact kept already, an ``If-None-Match``
        without the name's tag, a fact not kept): :meth:`public_answer` goes on as it would have. ``False``: the
        catalog says no one may read it now (:data:`~pdi.server.protocol.plain.NOT_PUBLIC`): the resolver's
        endpoint says what it is, and :meth:`public_answer` need not be asked."""
        n2l = path == _N2L
        if (not n2l and if_none_match is None) or self.cache.knows(query):
            return True
        try:
            sha256 = self.plain.digest(query)
        except PDIError:
            return True
        if sha256 is None:
            return True
        if isinstance(sha256, NotPublic):
            return False
        self.cache.learn_told(query, f'"{sha256}"', n2l, self._site)
        made = self.cache.known_wire(query, n2l, if_none_match)
        return True if made is None else made

    def _learn(self, query: bytes, kept: Entity | Validator | Fixed) -> None:
        """Keep what ``kept`` tells that never changes about the name asked by ``query`` (:class:`Fact`), with
        what was known of it before (N2L's fields, learnt once)."""
        fact = fact_of(kept)
        if fact is None:
            return
        if fact.location is None:
            known = self.cache.fact(query)
            if known is not None and known.location is not None and known.etag == fact.etag:
                fact = Fact(fact.names, fact.etag, known.location)
        self.cache.learn(query, fact)

    def _base(self, scheme: str, server: tuple[str, int | None] | None, host: bytes) -> str:
        """``request.base_url`` of a request with this ``Host`` on a connection to ``server`` (no ``root_path``)."""
        key = (scheme, server, host)
        base = self._bases.get(key)
        if base is None:
            if len(self._bases) >= 64:
                self._bases.clear()
            base = str(URL(scope={"type": "http", "scheme": scheme, "server": server, "path": "/",
                                  "query_string": b"", "headers": [(b"host", host)] if host else []}))
            self._bases[key] = base
        return base

    def _about(self, located: Resolved, base: str) -> Mapping[str, str]:
        """The memento's headers of an N2R answer, and its origin's ``Link`` when the series is mirrored: to the
        origin's N2R of the name as asked, its fragment too (the same passage as the ``canonical`` name)."""
        return self.locations.headers(located.record.series, str(located.pdi), self.mementos.headers(located, base))

    # --- the services ----------------------------------------------------------------
    def n2r(self, name: str, base: str, headers: Mapping[str, str] = NO_HEADERS) -> Response:
        """The bytes a name (and its fragment) selects; a generic name: ``300`` and its formats.

        As a cache would want it (RFC 9110, RFC 9111): an ``ETag`` naming the
        stored bytes (and the fragment), ``Cache-Control`` immutable for a name
        with a format (its bytes can never change), ``Accept-Ranges`` and a
        single ``Range`` answered ``206`` (``If-Range`` honoured, an
        unsatisfiable one ``416``); ``HEAD`` answers the same headers. A
        fragment wholly past the end is a ``416`` problem too, in the words
        of ``pdi get`` (:func:`~pdi.fragments.past_end_message`).
        """
        name, inflection = split_inflection(name)
        if inflection is not None:
            return _varying(self.n2c(name, base, headers))
        found = self.representation(name, base, headers.get("accept"))
        if (if_match := headers.get("if-match")) is not None:
            check_if_match(if_match, found)
        if isinstance(found, Large):
            return streamed_response(self.archive, found.resolved, headers, found.headers, content_type=found.content_type)
        if isinstance(found, PartAnswer):
            return streamed_part_response(found, headers)
        return entity_response(found, headers) if isinstance(found, Entity) else found

    def representation(self, name: str, base: str, accept: str | None = None) -> Entity | Large | PartAnswer | Response:
        """What N2R answers for ``name`` and an ``Accept`` field, before any other request field is read.

        A whole :class:`Entity` (its bytes in hand), :class:`Large` for a whole
        representation over :data:`STREAM_FROM` octets (streamed by verified
        chunks, never held), or for a generic name the format ``Accept``
        chooses (``302``) or ``300`` and every format. When ``Accept`` prefers
        ``application/json`` to the resource's own media type, the answer is
        N2C's description (:func:`prefers_description`).
        """
        # the look-ups of one answer in one read of the catalog
        looked_up = self.archive.in_one_view(lambda: self._looked_up(name, base, accept))
        if not isinstance(looked_up, tuple):
            return looked_up
        located, about = looked_up
        if located.pdi.fragment is None and located.record.size > STREAM_FROM:
            return Large(located, about, aggregate_type(self.archive, located))
        if located.record.size > STREAM_FROM and video_time(located):
            # the answer is the whole video: its interval is read from the index, its octets streamed
            clip = self._video_clip(located)
            return Large(clip, with_clip(about, clip))
        if located.pdi.fragment is not None and (part := self.archive.locate_message_part(located)) is not None:
            # a part of a large message: decoded as it is sent, never held (its size known from a first decoding)
            return PartAnswer(part, about, shared_answer(self.archive, located))
        resolved = self.archive.read(located)
        if resolved.fragment is not None and resolved.fragment.past_end:
            # as `pdi get` exits 9 with the same words: no 200 with an empty body, which reads as an empty passage
            raise Problem(416, "range not satisfiable", past_end_message(resolved.pdi, resolved.fragment))
        if resolved.fragment is not None and video_time(resolved):
            about = with_clip(about, resolved, self.site)  # an Entity's: the cache keeps it
        variant = ""
        if resolved.fragment is not None and resolved.record.media_type == "application/pdf":
            from pdi.server.protocol.pdf_answers import answer

            resolved, variant = answer(self.archive, resolved, accept)
        return whole_entity(resolved, about, shared=shared_answer(self.archive, resolved), variant=variant)

    def _looked_up(self, name: str, base: str, accept: str | None) -> Response | tuple[Resolved, Mapping[str, str]]:
        """Inside :meth:`representation`'s snapshot: a generic name's or a description's answer, or the name located
        and what its answer's fields say of it."""
        located = self.archive.locate(name)
        if isinstance(located, Generic):
            return self._negotiate(located, name, base, accept)
        if prefers_description(accept, located.media_type):
            return _varying(self.n2c(name, base))
        return located, self._about(located, base)

    def _video_clip(self, located: Resolved) -> Resolved:
        """A video's time fragment, located only: its interval from the video's index (no octet read);
        wholly past the end, the ``416`` problem."""
        clip = self.archive.locate_clip(located)
        assert clip is not None and clip.fragment is not None
        if clip.fragment.past_end:
            raise Problem(416, "range not satisfiable", past_end_message(located.pdi, clip.fragment))
        return clip

    def _negotiate(self, generic: Generic, name: str, base: str, accept: str | None) -> Response:
        """A generic name's N2R: the format ``Accept`` prefers (RFC 9110 §12.5.1), else ``300`` and every format.

        The formats of the newest version not withdrawn are offered. A format
        is chosen only when a media range names it (``text/plain``,
        ``text/*``): ``*/*`` alone, or no ``Accept``, prefers none, and so
        does a field no format fits; the answer is then ``300`` with the
        N2R URL of every format of every version, for the client to choose.
        """
        target = sturdy(rfc2169_query(str(generic.pdi)))
        links = {"Link": f'<{base.rstrip("/")}/timegate/{target}>; rel="timegate",'
                         f' <{base.rstrip("/")}/timemap/link/{target}>; rel="timemap"; type="{LINK_FORMAT}"'}
        # the versions listed are those this reader may read: read with a token, the answer is private, and
        # every answer varies by who reads (pdi.server.http.readers)
        shared = {"Vary": "Accept", "Cache-Control": f"public, max-age={GENERIC_MAX_AGE}", **links}
        if accept:
            ranges = parse_accept(accept)
            if prefers_description(accept, None):
                return _varying(self.n2c(name, base))
            offered = self._newest_formats(generic)
            chosen = choose(ranges, [PDI.parse(str(n)).media_type or "" for n in offered])
            if chosen is not None and preference(ranges, PDI.parse(str(offered[chosen])).media_type or "")[1] > 1:
                return Response(status_code=302, headers={"Location": n2r_path(offered[chosen]), **shared})
        body = _uri_list(str(generic.pdi), [n2r_url(base, n) for n in generic.names])
        return PlainTextResponse(body, status_code=300, media_type="text/uri-list", headers=shared)

    @staticmethod
    def _newest_formats(generic: Generic) -> tuple[PDI, ...]:
        """The formats of the newest version of a document that is not withdrawn: the last of its versions as
        :meth:`~pdi.archive.Archive.locate` gives them, in service (none left: it raised the tombstone)."""
        return generic.versions[-1].formats if generic.versions else ()

    def validator(self, name: str) -> Validator | None:
        """What a ``304`` of ``name`` says (its entity tag and fields), from the catalog alone; ``None`` for a generic
        name, whose answer is a list that grows, and for a fragment: the catalog cannot tell one wholly past the
        end, whose answer is ``416`` whatever ``If-None-Match`` says (RFC 9110 §13.2.1: preconditions are ignored
        when the answer without them would be neither ``2xx`` nor ``412``)."""
        def look_up() -> tuple[Resolved, bool] | None:
            located = self.archive.locate(name)
            if isinstance(located, Generic) or located.pdi.fragment is not None:
                return None
            return located, shared_answer(self.archive, located)

        found = self.archive.in_one_view(look_up)
        return None if found is None else _validator_of(*found)

    def n2c(self, name: str, base: str, headers: Mapping[str, str] = NO_HEADERS) -> Response:
        """A description of the resource (its URC): the stored representation, the fragment, the statements.

        A withdrawn name is described by its tombstone: ``{"pdi", "withdrawn":
        {"at", "reason", "who", "purged"}}`` (``200``: the description is
        there; the resource itself, N2R, is ``410``; ``purged``: its octets
        were deleted too).
        """
        try:
            return JSONResponse(description(self.archive, self.archive.resolve(name)))
        except WithdrawnError as gone:
            return JSONResponse(
                {"pdi": str(PDI.parse(name).without_fragment()),
                 "withdrawn": {"at": gone.at, "reason": gone.reason, "who": gone.who, "purged": gone.purged}}
            )

    def n2l(self, name: str, base: str, headers: Mapping[str, str] = NO_HEADERS) -> Response:
        """``302`` to the N2R URL of a name (relative); ``300`` and a list for a generic name with several."""
        answered = self.location(name, base)
        return RawResponse(answered.status, list(answered.headers), answered.body) \
            if isinstance(answered, Fixed) else answered

    def location(self, name: str, base: str) -> Fixed | Response:
        """N2L's answer: for a name with a format, the ``302`` to the N2R of its canonical spelling (a
        :class:`Fixed` answer, which never changes, ``shared`` when anyone may read the name); else a response."""
        def look_up() -> tuple[Resolved | Generic, bool]:
            located = self.archive.locate(name)
            return located, not isinstance(located, Generic) and shared_answer(self.archive, located)

        located, shared = self.archive.in_one_view(look_up)
        if isinstance(located, Generic) and len(located.names) != 1:
            return PlainTextResponse(_uri_list(str(located.pdi), [n2r_url(base, n) for n in located.names]), status_code=300,
                                     media_type="text/uri-list")
        if isinstance(located, Generic):  # a document of one version in one format
            return RedirectResponse(n2r_path(located.names[0]), status_code=302)
        return _fixed_location(located, shared, self._site)

    def n2ls(self, name: str, base: str, headers: Mapping[str, str] = NO_HEADERS) -> Response:
        """The N2R URLs of a name (one per format of a generic name), as ``text/uri-list``: this resolver's, then
        those of every other archive recorded as holding its series (:mod:`~pdi.server.protocol.mirrored`)."""
        located = self.archive.locate(name)  # only names the catalog holds, but their bytes need not be read
        names = list(located.names) if isinstance(located, Generic) else [located.pdi]
        others = self.locations.others(names[0].series_name.lower(), base) if names else ()
        urls = [n2r_url(where, n) for where in (base, *others) for n in names]
        return PlainTextResponse(_uri_list(str(located.pdi), urls), media_type="text/uri-list")

    def n2ns(self, name: str, base: str, headers: Mapping[str, str] = NO_HEADERS) -> Response:
        """The names of the same resource: the canonical name, and for a versioned name its generic name."""
        resolved = self.archive.locate(name)
        names = [resolved.pdi] if isinstance(resolved, Generic) else [resolved.pdi, _generic(resolved)]
        return PlainTextResponse(_uri_list(str(resolved.pdi), [str(n) for n in names]), media_type="text/uri-list")


class ReadAPI(ArchiveHandlers):
    """``/api/…``: what a name selects, listings, statements, citations and series, as JSON."""

    def routes(self) -> list[Route]:
        """``/api/resolve``, ``/api/ls``, ``/api/meta``, ``/api/cite`` and ``/api/series``."""
        return [
            Route("/api/resolve", self.resolve),
            Route("/api/ls", self.ls),
            Route("/api/meta", self.meta),
            Route("/api/cite", self.cite),
            Route("/api/series", self.series),
        ]

    async def resolve(self, request: Request) -> Response:
        """What a name selects; a browser fragment (``#:~:text=``, ``#t=``, ``#xywh=``) as the native name it equals.

        For such an alias the description is that of the native name (the
        first found, for several text directives), with ``alias``,
        ``equivalent`` (the native name), ``equivalents`` (one per directive,
        ``null`` where its text is not there) and ``notes``
        (:mod:`pdi.interop.aliases`).
        """
        from pdi.interop.aliases import alias_fragment

        name = required(request, "pdi")
        if alias_fragment(name) is not None:
            return await self.work.run(lambda: JSONResponse(_alias_description(self.archive, name)))
        # the description reads the catalog (a PDF's text layer, a video's facts, an e-mail's): in the thread too
        return await self.work.run(lambda: JSONResponse(description(self.archive, _resolved(self.archive, name),
                                                                    statements=False)))

    def ls(self, request: Request) -> Response:
        """A page of names: ``pattern``, ``series``, ``limit`` (100, at most :data:`MAX_LIST`), ``offset``, ``after``.

        ``next`` is the URL of the following page (``after`` its last name,
        a keyset cursor: any page costs the same), also sent as
        ``Link: <…>; rel="next"`` (RFC 8288); ``null`` on the last page. Both under the base URL's path
        (:mod:`pdi.server.http.site`).
        """
        limit = integer(request, "limit", 100, least=1, most=MAX_LIST)
        names = self.archive.ls(
            optional(request, "pattern"),
            series=optional(request, "series"),
            limit=limit + 1,  # one more says whether there is a next page
            offset=integer(request, "offset", 0),
            after=optional(request, "after"),
        )
        following = None
        if limit and len(names) > limit:
            url = request.url.remove_query_params("offset").include_query_params(after=str(names[limit - 1]))
            following = f"{url.path}?{url.query}"
        headers = {} if following is None else {"Link": f'<{following}>; rel="next"'}  # moved by SitePath
        return JSONResponse({"names": [str(n) for n in names[:limit]], "next": following and at(following)},
                            headers=headers)

    def meta(self, request: Request) -> Response:
        name = required(request, "pdi")
        history = [
            {"key": r.key, "value": r.value, "who": r.who, "at": r.at} for r in self.archive.history(name)
        ]
        return JSONResponse({"pdi": name, "meta": self.archive.meta(name), "history": history})

    async def cite(self, request: Request) -> Response:
        citation = required(request, "citation")
        return await self.work.run(lambda: JSONResponse(self.archive.cite(citation).to_json()))

    def series(self, request: Request) -> Response:
        return JSONResponse(
            {"series": [{"name": s.name, "parent": s.parent, "authority": s.authority} for s in self.archive.series()]}
        )


def _resolved(archive: Archive, name: str) -> Resolved | Generic:
    """``/api/resolve``'s answer; a name not here, with what the archive holds near it (:meth:`Archive.not_found`)."""
    try:
        return archive.resolve(name)
    except NotFoundError as exc:
        raise archive.not_found(exc, name) from None


def description(archive: Archive, resolved: Resolved | Generic, *, statements: bool = True) -> dict[str, Any]:
    """JSON about a resolved name (:func:`pdi.archive.describe.describe`), with the statements about it."""
    layer = archive.text_layer_of(resolved.record) if isinstance(resolved, Resolved) else None  # a PDF's
    video = archive.video_of(resolved.record) if isinstance(resolved, Resolved) else None
    message = archive.message_of(resolved.record) if isinstance(resolved, Resolved) else None  # an e-mail's
    image = archive.image_of(resolved.record) if isinstance(resolved, Resolved) else None  # an image's header
    out = describe(resolved, text_layer=layer, video=video, message=message, image=image)
    if statements and isinstance(resolved, Resolved):
        out["meta"] = archive.meta(str(resolved.pdi).split("#", 1)[0])
    return out


def _alias_description(archive: Archive, name: str) -> dict[str, Any]:
    """The description of the native name a browser fragment equals, and which one that is."""
    from pdi.interop.aliases import native_names

    alias = native_names(archive, name)
    out = description(archive, archive.resolve(alias.native), statements=False)
    out.update(alias.to_json())
    return out


#: A whole representation larger than this (octets) is streamed from the store, never held or cached.
STREAM_FROM = 4 << 20


def _key(request: Request) -> bytes:
    """The key N2R's answer to ``request`` is kept under (N2L's: ``N2L`` before it): its ``Host``, query and scheme;
    ``b""`` (not kept) without a ``Host``, whose answer names the address its connection reached
    (:func:`~pdi.server.process.cache.kept_key`)."""
    host = request.headers.get("host", "")
    return cache_key(host, request.scope["query_string"], request.scope["scheme"]) if host else b""


def _uri_list(urn: str, urls: list[str]) -> str:
    # RFC 2169's examples: the URN first, as a comment, then one URL a line; the URN in its canonical spelling, as
    # lexically equivalent URNs "MUST return identical results" (§2)
    return f"# {urn}\r\n" + "".join(f"{u}\r\n" for u in urls)


def _validator_of(located: Resolved, shared: bool) -> Validator:
    """What a ``304`` of a located name with a format says: its entity tag, ``Vary`` and ``Cache-Control``."""
    fields = SHARED_VALIDATOR_FIELDS if shared else (
        (b"vary", b"Accept"), (b"cache-control", PRIVATE.encode("latin-1")), NOSNIFF)
    return Validator(entity_tag(located.sha256, str(located.pdi)), fields, names_of(located), shared)


def _fixed_location(located: Resolved, shared: bool, site: bytes) -> Fixed:
    """N2L's ``302`` for a located name with a format: to the N2R of its canonical spelling, under ``site``."""
    names = names_of(located)
    if located.pdi.fragment is not None:  # to the N2R of the name with its fragment
        return _fixed(names, shared, None, site, str(located.pdi))
    return _fixed(names, shared, entity_tag(located.sha256, names[0]), site)  # the whole's tag, for its Fact


def _fixed(names: tuple[str, ...], shared: bool, etag: str | None, site: bytes, to: str | None = None) -> Fixed:
    """N2L's ``302`` to the N2R of ``to`` or else ``names[0]``, a canonical versioned name (:func:`names_of`), under
    ``site``, the base URL's path (the connection sends it again as it is kept: :mod:`pdi.server.http.site`)."""
    # its Location quoted as Starlette's RedirectResponse quotes it
    return located(site + quote(n2r_path(names[0] if to is None else to), safe=_LOCATION_SAFE).encode("latin-1"),
                   names, shared, etag)


#: What Starlette's ``RedirectResponse`` leaves unquoted in a ``Location``.
_LOCATION_SAFE = ":/%#?=@[]!$&'()*+,;"


_N2L = N2L_PATH.encode()
#: What in a query string names more than a name alone: a fragment (``#``, ``%23``) or an inflection (``?``), found
#: in one search (``b"#" in query`` first tries ``b"#"`` as an int: a ``TypeError`` raised and cleared each time).
_NOT_ALONE: Final = re.compile(rb"[#?]|%23")


def _generic(resolved: Resolved) -> str:
    name = str(resolved.pdi).split("#", 1)[0]
    return name.rsplit(".", 2)[0]


def split_inflection(name: str) -> tuple[str, str | None]:
    """A name and the ARK-style inflection after it: ``…/1.text.1?info`` → ``("…/1.text.1", "info")``.

    A PDI holds no ``?`` (a reserved character, PDI-GRAMMAR.md §1), so the
    first one starts an inflection. ``?``, ``??`` and ``?info`` ask for the
    description (the ARK specification's brief and full metadata and its
    ``?info``); any other is a :class:`~pdi.errors.ParseError`. A browser's
    fragment directive (``#:~:text=``) may hold ``?`` as text: one after its
    ``:~:`` is the directive's (``#:~:text=Why?`` quotes "Why?"), and such a
    name asks for its description by ``Accept: application/json``.
    """
    if "?" not in name:
        return name, None
    directive = name.find(":~:", max(name.find("#"), 0)) if "#" in name else -1
    if 0 <= directive < name.find("?"):
        # a browser's fragment directive (#:~:text=what?) holds '?' as any URL fragment may (WICG Text
        # Fragments, the URL Standard's fragment state): the text's, never an inflection
        return name, None
    head, _, inflection = name.partition("?")
    if inflection not in INFLECTIONS:
        raise ParseError(
            f"?{inflection[:40]} is no inflection this resolver knows (?info, ? and ?? ask for the description)",
            text=name[:200], offset=len(head), rule="inflection",
        )
    return head, inflection


#: The inflections N2R reads as a request for the description (N2C).
INFLECTIONS = frozenset({"", "?", "info"})


def prefers_description(accept: str | None, media_type: str | None) -> bool:
    """Whether ``Accept`` prefers ``application/json`` (N2C's description) to ``media_type`` (None: a generic name).

    Only a range that names JSON (``application/json``, ``application/*``)
    asks for it: ``*/*`` alone leaves the resource its own format. A resource
    that is JSON itself is answered as it is.
    """
    if not accept or ("json" not in accept.lower() and "application/*" not in accept.lower()):
        return False
    ranges = parse_accept(accept)
    wanted = preference(ranges, "application/json")
    if wanted[0] <= 0 or wanted[1] < 2:
        return False
    if media_type is None:
        return True
    own = preference(ranges, media_type)
    return media_type.split(";")[0].strip().lower() != "application/json" and wanted > own


def _varying(answer: Response) -> Response:
    """An answer chosen by negotiation: ``Vary: Accept`` so that no cache gives it for another ``Accept``."""
    answer.headers["Vary"] = "Accept"
    return answer
