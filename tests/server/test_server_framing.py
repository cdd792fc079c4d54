"""Who may frame the resolver's pages: its own pages alone (CSP 3 ``frame-ancestors 'self'``), and what the page of
a replayed capture may run.

A page of another origin (a port of its own on 127.0.0.1) frames every kind of
HTML page the resolver answers, and Chromium shows none of them; the resolver's
own page frames the same pages, and Chromium shows them all, a replayed capture
inside them still shown from the replay origin. The page of a replayed capture
runs its own script (in ``&select=1``) and no other.
"""

from __future__ import annotations

import base64
import hashlib
import http.server
import json
import time
import urllib.parse
from typing import Any

import httpx
import pytest
from server_helpers import S, Served
from test_server_pages_screenshots import SHOTS

from chromium_helpers import navigate_and_wait_for_load, new_tab, open_page
from pdi.capture.browser import Pipe, devtools
from support.handler_server import handler_server


def _q(text: str) -> str:
    return urllib.parse.quote(text, safe="")


def _pages(served: Served) -> dict[str, str]:
    """Every kind of HTML page the resolver answers a reader: what it is -> its path."""
    return {
        "sign-in": "/signin?next=/series", "home": "/", "search": "/search?q=world", "series-list": "/series",
        "series": f"/series/{S}", "series-day": f"/series/{S}/2026/11/22", "api": "/api",
        "captures": f"/captures?url={_q(served.captured)}", "replayed capture": f"/view?pdi={_q(served.capture)}",
        "replayed for selection": f"/view?pdi={_q(served.capture)}&select=1",
        "replayed html": f"/view?pdi={_q(served.page)}", "text": f"/view?pdi={_q(served.text)}",
        "document": f"/view?pdi={_q(served.versioned)}",
        "not found": "/view?pdi=" + _q("urn:pdi://nowhere.example.us/2026/11/22/1.text.1"),
        "no such page": "/no/such/page", "thread without a name": "/thread",
        "n2r not held": f"/uri-res/N2R?urn:pdi://{S}/2026/11/22/999.text.1",
    }


def _ancestors(fields: list[str]) -> list[list[str]]:
    """The sources of each ``frame-ancestors`` directive of these Content-Security-Policy fields."""
    found = []
    for field in fields:
        for directive in field.split(";"):
            words = directive.split()
            if words and words[0].lower() == "frame-ancestors":
                found.append(words[1:])
    return found


def test_every_html_page_says_only_the_resolvers_own_pages_may_frame_it(served: Served) -> None:
    for what, path in _pages(served).items():
        answer = httpx.get(served.url + path, headers={"Accept": "text/html"})
        assert answer.headers["content-type"].startswith("text/html"), (what, answer.headers)
        policies = answer.headers.get_list("content-security-policy")
        assert ["'self'"] in _ancestors(policies), (what, policies)
        # none of its policies lets another origin frame it: each one is enforced (CSP 3 §4.1)
        assert all(sources == ["'self'"] for sources in _ancestors(policies)), (what, policies)


def _frames(pipe: Pipe, session: str) -> list[dict[str, Any]]:
    """Every frame of the tab below its top, depth first (its ``url``, ``unreachableUrl``, ``parentId``), and every
    frame of another process (a sandboxed frame that runs scripts has one: it is a target of its own)."""
    tree = pipe.call("Page.getFrameTree", None, session, time.monotonic() + 30)["frameTree"]
    found: list[dict[str, Any]] = []

    def walk(node: dict[str, Any]) -> None:
        for child in node.get("childFrames", []):
            found.append(child["frame"])
            walk(child)

    walk(tree)
    known = {f["id"] for f in found} | {tree["frame"]["id"]}
    targets = pipe.call("Target.getTargets", None, None, time.monotonic() + 30)["targetInfos"]
    found += [{"id": t["targetId"], "url": t["url"], "parentId": t.get("parentFrameId")} for t in targets
              if t["type"] == "iframe" and t.get("parentFrameId") in known | {f["id"] for f in found}]
    return found


def _js(pipe: Pipe, session: str, expression: str, **more: Any) -> Any:
    answer = pipe.call("Runtime.evaluate", {"expression": expression, "awaitPromise": True, "returnByValue": True,
                                            **more}, session, time.monotonic() + 60)
    assert "exceptionDetails" not in answer, answer
    return answer["result"].get("value")


def test_another_sites_page_frames_none_of_them_and_the_resolvers_own_frames_them_all(served: Served) -> None:
    pages = _pages(served)
    urls = [served.url + path for path in pages.values()]
    framing = "".join(f'<iframe src="{url}" width="350" height="170" title="{what}"></iframe>'
                      for what, url in zip(pages, urls, strict=True)).encode()

    class Framing(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = b"<!DOCTYPE html><title>Another site</title><h1>Another site framing the resolver</h1>" + framing
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    with handler_server(Framing) as elsewhere, devtools() as pipe:
        session = open_page(pipe, elsewhere)  # its load event waits for every frame's
        size = {"width": 1100, "height": 1150, "deviceScaleFactor": 1, "mobile": False}
        pipe.call("Emulation.setDeviceMetricsOverride", size, session, time.monotonic() + 30)
        top = pipe.call("Page.getFrameTree", None, session, time.monotonic() + 30)["frameTree"]["frame"]["id"]
        frames = [f for f in _frames(pipe, session) if f["parentId"] == top]
        shot = pipe.call("Page.captureScreenshot", {"format": "png"}, session, time.monotonic() + 30)
        SHOTS.mkdir(parents=True, exist_ok=True)
        (SHOTS / "framed-by-another-site.png").write_bytes(base64.b64decode(shot["data"]))
        # each frame the browser refused to show: an error page in its place, the page asked for unreachable
        shown = {f.get("unreachableUrl") or f["url"]: f["url"] for f in frames}
        assert set(shown) == set(urls), frames
        assert {url: at for url, at in shown.items() if not at.startswith("chrome-error:")} == {}

        # the resolver's own page frames them: each shown, a replayed capture inside it from the replay origin
        session = open_page(pipe, served.url + "/")
        loaded = _js(pipe, session, f"Promise.all({json.dumps(urls)}.map((url) => new Promise((done) => {{"
                                    " const f = document.createElement('iframe'); f.src = url;"
                                    " f.onload = () => done([url, f.contentDocument && f.contentDocument.title]);"
                                    " document.body.append(f); }))).then(JSON.stringify)")
        titles = dict(json.loads(loaded))
        assert all(titles[url] for url in urls), titles  # each a document of the resolver's origin, with its title
        frames = _frames(pipe, session)
        assert not [f for f in frames if f["url"].startswith("chrome-error:")], frames
        tops = {f["id"]: f["url"] for f in frames if f["url"] in urls}
        replayed = [f["url"] for f in frames if tops.get(f.get("parentId", ""), "").startswith(
            served.url + "/view?pdi=" + _q(served.capture))]
        assert len(replayed) == 2 and all(url.startswith(served.replay_url + "/replay/") for url in replayed), frames


def _violations(messages: list[dict[str, Any]], session: str) -> list[str]:
    """What the browser logged of this tab refusing something by a Content-Security-Policy."""
    return [m["params"]["entry"]["text"] for m in messages
            if m.get("sessionId") == session and m.get("method") == "Log.entryAdded"
            and "Content Security Policy" in m["params"]["entry"].get("text", "")]


@pytest.mark.parametrize("select", [True, False])
def test_a_replayed_captures_page_runs_its_own_script_and_no_other(served: Served, select: bool) -> None:
    url = f"{served.url}/view?pdi={_q(served.capture)}" + ("&select=1" if select else "")
    policies = httpx.get(url).headers.get_list("content-security-policy")
    with devtools() as pipe:
        deadline = time.monotonic() + 60
        session = new_tab(pipe, "Page", "Log", deadline=deadline)
        heard: list[dict[str, Any]] = []
        navigate_and_wait_for_load(pipe, session, url, deadline, heard.append)
        scripts = json.loads(_js(pipe, session, "JSON.stringify([...document.scripts].map((s) => s.textContent))"))
        assert len(scripts) == 1  # the frame's focus ring, and in select mode the naming of a selection after it
        # the script the page holds is the one its policy allows, by the SHA-256 of its text as the browser read it
        for text in scripts:
            digest = base64.b64encode(hashlib.sha256(text.encode()).digest()).decode()
            assert any(f"'sha256-{digest}'" in policy.split("script-src", 1)[-1].split(";", 1)[0]
                       for policy in policies), policies
        # and it ran: it listens for what the framed page says is selected
        listening = _js(pipe, session, "(getEventListeners(window).message || []).length", includeCommandLineAPI=True)
        assert listening == (1 if select else 0)
        assert _violations(heard, session) == []
        # a script put into the page (as an injection into its markup would be) runs not
        ran = _js(pipe, session, "new Promise((done) => { document.addEventListener('securitypolicyviolation',"
                                 " (e) => done([window.injected === 1, e.effectiveDirective])); const s ="
                                 " document.createElement('script'); s.textContent = 'window.injected = 1';"
                                 " document.body.append(s); setTimeout(() => done([window.injected === 1, null]), 2000); })")
        assert ran == [False, "script-src-elem"]
        # its frame still shows the capture, from the replay origin
        frames = _frames(pipe, session)
        assert [f["url"].split("/replay/")[0] for f in frames[:1]] == [served.replay_url]
