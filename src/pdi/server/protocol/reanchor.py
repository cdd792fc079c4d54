"""``/api/anchor?pdi=NAME%23FRAGMENT&to=VERSION|latest``: a cited passage found in another version (an edge).

Answers JSON (:meth:`pdi.archive.anchoring.AnchorAnswer.to_json`): ``pdi``
the passage's name in that version (a ``char`` range, or ``line`` when the
citation was by lines and the lines map whole), ``method`` (``exact``,
``quote`` or ``fuzzy``), ``score`` and ``context`` (0..1), the cited
``quote`` and the text ``found``. A passage not in that version is a ``422``
problem of type ``/api#problem-passage-orphaned``; one that stands in several
places none better than the rest, type ``/api#problem-passage-ambiguous``
with the places in ``candidates`` (RFC 9457 §3.2 extension members).
Both versions are read whole: the work runs under the resolver's limits
(:mod:`pdi.server.process.limits`).
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from pdi.errors import ParseError
from pdi.server.http.params import optional
from pdi.server.process.limits import ArchiveHandlers


class AnchorAPI(ArchiveHandlers):
    """``/api/anchor`` (see the module docstring)."""

    async def anchor(self, request: Request) -> Response:
        """Find the passage a name cites in another version of it: its name there, how it was found, and the score."""
        from pdi.archive.anchoring import anchor

        name = optional(request, "pdi")
        to = optional(request, "to")
        if not name or not to:
            raise ParseError("/api/anchor needs pdi= (a name with a fragment, '#' written %23) and to= (a version or latest)")
        return JSONResponse((await self.work.run(anchor, self.archive, name, to)).to_json())
