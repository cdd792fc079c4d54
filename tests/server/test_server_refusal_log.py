"""Each request head ``pdi serve`` refuses is said in its log: who sent it, the status and why, at most a line a
second a worker, the next line counting those between (``pdi.server.http.loglines.RefusalLog``); uvicorn's own
``Invalid HTTP request received.``, which says neither, is not written.

The refusals are those of ``test_server_request_head.py``: a target longer than 65,535 octets (RFC 9112 §3: 414),
an unknown method (RFC 9110 §9.1: 501), a NUL in a field value (RFC 9110 §5.5: 400).
"""

from __future__ import annotations

import logging
import time
from pathlib import Path

from server_helpers import start_serve, stop, until_closed, wait_answering

from pdi.archive import Archive
from pdi.server.http.loglines import RefusalLog


class _Lines(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


def test_a_refusal_is_logged_once_a_second_and_the_next_line_counts_the_rest() -> None:
    now = [100.0]
    log = RefusalLog(1.0, clock=lambda: now[0])
    logger = logging.getLogger("pdi.test.refusals")
    lines = _Lines()
    logger.addHandler(lines)
    try:
        assert log.say(logger, "192.0.2.7", 414, "too long")
        for _ in range(5):  # within the second: counted, not said
            now[0] += 0.1
            assert not log.say(logger, "192.0.2.8", 431, "too many fields")
        now[0] = 101.0  # a second after the first line
        assert log.say(logger, None, 400, "not HTTP")
        now[0] = 102.5
        assert log.say(logger, "2001:db8::1", 501, "no such method")
    finally:
        logger.removeHandler(lines)
    assert lines.lines == [
        "refused a request from 192.0.2.7: 414 too long",
        "refused a request from an unknown address: 400 not HTTP (5 more refused since the last such line)",
        "refused a request from 2001:db8::1: 501 no such method",
    ]


def test_pdi_serve_says_who_was_refused_and_why(tmp_path: Path) -> None:
    location = tmp_path / "a"
    Archive.init(str(location)).close()
    process, port, _ = start_serve(location, "--workers", "1", "--replay-port", "0", start_new_session=True)
    try:
        wait_answering(process, f"http://127.0.0.1:{port}/api/series")
        assert until_closed(port, b"GET /" + b"a" * 70000 + b" HTTP/1.1\r\nHost: a\r\n\r\n").startswith(b"HTTP/1.1 414 ")
        for _ in range(20):  # a flood within the second: one line says them all, later
            assert until_closed(port, b"BREW / HTTP/1.1\r\nHost: a\r\n\r\n").startswith(b"HTTP/1.1 501 ")
        time.sleep(1.2)
        assert until_closed(port, b"GET / HTTP/1.1\r\nHost: a\x00b\r\n\r\n").startswith(b"HTTP/1.1 400 ")
    finally:
        process.terminate()
        process.wait(timeout=30)
        assert process.stderr is not None
        said = process.stderr.read()  # to its end: the process has exited
        stop(process)
    refusals = [line for line in said.splitlines() if "refused a request" in line]
    assert "Invalid HTTP request received." not in said  # uvicorn's own line, which pdi's protocol never says
    assert len(refusals) == 2, said
    assert refusals[0].endswith("refused a request from 127.0.0.1: 414 the request target is more than 65535 octets"
                                " (RFC 9112 §3)")
    assert "refused a request from 127.0.0.1: 400 " in refusals[1]
    assert refusals[1].endswith("(20 more refused since the last such line)")
