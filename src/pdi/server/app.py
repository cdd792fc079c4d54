"""The resolver for people: the pages a reader opens (an edge, read-only).

``/`` is the home page (the series, a box for a name); ``/view?pdi=NAME``
shows what a name names (:mod:`pdi.server.viewer` renders it). A page that
reads a whole representation runs within the resolver's
:class:`~pdi.server.limits.WorkLimits`; an error is shown on the home page
with the status of its class.
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import HTMLResponse, Response

from pdi.archive import Archive
from pdi.errors import PDIError
from pdi.server.limits import WorkLimits


class ReaderApp:
    """The reader's pages over one archive."""

    def __init__(self, archive: Archive, work: WorkLimits) -> None:
        self.archive = archive
        self.work = work

    async def view(self, request: Request) -> Response:
        from pdi.server.viewer import render_home, render_view

        name = request.query_params.get("pdi")
        series = [s.name for s in self.archive.series()]
        if not name:
            return HTMLResponse(render_home(series))
        try:
            return HTMLResponse(await self.work.run(render_view, self.archive, name))
        except PDIError as exc:
            return HTMLResponse(render_home(series, error=exc, value=name), status_code=exc.http_status)
