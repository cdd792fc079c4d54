"""What the browser tests share: a new tab in Debian's Chromium (over :func:`pdi.capture.browser.devtools`)."""

from __future__ import annotations

import time

from pdi.capture.browser import Pipe


def new_tab(pipe: Pipe, *domains: str, deadline: float | None = None) -> str:
    """A new blank tab attached in flat mode, with ``domains`` (``"Page"``, ``"Network"`` …) enabled: its session id."""
    deadline = deadline if deadline is not None else time.monotonic() + 60
    target = pipe.call("Target.createTarget", {"url": "about:blank"}, None, deadline)["targetId"]
    session: str = pipe.call("Target.attachToTarget", {"targetId": target, "flatten": True}, None, deadline)["sessionId"]
    for domain in domains:
        pipe.call(f"{domain}.enable", None, session, deadline)
    return session


def open_page(pipe: Pipe, url: str, timeout: float = 60) -> str:
    """Open ``url`` in a new tab and wait for its load event: the tab's session id."""
    deadline = time.monotonic() + timeout
    session = new_tab(pipe, "Page", deadline=deadline)
    pipe.call("Page.navigate", {"url": url}, session, deadline)
    while True:
        message = pipe.events.pop(0) if pipe.events else pipe.receive(deadline)
        assert message is not None, f"{url} did not load"
        if message.get("method") == "Page.loadEventFired":
            return session
