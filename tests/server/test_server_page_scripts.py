"""What script a page of the resolver may run: its own (the viewer's, the selection script of a replayed page's,
each by its SHA-256), and on a page that has none of its own, none at all.

A script that found its way into a page's markup (a depositor's title, a stranger's query, an error message) is
put into each kind of page in Chromium, as an injection would put it there, and must not run: the page's
Content-Security-Policy refuses it (``script-src-elem``). None allows ``eval`` (DevTools' own evaluation is
exempt from a page's policy, so that is read from the policies).
"""

from __future__ import annotations

import http.server
import time
from typing import Any

import httpx
from server_helpers import Served
from test_server_framing import _js, _pages

from chromium_helpers import navigate_and_wait_for_load, new_tab
from pdi.capture.browser import devtools
from support.handler_server import handler_server

#: A script put into the page as an injection into its markup would be: did it run, and what refused it.
_INJECTED = (
    "new Promise((done) => { document.addEventListener('securitypolicyviolation', (e) =>"
    " done([window.injected === 1, e.effectiveDirective])); const s = document.createElement('script');"
    " s.textContent = 'window.injected = 1'; document.body.append(s);"
    " setTimeout(() => done([window.injected === 1, null]), 2000); })"
)


def _directives(policy: str) -> dict[str, list[str]]:
    """A Content-Security-Policy field's directives (CSP 3 §2.2.1): name -> its sources, the first of a name kept."""
    found: dict[str, list[str]] = {}
    for directive in policy.split(";"):
        words = directive.split()
        if words:
            found.setdefault(words[0].lower(), words[1:])
    return found


def _script_sources(policies: list[str]) -> list[list[str]]:
    """The sources each policy lets a ``<script>`` element load from (``script-src``, else ``default-src``)."""
    found = []
    for policy in policies:
        directives = _directives(policy)
        sources = directives.get("script-src", directives.get("default-src"))
        if sources is not None:
            found.append(sources)
    return found


def test_no_page_of_the_resolver_runs_a_script_put_into_its_markup(served: Served) -> None:
    pages = _pages(served)
    with devtools() as pipe:
        for what, path in pages.items():
            deadline = time.monotonic() + 60
            session = new_tab(pipe, "Page", deadline=deadline)
            navigate_and_wait_for_load(pipe, session, served.url + path, deadline)
            assert _js(pipe, session, _INJECTED) == [False, "script-src-elem"], what
            pipe.call("Target.closeTarget", {"targetId": _target(pipe, session)}, None, deadline)


def _target(pipe: Any, session: str) -> str:
    """The target id of the tab ``session`` is attached to."""
    info = pipe.call("Target.getTargetInfo", None, session, time.monotonic() + 30)
    return str(info["targetInfo"]["targetId"])


def test_every_pages_policy_restricts_scripts_and_allows_no_inline_script_nor_eval(served: Served) -> None:
    """Every page says which scripts it may run, and none lets an inline script, ``eval`` or another site's script
    run; a page with no script of its own (the sign-in form, search, the catalogue, the API reference, the error
    pages) runs none (``script-src 'none'``)."""
    for what, path in _pages(served).items():
        answer = httpx.get(served.url + path, headers={"Accept": "text/html"})
        policies = answer.headers.get_list("content-security-policy")
        sources = _script_sources(policies)
        assert sources, (what, policies)
        allowing = {"'unsafe-inline'", "'unsafe-eval'", "'unsafe-hashes'", "*", "data:", "blob:", "http:", "https:"}
        # each policy is enforced (CSP 3 §4.1): one that allows none of these is enough, none may allow them all
        # keywords and hashes; the viewer's pages pdf.js's folder of the resolver itself too, never all of it
        pdfjs = f"{served.url}/static/pdfjs/"
        assert any(not allowing & set(s) and all(w.startswith("'") or w == pdfjs for w in s) and "'self'" not in s
                   for s in sources), (what, policies)
        if not path.startswith("/view?"):  # the viewer's pages: its script and pdf.js, by hash and by path
            assert ["'none'"] in sources, (what, policies)


#: A script element loading ``src`` (a deposited script, as markup let into the page would): did it run, and what
#: refused it.
_LOADED = (
    "new Promise((done) => { document.addEventListener('securitypolicyviolation', (e) =>"
    " done([window.injected === 1, e.effectiveDirective])); const s = document.createElement('script');"
    " s.src = %s; s.onload = () => done([window.injected === 1, null]); document.body.append(s);"
    " setTimeout(() => done([window.injected === 1, null]), 2000); })"
)


def test_the_viewer_runs_no_script_a_depositor_stored(served: Served) -> None:
    """N2R serves a deposited script from the resolver's own origin, as text/javascript: the viewer's policy lets
    its pages load scripts from pdf.js's folder alone, so a script element naming the deposit (put there as an
    injection into the page's markup would put it) is refused; the same element on a page of no policy runs it
    (the deposit is a script a browser runs as N2R serves it)."""
    import json

    from server_helpers import ELSEWHERE

    script = str(served.archive.add(ELSEWHERE, b"window.injected = 1;\n", format="javascript"))
    src = json.dumps(f"/uri-res/N2R?{script}")
    with devtools() as pipe:
        deadline = time.monotonic() + 60
        session = new_tab(pipe, "Page", deadline=deadline)
        navigate_and_wait_for_load(pipe, session, f"{served.url}/view?pdi={script}", deadline)
        assert _js(pipe, session, _LOADED % src) == [False, "script-src-elem"]
        # a page of no policy (another origin's, on loopback too): the deposit, as N2R serves it, runs there
        with handler_server(_Plain) as other:
            navigate_and_wait_for_load(pipe, session, other, deadline)
            assert _js(pipe, session, _LOADED % json.dumps(f"{served.url}/uri-res/N2R?{script}")) == [True, None]


class _Plain(http.server.BaseHTTPRequestHandler):
    """An HTML page of no Content-Security-Policy."""

    def do_GET(self) -> None:
        body = b"<!doctype html><title>no policy</title><p>plain"
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass
