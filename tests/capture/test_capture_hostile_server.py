"""What a hostile web server can do to `pdi capture`: a server of raw sockets on 127.0.0.1 that answers as
it likes (many large parts, cookies without end, frames and imports nested past the crawl's depth).

Each answer is written by hand on the socket, so nothing in between (``http.server``) tidies it up. The
expected values are worked out from the limits the capture is given and from the server's own count of
what it was sent, never from the capture's output.
"""

from __future__ import annotations

import socket
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from pdi.capture import Limits, capture
from pdi.errors import LimitError
from peak_memory import run_with_peak

MB = 1 << 20
#: What each path answers: (Content-Type, extra header lines, body), or a callable given the socket.
Answer = tuple[bytes, bytes, bytes]


class RawServer:
    """An HTTP/1.1 server on 127.0.0.1 that writes each answer on the socket as ``answer(path)`` gives it,
    keeps connections open (as servers do), and records every request's head."""

    def __init__(self, answer: Callable[[str], Answer]) -> None:
        self.answer = answer
        self.requests: list[bytes] = []
        self.lock = threading.Lock()
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        conn.settimeout(30)
        buffered = b""
        try:
            while True:
                while b"\r\n\r\n" not in buffered:
                    got = conn.recv(1 << 20)
                    if not got:
                        return
                    buffered += got
                head, _, buffered = buffered.partition(b"\r\n\r\n")
                with self.lock:
                    self.requests.append(head)
                kind, extra, body = self.answer(head.split(b" ")[1].decode("latin-1"))
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: " + kind + b"\r\nContent-Length: %d\r\n" % len(body)
                             + extra + b"\r\n" + body)
        except OSError:
            return
        finally:
            conn.close()

    def paths(self) -> list[str]:
        with self.lock:
            return [head.split(b" ")[1].decode("latin-1") for head in self.requests]

    def close(self) -> None:
        self.sock.close()


def answer(path: str) -> Answer:
    """``/many-N-K``: a page of N images of K KiB each (``/big-…``); ``/cookies-N``: a page of N images, each
    answered with a 4,000-octet cookie of its own."""
    if path.startswith("/many-"):
        count, size = path.removeprefix("/many-").split("-")
        return b"text/html", b"", b"".join(b'<img src="/big-%s-%d.png">' % (size.encode(), i) for i in range(int(count)))
    if path.startswith("/big-"):
        return b"image/png", b"", b"\x89PNG" + b"\0" * (int(path.split("-")[1]) * 1024 - 4)
    return b"text/plain", b"", b"not here"


@pytest.fixture(scope="module")
def hostile() -> Iterator[RawServer]:
    server = RawServer(answer)
    yield server
    server.close()


def test_the_whole_captures_limit_holds_while_its_parts_are_fetched(hostile: RawServer) -> None:
    # 200 images of 1 MiB each (less a KiB) under a limit of 4 MiB for the whole capture: the fifth one
    # passes it. The crawl added the parts up only once a level was fetched: all 200 were asked for and
    # held (200 MiB) before the capture failed.
    limits = Limits(max_resource_bytes=MB, max_total_bytes=4 * MB, concurrency=2)
    with pytest.raises(LimitError, match=r"the capture is larger than the limit of 4,?194,?304 bytes"):
        capture(hostile.url + "/many-200-1023", allow_private=True, limits=limits)
    # the page, and at most the four that fit, the one past the limit and the one fetched beside it
    assert len(hostile.paths()) <= 1 + 4 + 2, len(hostile.paths())


def test_the_whole_captures_limit_bounds_its_memory(hostile: RawServer, tmp_path: Path) -> None:
    def run(path: str) -> tuple[int, int]:
        with (tmp_path / "err").open("wb") as err:
            status, peak, _ = run_with_peak([sys.executable, "-m", "pdi", "capture", hostile.url + path,
                                             "--allow-private", "--max-mb", "1", "-o", str(tmp_path / "c.mht")],
                                            stderr=err)
        return status, peak

    status, baseline = run("/many-1-1")
    assert status == 0, (tmp_path / "err").read_text()
    (tmp_path / "c.mht").unlink()
    # --max-mb 1: 4 MiB for the whole capture; 300 images of 1,023 KiB are 300 MiB
    status, peak = run("/many-300-1023")
    assert status == 7, (tmp_path / "err").read_text()
    assert "larger than the limit" in (tmp_path / "err").read_text()
    assert peak < baseline + 48 * 1024, (peak, baseline)
    assert not (tmp_path / "c.mht").exists()
