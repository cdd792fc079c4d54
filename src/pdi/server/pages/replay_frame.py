"""The resolver's page for an archived web page: a slim banner over the page as it was, framed from the replay origin.

``/view?pdi=NAME`` of an aggregate (``multipart/related``) or an HTML
document, when the resolver has a replay origin (:mod:`pdi.server.replay.origin`),
shows a banner — first the URL it was taken from (the foreign id its name
encapsulates, else the root's ``Content-Location``) and when it was captured
(the deposit time of the version, as the archive records it, or for a
capture imported from a WARC its ``WARC-Date``:
:func:`pdi.interop.wacz.capture_time`, as its memento is dated), where it
stands among the captures of that URL with the capture before and after it,
a link to the others (``/captures?url=``) — or, of the only capture, "the
only capture of this URL", not "1 of 1" — and the name one click away (a
``<details>``: it encapsulates the URL, PDI-GRAMMAR §2.4) — and an
``<iframe>`` of the page on the replay origin. The frame is sandboxed:
``allow-same-origin`` only (so the replay origin's own style, images and
frames load, and no script runs whatever the page holds), or, when the
replay origin lets archived scripts run, ``allow-scripts`` only (then the
page runs in an opaque origin of its own, and still cannot reach the
resolver: another origin, and never both flags together). The page says
``Content-Security-Policy: frame-src REPLAY/replay/<name>/`` among the rest of its
policy (:func:`frame_page_policy`, set by :mod:`pdi.server.pages.reader`): its
frame shows that page's files on the replay origin and nothing else, so an archived
script or refresh that navigates the frame itself elsewhere (another name's page
too, under a banner naming this one) is refused. A fragment of
the name is marked in the page and scrolled to (``#pdi-passage``). A link
shows the source instead (``&view=source``: ``char`` positions count the
source), another replays it for selection (``&select=1``): the framed page
then runs one script of the replay origin's (allowed by its hash, the
page's own still blocked) that reports what the reader selects, and this
page names it ``#char=a,b`` and ``#elt=n,n`` once resolving each gave it back,
each with a copy button and a link that opens it (the passage then marked in
the replayed page). Opened at a fragment that it marks, this mode marks it too
and shows that name in the PDI box at once (the panel's ``data-cited``), its
other forms once the framed page tells the text and the element marked (the text
fragment checked against ``data-cited-char``, the same characters as a
``char`` name), until the reader selects something else; a fragment wholly
past the end marks nothing, and a note under the banner says so. The space of
the names is reserved from the start, so nothing above the frame moves while the reader drags.

The rest of that policy: no script runs but the selection script (by its
SHA-256, in ``&select=1`` alone), which asks the resolver alone; nothing
loads from elsewhere; no plug-in, no ``<base>``; forms go to the resolver
alone; and no page but the resolver's own may frame it
(``frame-ancestors 'self'``).

A capture only a token's holder may read (a private series, an embargo) is
not framed for a reader with a token: the replay origin reads no sign-in
and would refuse it (:mod:`pdi.server.replay.origin`), so the banner is followed by
a note saying private captures are not replayed, and a link to its source
(for an aggregate, its description and bytes).
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from urllib.parse import quote

from starlette.requests import Request

from pdi.archive import Archive, Generic
from pdi.archive.access import current_reader
from pdi.archive.store import RepresentationRecord
from pdi.errors import PDIError
from pdi.fragments import FragmentResult, past_end_message
from pdi.identifier import PDI
from pdi.server.pages.document_page import document_title, record_generic, tab_title
from pdi.server.pages.layout import (
    OPENED,
    capture_title,
    esc,
    isolated,
    name_details,
    page,
    script_source,
    shown_time,
)
from pdi.server.replay.origin import (
    AGGREGATE_TYPES,
    original_url,
    passage_result,
    read_page,
    replay_path,
    replayable,
)

#: The page's own style: the banner in one line, the frame filling the rest of the window.
STYLE = """
html,body{height:100%} body{display:flex;flex-direction:column}
main{max-width:none;margin:0;padding:0;flex:1;display:flex;flex-direction:column;min-height:0} main::before,main::after{display:none}
main>p.version-banner{margin:0.5rem 1rem} main>p.note{margin:0.3rem 1rem}
.replay-banner{display:flex;flex-wrap:wrap;gap:0.15rem 1.2rem;align-items:baseline;padding:0.3rem 1rem;
 background:#eef1f5;border-bottom:1px solid #c7ced8;font-size:0.9rem}
.replay-banner h1{font-size:0.95rem;margin:0;overflow-wrap:anywhere}
.replay-banner h1 .url.clamped{display:-webkit-box;-webkit-box-orient:vertical;-webkit-line-clamp:2;line-clamp:2;overflow:hidden}
.replay-banner dl{display:flex;flex-wrap:wrap;gap:0.15rem 1.2rem;margin:0}
.replay-banner dl div{display:flex;gap:0.4rem} .replay-banner dt{font-weight:600} .replay-banner dd{margin:0;overflow-wrap:anywhere}
.select-tools{padding:0.3rem 1rem;background:#fff8e0;border-bottom:1px solid #e0d090;font-size:0.9rem}
.select-tools p{margin:0 0 0.2rem;min-height:1.45em;white-space:nowrap;overflow:hidden;text-overflow:ellipsis}
.select-tools p.no-script{white-space:normal}
.select-tools .offer{display:grid;grid-template-columns:6.5rem 1fr auto 4.5rem;gap:0.4rem;align-items:center;margin:0.2rem 0}
.select-tools input{width:100%;box-sizing:border-box;font-size:0.8rem;padding:0.2rem}
.select-tools .open:not([href]){visibility:hidden}
.select-tools .other-forms summary{cursor:pointer} .select-tools .why{white-space:normal;font-size:0.85rem;max-width:62rem}
@media (max-width:40rem){.select-tools .offer{grid-template-columns:1fr auto auto;row-gap:0.1rem}
 .select-tools .offer label{grid-column:1/-1}
 .select-tools p#select-status{white-space:normal;overflow-wrap:anywhere;min-height:2.9em}}
iframe.replay{display:block;flex:1;width:100%;min-height:20rem;border:0}
iframe.replay.has-focus{outline:3px solid #0050c8;outline-offset:-3px}
.not-replayed{margin:1.5rem auto;max-width:44rem;padding:0 1rem} .not-replayed h2{font-size:1.15rem}
@media (prefers-color-scheme:dark){.replay-banner{background:#1f252d;border-bottom-color:#3e4a5a}
.select-tools{background:#2e2810;border-bottom-color:#6b5a20}
iframe.replay{color-scheme:light;background:#fff} iframe.replay.has-focus{outline-color:#7fb0ff}}
"""


@dataclass(frozen=True)
class ReplaySite:
    """Where the replay origin is: ``origin`` as configured, or the request's host at ``port``."""

    origin: str | None = None
    port: int | None = None
    scripts: bool = False

    def origin_for(self, request: Request) -> str:
        """The replay origin as the reader who sent ``request`` reaches it."""
        if self.origin is not None:
            return self.origin.rstrip("/")
        host = request.url.hostname or "127.0.0.1"
        shown = f"[{host}]" if ":" in host else host
        return f"{request.url.scheme}://{shown}:{self.port}"


#: The framing page's script: the frame is drawn with a focus ring while the focus is in the archived page (Chromium
#: matches neither ``:focus`` nor ``:focus-within`` on a frame whose page has it, so the page's own window says so).
FOCUS_SCRIPT = """
(function () {
  const frame = document.querySelector("iframe.replay");
  function mark() { frame.classList.toggle("has-focus", document.activeElement === frame); }
  window.addEventListener("blur", mark);
  window.addEventListener("focus", mark);
  document.addEventListener("focusin", mark);
})();
"""

#: The framing page's script in selection mode: it names the passage the framed page reports selected,
#: and shows each name only once resolving it gave back exactly what was selected.
SELECT_SCRIPT = """
(function () {
  const site = document.documentElement.dataset.site || "";  // the resolver's path (pdi.server.http.site)
  const frame = document.querySelector("iframe.replay");
  const base = frame.dataset.pdi;
  const charName = document.getElementById("char-name"), eltName = document.getElementById("elt-name");
  const textName = document.getElementById("textfrag-name");
  const status = document.getElementById("select-status");
  function query(name) { return name.replace(/%(?=2[35])/g, "%25").replace("#", "%23"); }
  function show(input, name) {  // the name (or nothing), its copy button and its link to open it
    input.value = name;
    input.title = name;
    input.scrollLeft = input.scrollWidth;  // its end in view: the fragment, where names of one page differ
    document.getElementById("copy-" + input.id).disabled = !name;
    const open = document.getElementById("open-" + input.id);
    if (name) open.href = site + "/view?pdi=" + encodeURIComponent(name); else open.removeAttribute("href");
  }
  document.querySelectorAll(".select-tools button.copy").forEach(function (button) {
    button.addEventListener("click", async function () {
      const input = document.getElementById(button.dataset.for);
      try {
        await navigator.clipboard.writeText(input.value);
        status.textContent = "Copied: " + input.value;
      } catch (e) {  // no clipboard (permission, plain HTTP): select it, copy it the old way, or let the reader
        input.focus();
        input.select();
        status.textContent = document.execCommand("copy") ? "Copied: " + input.value : "Selected: press Ctrl+C (⌘C) to copy it.";
      }
    });
  });
  function words(s) { return s.replace(/\\s+/g, " ").trim(); }
  function textOf(source) { return new DOMParser().parseFromString("<body>" + source, "text/html").body.textContent; }
  // The name the page was opened at (data-cited: its passage resolved and marked), shown at once as a checked
  // selection's name is, until the reader selects something else; its other forms once the frame tells the text
  // and the element marked (pdiOpened), the text fragment checked against the same characters (data-cited-char).
  const tools = document.querySelector(".select-tools");
  const cited = tools.dataset.cited || "", citedChar = tools.dataset.citedChar || "";
  if (cited) show(charName, cited);
  // when the window's width changes (a phone turned, a window narrowed), each name's end stays in view
  window.addEventListener("resize", function () {
    document.querySelectorAll(".select-tools .offer input").forEach(function (input) { input.scrollLeft = input.scrollWidth; });
  });
  let asked = 0;
  async function element(elt, mine) {  // the element's name, offered once it resolves
    if (elt === null) return;
    const name = base + "#elt=" + elt + "," + elt;
    const ok = await fetch(site + "/uri-res/N2R?" + query(name)).then((r) => r.ok, () => false);
    if (mine === asked && ok) show(eltName, name);
  }
  // a browser's text fragment of the words `text`, offered once pdi reads it as the characters `chars` names
  async function textForm(text, chars, mine) {
    const said = words(text), enc = (t) => encodeURIComponent(t).replace(/-/g, "%2D");
    const all = said.split(" "), tries = [];
    if (said && said.length <= 120) tries.push(enc(said));
    if (all.length > 8) tries.push(enc(all.slice(0, 4).join(" ")) + "," + enc(all.slice(-4).join(" ")));
    for (const terms of chars ? tries : []) {
      const alias = base + "#:~:text=" + terms;
      const got = await fetch(site + "/api/resolve?pdi=" + encodeURIComponent(alias)).then((r) => r.ok ? r.json() : null);
      if (mine !== asked) return;
      if (got && got.pdi === chars) { show(textName, alias); return; }
    }
    textName.placeholder = "none for this selection: its words stand first elsewhere, or it is not whole words";
  }
  window.addEventListener("message", async function (event) {
    if (event.source !== frame.contentWindow || !event.data) return;
    if (event.data.pdiOpened && cited && asked === 0) {
      const opened = event.data.pdiOpened;
      await Promise.all([element(opened.elt, 0), textForm(String(opened.text), citedChar, 0)]);
      return;
    }
    if (!event.data.pdiSelection) return;
    const chosen = event.data.pdiSelection, mine = ++asked;
    const names = [base + "#char=" + chosen.start + "," + chosen.end];
    if (chosen.elt !== null) names.push(base + "#elt=" + chosen.elt + "," + chosen.elt);
    status.textContent = "checking…";
    show(charName, "");
    show(eltName, "");
    show(textName, "");
    textName.placeholder = "(not yet)";
    const answers = await Promise.all(names.map((n) => fetch(site + "/uri-res/N2R?" + query(n)).then((r) => r.ok ? r.text() : null)));
    if (mine !== asked) return;
    const same = answers[0] !== null && words(textOf(answers[0])) === words(chosen.text);
    show(charName, same ? names[0] : "");
    show(eltName, names.length > 1 && answers[1] !== null ? names[1] : "");
    status.textContent = same ? "resolved: the name gives back the selected text" : "not offered: the name did not give back the selected text";
    if (!same) return;
    await textForm(chosen.text, names[0], mine);  // the words selected, as a browser's text fragment
  });
})();
"""


#: The CSP sources (SHA-256) of the page's one script, :data:`FOCUS_SCRIPT` alone or followed by
#: :data:`SELECT_SCRIPT`, made once.
_FOCUS_SOURCE = script_source(FOCUS_SCRIPT)
_SELECT_SOURCE = script_source(FOCUS_SCRIPT + SELECT_SCRIPT)


def frame_page_policy(replay_origin: str, name: str, *, select: bool = False) -> str:
    """The Content-Security-Policy of the page :func:`render_replay_page` makes for ``name``, its frame on
    ``replay_origin``.

    Its frame shows the files of that one page on the replay origin and nothing else (``frame-src`` with the
    path ``/replay/<name>/``, which CSP 3 §6.7.2.9 matches as a prefix): an archived page that navigates its own
    frame (a script's ``location``, a refresh) to the network, to the resolver, or to another name's page on the
    replay origin (which the banner above it would then misname) is refused. Its one script is
    :data:`FOCUS_SCRIPT` (the frame's focus ring), in ``select`` mode followed by :data:`SELECT_SCRIPT`, allowed
    by its SHA-256 as the viewer's is (:func:`pdi.server.pages.viewer.view_policy`); it asks the resolver alone
    (``connect-src 'self'``) in ``select`` mode and nothing without it. Only the resolver's own pages may frame it.
    """
    script, connect = (_SELECT_SOURCE, "'self'") if select else (_FOCUS_SOURCE, "'none'")
    framed = replay_origin + replay_path(str(PDI.parse(name)), "")  # with its fragment: marked, in select mode too
    return (
        f"default-src 'self'; script-src {script}; connect-src {connect}; "
        f"frame-src {framed}; img-src 'self' data:; style-src 'self' 'unsafe-inline'; object-src 'none'; "
        "base-uri 'none'; form-action 'self'; frame-ancestors 'self'"
    )


def render_replay_page(
    archive: Archive, name: str, replay_origin: str, *, scripts: bool = False, select: bool = False
) -> str | None:
    """The page for ``name`` shown replayed, or ``None`` when it is not a page (the viewer shows it).

    With ``select``, the page is replayed for selection (``/replay/<name>/select/…``):
    what the reader selects is named, ``#char=a,b`` of the CRLF-canonical source and the
    ``#elt=n,n`` of the element that holds it, each resolved before it is shown; the passage
    ``name``'s fragment selects is marked there too, and ``name`` is shown as the one it was opened at.
    """
    parsed = PDI.parse(name)
    located = archive.locate(parsed.without_fragment())
    if isinstance(located, Generic) or not replayable(located.record.media_type, located.record.size):
        return None  # the viewer shows it (a long HTML document: its source, in windows)
    record = located.record
    whole = located
    url = original_url(located)
    named_by_url = url is not None  # a capture's name holds its URL; a file deposited names it inside alone
    own_date = None
    passage: FragmentResult | None = None  # what the fragment selects, when the page marks it
    cited = cited_char = note = ""
    if url is None or parsed.fragment is not None:
        whole, aggregate = read_page(archive, str(parsed))
        own_date = aggregate.header("Date") if aggregate is not None else None
        if parsed.fragment is not None:  # a fragment that cannot be evaluated is said here, not in the frame
            found = passage_result(aggregate, parsed, whole)
            passage = found[1] if found is not None else None
        url = original_url(whole, aggregate)
    if passage is not None and passage.past_end:  # nothing marked: the panel waits for a selection, and this says why
        note = f'<p class="note" id="past-end">{esc(past_end_message(parsed, passage))}.</p>'
        passage = None
    elif passage is not None and select:  # the name opened at is shown in the panel, as its passage is marked
        cited = str(parsed)
        if len(passage.ranges) == 1:  # the same characters as a selection names them: a text fragment's check
            cited_char = f"{parsed.without_fragment()}#char={passage.ranges[0].start},{passage.ranges[0].end}"
    target = "#pdi-passage" if passage is not None else ""
    frame = replay_origin + replay_path(str(parsed), "select/index.html" if select else "index.html") + target
    source = f"/view?pdi={quote(str(parsed), safe='')}&view=source"
    other = f"/view?pdi={quote(str(parsed), safe='')}" + ("" if select else "&select=1")
    captured = _captured(archive, parsed.without_fragment(), record)
    # the URL and the date first; the name, which encapsulates the URL (PDI-GRAMMAR §2.4), one click away;
    # a file deposited is not a capture: it has a deposit time (and the date the file says it was saved, if it
    # says one), not a capture's; it is not among the captures of the URL it holds, which are named by it
    facts = [] if named_by_url else [("deposited", shown_time(captured))]
    if own_date and not named_by_url:
        facts.append(("the file's own date", isolated(" ".join(own_date.split())[:100])))
    around, alone = _captures_around(archive, url, str(parsed.without_fragment())) if url else ("", False)
    listed = f"/captures?url={quote(url, safe='')}" if url else ""
    if alone:  # not "1 of 1": said in words, its list (where a later capture will stand) one click away
        facts.append(("capture", f'the only capture of <a href="{esc(listed)}">this URL</a>'))
    elif around:
        facts.append(("capture", around))
    if url and not alone and (named_by_url or around):
        facts.append(("of this URL", f'<a href="{esc(listed)}">other captures</a>'))
    if url:  # a capture's heading is its URL: its name one click away (a deposited file's heading is its name)
        facts.append(("PDI", name_details(parsed, "show")))
    kind = "archived page" if record.media_type in AGGREGATE_TYPES else "archived HTML document"
    tab = tab_title(document_title(archive, record, str(parsed.without_fragment())), parsed)  # as every viewer page
    # a URL of hundreds of characters in two lines at most: on a phone it took most of the window above the page
    heading = (capture_title(url, captured if named_by_url else None, clamped=True) if url else
               f"<code>{esc(str(parsed))}</code>")
    banner = (
        f'<section class="replay-banner" aria-label="{kind}"><h1>{heading}</h1><dl>'
        + "".join(f"<div><dt>{k}</dt><dd>{v}</dd></div>" for k, v in facts)
        + f'</dl><a href="{esc(source)}">source</a>'
        + f'<a href="{esc(other)}">{"the page" if select else "select to cite"}</a>'
        + f'<a href="/view?pdi={quote(str(record_generic(record)), safe="")}">the document</a></section>'
    )
    # the status on a line of its own and the two names' places reserved: nothing above the frame
    # changes height when a name appears, so the page does not move under the reader's drag
    # (the status, the names' boxes and their copy buttons work by the script only: not drawn without one, which is
    # told how to name a passage instead)
    data = (f' data-cited="{esc(cited)}"' + (f' data-cited-char="{esc(cited_char)}"' if cited_char else "")
            if cited else "")
    tools = (
        f'<section class="select-tools" aria-label="Cite the selection"{data}><p id="select-status" class="needs-script"'
        f' role="status" aria-live="polite">{OPENED if cited else "Select text in the page to get its name."}</p>'
        f'<noscript><p class="no-script">Naming a selection needs JavaScript: without it, open <a href="{esc(source)}">the source</a>,'
        " where the page's characters are counted as its PDI counts them, and write the passage's"
        " <code>#char=a,b</code> after the name in the Resolve box.</p></noscript>"
        + _offer("char-name", "PDI")
        + '<details class="other-forms needs-script"><summary>Other forms of this name</summary><p class="why">The PDI counts'
        " the characters of the page's source (markup included, a line end two characters, CR LF). A text fragment"
        " quotes the words a reader sees, and is offered once pdi reads it back as the same characters; the element"
        " name names the whole element that holds the selection.</p>"
        + _offer("textfrag-name", "text fragment") + _offer("elt-name", "element") + "</details></section>"
        if select else ""
    )
    # the page's own scripts never run with allow-same-origin; a page of an opaque origin may run them
    sandbox = "allow-scripts" if scripts or select else "allow-same-origin"
    reader = current_reader.get()
    if reader is not None and reader.token is not None and not archive.readable_by_anyone(record):
        # the frame could only show the replay origin's refusal: it reads no sign-in (pdi.server.replay.origin)
        private = (
            '<section class="not-replayed"><h2>Private captures are not replayed</h2><p>This capture is in a private'
            " series, or embargoed. The replay origin never reads your sign-in, so that an archived page can never be"
            f' shown or act as you. <a href="{esc(source)}">Show what is kept of it here</a> (its source, or its'
            " description and its bytes) instead.</p></section>"
        )
        return page(tab, banner + private, style=STYLE, name=name)
    framed = parsed.without_fragment() if select else parsed  # a selection's names are of the page itself
    body = (
        f'{banner}{note}{tools}<iframe class="replay" src="{esc(frame)}" sandbox="{sandbox}" referrerpolicy="no-referrer"'
        f' data-pdi="{esc(str(framed))}" title="{esc(kind)} {esc(str(parsed))}"></iframe>'
    )
    return page(tab, body, style=STYLE, name=name, script=FOCUS_SCRIPT + (SELECT_SCRIPT if select else ""))


def _offer(key: str, label: str) -> str:
    """One offered name: a read-only input, its copy button and a link to open it (shown once a name is offered)."""
    return (
        f'<div class="offer needs-script"><label for="{key}">{label}</label><input id="{key}" readonly dir="ltr" placeholder="(not yet)">'
        f'<button type="button" class="copy" id="copy-{key}" data-for="{key}" aria-label="Copy the {label} name" disabled>Copy</button>'
        f'<a class="open" id="open-{key}">open it</a></div>'
    )


#: Documents of a URL's captures read to place a page among them (its banner's earlier and later capture).
CAPTURES_AROUND = 500


def _captures_around(archive: Archive, url: str, current: str) -> tuple[str, bool]:
    """Where the page ``current`` stands among the captures of ``url`` (by time, as its mementos: withdrawn ones
    left out), with links to the capture before and after it, and whether it is the only one; empty when it is not
    one of them (its URL is not its id), or they are too many."""
    from pdi.server.protocol.memento_oaipmh import Mementos, generic_of

    try:
        found = archive.captures(url, limit=CAPTURES_AROUND)
        if found.after is not None:
            return "", False  # more captures than one page: the list (linked beside) places it
        dated, _ = Mementos(archive).dated(found.documents)
        viewed = PDI.parse(current)
    except PDIError:
        return "", False
    this = (generic_of(viewed), viewed.version)
    times = [(_stamp(when), str(name), (generic_of(name), name.version) == this) for when, name in dated]
    here = next((i for i, (_, _, mine) in enumerate(times) if mine), None)
    if here is None:
        return "", False

    def link(i: int, text: str, rel: str) -> str:
        at, name, _ = times[i]
        return f' · <a rel="{rel}" href="/view?pdi={quote(name, safe="")}">{text}</a> <time datetime="{esc(at)}">{esc(at[:10])}</time>'

    return (
        f"{here + 1:,} of {len(times):,}"
        + (link(here - 1, "« earlier", "prev") if here > 0 else "")
        + (link(here + 1, "later »", "next") if here + 1 < len(times) else "")
    ), len(times) == 1


def _stamp(when: datetime.datetime) -> str:
    """A time as the catalog writes one (ISO 8601, UTC, to the microsecond: ``2026-11-22T14:30:00.000000Z``)."""
    return when.astimezone(datetime.UTC).replace(tzinfo=None).isoformat(timespec="microseconds") + "Z"  # year: 4 digits


def _captured(archive: Archive, name: PDI, record: RepresentationRecord) -> str:
    """When a page was captured, as its memento is dated: the deposit time, or a WARC import's ``WARC-Date``."""
    from pdi.interop.wacz import capture_time

    return _stamp(capture_time(archive, name, record.day, record.created_at))
