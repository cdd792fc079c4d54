"""Health checks for whoever runs the resolver: ``/healthz`` (alive) and ``/readyz`` (its stores reachable).

``GET /healthz`` answers ``200`` and ``ok`` at once, from the worker's event
loop, touching neither the catalog nor the blob store: a load balancer or
systemd's watchdog asks it to know the process answers. ``GET /readyz``
asks each store one cheap thing, in a thread, within
:data:`READY_SECONDS`: the catalog one query, the blob store the first name
it lists (:meth:`pdi.archive.Archive.probe_catalog`, :meth:`~pdi.archive.Archive.probe_blobs`).
Both answer: ``200`` and ``{"status": "ready", ...}``; either fails or is late: ``503``, an RFC
9457 problem whose ``failed`` member names each part that failed
(``catalog``, ``blobs``) and whose ``detail`` says how to those who may read ``/metrics``
(:func:`~pdi.server.http.metrics.may_read`: the error names the server's places), and only which to anyone
else. Neither is ever cached.

A probe still running when ``/readyz`` is asked again (a store that has
stalled: its client may wait for it a minute or two before giving up) is
not begun a second time: the new request waits for the same probe, within
its own deadline, and says how long that probe has run. A probe is a thread
of the event loop's default executor (a few threads); a prober asking every
few seconds would otherwise fill it with stalled probes, queue more behind
them, and starve whatever else needs it.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response

from pdi.archive import Archive
from pdi.server.http.metrics import counters, may_read
from pdi.server.http.problems import problem

#: Seconds each store has to answer ``/readyz``'s probe.
READY_SECONDS = 2.0
_NO_STORE = {"Cache-Control": "no-store"}


async def healthz(request: Request) -> Response:
    """Alive: 200 and "ok", without touching the catalog or the blob store."""
    return PlainTextResponse("ok\n", headers=_NO_STORE)


class Readiness:
    """``GET /readyz`` of ``archive``: its catalog and blob store probed, each within ``seconds``."""

    def __init__(self, archive: Archive, seconds: float = READY_SECONDS, metrics_token: str | None = None) -> None:
        self.archive = archive
        self.seconds = seconds
        #: Who may read why a part failed (its error names the server's places): those who may read ``/metrics``.
        self.metrics_token = metrics_token
        #: Each part's probe still running, and when it began (its loop's clock); one a part at a time.
        self._running: dict[str, tuple[asyncio.Future[None], float]] = {}

    async def readyz(self, request: Request) -> Response:
        """Ready: the catalog answers a query and the blob store lists a name, each in a short deadline; else 503."""
        parts: dict[str, Callable[[], None]] = {"catalog": self.archive.probe_catalog,
                                                "blobs": self.archive.probe_blobs}
        outcomes = await asyncio.gather(*(self._probe(part, probe) for part, probe in parts.items()))
        failed = {part: why for part, why in zip(parts, outcomes, strict=True) if why is not None}
        if not failed:
            return JSONResponse({"status": "ready", "checked": list(parts)}, headers=_NO_STORE)
        for part in failed:
            counters().store_errors.labels(part).inc()
        if may_read(request.scope, self.metrics_token):
            detail = "; ".join(f"{part}: {why}" for part, why in failed.items())
        else:  # a stranger (a load balancer as often) learns which part, not the places its error names
            detail = (f"{', '.join(failed)} not answering; why is said to those who may read /metrics (the server's"
                      " own machine, or pdi serve's --metrics-token)")
        answer = problem(503, "not ready", detail, type="/api#problem-not-ready", extensions={"failed": list(failed)})
        answer.headers.update(_NO_STORE)
        return answer

    async def _probe(self, part: str, probe: Callable[[], None]) -> str | None:
        """``None`` if ``probe`` returned within the deadline, else what went wrong; a probe of ``part`` still
        running is waited for, not begun again (see the module docstring)."""
        running = self._running.get(part)
        if running is None or running[0].done():
            begun: asyncio.Future[None] = asyncio.ensure_future(asyncio.to_thread(probe))
            begun.add_done_callback(_heard)
            running = self._running[part] = (begun, time.monotonic())
        future, began = running
        try:
            await asyncio.wait_for(asyncio.shield(future), self.seconds)
        except TimeoutError:
            ran = time.monotonic() - began
            if ran < 2 * self.seconds:
                return f"no answer within {self.seconds:g} s"
            return f"no answer: its probe, begun {ran:.0f} s ago, has not returned"
        except Exception as exc:  # whatever a failing store raises is the answer here
            return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
        return None


def _heard(future: asyncio.Future[None]) -> None:
    """Take a probe's outcome, so that one that failed after every request stopped waiting for it is not logged as
    an exception never retrieved."""
    if not future.cancelled():
        future.exception()
