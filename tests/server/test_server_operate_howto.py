"""docs/how-to/operate.md, followed on a real ``pdi serve`` with the page's options: what its lines print.

The page serves the archive of docs/how-to/deposit.md (its ``1.text.1``, "The quick brown fox jumps over the lazy
dog.", 45 octets), started as the page starts it (four workers, JSON logs, an access log; the access log here in
a temporary directory, the ports free ones), then asks ``/healthz``, ``/readyz``, the one name and ``/metrics``
in that order. The rules it links to are tests/server/test_server_operate.py's.
"""

from __future__ import annotations

import datetime
import json
import os
import re
import shlex
import signal
import socket
import time
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner
from server_helpers import start_serve, stop

from pdi.cli import cli

DOCS = Path(__file__).resolve().parents[2] / "docs"
PAGE = DOCS / "how-to" / "operate.md"


def _blocks(language: str) -> list[str]:
    return re.findall(rf"^```{language}\n(.*?)^```", PAGE.read_text("utf-8"), flags=re.MULTILINE | re.DOTALL)


def _lines_after(path: Path, count: int) -> list[str]:
    """The file's lines once it has ``count`` (a line is written just after its answer has gone), 20 s at most."""
    deadline = time.monotonic() + 20
    while len(lines := path.read_text("utf-8").splitlines() if path.exists() else []) < count:
        assert time.monotonic() < deadline, lines
        time.sleep(0.05)
    return lines


def _wait_listening(port: int) -> None:
    """Wait (30 s at most) until a connection is taken: no request is sent, so none is counted or logged."""
    deadline = time.monotonic() + 30
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=5).close()
            return
        except OSError:
            assert time.monotonic() < deadline, f"port {port} not listening"
            time.sleep(0.05)


def test_the_operate_pages_lines_answer_what_it_shows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, one_gmt_day: datetime.datetime
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PDI_ARCHIVE", str(tmp_path / "pdi-archive"))
    monkeypatch.setenv("PDI_METRICS_TOKEN", "0123456789abcdef0123456789abcdef0123456789abcdef")
    (tmp_path / "report.txt").write_bytes(b"The quick brown fox jumps over the lazy dog.\n")
    runner = CliRunner()
    for args in (["init"], ["series", "add", "oma.eop.gov.us"], ["add", "report.txt", "-s", "oma.eop.gov.us"]):
        assert runner.invoke(cli, args).exit_code == 0
    day = one_gmt_day.strftime("%Y/%m/%d")
    text = re.sub(r"/\d{4}/\d\d/\d\d/", f"/{day}/", PAGE.read_text("utf-8"))
    start, asked, metrics, _access, rotate = re.findall(r"^```sh\n(.*?)^```", text, flags=re.MULTILINE | re.DOTALL)
    [serve] = [shlex.split(line, comments=True) for line in start.splitlines() if line.startswith("pdi serve")]
    # the log directory is made for whoever runs pdi serve: $USER is unset in a root shell, cron or a container
    [install] = [line for line in start.splitlines() if line.startswith("sudo install -d")]
    assert "$USER" not in install and '"$(id -un)"' in install, install
    access = tmp_path / "access.log"
    options = [str(access) if word == "/var/log/pdi/access.log" else word for word in serve[2:]]
    assert options[:2] == ["--workers", "4"] and "--log-format" in options
    process, port, first = start_serve(tmp_path / "pdi-archive", *options, "--replay-port", "0",
                                       start_new_session=True)
    assert json.loads(first)["event"] == "serving"
    base = f"http://127.0.0.1:{port}"
    try:
        _wait_listening(port)
        with httpx.Client(timeout=30) as client:
            printed = ""
            for line in asked.splitlines():
                printed += client.get(shlex.split(line)[-1].replace("http://127.0.0.1:8000", base)).text
                printed += "" if printed.endswith("\n") else "\n"
            shown_health, shown_metrics = (b for b in re.findall(r"^```text\n(.*?)^```", text,
                                                                flags=re.MULTILINE | re.DOTALL)[:2])
            assert printed == shown_health
            [name] = re.findall(r"`curl -s '(http://127\.0\.0\.1:8000/uri-res/N2R\?[^']+)'`", text)
            assert client.get(name.replace("http://127.0.0.1:8000", base)).text == \
                "The quick brown fox jumps over the lazy dog.\n"
            _lines_after(access, 3)  # the three answers logged, and counted at the same moment
            time.sleep(0.3)
            token = {"Authorization": f"Bearer {os.environ['PDI_METRICS_TOKEN']}"}
            assert "$PDI_METRICS_TOKEN" in metrics
            exposition = client.get(f"{base}/metrics", headers=token)
            assert client.get(f"{base}/metrics").status_code == 403  # with a token given, none is not enough
        counted = sorted(line for line in exposition.text.splitlines() if line.startswith("pdi_http_requests_total"))
        assert counted == sorted(shown_metrics.splitlines())
        logged = _lines_after(access, 5)  # the page's four, and the refused scrape
        [shown_access] = [b for b in re.findall(r"^```text\n(.*?)^```", text, flags=re.MULTILINE | re.DOTALL)
                          if b.startswith("127.0.0.1")]
        moment = r"\[\d\d/\w{3}/\d{4}:\d\d:\d\d:\d\d \+0000\]"
        assert [re.sub(moment, "WHEN", line) for line in logged[:3]] == \
            [re.sub(moment, "WHEN", line) for line in shown_access.splitlines()[:3]]
        # /metrics' size is the exposition's, which moves with every count; the rest of its line is as shown
        assert re.sub(moment, "WHEN", logged[3]).rsplit(" ", 1)[0] == \
            re.sub(moment, "WHEN", shown_access.splitlines()[3]).rsplit(" ", 1)[0]
        # the rotation: renamed, SIGHUP, and the next answer's line is in a new file of the old name
        words = [shlex.split(line, comments=True) for line in rotate.splitlines()]
        assert words[0] == ["mv", "/var/log/pdi/access.log", "/var/log/pdi/access.log.1"]
        assert words[1] == ["kill", "-HUP", "$PID"]
        access.rename(tmp_path / "access.log.1")
        process.send_signal(signal.SIGHUP)
        deadline = time.monotonic() + 20
        while not access.exists() or not access.read_text():
            assert time.monotonic() < deadline, "no new access log after SIGHUP"
            httpx.get(f"{base}/healthz")
            time.sleep(0.05)
        assert len((tmp_path / "access.log.1").read_text().splitlines()) == 4 + 1  # the page's four, and the refused scrape
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=30) == 0
        assert process.stderr is not None
        records = [json.loads(line) for line in process.stderr.read().splitlines() if line.strip()]
    finally:
        stop(process)
    [shown_json] = re.findall(r"^```json\n(.*?)^```", text, flags=re.MULTILINE | re.DOTALL)
    shown = json.loads(shown_json)
    [record] = [r for r in records if r.get("route") == "/uri-res/{service}"]
    varying = ("time", "request_id", "pid", "seconds")
    assert {k: v for k, v in record.items() if k not in varying} == {k: v for k, v in shown.items() if k not in varying}
    assert re.fullmatch(r"[0-9a-f]{32}", record["request_id"]) and record["time"].endswith("Z")
