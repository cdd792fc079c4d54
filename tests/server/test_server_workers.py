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
import time
from pathlib import Path

import httpx
import pytest
from server_helpers import serving

from pdi.archive import Archive

S = "workers.example.us"


@pytest.fixture(scope="module")
def archive(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    location = tmp_path_factory.mktemp("workers") / "archive"
    with Archive.init(location) as opened:
        opened.add_series(S)
        name = str(opened.add(S, b"served by one of several workers\n", format="text"))
    return location, name


def _children(pid: int) -> set[int]:
    """The processes whose parent is ``pid`` (field 4 of /proc/PID/stat, after the command's parentheses)."""
    found = set()
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue  # it ended while we looked
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.add(int(entry))
    return found


def _owner_of_server_end(client: socket.socket, candidates: set[int]) -> int:
    """Which of ``candidates`` holds the server's end of ``client``'s connection (/proc/net/tcp, then fds)."""
    client_port = client.getsockname()[1]
    server_port = client.getpeername()[1]
    inode = None
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        local, remote = fields[1], fields[2]
        if int(local.split(":")[1], 16) == server_port and int(remote.split(":")[1], 16) == client_port:
            inode = fields[9]
    assert inode is not None, "the server's end of the connection is not in /proc/net/tcp"
    for pid in candidates:
        for fd in os.listdir(f"/proc/{pid}/fd"):
            try:
                if os.readlink(f"/proc/{pid}/fd/{fd}") == f"socket:[{inode}]":
                    return pid
            except OSError:
                continue
    raise AssertionError(f"no worker holds socket {inode}")


def _waits_for_connections(pid: int, port: int) -> bool:
    """Whether process ``pid`` watches the socket listening on ``port`` (an epoll of its, /proc/PID/fdinfo).

    A worker inherits the listening socket when it is forked, and accepts
    from it only once its server has started: until then the kernel hands
    every connection to the workers already up.
    """
    inode = None
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        if fields[3] == "0A" and int(fields[1].split(":")[1], 16) == port:  # 0A: LISTEN
            inode = int(fields[9])
    assert inode is not None, f"nothing listens on port {port}"
    for fd in os.listdir(f"/proc/{pid}/fdinfo"):
        try:
            info = Path(f"/proc/{pid}/fdinfo/{fd}").read_text()
        except OSError:
            continue
        if any(line.startswith("tfd:") and f" ino:{inode:x} " in f"{line} " for line in info.splitlines()):
            return True
    return False


def _response(conn: socket.socket) -> tuple[int, bytes]:
    """Status and body of the next HTTP/1.1 response on ``conn`` (its length from Content-Length)."""
    data = b""
    while b"\r\n\r\n" not in data:
        piece = conn.recv(65536)
        assert piece, "the server closed the connection"
        data += piece
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    length = next(int(line.split(":", 1)[1]) for line in lines if line.lower().startswith("content-length:"))
    while len(body) < length:
        piece = conn.recv(65536)
        assert piece, "the server closed the connection"
        body += piece
    return int(lines[0].split()[1]), body


def _wait_for(condition: object, seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while not condition():  # type: ignore[operator]
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def test_requests_are_served_by_several_processes(archive: tuple[Path, str]) -> None:
    location, name = archive
    with serving(location, "--workers", "3") as (process, port):
        workers = _children(process.pid)
        assert len(workers) == 3
        # serving() waited for one answer, from the first worker up: on a loaded machine the others can still be
        # starting, and the first would serve every connection below by itself
        _wait_for(lambda: all(_waits_for_connections(pid, port) for pid in workers))
        request = f"GET /uri-res/N2R?{name} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode()

        def client(_: int) -> socket.socket:
            conn = socket.create_connection(("127.0.0.1", port), timeout=30)
            for _ in range(5):  # a few requests each, while the other clients make theirs
                conn.sendall(request)
                assert _response(conn) == (200, b"served by one of several workers\n")
            return conn

        with concurrent.futures.ThreadPoolExecutor(8) as pool:
            clients = list(pool.map(client, range(24)))
        try:
            owners = {_owner_of_server_end(conn, workers) for conn in clients}
        finally:
            for conn in clients:
                conn.close()
    assert process.pid not in owners  # the supervisor serves nothing itself
    assert len(owners) >= 2, f"every connection was served by one process ({owners})"


@pytest.mark.parametrize("how", ["SIGTERM to the server", "Ctrl-C: SIGINT to every process"])
def test_a_signal_stops_every_worker(archive: tuple[Path, str], how: str) -> None:
    location, _ = archive
    with serving(location, "--workers", "3") as (process, _):
        workers = _children(process.pid)
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
        before = _children(process.pid)
        victim = min(before)
        os.kill(victim, signal.SIGKILL)
        _wait_for(lambda: len(_children(process.pid) - {victim}) == 2)
        after = _children(process.pid)
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
            _wait_for(lambda: process.poll() is not None or len(_children(process.pid) - killed) == 2)
            if process.poll() is not None:
                break
            victim = min(_children(process.pid) - killed)
            os.kill(victim, signal.SIGKILL)
            killed.add(victim)
        assert process.wait(timeout=30) == 1
        assert process.stderr is not None
        said = process.stderr.read()
    assert len(killed) == 5
    assert said.count("starting another") == 4
    assert "pdi: workers keep dying (5 within 60 s, the last " in said and "): stopping" in said
