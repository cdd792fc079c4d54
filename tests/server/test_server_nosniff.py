"""Every answer with a body says ``X-Content-Type-Options: nosniff`` once (the Fetch standard's section of that
name): a browser reads a problem's JSON, an OAI-PMH answer or a search's JSON, which quote a stranger's words, as
their ``Content-Type`` says and never as a page or a script."""

from __future__ import annotations

import urllib.parse

import httpx
from server_helpers import S, Served


def _q(text: str) -> str:
    return urllib.parse.quote(text, safe="")


def test_every_kind_of_answer_says_nosniff_once(served: Served) -> None:
    missing = "urn:pdi://nowhere.example.us/2026/11/22/1.text.1"
    asked = {
        # (path, Accept) -> the media type the answer is of
        (f"/uri-res/N2R?{served.text}", "*/*"): "text/plain",
        (f"/uri-res/N2R?{missing}", "*/*"): "application/problem+json",
        (f"/view?pdi={_q(missing)}", "text/html"): "text/html",
        (f"/uri-res/N2Ls?{served.text}", "*/*"): "text/uri-list",
        ("/no/such/page", "*/*"): "application/problem+json",
        ("/api/search?q=%3Cscript%3E", "*/*"): "application/json",
        ("/api/series", "*/*"): "application/json",
        ("/oai?verb=%3Cscript%3E", "*/*"): "text/xml",
        (f"/timemap/link/{served.captured}", "*/*"): "application/link-format",
        ("/", "text/html"): "text/html",
        (f"/series/{S}", "text/html"): "text/html",
        (f"/view?pdi={_q(served.text)}", "text/html"): "text/html",
        ("/api", "text/html"): "text/html",
    }
    for (path, accept), kind in asked.items():
        answer = httpx.get(served.url + path, headers={"Accept": accept})
        assert answer.headers["content-type"].split(";")[0] == kind, (path, answer.status_code, answer.headers)
        assert answer.headers.get_list("x-content-type-options") == ["nosniff"], (path, answer.headers)
