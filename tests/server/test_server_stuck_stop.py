"""``pdi serve`` stopped by ``SIGTERM`` while a request never ends: the stop is bounded, said, and loses nothing.

A loop that stopped moving on a stranger's message (``pdi.mail.large._next_line``, mended in 2199b759) held a
worker's thread for ever, and ``SIGTERM`` then stopped nothing: uvicorn cancelled the request's task after its
grace, but the process waited for the thread (``SIGKILL`` was needed). The message reader now keeps a deadline
(``tests/test_mail_large_deadline.py``), so no input makes such a loop on demand: the fault is put in here, in the
child ``pdi serve`` alone (``_SERVE``: a fragment evaluation of ``char=`` that spins, one of ``line=`` that takes
a few seconds and ends, a deposit whose index-making spins), each marking a file as it starts, so that the signal
is sent while the request is in hand.

What each test asserts is the real process's: how long after ``SIGTERM`` it exits and with what status, what its
log says, that new connections are refused at once, that a request that ends within the grace is answered whole,
and that the archive holds after a deposit cut short what it held before.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
from server_helpers import SERVING, stop, wait_answering

from pdi.archive import Archive
from pdi.server.process.run import GRACE_SECONDS, KILL_SECONDS, STUCK_SECONDS, STUCK_STATUS
from support.procnet import children, wait_for

S = "stuck.example.us"
TEXT = b"first line\r\nsecond line\r\n"
#: How long a slow evaluation takes: less than the grace its request has after SIGTERM.
SLOW = 2.5

#: ``pdi serve`` with the faults put in: ``$PDI_TEST_MARK`` is written when one begins.
_SERVE = f"""
import os, re, sys, time
import pdi.fragments as fragments

real_evaluate, real_build_index = fragments.evaluate, fragments.build_index


def mark(what):
    with open(os.environ["PDI_TEST_MARK"], "a") as out:
        out.write(what + "\\n")


def evaluate(scheme, positions, data, **options):
    if scheme == "char" and "7" in repr(positions):
        mark("holding")
        re.match(r"(a|aa)+$", "a" * 200 + "b")  # backtracking for ages, the GIL held: no Python runs
    if scheme == "char":
        mark("spinning")
        while True:
            pass
    if scheme == "line":
        mark("slow")
        time.sleep({SLOW})
    return real_evaluate(scheme, positions, data, **options)


def build_index(source, **options):
    held = bytes(source) if isinstance(source, (bytes, bytearray, memoryview)) else b"".join(map(bytes, source))
    if b"SPIN" in held:
        mark("depositing")
        while True:
            pass
    return real_build_index(held, **options)


fragments.evaluate, fragments.build_index = evaluate, build_index
from pdi.cli import main

sys.argv[0] = "pdi"
main()
"""


@pytest.fixture
def archive(tmp_path: Path) -> tuple[Path, str, str]:
    location = tmp_path / "archive"
    with Archive.init(location) as opened:
        opened.add_series(S)
        name = str(opened.add(S, TEXT, format="text"))
        _, token = opened.add_token("depositor", role="deposit")
    return location, name, token


@contextmanager
def faulty_serving(location: Path, mark: Path, workers: str) -> Iterator[tuple[subprocess.Popen[str], int]]:
    process = subprocess.Popen(
        [sys.executable, "-c", _SERVE, "serve", "--port", "0", "--replay-port", "0", "--archive", str(location),
         "--workers", workers],
        stderr=subprocess.PIPE, text=True, start_new_session=True, env={**os.environ, "PDI_TEST_MARK": str(mark)},
    )
    try:
        assert process.stderr is not None
        line = process.stderr.readline()
        found = SERVING.search(line)
        assert found is not None, line
        port = int(found[1])
        wait_answering(process, f"http://127.0.0.1:{port}/api/series")
        yield process, port
    finally:
        if process.poll() is None:  # (a test that failed): its whole group, lest a worker spin on, orphaned
            os.killpg(process.pid, signal.SIGKILL)
        stop(process)


#: What a worker ended in its stop says (``pdi.server.process.run._StopWatch``): after the grace, once uvicorn has
#: stopped, or its watch's time after the signal.
_ENDED = re.compile(
    rf"pdi: worker \d+ (still at work {STUCK_SECONDS} s after it(, past the {GRACE_SECONDS} s its requests in hand"
    rf" were given|, once its server had stopped)|not ended {STUCK_SECONDS} s after it) \(SIGTERM; a thread in"
    rf" [\w., ]+\): ended without finishing them")


def _in_hand(url: str, outcome: list[object], **request: object) -> threading.Thread:
    """``url`` asked in a thread of its own (a POST if ``request`` has content), its answer or error kept."""

    def ask() -> None:
        try:
            method = "POST" if "content" in request else "GET"
            outcome.append(httpx.request(method, url, timeout=60, **request))  # type: ignore[arg-type]
        except httpx.TransportError as exc:
            outcome.append(exc)

    asking = threading.Thread(target=ask, daemon=True)
    asking.start()
    return asking


def _stopped(process: subprocess.Popen[str], port: int, refused: bool = True) -> tuple[float, int, str]:
    """SIGTERM sent: the seconds until the process exited, its status and its log; with ``refused``, new connections
    refused at once (before the grace is out)."""
    sent = time.monotonic()
    process.send_signal(signal.SIGTERM)
    while refused:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=2).close()
        except ConnectionRefusedError:
            break
        assert time.monotonic() - sent < GRACE_SECONDS, "new connections were still accepted after SIGTERM"
        time.sleep(0.05)
    status = process.wait(timeout=KILL_SECONDS + 30)
    took = time.monotonic() - sent
    assert process.stderr is not None
    return took, status, process.stderr.read()


@pytest.mark.parametrize("workers", ["1", "2"])
def test_a_request_that_never_ends_is_ended_after_the_grace_and_the_server_says_which_worker(
    archive: tuple[Path, str, str], tmp_path: Path, workers: str,
) -> None:
    location, name, _ = archive
    mark = tmp_path / "mark"
    with faulty_serving(location, mark, workers) as (process, port):
        served_by = children(process.pid) if workers != "1" else {process.pid}
        outcome: list[object] = []
        asking = _in_hand(f"http://127.0.0.1:{port}/uri-res/N2R?{name}%23char=0,5", outcome)
        wait_for(lambda: mark.exists() and "spinning" in mark.read_text())
        took, status, log = _stopped(process, port)
        asking.join(timeout=30)
    assert GRACE_SECONDS <= took < KILL_SECONDS + 5, took  # the grace given, then ended: not waited for ever
    assert status == STUCK_STATUS, log
    said = [line for line in log.splitlines() if "ended without finishing" in line]
    assert len(said) == 1, log
    worker = int(said[0].split()[2])
    assert worker in served_by
    assert _ENDED.fullmatch(said[0]), said[0]
    assert "a thread in pdi.archive.reading._selected" in said[0]  # where the evaluation that never ended was
    if workers != "1":  # the supervisor says it too, and why it exits 1
        assert f"pdi: worker {worker} exited with status {STUCK_STATUS} while stopping (after SIGTERM)" in log
        assert f"stopped, but not cleanly: worker {worker} exited with status {STUCK_STATUS}" in log
    for pid in served_by:
        assert not Path(f"/proc/{pid}").exists(), f"worker {pid} outlived the server"
    assert len(outcome) == 1, outcome  # never answered: cut off, or its task's cancellation answered 500
    assert isinstance(outcome[0], httpx.TransportError) or outcome[0].status_code == 500, outcome


@pytest.mark.parametrize("workers", ["1", "2"])
def test_a_slow_request_that_ends_within_the_grace_is_answered_whole_and_the_server_exits_0(
    archive: tuple[Path, str, str], tmp_path: Path, workers: str,
) -> None:
    location, name, _ = archive
    mark = tmp_path / "mark"
    with faulty_serving(location, mark, workers) as (process, port):
        outcome: list[object] = []
        asking = _in_hand(f"http://127.0.0.1:{port}/uri-res/N2R?{name}%23line=0,1", outcome)
        wait_for(lambda: mark.exists() and "slow" in mark.read_text())
        took, status, log = _stopped(process, port)
        asking.join(timeout=30)
    assert status == 0, log
    assert "ended without finishing" not in log and "not cleanly" not in log
    assert took < KILL_SECONDS + 5, took  # (the answer is what matters: whole, and the stop clean)
    assert len(outcome) == 1 and isinstance(outcome[0], httpx.Response), outcome
    assert outcome[0].status_code == 200
    assert outcome[0].content == b"first line\r\n"  # RFC 5147 §2.2.2: line=0,1 is the first line, its line end too


def test_a_deposit_cut_short_in_a_stopped_worker_leaves_the_archive_as_it_was(
    archive: tuple[Path, str, str], tmp_path: Path,
) -> None:
    location, name, token = archive

    def held() -> object:
        with Archive.open(location) as opened:
            store = opened.store
            return (list(store.iter_representations()), sorted(store.blob_names()),
                    [(e.action, e.subject) for e in store.audit_log()])

    before = held()
    mark = tmp_path / "mark"
    with faulty_serving(location, mark, "2") as (process, port):
        outcome: list[object] = []
        asking = _in_hand(f"http://127.0.0.1:{port}/api/deposit?series={S}&format=html", outcome,
                          content=b"<!DOCTYPE html><title>t</title><p>a deposit that SPINs while its elements are indexed</p>\n",
                          headers={"Authorization": f"Bearer {token}", "Content-Type": "text/html"})
        wait_for(lambda: mark.exists() and "depositing" in mark.read_text())
        _, status, log = _stopped(process, port)
        asking.join(timeout=30)
    assert status == 1, log
    assert "(SIGTERM; a thread in pdi.archive." in log  # the deposit's, cut short
    assert len(outcome) == 1, outcome
    assert isinstance(outcome[0], httpx.TransportError) or outcome[0].status_code == 500, outcome
    assert held() == before
    with Archive.open(location) as opened:  # and it takes the next deposit as any archive does
        opened.add(S, b"after the stop\n", format="text")
        assert opened.get(name).data == TEXT


def test_a_worker_whose_thread_holds_the_gil_is_killed_by_the_supervisor_saying_so(
    archive: tuple[Path, str, str], tmp_path: Path,
) -> None:
    # no Python runs in it, so neither uvicorn's handler nor the worker's watch: the supervisor's SIGKILL ends it
    # (its listening socket, the worker's copy of the supervisor's, is closed only then)
    location, name, _ = archive
    mark = tmp_path / "mark"
    with faulty_serving(location, mark, "2") as (process, port):
        workers = children(process.pid)
        outcome: list[object] = []
        asking = _in_hand(f"http://127.0.0.1:{port}/uri-res/N2R?{name}%23char=0,7", outcome)
        wait_for(lambda: mark.exists() and "holding" in mark.read_text())
        took, status, log = _stopped(process, port, refused=False)
        asking.join(timeout=30)
    assert KILL_SECONDS <= took < KILL_SECONDS + 5, took
    assert status == 1, log
    killed = [line for line in log.splitlines() if line.endswith(f"had not ended {KILL_SECONDS} s after SIGTERM: killed (SIGKILL)")]
    assert len(killed) == 1, log
    worker = int(killed[0].split()[2])
    assert worker in workers
    assert f"pdi: stopped, but not cleanly: worker {worker} killed {KILL_SECONDS} s after SIGTERM" in log
    for pid in workers:
        assert not Path(f"/proc/{pid}").exists(), f"worker {pid} outlived the server"
    assert len(outcome) == 1 and isinstance(outcome[0], httpx.TransportError), outcome


@pytest.mark.parametrize("workers", ["1", "2"])
def test_a_deposit_whose_body_is_still_coming_at_sigterm_is_no_stuck_request(
        archive: tuple[Path, str, str], tmp_path: Path, workers: str) -> None:
    """Found by a review: a deposit's body still coming in when ``SIGTERM`` came (its thread waiting on the event
    loop for the next piece) was taken for a request stuck for ever, and an ordinary stop exited 1 with an error.
    Its request is cancelled at the grace like any other, its thread ends as the loop tells it so, and ``pdi
    serve`` exits 0, saying nothing of a worker ended."""
    location, _, token = archive
    with faulty_serving(location, tmp_path / "mark", workers) as (process, port):
        outcome: list[object] = []

        def body() -> Iterator[bytes]:
            for _ in range(4000):
                yield b"x" * 65536
                time.sleep(0.005)

        def post() -> None:
            try:
                outcome.append(httpx.post(f"http://127.0.0.1:{port}/api/deposit", params={"series": S, "format": "text"},
                                          headers={"Authorization": f"Bearer {token}"}, content=body(), timeout=60))
            except httpx.HTTPError as exc:
                outcome.append(exc)

        sending = threading.Thread(target=post, daemon=True)
        sending.start()
        time.sleep(1.5)  # the body coming in
        process.send_signal(signal.SIGTERM)
        status = process.wait(KILL_SECONDS + 10)
        assert process.stderr is not None
        said = process.stderr.read()
    assert status == 0, said
    assert "ended without finishing" not in said and "not cleanly" not in said, said
