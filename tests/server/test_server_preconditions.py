"""Preconditions of RFC 9110 §13 on the resolver's answers other than N2R's, read by httpx from a live server.

Each expected status is worked out from the RFC text, not from what the server said:

* §13.1.2 ``If-None-Match``: "*" is false when a current representation exists, and a listed tag is compared
  weakly (§8.8.3.2: ``W/"x"`` and ``"x"`` match); false on a ``GET`` or ``HEAD`` means ``304``.
* §13.1.1 ``If-Match``: "*" is true when a representation exists; a list is true only when one listed tag
  matches the selected representation's entity tag by strong comparison, so never for an answer with no
  ``ETag``; false means the method is not performed (``412``). An origin server that receives either field
  "MUST evaluate the condition" (§13.1.1, §13.1.2), for any 2xx answer (§13.2.1).
"""

from __future__ import annotations

import json
from pathlib import Path

import httpx
from server_helpers import Served

MANIFEST = json.loads((Path(__file__).resolve().parents[2] / "src" / "pdi" / "data" / "pdfjs" / "MANIFEST.json")
                      .read_text())


def _pdfjs(served: Served) -> str:
    return f"{served.url}/static/pdfjs/{MANIFEST['version']}/LICENSE"


def test_rfc9110_13_1_2_pdfjs_not_modified_for_a_weak_tag_and_for_a_star(served: Served) -> None:
    url = _pdfjs(served)
    tag = f'"{MANIFEST["files"]["LICENSE"]["sha256"]}"'
    for field in (tag, f"W/{tag}", "*", f'"other", W/{tag}'):
        for method in ("GET", "HEAD"):
            got = httpx.request(method, url, headers={"If-None-Match": field})
            assert (got.status_code, got.content) == (304, b""), (method, field)
            assert got.headers["etag"] == tag
    assert httpx.get(url, headers={"If-None-Match": '"other", W/"other"'}).status_code == 200
