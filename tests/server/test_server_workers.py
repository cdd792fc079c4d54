"""``pdi serve --workers N``: several processes serve the one socket, and signals reach them all.

Each test runs the real command and looks at the processes themselves in
``/proc``: which process holds the server's end of each client connection,
which processes are the server's children, and that none is left once it
has stopped.
"""

from __future__ import annotations

import concurrent.futures
import os
import signal
import socket
from pathlib import Path

import httpx
import pytest
from server_helpers import serving

from pdi.archive import Archive
from support.procnet import children, owner_of_server_end, response, wait_for, waits_for_connections

S = "workers.example.us"


@pytest.fixture(scope="module")
def archive(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    location = tmp_path_factory.mktemp("workers") / "archive"
    with Archive.init(location) as opened:
        opened.add_series(S)
        name = str(opened.add(S, b"served by one of several workers\n", format="text"))
    return location, name


def test_requests_are_served_by_several_processes(archive: tuple[Path, str]) -> None:
    location, name = archive
    with serving(location, "--workers", "3") as (process, port):
        workers = children(process.pid)
        assert len(workers) == 3
        # serving() waited for one answer, from the first worker up: on a loaded machine the others can still be
        # starting, and the first would serve every connection below by itself
        wait_for(lambda: all(waits_for_connections(pid, port) for pid in workers))
        request = f"GET /uri-res/N2R?{name} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode()

        def client(_: int) -> socket.socket:
            conn = socket.create_connection(("127.0.0.1", port), timeout=30)
            for _ in range(5):  # a few requests each, while the other clients make theirs
                conn.sendall(request)
                assert response(conn) == (200, b"served by one of several workers\n")
            return conn

        with concurrent.futures.ThreadPoolExecutor(8) as pool:
            clients = list(pool.map(client, range(24)))
        try:
            owners = {owner_of_server_end(conn, workers) for conn in clients}
        finally:
            for conn in clients:
                conn.close()
    assert process.pid not in owners  # the supervisor serves nothing itself
    assert len(owners) >= 2, f"every connection was served by one process ({owners})"


@pytest.mark.parametrize("how", ["SIGTERM to the server", "Ctrl-C: SIGINT to every process"])
def test_a_signal_stops_every_worker(archive: tuple[Path, str], how: str) -> None:
    location, _ = archive
    with serving(location, "--workers", "3") as (process, _):
        workers = children(process.pid)
        assert len(workers) == 3
        if how.startswith("SIGTERM"):
            process.send_signal(signal.SIGTERM)
        else:  # as a terminal does: the whole process group (the server's own, see _serve)
            os.killpg(process.pid, signal.SIGINT)
        assert process.wait(timeout=30) == 0
    for pid in workers:
        assert not Path(f"/proc/{pid}").exists(), f"worker {pid} outlived the server"


def test_a_worker_that_dies_is_replaced(archive: tuple[Path, str]) -> None:
    location, name = archive
    with serving(location, "--workers", "2") as (process, port):
        before = children(process.pid)
        victim = min(before)
        os.kill(victim, signal.SIGKILL)
        wait_for(lambda: len(children(process.pid) - {victim}) == 2)
        after = children(process.pid)
        assert victim not in after and len(after - before) == 1
        assert process.stderr is not None
        assert process.stderr.readline() == f"pdi: worker {victim} was killed by signal 9 (SIGKILL); starting another\n"
        for _ in range(10):
            assert httpx.get(f"http://127.0.0.1:{port}/uri-res/N2R?{name}", timeout=10).status_code == 200


def test_workers_that_keep_dying_stop_the_server(archive: tuple[Path, str]) -> None:
    # with 2 workers, a fifth death within a minute is one too many
    location, _ = archive
    with serving(location, "--workers", "2") as (process, _):
        killed = set()
        for _ in range(5):
            wait_for(lambda: process.poll() is not None or len(children(process.pid) - killed) == 2)
            if process.poll() is not None:
                break
            victim = min(children(process.pid) - killed)
            os.kill(victim, signal.SIGKILL)
            killed.add(victim)
        assert process.wait(timeout=30) == 1
        assert process.stderr is not None
        said = process.stderr.read()
    assert len(killed) == 5
    assert said.count("starting another") == 4
    assert "pdi: workers keep dying (5 within 60 s, the last " in said and "): stopping" in said
