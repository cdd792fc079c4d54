"""``/api/annotation``: W3C Web Annotations of names, out (``GET``) and back in (``POST``) (:mod:`pdi.interop.annotation`).

``GET /api/annotation?pdi=NAME`` answers the annotation of a fragment name
or a citation as ``application/ld+json`` (the Web Annotation profile).
``POST /api/annotation[?pdi=DOCUMENT]`` takes a W3C annotation, a list or
page of them or a Hypothesis export (JSON, at most :data:`MAX_BODY` octets)
and answers, for each target, the name of the passage it points at and
whether its quote is there (``missing`` when it is not). It writes nothing,
so it needs no token.
"""

from __future__ import annotations

import json
from typing import Final

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from pdi.server.http.bodies import read_json
from pdi.server.http.params import optional, required
from pdi.server.process.limits import ArchiveHandlers

#: The largest annotation body read (octets).
MAX_BODY: Final = 8 << 20
#: The media type of an exported annotation (Web Annotation Protocol §4).
ANNOTATION_TYPE: Final = 'application/ld+json; profile="http://www.w3.org/ns/anno.jsonld"'


class AnnotationAPI(ArchiveHandlers):
    """The two handlers of ``/api/annotation``, over one archive."""

    async def export(self, request: Request) -> Response:
        """The Web Annotation of a fragment name or citation (``pdi=``)."""
        from pdi.interop.annotation import export_annotation

        name = required(request, "pdi")
        return await self.work.run(lambda: Response(json.dumps(export_annotation(self.archive, name), ensure_ascii=False,
                                                               indent=1).encode("utf-8"), media_type=ANNOTATION_TYPE))

    async def import_(self, request: Request) -> Response:
        """The names the posted annotations point at (``pdi=``: the document they were made on)."""
        from pdi.interop.annotation import import_annotations

        document = optional(request, "pdi")
        data = await read_json(request, MAX_BODY, f"an annotation body is at most {MAX_BODY} octets", rule="annotation",
                               unique_keys=True)

        def answer() -> Response:  # in a thread: a body of many annotations has as many results
            results = import_annotations(self.archive, data, document=document)
            return JSONResponse({
                "results": [r.to_json() for r in results],
                "missing": sum(1 for r in results if r.status == "missing"),
            })

        return await self.work.run(answer)
