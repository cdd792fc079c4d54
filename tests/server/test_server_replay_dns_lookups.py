"""What a replayed page makes Chromium look up in the DNS: nothing by default; with --replay-scripts, a host its
script names in a ``<link rel=dns-prefetch>`` or ``preconnect``, as docs/reference/replay.md says.

A witness on 127.0.0.1 hears requests, not name look-ups: Chromium's own net log (``--log-net-log``) records every
name its resolver is asked for. The page names hosts of its own making (one label new each run) in its markup (a
link, a ``dns-prefetch`` and a ``preconnect`` link) and from its script; the log is read once Chromium has closed it.
"""

from __future__ import annotations

import json
import os
import secrets
import time
from pathlib import Path

import pytest
from server_helpers import with_replay
from test_server_replay_browser import SERIES, _in_frame_when, _open, _view, _witness

from pdi.archive import Archive
from pdi.capture.browser import chromium_path, devtools

#: The net log's events that name a host being looked up.
LOOK_UPS = ("HOST_RESOLVER_MANAGER_REQUEST", "HOST_RESOLVER_MANAGER_JOB", "DNS_TRANSACTION_QUERY")

PAGE = """<!DOCTYPE html><html><head><meta charset="utf-8"><title>Names</title>
<link rel="dns-prefetch" href="//markup-prefetch.LABEL.example"><link rel="preconnect" href="http://markup-preconnect.LABEL.example">
</head><body><a href="http://markup-link.LABEL.example/">a link</a><p><img src="http://127.0.0.1:WPORT/image" alt=""></p>
<script>
document.title = "scripted";
for (const [rel, host] of [["dns-prefetch", "//script-prefetch.LABEL.example"], ["preconnect", "http://script-preconnect.LABEL.example"]]) {
  const link = document.createElement("link"); link.rel = rel; link.href = host; document.head.append(link);
}
</script></body></html>
"""


def _looked_up(log: Path, label: str) -> set[str]:
    """The hosts under ``label`` Chromium's resolver was asked for, by the net log it wrote."""
    text = log.read_text("utf-8")
    try:
        written = json.loads(text)
    except json.JSONDecodeError:  # a log cut short (Chromium killed): its events so far
        written = json.loads(text.rstrip().rstrip(",") + "]}")
    kinds = {number: name for name, number in written["constants"]["logEventTypes"].items()}
    hosts = set()
    for event in written["events"]:
        if kinds.get(event["type"]) in LOOK_UPS:
            params = event.get("params", {})
            host = str(params.get("host") or params.get("qname") or "").split("://")[-1].split(":")[0]
            if host.endswith(f".{label}.example"):
                hosts.add(host.split(".")[0])
    return hosts


@pytest.mark.parametrize("scripts", [False, True], ids=["scripts-off", "scripts-on"])
def test_a_replayed_page_makes_chromium_look_up_no_name_but_what_its_script_names_with_scripts(
    tmp_path: Path, scripts: bool,
) -> None:
    log = tmp_path / "net-log.json"
    browser = tmp_path / "chromium"  # Chromium as pdi starts it, writing its net log
    browser.write_text(f'#!/bin/sh\nexec "{chromium_path()}" --log-net-log="{log}" "$@"\n')
    browser.chmod(0o755)
    label = "pdi-" + secrets.token_hex(6)
    location = str(tmp_path / "archive")
    with Archive.init(location) as archive:
        archive.add_series(SERIES)
    with _witness() as (port, witnessed), with_replay(location, scripts=scripts) as (resolver, _):
        with Archive.open(location) as archive:
            page = PAGE.replace("LABEL", label).replace("WPORT", str(port)).encode()
            name = str(archive.add(SERIES, page, format="html"))
        with devtools(chromium=str(browser)) as pipe:
            session, _ = _open(pipe, _view(resolver, name))
            title = _in_frame_when(pipe, session, "document.title", lambda t: t == "scripted" or not scripts)
            time.sleep(2)  # what the page asks for after its load has had its time
    assert os.path.getsize(log) > 0
    assert title == ("scripted" if scripts else "Names")
    assert witnessed == []
    # the page's own links and its markup's dns-prefetch and preconnect were rewritten: no name of them is looked
    # up; a script's (run with --replay-scripts alone) are, and CSP has no directive for them (webappsec-csp 282)
    assert _looked_up(log, label) == ({"script-prefetch", "script-preconnect"} if scripts else set())
