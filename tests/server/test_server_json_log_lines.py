"""Every line ``pdi serve --log-format json`` writes on standard error is one JSON object with the log's keys.

Found by an operator: under ``pdi serve --indexer --log-format json`` the
indexer (``pdi index --watch``, a process of its own) wrote its plain lines
(``pdi: watching …``, ``indexed N passages …``) into the JSON log, and the
supervisor its ``pdi: worker N was killed …; starting another``: a log
shipper reading one JSON object a line choked on each. Each now goes through
pdi's own log; in the plain format each stays the text line it was.
"""

from __future__ import annotations

import json
import os
import queue
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from server_helpers import S, start_serve, stop, wait_answering

from pdi.archive import Archive

#: The keys every record of the JSON log has (docs/reference/operate.md, "Logs").
KEYS = {"time", "level", "logger", "message", "request_id", "pid"}
#: Octets past pdi.archive.search.QUEUE_PAST (1 MiB), so the deposit's text is left to the indexer's queue.
QUEUED = (1 << 20) + 1


def big_text(word: str) -> bytes:
    filler = "".join(f"Line {i} of plain words, here and there.\n" for i in range(QUEUED // 30))
    return (filler + f"A {word} stood near the end.\n").encode("utf-8")


def children(pid: int) -> dict[int, str]:
    """The processes whose parent is ``pid`` and their command lines (from /proc, not from pdi)."""
    found = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
                command = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ").decode()
            except OSError:
                continue  # it ended while we looked
            if int(stat.rpartition(")")[2].split()[1]) == pid:
                found[int(entry)] = command
    return found


def reading(process: subprocess.Popen[str]) -> queue.Queue[str]:
    """The server's standard error, line by line, read by a thread (so a chatty server never blocks)."""
    lines: queue.Queue[str] = queue.Queue()
    assert process.stderr is not None
    stream = process.stderr
    threading.Thread(target=lambda: [lines.put(line) for line in stream], daemon=True).start()
    return lines


def until(lines: queue.Queue[str], seen: list[str], found: re.Pattern[str], timeout: float = 90) -> str:
    """Lines read into ``seen`` until one ``found`` matches (its ``message`` if it is JSON)."""
    deadline = time.monotonic() + timeout
    while True:
        line = lines.get(timeout=max(0.1, deadline - time.monotonic()))
        seen.append(line)
        if found.search(line):
            return line


def test_every_line_of_serve_indexer_with_json_logs_is_a_json_record(tmp_path: Path) -> None:
    where = tmp_path / "archive"
    with Archive.init(where) as archive:
        archive.add_series(S)
        archive.add(S, big_text("okapi"), format="text")
        assert archive.pending_index() == 1  # queued for the indexer, not indexed in the deposit
    process, port, first = start_serve(where, "--replay-port", "0", "--workers", "2", "--indexer",
                                       "--log-format", "json", start_new_session=True)
    seen = [first]
    lines = reading(process)
    try:
        wait_answering(process, f"http://127.0.0.1:{port}/healthz")
        until(lines, seen, re.compile(r"indexed \d+ passages of 1 queued octet stream in \d+\.\d s"))
        workers = {pid for pid, command in children(process.pid).items() if " index " not in command + " "}
        victim = min(workers)
        os.kill(victim, signal.SIGKILL)
        until(lines, seen, re.compile(f"worker {victim} was killed by signal 9"))
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=30)
        time.sleep(0.2)
        while not lines.empty():
            seen.append(lines.get())
        stop(process)
    records = []
    for line in seen:
        record = json.loads(line)  # every line: a JSON object, nothing else
        assert isinstance(record, dict) and record.keys() >= KEYS, line
        records.append(record)
    watching = [r for r in records if r.get("event") == "watching"]
    assert len(watching) == 1 and watching[0]["logger"] == "pdi.index" and watching[0]["level"] == "info"
    assert watching[0]["message"] == f"pdi: watching {where} for texts queued to index, looking every 5 s (Ctrl-C stops)"
    (indexed,) = [r for r in records if r.get("event") == "indexed"]
    assert indexed["logger"] == "pdi.index" and indexed["pid"] not in {process.pid, *workers}
    assert indexed["sources"] == 1 and indexed["passages"] > 0 and indexed["request_id"] == "-"
    assert indexed["message"] == (f"indexed {indexed['passages']} passages of 1 queued octet stream"
                                  f" in {indexed['seconds']:.1f} s")
    (died,) = [r for r in records if "starting another" in r["message"]]
    assert died["message"] == f"pdi: worker {victim} was killed by signal 9 (SIGKILL); starting another"
    assert died["level"] == "warning" and died["pid"] == process.pid
    with Archive.open(where) as archive:
        assert archive.pending_index() == 0 and len(archive.search("okapi").hits) == 1


def test_with_text_logs_the_indexer_still_says_plain_lines(tmp_path: Path) -> None:
    where = tmp_path / "archive"
    with Archive.init(where) as archive:
        archive.add_series(S)
        archive.add(S, big_text("kudu"), format="text")
    process, _, first = start_serve(where, "--replay-port", "0", "--workers", "1", "--indexer",
                                       start_new_session=True)
    seen = [first]
    lines = reading(process)
    try:
        said = until(lines, seen, re.compile(r"indexed \d+ passages"))
    finally:
        stop(process)
    assert re.fullmatch(r"indexed \d+ passages of 1 queued octet stream in \d+\.\d s\n", said), said
    assert f"pdi: watching {where} for texts queued to index, looking every 5 s (Ctrl-C stops)\n" in seen


def test_pdi_index_watch_with_json_logs_writes_json_records(tmp_path: Path) -> None:
    where = tmp_path / "archive"
    with Archive.init(where) as archive:
        archive.add_series(S)
        archive.add(S, big_text("eland"), format="text")
    watcher = subprocess.Popen([sys.executable, "-m", "pdi", "index", "--watch", "--interval", "0.25",
                                "--log-format", "json", "--archive", str(where)],
                               stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lines = reading(watcher)
    seen: list[str] = []
    try:
        until(lines, seen, re.compile(r"indexed \d+ passages"))
    finally:
        watcher.send_signal(signal.SIGINT)
        watcher.wait(timeout=60)
        assert watcher.stdout is not None
        out = watcher.stdout.read()
        watcher.stdout.close()
        time.sleep(0.2)  # the reader thread's last lines
        while not lines.empty():
            seen.append(lines.get())
        assert watcher.stderr is not None
        watcher.stderr.close()
    assert watcher.returncode == 130 and out == ""
    records = [json.loads(line) for line in seen]
    assert [r["event"] for r in records] == ["watching", "indexed"]
    assert all(r.keys() >= KEYS and r["pid"] == watcher.pid and r["logger"] == "pdi.index" for r in records)
    assert records[0]["archive"] == str(where) and records[0]["interval"] == 0.25


def test_the_indexer_writes_to_the_log_file_and_reopens_it_on_the_servers_sighup(tmp_path: Path) -> None:
    """With ``--log-file``, the indexer's records go to the server's log file, and a ``SIGHUP`` to ``pdi serve``
    (after logrotate renamed the file) reaches the indexer too: its next record is in the new file."""
    where = tmp_path / "archive"
    logged = tmp_path / "pdi.log"
    rotated = tmp_path / "pdi.log.1"
    with Archive.init(where) as archive:
        archive.add_series(S)
        archive.add(S, big_text("nyala"), format="text")
    process, port, first = start_serve(where, "--replay-port", "0", "--workers", "1", "--indexer",
                                       "--log-format", "json", "--log-file", str(logged), start_new_session=True)
    try:
        wait_answering(process, f"http://127.0.0.1:{port}/healthz")

        def indexed(path: Path) -> list[dict[str, object]]:
            records = [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []
            assert all(r.keys() >= KEYS for r in records)
            return [r for r in records if r.get("event") == "indexed"]

        deadline = time.monotonic() + 90
        while not indexed(logged):
            assert time.monotonic() < deadline, "the indexer's record never reached the log file"
            time.sleep(0.1)
        logged.rename(rotated)
        process.send_signal(signal.SIGHUP)
        time.sleep(0.5)  # the signal passed on and taken
        with Archive.open(where) as archive:
            archive.add(S, big_text("bongo"), format="text")
        deadline = time.monotonic() + 90
        while not indexed(logged):
            assert time.monotonic() < deadline, "the indexer's record after SIGHUP never reached the new log file"
            time.sleep(0.1)
        assert len(indexed(rotated)) == 1 and process.poll() is None
    finally:
        stop(process)
    assert first.startswith("pdi: serving ")  # with --log-file the first line stays text on standard error
