"""Names this archive does not hold, answered from elsewhere (issue 27 §4, §5): the resolver's not-found path.

Called only where the resolver (``/uri-res/N2R``, ``I2R``, ``N2L``,
``N2Ls``, ``N2C``) or the viewer (``/view``) met a name it does not hold:

* **Another series.** A name of a series this archive neither holds nor
  mirrors (no series of that name in its catalog) is looked up in the
  registries, then the DNS (:class:`pdi.federation.authorities.Authorities`):
  ``N2Ls`` answers ``200`` with the N2R URL of the name at every resolver
  known (``text/uri-list``) but one that would send it back (a comment line
  says which: :meth:`Elsewhere._locations`); the other services ``302`` to the same service
  (``I2R``: ``N2R``) at the first resolver that is up — the authority, or
  when it is down a mirror — and ``/view`` to its ``/view``. Every resolver
  is down: ``503`` with ``Retry-After`` (``/view``: a page saying so, the
  same status). No resolver known: the ``404`` it was, which for ``N2R``,
  ``I2R``, ``N2L`` and ``N2C`` now says what this archive holds near the
  name, as ``pdi get`` and ``/api/resolve`` do (:meth:`pdi.archive.Archive.not_found`:
  a few look-ups of indexed keys, paid only on this path, never by a name
  held or answered from the cache).
  A redirect goes only to a base URL a registry or the DNS named
  (``http``/``https``), followed by the service and the name as asked, and
  never to this resolver itself (the name would come back here again and
  again): its ``--base-url``, the address the connection came to (never
  the request's ``Host``: a stranger's word, which would make the resolver
  skip the authority, or send a name to itself), or a base URL whose answer
  to the probe carried this resolver's own token (an alias of it:
  :class:`ResolverToken`, :mod:`pdi.federation.authorities`); listed alone,
  it leaves no resolver known (``404``). Nor is a name sent to a
  resolver that would send it back here, or round among others none of
  which holds it (:mod:`pdi.federation.routes`: each candidate is asked
  first what it answers for the series): skipped for the next; every one
  skipped so, ``508 Loop Detected`` naming the chains. Asked with
  ``PDI-Route-Probe`` (another resolver's probe), the redirect is made
  without that check, ``Cache-Control: no-store``.
* **Legacy rescue.** A name whose unique id is a URL (a capture's: the
  1990s ``I2R`` links of ``oma.eop.gov.us``) that no authority answers is
  answered from the capture of that URL nearest its day: one this archive
  holds first (``N2R``/``I2R``: its bytes, ``200``; ``N2L``: ``302``),
  else one a resolver of the registries holds (``302`` to it there). The
  answer says which capture it is: ``PDI-Capture: later; asked=DAY;
  captured=NAME`` (``same-day``, ``later`` or ``earlier``),
  ``Content-Location`` (its N2R), ``Link: <URL>; rel="original"`` and,
  unless it is of the same day, ``Warning: 299 pdi "this is a later
  capture …"``; ``/view`` goes to the capture's page with ``&later=NAME``,
  where the viewer says the same in a note. The DNS failing to answer for
  the name's series (a ``502`` for any other name) leaves the rescue to
  answer; the failure is said only when no capture does.

``/.well-known/pdi-registry`` serves the archive's own registry
(``registry.json``, :mod:`pdi.federation.registry`) signed with its key, as
``application/jose``; a file that is not a registry (or cannot be read) is
the operator's fault, not the request's: ``500``, its path and what is
wrong said in the server's log only.
"""

from __future__ import annotations

import dataclasses
import datetime
import logging
import threading
import time
from dataclasses import dataclass
from urllib.parse import quote

import anyio.to_thread
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from pdi._wording import MESSAGE_MOST, clipped
from pdi.archive import Archive
from pdi.errors import NotFoundError, ParseError, PDIError, RemoteError
from pdi.federation.authorities import RESOLVER_HEADER, Authorities, Candidate
from pdi.federation.registry import read_registry_file, sign_registry
from pdi.federation.rescue import RemoteCaptures, relation
from pdi.federation.routes import PROBE_HEADER, Chain, Routes
from pdi.identifier import PDI
from pdi.interop.memento import as_uri, link, select
from pdi.server.http.problems import Problem
from pdi.server.process.limits import WorkLimits
from pdi.server.protocol.memento_oaipmh import is_url
from pdi.server.protocol.resolver import Resolver, split_inflection
from pdi.server.protocol.rfc2169 import n2r_url, rfc2169_query, urn_from_query
from pdi.signing import SigningKey

__all__ = ["REGISTRY_PATH", "Elsewhere", "ResolverToken", "rescued_from"]

log = logging.getLogger("pdi.federation")

#: Where a resolver serves its archive's registry, signed.
REGISTRY_PATH = "/.well-known/pdi-registry"
#: How long a shared cache may keep a redirect to another resolver, or its list: a resolver may go down.
ELSEWHERE_MAX_AGE = 60
#: How long a shared cache may keep the signed registry.
REGISTRY_MAX_AGE = 300
#: Seconds the archive's list of series is trusted before it is read again.
_SERIES_SECONDS = 10.0
#: Look-ups of other resolvers (DNS, registries, probes, TimeGates) at once, and how long one may wait for a place
#: (then 503): they wait on the network, so they have threads of their own, never the catalog's or the evaluations'.
LOOKUPS_AT_ONCE = 8
LOOKUP_QUEUE_SECONDS = 10.0
#: The services answered from elsewhere; what each is answered with there.
_ONWARD = {"N2R": "N2R", "I2R": "N2R", "N2L": "N2L", "N2C": "N2C", "N2Ls": "N2Ls"}
#: The service a resolver the DNS names must offer (its record's services, RFC 3404 §4.4) for each service asked: N2Ls is
#: answered here, with the name's N2R URL at each resolver, so a resolver is listed when it offers N2R.
_OFFERED = {**_ONWARD, "N2Ls": "N2R"}
#: The services whose 404 says what this archive holds near the name (N2Ls answers a list, which that is not).
_HINTED = frozenset({"N2R", "I2R", "N2L", "N2C"})


class Elsewhere:
    """The not-found path of one resolver: other series' authorities and the rescue of legacy capture names."""

    def __init__(self, archive: Archive, resolver: Resolver, authorities: Authorities,
                 base_url: str | None = None, signing_key: SigningKey | None = None) -> None:
        self.archive = archive
        self.resolver = resolver
        self.authorities = authorities
        self.base_url = base_url
        self.signing_key = signing_key
        self.remote = RemoteCaptures(authorities)
        self.route_probe = Routes(authorities)
        self.lookups = WorkLimits(LOOKUPS_AT_ONCE, LOOKUP_QUEUE_SECONDS)
        self._series: tuple[float, frozenset[str]] = (0.0, frozenset())
        self._lock = threading.Lock()

    def routes(self) -> list[Route]:
        return [Route(REGISTRY_PATH, self.registry_document, methods=["GET", "HEAD"])]

    def holds(self, series: str) -> bool:
        """Whether the archive has the series (its own, or one it mirrors: both are series of its catalog)."""
        now = time.monotonic()
        with self._lock:
            at, known = self._series
        if now - at > _SERIES_SECONDS:
            known = frozenset(s.name.lower() for s in self.archive.series())
            with self._lock:
                self._series = (now, known)
        return series.lower() in known

    # --- the hooks ----------------------------------------------------------------------
    async def service(self, request: Request, service: str, name: str, error: NotFoundError) -> Response:
        """The answer from elsewhere to ``/uri-res/{service}?{name}``, which this archive does not hold (``error``);
        none: ``error`` raised, with what this archive holds near the name (:data:`_HINTED` services)."""
        if service not in _ONWARD:
            raise error
        query = request.url.query
        name, inflection = split_inflection(name)
        if inflection is not None:  # ?info after the name (N2R, I2R): its description, answered as N2C's is
            service, query = "N2C", rfc2169_query(name)
        base = self.base_url if self.base_url is not None else str(request.base_url)
        found = await self.lookups.run(self._service, service, name, query, base, self._selves(request),
                                       PROBE_HEADER in request.headers)
        if found is None:  # known nowhere else: the 404, saying what is near (on the catalog's threads, as N2L is)
            raise (await anyio.to_thread.run_sync(self._near, error, name)) if service in _HINTED else error
        if not isinstance(found, _Local):
            return found
        # a capture held here: its bytes read as every N2R's are, within the resolver's limits
        answer = await self.resolver.work.run(self.resolver.n2r, found.name, base, dict(request.headers))
        answer.headers.update({**found.about, "Content-Location": n2r_url(base, found.name)})
        if "immutable" in answer.headers.get("Cache-Control", ""):
            # the capture's bytes never change, but which capture answers the name does: one nearer its day may
            # be deposited or imported later, so kept as long as a redirect elsewhere is, not for a year
            answer.headers["Cache-Control"] = f"public, max-age={ELSEWHERE_MAX_AGE}"
        return answer

    def _near(self, error: NotFoundError, name: str) -> NotFoundError:
        """``error`` with what the archive holds near ``name`` (:meth:`pdi.archive.Archive.not_found`); as it was
        when that cannot be read (said in the log): the name is not here all the same."""
        try:
            return self.archive.not_found(error, name)
        except PDIError as exc:
            log.warning("pdi: what is near a name not here was not read: %s", clipped(str(exc), MESSAGE_MOST))
            return error

    async def view(self, request: Request, name: str) -> Response | None:
        """``/view?pdi=NAME`` of a name this archive does not hold: on to where it is, or ``None``."""
        return await self.lookups.run(self._view, name, self._selves(request))

    def _selves(self, request: Request) -> tuple[str, ...]:
        """The base URLs this resolver is known to be reached at: ``--base-url`` and the address the connection
        came to (``scope["server"]``, the socket's own). A registry or the DNS naming one of them for a series this
        archive does not hold is not followed there: the name would come back here, again and again. Never the
        request's ``Host``: a stranger's word, which named the authority (left out: ``404``, or the mirror) or
        anything else (the resolver's own address taken for another's: a ``302`` to itself); any other name of
        this resolver is known by its answer to the probe (:meth:`Authorities.note_answer`)."""
        server = request.scope.get("server")
        here = () if not server or server[1] is None else (_origin(server[0], server[1]),)
        return here if self.base_url is None else (self.base_url, *here)

    # --- in a worker thread ---------------------------------------------------------------
    def _service(self, service: str, name: str, query: str, base: str, selves: tuple[str, ...],
                 probe: bool = False) -> Response | _Local | None:
        pdi = _parsed(name)
        if pdi is None:
            return None
        onward, failed = self._onward_or_failed(pdi, service, selves)
        if onward is not None:
            if service == "N2Ls":
                return self._locations(pdi, onward, selves, probe)
            if probe:  # another resolver's route probe (pdi.federation.routes): where a reader would go, unprobed
                chosen = self.authorities.first_up(onward)
                if chosen is None:
                    self._raise_nowhere(pdi, onward, [])
                    return None
                return _redirect(f"{chosen.base}uri-res/{_ONWARD[service]}?{query}", cache="no-store")
            found = self._first_onward(pdi, onward, selves)
            if found is None:  # each was this resolver (an alias of it): known nowhere else
                return None
            return _redirect(f"{found.base}uri-res/{_ONWARD[service]}?{query}")
        if service == "N2Ls" or not _legacy(pdi):
            if failed is not None:
                raise failed
            return None
        rescued = self._rescue(pdi, service, base, selves)
        if rescued is None and failed is not None:
            raise failed
        return rescued

    def _locations(self, pdi: PDI, onward: list[Candidate], selves: tuple[str, ...], probe: bool) -> Response | None:
        """``N2Ls``: the N2R URL of ``pdi`` at each resolver of ``onward`` (RFC 2169 §4.2, ``text/uri-list``), but
        those whose route comes back here or round a loop (:meth:`Routes.looping`; not asked for another resolver's
        probe): each said in a comment line instead (RFC 2483 §5), not listed, as no reader would get the name
        there. A resolver that is down stays listed: it may come back, and a client tries the next. Every one
        coming back: ``508``, as ``N2R`` answers. Every one this resolver (aliases of it): ``None``, known
        nowhere else."""
        routes = [] if probe else self.route_probe.looping(onward, pdi.series_name.lower(), selves)
        loops = [route for route in routes if not route.itself]
        # those found to be this resolver (an alias of it) are no other location: left out, as its base URLs are
        onward = [c for c in onward if not self.authorities.is_self(c.base)
                  and c.base not in {route.resolvers[0] for route in routes if route.itself}]
        looping = {route.resolvers[0] for route in loops}
        listed = [c for c in onward if c.base not in looping]
        if not listed:
            if not onward:
                return None
            raise _nowhere(pdi, onward, loops)
        body = "".join(f"{n2r_url(c.base, pdi)}\r\n" for c in listed)
        said = "".join(f"# not listed: {route} (sends the name back, and none holds it)\r\n" for route in loops)
        return PlainTextResponse(f"# {pdi}\r\n{body}{said}", media_type="text/uri-list",
                                 headers={"Cache-Control": f"public, max-age={ELSEWHERE_MAX_AGE}"})

    def _onward(self, pdi: PDI, service: str, selves: tuple[str, ...]) -> list[Candidate] | None:
        """The resolvers known for ``pdi``'s series, but this one (``selves``); ``None``: the series is held here,
        or no other resolver is known for it (answered as a name known nowhere)."""
        series = pdi.series_name.lower()
        if self.holds(series):
            return None
        return self.authorities.candidates(series, _urn(pdi), _OFFERED[service], selves) or None

    def _onward_or_failed(self, pdi: PDI, service: str, selves: tuple[str, ...],
                          ) -> tuple[list[Candidate] | None, RemoteError | None]:
        """:meth:`_onward`, or, of a legacy name, the DNS's failure beside no resolver: a capture of its page that
        this archive holds (or a registry's resolver holds) still answers it, the failure only when none does. A
        look-up for other resolvers that could not be made never hides the copy at hand."""
        try:
            return self._onward(pdi, service, selves), None
        except RemoteError as exc:
            if not _legacy(pdi):
                raise
            return None, exc

    def _view(self, name: str, selves: tuple[str, ...]) -> Response | None:
        pdi = _parsed(name)
        if pdi is None:
            return None
        onward, failed = self._onward_or_failed(pdi, "N2R", selves)
        if onward is not None:
            chosen = self._first_onward(pdi, onward, selves)  # none: the viewer's page says why, not "not found"
            if chosen is None:  # each was this resolver (an alias of it): known nowhere else
                return None
            return _redirect(f"{chosen.base}view?pdi={quote(name, safe='')}")
        if not _legacy(pdi):
            return None
        local = self._local_capture(pdi, "/")
        if local is not None:
            return _redirect(f"/view?pdi={quote(local, safe='')}&later={quote(str(pdi), safe='')}")
        remote = self.remote.nearest(pdi.unique_id, pdi.date, selves)
        found = None if remote is None else _name_in(remote.location)
        if remote is None or found is None:
            if failed is not None:
                raise failed
            return None
        return _redirect(f"{remote.base}view?pdi={quote(found, safe='')}&later={quote(str(pdi), safe='')}")

    def _first_onward(self, pdi: PDI, onward: list[Candidate], selves: tuple[str, ...]) -> Candidate | None:
        """The first resolver of ``onward`` that is up and does not send the name back (:mod:`pdi.federation.routes`),
        or the :class:`Problem` saying why there is none; ``None`` when each was found to be this resolver."""
        chosen, loops = self.route_probe.first_onward(onward, pdi.series_name.lower(), selves)
        if chosen is None:
            self._raise_nowhere(pdi, onward, loops)
        return chosen

    def _raise_nowhere(self, pdi: PDI, onward: list[Candidate], loops: list[Chain]) -> None:
        """Raise :func:`_nowhere` of the resolvers of ``onward`` that are not this resolver; none: return (the name
        is known nowhere else)."""
        others = [c for c in onward if not self.authorities.is_self(c.base)]
        if others:
            raise _nowhere(pdi, others, loops)

    def _local_capture(self, pdi: PDI, base: str) -> str | None:
        """The name of the capture of ``pdi``'s URL this archive holds nearest its day, if it holds one."""
        try:
            subject = self.resolver.mementos.subject(pdi.unique_id, base)
        except (PDIError, Problem):
            return None
        wanted = None if pdi.date is None else _midnight(pdi)
        return _name_in(subject.mementos[select(subject.mementos, wanted)].uri)

    def _rescue(self, pdi: PDI, service: str, base: str, selves: tuple[str, ...]) -> Response | _Local | None:
        local = self._local_capture(pdi, base)
        if local is not None:
            about = _about(pdi, local)
            if service in ("N2R", "I2R"):
                return _Local(local, about)
            to = "N2C" if service == "N2C" else "N2R"
            return _redirect(f"{base.rstrip('/')}/uri-res/{to}?{rfc2169_query(local)}", about)
        remote = self.remote.nearest(pdi.unique_id, pdi.date, selves)
        if remote is None:
            return None
        found = _name_in(remote.location)
        if found is None:
            return None
        return _redirect(remote.location, _about(pdi, found))

    async def registry_document(self, request: Request) -> Response:
        """``/.well-known/pdi-registry``: the archive's registry as a compact JWS (``application/jose``)."""
        own = self.authorities.own
        if own is None or not own.exists():
            raise NotFoundError("this archive keeps no registry: `pdi registry add SERIES BASE_URL` makes one")
        if self.signing_key is None:
            from pdi.archive.signing_key import no_key

            raise no_key(self.archive.location, self.archive.read_only, "this archive has no signing key to sign its"
                         " registry: `pdi keys init` makes one (then restart pdi serve)")
        key = self.signing_key
        try:
            registry = await anyio.to_thread.run_sync(read_registry_file, own)
        except PDIError as exc:  # the operator's file is at fault, not the request: its path and why go to the log
            log.error("pdi: %s answered 500: %s", REGISTRY_PATH, clipped(str(exc), MESSAGE_MOST))
            raise Problem(500, "Internal Server Error", "this resolver's registry cannot be read: its operator finds"
                          " why in the server's log") from None
        jws = sign_registry(key, registry)
        return Response(jws + "\n", media_type="application/jose",
                        headers={"Cache-Control": f"public, max-age={REGISTRY_MAX_AGE}"})


class ResolverToken:
    """ASGI middleware: the answer to a request with :data:`~pdi.federation.authorities.PROBE_HEADER` (another
    resolver's probe, or this one's of a base URL that may be its own) carries
    :data:`~pdi.federation.authorities.RESOLVER_HEADER` with ``token``, by which the resolver knows itself under
    any name (:meth:`Authorities.note_answer`). A reader's answers never carry it."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self.field = (RESOLVER_HEADER.lower().encode(), token.encode("ascii"))

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not any(key == _PROBE_FIELD for key, _ in scope["headers"]):
            await self.app(scope, receive, send)
            return

        async def said(message: Message) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", ()), self.field]}
            await send(message)

        await self.app(scope, receive, said)


#: :data:`PROBE_HEADER` as ASGI gives it.
_PROBE_FIELD = PROBE_HEADER.lower().encode()


def _origin(host: str, port: int) -> str:
    """The ``http`` base URL of a socket address (an IPv6 address in brackets, RFC 3986 §3.2.2)."""
    return f"http://[{host}]:{port}/" if ":" in host else f"http://{host}:{port}/"


@dataclass(frozen=True)
class _Local:
    """A capture this archive holds that answers a legacy name: its name and the fields that say which it is."""

    name: str
    about: dict[str, str]


#: Seconds a client is told to wait when every resolver of a name is down.
RETRY_AFTER = 30


def _nowhere(pdi: PDI, onward: list[Candidate], loops: list[Chain]) -> Problem:
    """Why no resolver of ``onward`` is sent a name: each sends it back (``loops``), ``508 Loop Detected`` (RFC
    5842 §7.2: asked again, it would come back again); else ``503`` with ``Retry-After``, every resolver known
    down (or down and the others sending it back)."""
    back = "; ".join(str(route) for route in loops)
    if loops and len(loops) == len(onward):
        return Problem(508, "loop detected", f"the resolvers known for {pdi.series_name} send its names back and"
                       f" forth, and none holds them: {back} (a registry or DNS record to mend)")
    looping = {route.resolvers[0] for route in loops}
    down = ", ".join(c.base for c in onward if c.base not in looping)
    also = f"; the others send its names back ({back})" if loops else ""
    problem = Problem(503, "service unavailable", f"every resolver known for {pdi.series_name} is down"
                      f" ({down}){also}; try again later")
    problem.headers["Retry-After"] = str(RETRY_AFTER)
    return problem


def _parsed(name: str) -> PDI | None:
    try:
        return PDI.parse(name.strip())
    except (ParseError, ValueError):
        return None


def _urn(pdi: PDI) -> str:
    """The URN a DNS rule is applied to (RFC 3404 §3: the Application Unique String): ``pdi`` without its fragment or
    citation, which are no part of the URN (RFC 8141 §2.3.3: resolution does not take the f-component into
    account); a rule anchored at the name's end (``…[0-9]+$``) sends ``…1.text.1#line=1,2`` where it sends
    ``…1.text.1``."""
    text = str(dataclasses.replace(pdi, fragment=None, citation=None))
    return text if text.lower().startswith("urn:") else "urn:" + text


def _legacy(pdi: PDI) -> bool:
    """Whether ``pdi`` names a capture of a URL (its unique id the URL), as the 1990s I2R links do."""
    return not pdi.is_serial and is_url(pdi.unique_id)


def _midnight(pdi: PDI) -> datetime.datetime:
    assert pdi.date is not None
    return datetime.datetime.combine(pdi.date, datetime.time(), datetime.UTC)


def _name_in(n2r: str) -> str | None:
    """The name in an N2R URL (``…/uri-res/N2R?urn:pdi:…``)."""
    _, sep, query = n2r.partition("/uri-res/N2R?")
    if not sep:
        return None
    found = _parsed(urn_from_query(query))
    return None if found is None else str(found)


def rescued_from(asked: str, shown: str) -> tuple[PDI, PDI] | None:
    """``(asked, shown)`` parsed when both name captures of one URL (the viewer's ``&later=`` note), else ``None``."""
    first, second = _parsed(asked), _parsed(shown.split("#", 1)[0])
    if first is None or second is None or not _legacy(first) or not _legacy(second):
        return None
    return (first, second) if first.unique_id == second.unique_id else None


def _about(asked: PDI, captured: str) -> dict[str, str]:
    """The fields that say which capture answers ``asked`` (see the module's docstring)."""
    found = _parsed(captured)
    how = relation(asked.date, None if found is None else found.date)
    # the URL as a URI: a depositor's id may hold '>', '"', a line break (a Link of its own, a field cut short)
    url = as_uri(asked.unique_id)
    fields = {"PDI-Capture": f"{how}; asked={asked.date}; captured={as_uri(captured)}",
              "Link": link(url, "original")}
    if how != "same-day":
        day = "?" if found is None else found.date
        fields["Warning"] = (f'299 pdi "this is a{"" if how == "later" else "n"} {how} capture ({day}) of'
                             f' {url}: the version {as_uri(str(asked))} named ({asked.date}) was never kept"')
    return {k: v.encode("latin-1", "replace").decode("latin-1") for k, v in fields.items()}


def _redirect(location: str, extra: dict[str, str] | None = None, *,
              cache: str = f"public, max-age={ELSEWHERE_MAX_AGE}") -> Response:
    return Response(status_code=302, headers={"Location": location, "Cache-Control": cache, **(extra or {})})
