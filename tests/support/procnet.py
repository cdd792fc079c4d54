"""What a test can learn of a running server's processes and connections from ``/proc``.

Shared by the tests of ``pdi serve --workers`` and of federation across
workers: which processes are a server's children, which holds the server's
end of a client connection, which watch the listening socket, and the next
answer on a raw connection.
"""

from __future__ import annotations

import os
import socket
import time
from pathlib import Path


def children(pid: int) -> set[int]:
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


def owner_of_server_end(client: socket.socket, candidates: set[int]) -> int:
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


def waits_for_connections(pid: int, port: int) -> bool:
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


def response(conn: socket.socket) -> tuple[int, bytes]:
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


def wait_for(condition: object, seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while not condition():  # type: ignore[operator]
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def peak_kib(pid: int) -> int:
    """The largest peak resident set (``VmHWM``, KiB) of the process ``pid`` and of its children (a server's
    worker); a child gone since it was listed (a bounded child that ended) is left out."""
    pids = [pid]
    listed = Path(f"/proc/{pid}/task/{pid}/children")
    if listed.exists():
        pids += [int(p) for p in listed.read_text().split()]
    peaks = []
    for one in pids:
        try:
            status = Path(f"/proc/{one}/status").read_text()
        except FileNotFoundError:
            continue
        peaks.append(int(next(line.split()[1] for line in status.splitlines() if line.startswith("VmHWM:"))))
    return max(peaks)
