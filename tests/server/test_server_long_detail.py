"""What the resolver says of what a request sent: an RFC 9457 problem's ``detail`` (§3.1.4, "a human-readable
explanation", which a client prints) and the line its log writes of a refused request head quote a long or
hostile input by its start and its end, escaped (:func:`pdi._wording.clipped`); so does pdi of the ``detail``
another server's problem told it (:func:`pdi._refusals.told`)."""

from __future__ import annotations

import json
import logging
import re

import httpx
from server_helpers import S, Served

from pdi._refusals import told
from pdi.server.http.loglines import RefusalLog
from pdi.server.http.problems import problem

#: 60,000 characters of a unique id: 1,000 of the detail's start and 1,000 of its end are kept (2,000 shown)
LONG = "a" + "x" * 59_998 + "z"


def test_a_long_name_not_found_is_a_detail_of_its_start_and_end(served: Served) -> None:
    name = f"urn:pdi://{S}/2020/01/01/{LONG}.text.1"
    answer = httpx.get(f"{served.url}/uri-res/N2R?{name}", timeout=30)
    assert answer.status_code == 404
    message = f"{name} is not in this archive"
    # 1,000 characters of each end, and how many between them were left out: the name's start, and at the end what
    # the archive holds near it (the hint RFC 2169's services add after the message, pdi.archive.nearest)
    shown = re.fullmatch(r"(.{1000})…\[([0-9,]+) characters left out\]…(.{1000})", answer.json()["detail"], re.DOTALL)
    assert shown is not None, answer.json()["detail"][:200]
    assert shown[1] == message[:1000]
    assert int(shown[2].replace(",", "")) > len(message) - 2000  # the whole: the message and its hint
    assert "minted" in shown[3]


def test_a_detail_is_escaped_and_cut() -> None:
    body = json.loads(problem(400, "syntax error", "bad \x1b[2J" + "y" * 5_000 + "\u202e end").body)
    # 1,000 shown of the start: "bad " (4), \x1b[2J (7), 989 y's; of the end: 990 y's, \u202e (6) and " end" (4);
    # of the 5,013 characters, 997 + 995 shown, 3,021 left out
    assert body["detail"] == ("bad \\x1b[2J" + "y" * 989 + "…[3,021 characters left out]…" + "y" * 990
                              + "\\u202e end")


class _Lines(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


def test_a_refusal_log_line_quotes_a_long_detail_by_its_start_and_end() -> None:
    logger = logging.getLogger("pdi.test.long-refusals")
    lines = _Lines()
    logger.addHandler(lines)
    try:
        assert RefusalLog(1.0, clock=lambda: 0.0).say(logger, "192.0.2.7", 400, "target \x07" + "q" * 10_000)
    finally:
        logger.removeHandler(lines)
    # 1,000 of the start: "target " (7), \x07 (4), 989 q's; 1,000 q's of the end; 10,008 - 997 - 1,000 left out
    assert lines.lines == ["refused a request from 192.0.2.7: 400 target \\x07" + "q" * 989
                           + "…[8,011 characters left out]…" + "q" * 1000]


def test_another_servers_long_detail_keeps_its_start_and_end() -> None:
    said = told(json.dumps({"detail": "no such series " + "s" * 20_000 + " (pdi series add)"}))
    # 500 of the start: "no such series " (15) and 485 s's; 500 of the end: 483 s's and " (pdi series add)" (17);
    # 20,032 in all, 19,032 left out
    assert said == ("no such series " + "s" * 485 + "…[19,032 characters left out]…" + "s" * 483
                    + " (pdi series add)")
