"""Health checks for whoever runs the resolver: ``/healthz`` (alive) and ``/readyz`` (its stores reachable).

``GET /healthz`` answers ``200`` and ``ok`` at once, from the worker's event
loop, touching neither the catalog nor the blob store: a load balancer or
systemd's watchdog asks it to know the process answers. ``GET /readyz``
asks each store one cheap thing, in a thread, within
:data:`READY_SECONDS`: the catalog one query, the blob store the first name
it lists (:meth:`pdi.archive.Archive.probe_catalog`, :meth:`~pdi.archive.Archive.probe_blobs`).
Both answer: ``200`` and ``{"status": "ready", ...}``; either fails or is late: ``503``, an RFC
9457 problem whose ``failed`` member names each part that failed
(``catalog``, ``blobs``) and whose ``detail`` says how. Neither is ever cached.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response

from pdi.archive import Archive
from pdi.server.http.metrics import counters
from pdi.server.http.problems import problem

#: Seconds each store has to answer ``/readyz``'s probe.
READY_SECONDS = 2.0
_NO_STORE = {"Cache-Control": "no-store"}


async def healthz(request: Request) -> Response:
    """Alive: 200 and "ok", without touching the catalog or the blob store."""
    return PlainTextResponse("ok\n", headers=_NO_STORE)


class Readiness:
    """``GET /readyz`` of ``archive``: its catalog and blob store probed, each within ``seconds``."""

    def __init__(self, archive: Archive, seconds: float = READY_SECONDS) -> None:
        self.archive = archive
        self.seconds = seconds

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
        detail = "; ".join(f"{part}: {why}" for part, why in failed.items())
        answer = problem(503, "not ready", detail, type="/api#problem-not-ready", extensions={"failed": list(failed)})
        answer.headers.update(_NO_STORE)
        return answer

    async def _probe(self, part: str, probe: Callable[[], None]) -> str | None:
        """``None`` if ``probe`` returned within the deadline, else what went wrong."""
        try:
            await asyncio.wait_for(asyncio.to_thread(probe), self.seconds)
        except TimeoutError:
            return f"no answer within {self.seconds:g} s"
        except Exception as exc:  # whatever a failing store raises is the answer here
            return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
        return None
