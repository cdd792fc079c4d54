"""The reader's Cite panel: the name of what is selected on a page, and its other forms, ready to copy.

Each viewer (:mod:`pdi.server.pages.viewer`, :mod:`pdi.server.pages.media_view`) draws one under its document;
the viewer's script (:mod:`pdi.server.pages.viewer_script`) fills it as the reader selects, or at once with the
name a page was opened at (:func:`opened_name`).
"""

from __future__ import annotations

import html

from pdi.archive import Resolved
from pdi.server.pages.layout import OPENED

#: The other forms a name may have, by key: the label of its row, and what its copy button says it copies.
FORM_LABELS = {
    "rfc5147": "RFC 5147",
    "textfrag": "text fragment",
    "mediafrag": "Media Fragment",
    "annotation": "W3C selector",
}


def cite_panel(hint: str, *, forms: tuple[str, ...] = (), why: str = "", cite_button: bool = False,
                written: str = "<code>#char=a,b</code>", idle: str = "Nothing selected yet.", cited: str = "") -> str:
    """The offered names: one citable name (the PDI), shown and copyable; the other forms of the same selection
    (``forms``, keys of :data:`FORM_LABELS`) under a closed "Other forms", with ``why`` they differ. Each sits in a
    read-only input with a copy button and a link, its space reserved before any is shown (nothing moves).
    Without scripts they are not drawn: a note says to write the fragment instead, of the forms ``written`` (this
    medium's: ``#char=a,b`` of a text, ``#sec=a,b`` of a sound …). The status line under them says ``idle`` until
    something is said (empty: a PDF's, whose panel stays over the pages, keeps no empty line).

    ``cited``: the name the page was opened at, when its fragment resolved and the page marks what it names
    (:func:`opened_name`). The script shows it in the PDI's box at once, with its copy button and link, and its other
    forms (each checked, as a selection's), until the reader selects something else; the status says so."""

    def offer(key: str, label: str, extra: str = "") -> str:
        return (
            f'<div class="offer{extra}"><label for="{key}">{label}</label>'
            f'<input id="{key}" readonly dir="ltr" placeholder="(not yet)">'
            f'<button type="button" class="copy" id="copy-{key}" data-for="{key}" aria-label="Copy the {label} name" disabled>Copy</button>'
            f'<a class="open" id="open-{key}">open it</a></div>'
        )

    button = (
        '<p class="cite-keys needs-script"><button type="button" id="cite-selection" aria-keyshortcuts="Enter"'
        ' aria-describedby="text-keys">Cite the selection</button> <span id="text-keys">Keyboard: Tab into the'
        " text, move with the arrow keys, extend with Shift+arrows, press Enter to cite.</span></p>"
        if cite_button else ""
    )
    others = (
        '<details class="other-forms needs-script" id="other-forms"><summary>Other forms of this name</summary>'
        f'<p class="why" id="why">{why}</p>' + "".join(offer(key, FORM_LABELS[key]) for key in forms) + "</details>"
        if forms else ""
    )
    if cited and idle:
        idle = OPENED
    data = f' data-cited="{html.escape(cited)}"' if cited else ""
    return (
        f'<section class="cite" aria-label="Cite"{data}><p class="hint">{hint}</p>{button}'
        # without scripts a selection cannot be named here; the reader can still write a fragment
        '<noscript><p class="note">Naming a selection needs JavaScript: without it, write the fragment'
        f" after the name in the Resolve box at the top of the page ({written}) and resolve it.</p></noscript>"
        + offer("name", "PDI", " needs-script")
        + others
        # the status line's room is kept (nothing moves when it speaks); until it does, it says why it is there
        + f'<p id="cite-status" class="needs-script idle" role="status" aria-live="polite">{idle}</p></section>'
    )


def opened_name(name: str, selected: Resolved | None, marked: bool) -> str:
    """The name the page was opened at, for its Cite panel (:func:`cite_panel`'s ``cited``): ``name`` when its
    fragment resolved (``selected``) and the page marks what it names (``marked``: a passage, a part, a region, a
    stretch, a clip, a page of a PDF); else empty: no fragment, or one wholly past the end (the page's note says
    so), and the panel waits for a selection."""
    chosen = selected.fragment if selected is not None else None
    return name if chosen is not None and not chosen.past_end and marked else ""
