"""Every page of the reader's app checked by axe-core in Chromium, on a desktop and on a 390 px phone.

axe-core (Deque's accessibility engine, npm's tarball of the version
``scripts/bootstrap --dev`` pins, checked here against the integrity pinned
beside it) runs its rules on each page of
:data:`test_server_pages_screenshots.PAGES` and a few more states (an XML
document, a PDF drawn by pdf.js, a reader signed in, a search finding
nothing), on a desktop both as drawn by default and for a system that prefers
a dark colour scheme (``NAME-dark.json``; its color-contrast rule checks the
dark colours): no violation of impact *serious* or *critical* is allowed; every
violation found is printed with its rule, impact, targets and help. Each
page's results are kept as JSON in ``tests/artifacts/axe/`` (or
``$PDI_AXE_RESULTS``), beside the screenshots (ignored by git).

On a phone (390 × 844 CSS px, WCAG 1.4.10 "Reflow" asks for 320) the page
must not scroll sideways: what is wider than the screen (a long line of a
text, a table of SHA-256s, a PDF's page) scrolls inside its own box. Each
phone page is audited by axe as drawn by default and dark (``NAME-phone.json``,
``NAME-phone-dark.json``), and saved as ``NAME-phone.png`` and
``NAME-phone-dark.png`` beside the desktop screenshots for a person to look at.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import sys
import tarfile
import time
import urllib.parse
from pathlib import Path
from typing import Any

import pytest
from server_helpers import Served
from test_server_pages_screenshots import PAGES, dark, luminance, page_url
from test_server_pdf_viewer import _shoot

from chromium_helpers import navigate_and_wait_for_load, new_tab
from pdi.capture.browser import Pipe, devtools

ROOT = Path(__file__).resolve().parents[2]
FETCHED = Path(os.environ.get("PDI_AXE_CORE") or Path(sys.prefix) / "share" / "axe-core")
RESULTS = Path(os.environ.get("PDI_AXE_RESULTS") or ROOT / "tests" / "artifacts" / "axe")
BOOTSTRAP = (ROOT / "scripts" / "bootstrap").read_text()
VERSION = re.search(r"^axe_core_version=(\S+)$", BOOTSTRAP, re.M).group(1)  # type: ignore[union-attr]
INTEGRITY = re.search(r"^axe_core_integrity=(\S+)$", BOOTSTRAP, re.M).group(1)  # type: ignore[union-attr]

#: What fails a page: WCAG's failures that stop or seriously hinder a reader (axe's impacts; minor and moderate are kept in the JSON).
FAILING = ("serious", "critical")

#: Pages beyond the screenshots' (name -> what to open, on ``served`` or on ``media``, and when it is ready).
MORE = {
    # an XML document's source, an element marked
    "xml": ("media", "/view?pdi={xml}%23elt=1,2", "document.querySelector('mark') !== null"),
    # a PDF of 14 pages drawn by pdf.js, its first page's canvas and pdi's text layer over it
    "pdf-paper": ("media", "/view?pdi={paper}", "document.querySelector('#page-1[data-drawn]') !== null"
                  " && document.querySelector('#page-1 .pdf-text span') !== null"),
    # a search that finds nothing
    "search-nothing": ("served", "/search?q=zzyzx", "document.querySelector('main') !== null"),
    # a reader signed in: the header names the token and offers to sign out
    "signed-in": ("served", "/view?pdi={text}", "document.querySelector('header form.who button') !== null"),
}

#: Every page checked: the screenshots' and :data:`MORE`.
ALL = [*PAGES, *MORE]

#: axe's options. ``iframes: false``: the one frame a page of pdi holds is the replay origin's archived page
#: (a stranger's markup, replayed byte for byte as captured: not pdi's to correct); the frame element itself
#: (its title) is checked on pdi's page. ``resultTypes``: the passes and incomplete checks kept as counts only.
AXE_OPTIONS = {"iframes": False, "resultTypes": ["violations"]}


def axe_source() -> str:
    """axe.min.js from npm's tarball of the pinned version, the tarball checked against the pinned integrity."""
    tarball = FETCHED / f"axe-core-{VERSION}.tgz"
    assert tarball.is_file(), f"{tarball} is missing: run scripts/bootstrap --dev (or set PDI_AXE_CORE)"
    octets = tarball.read_bytes()
    assert "sha512-" + base64.b64encode(hashlib.sha512(octets).digest()).decode() == INTEGRITY
    with tarfile.open(tarball) as archive:
        member = archive.extractfile("package/axe.min.js")
        assert member is not None
        return member.read().decode()


@pytest.fixture(scope="module")
def axe() -> str:
    return axe_source()


def _url(served: Served, media: tuple[str, dict[str, str]], page: str) -> str:
    if page in PAGES:
        return page_url(served, media, page)
    where, path, _ = MORE[page]
    names = {"text": urllib.parse.quote(served.text, safe="")}
    return (media[0] if where == "media" else served.url) + path.format(**names, **media[1])


def _ready(served: Served, page: str) -> str:
    check = PAGES[page][1] if page in PAGES else MORE[page][2]
    return check.replace("{replay}", served.replay_url)


def _js(pipe: Pipe, session: str, expression: str, seconds: float = 60) -> Any:
    answer = pipe.call("Runtime.evaluate", {"expression": expression, "awaitPromise": True, "returnByValue": True},
                       session, time.monotonic() + seconds)
    assert "exceptionDetails" not in answer, answer["exceptionDetails"]
    return answer["result"].get("value")


def _open(pipe: Pipe, served: Served, media: tuple[str, dict[str, str]], page: str, width: int, height: int) -> str:
    """``page`` in a new tab of ``width`` × ``height`` CSS px (a phone's when narrow), once its script has done."""
    deadline = time.monotonic() + 60
    session = new_tab(pipe, "Page", deadline=deadline)
    size = {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 600}
    pipe.call("Emulation.setDeviceMetricsOverride", size, session, deadline)
    if page == "signed-in":
        _, token = served.archive.add_token(f"axe-{width}", role="read")
        pipe.call("Network.setCookie", {"name": "pdi-token", "value": token, "url": served.url, "httpOnly": True},
                  session, deadline)
    navigate_and_wait_for_load(pipe, session, _url(served, media, page), deadline)
    ready = _ready(served, page)
    while not _js(pipe, session, f"(() => {{ try {{ return !!({ready}); }} catch (e) {{ return false; }} }})()"):
        if time.monotonic() > deadline:
            break  # checked as it is: the screenshots' test says what is missing
        time.sleep(0.2)
    time.sleep(0.3)  # a last frame drawn (pdf.js, the waveform)
    return session


def _audit(pipe: Pipe, session: str, axe: str, page: str, suffix: str) -> list[dict[str, Any]]:
    """axe's violations on the page of ``session``, kept as ``RESULTS/PAGE{suffix}.json``."""
    _js(pipe, session, axe + ";true")
    results = _js(pipe, session, f"axe.run(document, {json.dumps(AXE_OPTIONS)})", seconds=120)
    assert results["testEngine"] == {"name": "axe-core", "version": VERSION}
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / f"{page}{suffix}.json").write_text(json.dumps(results, indent=1))
    violations: list[dict[str, Any]] = results["violations"]
    return violations


def _said(page: str, violations: list[dict[str, Any]]) -> str:
    lines = [f"{page}: {len(violations)} serious or critical violations of axe-core {VERSION}:"]
    for v in violations:
        lines.append(f"- {v['id']} ({v['impact']}): {v['help']} <{v['helpUrl']}>")
        for node in v["nodes"][:8]:
            lines.append(f"    {' '.join(map(str, node['target']))}: {node.get('failureSummary', '').replace(chr(10), ' ')}")
    return "\n".join(lines)


def test_the_tarball_is_the_one_bootstrap_pins() -> None:
    assert re.fullmatch(r"\d+\.\d+\.\d+", VERSION) and INTEGRITY.startswith("sha512-")
    assert axe_source().startswith(f"/*! axe v{VERSION}\n")


@pytest.mark.parametrize("page", ALL)
def test_no_serious_violation_on_a_desktop(served: Served, media: tuple[str, dict[str, str]], axe: str, page: str) -> None:
    with devtools() as pipe:
        session = _open(pipe, served, media, page, 1100, 700)
        if page not in PAGES:  # the screenshots' test saves its own pages
            _shoot(pipe, session, f"{page}.png")
        violations = _audit(pipe, session, axe, page, "")
        dark(pipe, session, time.monotonic() + 30)  # and again for a system that prefers a dark colour scheme
        if page not in PAGES:
            _shoot(pipe, session, f"{page}-dark.png")
        in_dark = _audit(pipe, session, axe, page, "-dark")
    failing = [v for v in violations if v["impact"] in FAILING]
    assert not failing, _said(page, failing)
    failing = [v for v in in_dark if v["impact"] in FAILING]
    assert not failing, _said(f"{page} (dark)", failing)


#: What is wider than a phone's screen on a page, for the message when the page scrolls sideways.
WIDER = """(() => [...document.querySelectorAll('body *')].filter(e => {
  const r = e.getBoundingClientRect();
  if (r.width === 0 || r.right <= document.documentElement.clientWidth + 0.5) return false;
  for (let p = e.parentElement; p; p = p.parentElement) {
    if (['auto', 'scroll', 'hidden', 'clip'].includes(getComputedStyle(p).overflowX) && p !== document.body
        && p !== document.documentElement) return false;
  }
  return true;
}).slice(0, 8).map(e => e.tagName.toLowerCase() + (e.id ? '#' + e.id : '') + (e.className && typeof e.className === 'string'
  ? '.' + e.className.trim().split(/\\s+/).join('.') : '') + ' right=' + Math.round(e.getBoundingClientRect().right)))()"""


@pytest.mark.parametrize("page", ALL)
def test_a_phone_reads_it_without_scrolling_sideways(
    served: Served, media: tuple[str, dict[str, str]], axe: str, page: str
) -> None:
    with devtools() as pipe:
        session = _open(pipe, served, media, page, 390, 844)
        _shoot(pipe, session, f"{page}-phone.png")  # saved first: a failing page's picture shows what went wrong
        width = _js(pipe, session, "[document.documentElement.scrollWidth, document.documentElement.clientWidth]")
        wider = _js(pipe, session, WIDER)
        # a table scrolled in its own box (display: block) is still a table to a screen reader, as Chromium reads it
        pipe.call("Accessibility.enable", None, session, time.monotonic() + 30)
        read = pipe.call("Accessibility.getFullAXTree", {}, session, time.monotonic() + 30)["nodes"]
        tables = (sum(n.get("role", {}).get("value") == "table" for n in read),
                  _js(pipe, session, "document.querySelectorAll('table').length"))
        violations = _audit(pipe, session, axe, page, "-phone")
        dark(pipe, session, time.monotonic() + 30)  # and again for a phone that prefers a dark colour scheme
        _shoot(pipe, session, f"{page}-phone-dark.png")
        dark_width = _js(pipe, session, "document.documentElement.scrollWidth")
        in_dark = _audit(pipe, session, axe, page, "-phone-dark")
    assert width[1] == 390, width
    assert width[0] <= width[1], f"{page} scrolls sideways on a phone: {width[0]} px wide; wider than the screen: {wider}"
    assert tables[0] == tables[1], f"{page}: {tables[1]} tables, {tables[0]} read as tables"
    assert dark_width <= width[1], f"{page} in a dark scheme scrolls sideways on a phone: {dark_width} px wide"
    failing = [v for v in violations if v["impact"] in FAILING]
    assert not failing, _said(page, failing)
    failing = [v for v in in_dark if v["impact"] in FAILING]
    assert not failing, _said(f"{page} (phone, dark)", failing)


@pytest.mark.parametrize("page", ["text", "email", "long-text"])
def test_the_texts_name_is_allowed_on_its_role(served: Served, media: tuple[str, dict[str, str]], axe: str, page: str) -> None:
    # the text a reader moves a caret in (a <pre>, focusable) is named; ARIA 1.2 prohibits naming an element of
    # role generic, so axe could not say its name is read ("needs review", kept out of the violations): it is a
    # region, named "The text", the keys said in its description
    with devtools() as pipe:
        session = _open(pipe, served, media, page, 1100, 700)
        _js(pipe, session, axe + ";true")
        options = {"runOnly": {"type": "rule", "values": ["aria-prohibited-attr", "aria-allowed-role"]}}
        results = _js(pipe, session, f"axe.run(document, {json.dumps(options)})", seconds=120)
        pipe.call("Accessibility.enable", None, session, time.monotonic() + 30)
        text = pipe.call("Accessibility.getPartialAXTree", {"objectId": _js_object(pipe, session, "document.getElementById('text')"),
                         "fetchRelatives": False}, session, time.monotonic() + 30)["nodes"][0]
    said = [(v["id"], [n["target"] for n in v["nodes"]]) for v in results["violations"] + results["incomplete"]]
    assert said == [], said
    assert text["name"]["value"] == "The text", text
    assert "arrow keys" in text.get("description", {}).get("value", ""), text


def _js_object(pipe: Pipe, session: str, expression: str) -> str:
    answer = pipe.call("Runtime.evaluate", {"expression": expression}, session, time.monotonic() + 30)
    object_id: str = answer["result"]["objectId"]
    return object_id


#: Every piece of text a style sheet writes (``::before``/``::after`` with a string ``content``): axe-core's
#: color-contrast rule reads the DOM's text nodes only, so a breadcrumb's separator or a list's mark goes unchecked
#: by it. Each: [the text, its colour, the background behind it (the nearest ancestor's opaque one), the least
#: contrast WCAG 2.2's 1.4.3 asks of it: 3:1 for large text (24 px, or 18.66 px bold), else 4.5:1].
GENERATED = """(() => {
  const found = [];
  for (const e of document.querySelectorAll('body *')) {
    for (const pseudo of ['::before', '::after']) {
      const style = getComputedStyle(e, pseudo);
      const content = style.content;
      if (!content || !content.startsWith('"') || !content.slice(1, -1).trim()) continue;
      let behind = 'rgb(255, 255, 255)';
      for (let p = e; p; p = p.parentElement) {
        const b = getComputedStyle(p).backgroundColor;
        if (b && b !== 'transparent' && !b.startsWith('rgba')) { behind = b; break; }
      }
      const size = parseFloat(style.fontSize), bold = Number(style.fontWeight) >= 700;
      const large = size >= 24 || (bold && size >= 18.66);
      found.push([e.tagName.toLowerCase() + (e.className ? '.' + e.className : '') + pseudo + ' ' + content,
                  style.color, behind, large ? 3 : 4.5]);
    }
  }
  return found;
})()"""


def _contrast(a: str, b: str) -> float:
    la, lb = sorted((luminance(a), luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


@pytest.mark.parametrize("page", ["series-day", "document"])
def test_text_a_style_sheet_writes_is_legible(served: Served, media: tuple[str, dict[str, str]], page: str) -> None:
    # WCAG 2.2 SC 1.4.3 counts text a style sheet generates: the breadcrumbs' separator "›" (CSS content) among it
    with devtools() as pipe:
        session = _open(pipe, served, media, page, 1100, 700)
        light = _js(pipe, session, GENERATED)
        dark(pipe, session, time.monotonic() + 30)
        darkened = _js(pipe, session, GENERATED)
    assert any("\u203a" in what for what, *_ in light), f"{page}: no breadcrumb separator found: {light}"
    faint = [(scheme, what, colour, behind, round(_contrast(colour, behind), 2))
             for scheme, found in (("light", light), ("dark", darkened)) for what, colour, behind, least in found
             if _contrast(colour, behind) < least]
    assert not faint, f"{page}: text written by the style sheet below WCAG AA contrast: {faint}"


def test_a_day_of_the_calendar_is_named_with_the_number_it_shows(axe: str) -> None:
    # the series pages above are of documents minted today, so they check one day of the month only; a day before
    # the 10th once failed axe's label-content-name-mismatch on the 1st of December (its label said "2026-12-01",
    # which does not hold the word "1" the link shows): every day from 1 to 31, checked by axe itself
    from pdi.server.pages.browse import _month_calendar
    calendar = _month_calendar("library.example.us", 2026, 12, {d: 40 + d for d in range(1, 32)}, one=True)  # no count holds its day
    page = f'<!doctype html><html lang="en"><head><title>December 2026</title></head><body><main>{calendar}</main></body></html>'
    with devtools() as pipe:
        deadline = time.monotonic() + 60
        session = new_tab(pipe, "Page", deadline=deadline)
        navigate_and_wait_for_load(pipe, session, "data:text/html;charset=utf-8," + urllib.parse.quote(page), deadline)
        _js(pipe, session, axe + ";true")
        options = {"runOnly": {"type": "rule", "values": ["label-content-name-mismatch"]}}
        results = _js(pipe, session, f"axe.run(document, {json.dumps(options)})", seconds=120)
        labels = _js(pipe, session, "[...document.querySelectorAll('td.has a')].map(a => [a.textContent, a.getAttribute('aria-label')])")
    assert results["violations"] == [], _said("a month's calendar", results["violations"])
    assert len(labels) == 31 and labels[0] == ["1", "1 December 2026: 41 documents"], labels
    assert len(results["passes"][0]["nodes"]) == 31, results["passes"]
