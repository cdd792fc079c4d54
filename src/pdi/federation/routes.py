"""Whether a reader sent to a resolver for a series gets an answer there, or comes back (issue 27 §4).

Resolver A's registry (or DNS) may send a series to B while B's sends it
back to A (or A → B → C → A), none of them holding it: a reader would bounce
between them until the browser gives up (some twenty redirects). Before a
name is sent to a resolver known for its series, :class:`Routes` asks that
resolver what it answers for the series: ``HEAD {base}uri-res/N2L?`` of a
name of the series that cannot exist (:func:`probe_name`), with the header
:data:`PROBE_HEADER`, redirects not followed, within
:data:`~pdi.federation.authorities.PROBE_SECONDS` (its host name's lookup and
the connection included; a stranger's, at public addresses only, as the
up/down probe). What it answers (a *hop*):

* ``3xx`` to ``…/uri-res/…`` at another resolver (its base: what comes before
  ``uri-res/``): it would send the reader on there, and that one is asked in
  turn;
* ``508``: it found a loop itself;
* ``5xx`` otherwise, or no answer in time: down for the series (a pdi
  resolver whose every resolver of the series is down answers ``503``): not
  sent there, as a resolver that is down is not;
* anything else (``404``: it holds or mirrors the series and not that name;
  ``200``, or ``3xx`` to its own blobs or to no resolver): it answers itself.

Whatever the status, an answer that carries this resolver's own
:data:`~pdi.federation.authorities.RESOLVER_HEADER` is this resolver's (an
alias of it: :meth:`~pdi.federation.authorities.Authorities.note_answer`):
the candidate is this resolver, left out as one of its own base URLs is, and a
chain that reaches it comes back.

A chain that comes back to this resolver (one of its own base URLs, or an alias found so), or to a
resolver already on it, is a **loop**: the candidate is skipped (and
logged). A chain that reaches a resolver answering itself within
:data:`MAX_CHAIN` resolvers, the candidate included, is followed as it
was (B knows that C holds the series: the reader goes to B, then C); one
that leads on further is taken for a loop too. Each resolver's hop is kept
:data:`ROUTE_SECONDS` per series (``down``: only
:data:`~pdi.federation.authorities.DOWN_SECONDS`, as a resolver found down
is, so every worker finds it back within a few seconds; while one request
asks again, the others take the hop kept; at most :data:`MAX_KEPT` kept), and one
answer probes at most :data:`MAX_ROUTE_PROBES` resolvers not known: a chain
not known to its end then is followed as it is (as before this check), its
probes kept for the next reader.

A pdi resolver asked with :data:`PROBE_HEADER` answers as it would a reader,
but without probing the routes of its own candidates (two resolvers sending
a series to each other would otherwise probe each other for ever), and with
``Cache-Control: no-store``.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal
from urllib.parse import urljoin

from pdi._refusals import IDENTITY, unreached
from pdi._wording import clipped
from pdi.errors import PDIError
from pdi.federation.authorities import (
    DOWN_SECONDS,
    PROBE_HEADER,
    PROBE_SECONDS,
    Authorities,
    Candidate,
    _is_public,
    _resolver_key,
    same_resolver,
)
from pdi.federation.registry import base_url

__all__ = ["MAX_CHAIN", "PROBE_HEADER", "ROUTE_SECONDS", "Chain", "Hop", "Routes", "probe_name"]

log = logging.getLogger("pdi.federation")

#: How long what a resolver answers for a series is kept.
ROUTE_SECONDS = 30.0
#: Resolvers a chain may pass through, the candidate included, before one must answer itself.
MAX_CHAIN = 4
#: Resolvers not known probed for one answer, at most (with the up/down probe's 3: 7 probes of 1.5 s each at the worst,
#: and, once a chain leads on, a lookup of whether the resolver before it is at a public address: PROBE_SECONDS more).
MAX_ROUTE_PROBES = 4
#: Hops kept, at most (then all are forgotten).
MAX_KEPT = 4096
#: The unique id of the name a probe asks for: no deposit is named so (PDI-GRAMMAR: a serial is a number).
_PROBE_ID = "pdi-route-probe"

Kind = Literal["answers", "onward", "down", "loops", "itself"]


def probe_name(series: str) -> str:
    """A name of ``series`` that no archive holds, asked of a resolver to learn what it answers for the series."""
    return f"urn:pdi://{series}/1900/01/01/{_PROBE_ID}.text.1"


@dataclass(frozen=True)
class Hop:
    """What one resolver answers for a series: ``onward`` to the resolver ``to``, ``answers`` itself, ``down``,
    ``loops`` (it said ``508``), or ``itself``: it is this resolver (its answer said so)."""

    kind: Kind
    to: str = ""


@dataclass(frozen=True)
class Chain:
    """Where a reader sent to ``resolvers[0]`` for a series goes: each resolver in turn. ``loops``: it comes back (the
    last is where), or leads on past :data:`MAX_CHAIN`; ``down``: the first is down for the series; ``itself``: the
    first is this resolver (another spelling or alias of it)."""

    resolvers: tuple[str, ...]
    loops: bool = False
    down: bool = False
    itself: bool = False

    def __str__(self) -> str:
        return " → ".join(self.resolvers)


class Routes:
    """The route probe of the resolvers :class:`~pdi.federation.authorities.Authorities` knows for a series."""

    def __init__(self, authorities: Authorities) -> None:
        self.authorities = authorities
        #: What each resolver (:func:`~pdi.federation.authorities.same_resolver`: however spelt, asked once) answered
        #: for a series, by whether it was connected to at public addresses only.
        self._kept: dict[tuple[tuple[str, str, int, str], str, bool], tuple[float, Hop]] = {}
        self._asking: set[tuple[tuple[str, str, int, str], str, bool]] = set()  # hops a request is asking again now
        self._lock = threading.Lock()

    def first_onward(self, candidates: list[Candidate], series: str, selves: Sequence[str],
                     ) -> tuple[Candidate | None, list[Chain]]:
        """The first of ``candidates`` that is up (:meth:`Authorities.first_up`) and whose route does not come
        back, with the routes of those skipped for a loop."""
        loops: list[Chain] = []
        budget = [MAX_ROUTE_PROBES]

        def goes_somewhere(candidate: Candidate, public_only: bool) -> bool:
            route = self.route(candidate.base, series, selves, public_only, budget)
            if route.loops:
                log.warning("pdi: not sent to %s for %s: it comes back (%s)", candidate.base, series, route)
                loops.append(route)
            return not (route.loops or route.down or route.itself)

        return self.authorities.first_up(candidates, goes_somewhere), loops

    def looping(self, candidates: list[Candidate], series: str, selves: Sequence[str]) -> list[Chain]:
        """The routes of ``candidates`` that come back (to this resolver, or round among others none of which
        answers), or that are this resolver (``itself``: another spelling or alias of it), each candidate asked as
        :meth:`first_onward` asks it: ``N2Ls`` lists none of them (a resolver that would only send the reader back
        is no location of the name). One not known once :data:`MAX_ROUTE_PROBES` were asked is taken as it is, as
        :meth:`first_onward` takes it."""
        budget = [MAX_ROUTE_PROBES]
        loops: list[Chain] = []
        for candidate in candidates:
            route = self.route(candidate.base, series, selves, self.authorities.public_only(candidate), budget)
            if route.itself:
                loops.append(route)
            elif route.loops:
                log.warning("pdi: not listed for %s: %s comes back (%s)", series, candidate.base, route)
                loops.append(route)
        return loops

    def route(self, base: str, series: str, selves: Sequence[str], public_only: bool,
              budget: list[int] | None = None) -> Chain:
        """Where a reader sent to ``base`` for ``series`` goes, each resolver asked once (or known), at most
        ``budget[0]`` of them not known (spent as they are asked)."""
        budget = budget if budget is not None else [MAX_ROUTE_PROBES]
        chain = [base]
        if self.authorities.is_self(base, selves):
            return Chain(tuple(chain), itself=True)
        at = base
        onward_public: bool | None = None  # found out when the chain leads on
        for _ in range(MAX_CHAIN):
            hop = self._known(at, series, public_only)
            if hop is None:
                if budget[0] <= 0:  # not known to its end: followed as it is
                    return Chain(tuple(chain))
                budget[0] -= 1
                hop = self._ask(at, series, public_only)
            if hop.kind == "itself":  # the candidate is this resolver; a resolver on the chain: it comes back
                return Chain(tuple(chain), itself=True) if len(chain) == 1 else Chain(tuple(chain), loops=True)
            if hop.kind == "loops":
                return Chain(tuple(chain), loops=True)
            if hop.kind == "down":
                return Chain(tuple(chain), down=len(chain) == 1)
            if hop.kind == "answers":
                return Chain(tuple(chain))
            back = self.authorities.is_self(hop.to, selves) or any(same_resolver(hop.to, c) for c in chain)
            chain.append(hop.to)
            if back:
                return Chain(tuple(chain), loops=True)
            if onward_public is None:
                # the resolvers a chain leads to are named by the one before: from a public address, to public ones
                # only (as fetch_bounded follows a redirect); the operator's own, wherever they are
                onward_public = public_only or _is_public(base, time.monotonic() + PROBE_SECONDS)
            at, public_only = hop.to, onward_public
        return Chain(tuple(chain), loops=True)  # leads on further: as good as a loop to a reader

    def _known(self, base: str, series: str, public_only: bool) -> Hop | None:
        """What ``base`` answered for ``series`` while it is kept, or while another request asks it again;
        ``None``: not known."""
        key = _resolver_key(base), series, public_only
        with self._lock:
            kept = self._kept.get(key)
            fresh = kept is not None and (kept[0] > time.monotonic() or key in self._asking)
        return kept[1] if kept is not None and fresh else None

    def _ask(self, base: str, series: str, public_only: bool) -> Hop:
        """What ``base`` answers for ``series`` (see the module's docstring), kept :data:`ROUTE_SECONDS` (``down``:
        :data:`~pdi.federation.authorities.DOWN_SECONDS`, as a resolver found down is)."""
        from pdi import _answer_head as answer_head  # here: httpx is slow to import

        key = _resolver_key(base), series, public_only
        url = f"{base}uri-res/N2L?{probe_name(series)}"
        deadline = time.monotonic() + PROBE_SECONDS
        with self._lock:
            self._asking.add(key)
        try:
            with answer_head.client(PROBE_SECONDS, by=deadline, timeout=PROBE_SECONDS, follow_redirects=False,
                                    public_only=public_only) as client, \
                    client.stream("HEAD", url, headers={PROBE_HEADER: "1", **IDENTITY}) as answer:
                itself = self.authorities.note_answer(base, answer.headers)
                hop = Hop("itself") if itself else _hop(base, url, answer.status_code, answer.headers.get("location"))
        except unreached():
            hop = Hop("down")
        finally:
            with self._lock:
                self._asking.discard(key)
        with self._lock:
            if len(self._kept) >= MAX_KEPT:
                self._kept.clear()
            self._kept[key] = (time.monotonic() + (DOWN_SECONDS if hop.kind == "down" else ROUTE_SECONDS), hop)
        return hop


def _hop(base: str, url: str, status: int, location: str | None) -> Hop:
    """The hop of an answer ``status`` (its ``Location``) from ``base`` to the probe ``url``."""
    if status == 508:
        return Hop("loops")
    if status >= 500:
        return Hop("down")
    if not 300 <= status < 400 or not location:
        return Hop("answers")
    try:
        to = urljoin(url, location.strip())
    except ValueError:  # "http://[": no URL a reader can follow either
        return Hop("answers")
    head, sep, _ = to.partition("/uri-res/")
    if not sep:
        return Hop("answers")  # to its own blobs, or to no resolver: the reader stops there
    try:
        onward = base_url(head + "/", "a resolver's redirect")
    except PDIError as exc:
        log.info("pdi: %s redirects to no resolver's URL: %s", base, clipped(str(exc), 300))
        return Hop("answers")
    if same_resolver(onward, base):
        # to another service of its own (N2R), or to itself as asked (its own loop, a reader's too)
        return Hop("loops") if to == url else Hop("answers")
    return Hop("onward", onward)
