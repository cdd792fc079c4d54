"""A slow answer's CPU work runs beside the worker's event loop, never on it (charter 1: nothing from a stranger
can stall the process).

One ``pdi serve --workers 1`` process: while it answers a large signed manifest page (``/api/manifest``, 10,000
some 4 MB of JWS: reading the page, its JSON, its base64url and its Ed25519 signature), a
client on another connection asks for ``/robots.txt`` again and again, a tiny answer made on the event loop
alone. Each of those answers comes within a bound well under the slow answer's own time: the loop was free to
answer it. When the page was written and signed on the loop, the tiny request waited for all of it.

The machine is shared: of five rounds (up to fifteen while none waited less than the bound), the one whose
longest wait was the shortest, as a share of its slow answer's time, is what is checked (a code that blocks the
loop blocks it in every round).
"""

from __future__ import annotations

import http.client
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from server_helpers import serving

from pdi.archive import Archive, Content
from pdi.signing import parse_jwks, verify_manifest

S = "loopfree.example.us"
#: Names in the series: one manifest page of the most names a page holds.
NAMES = 10_000
#: The share of the slow answer's time a tiny request may wait for, in the best round (see the test).
SHARE = 0.1
#: The most rounds: five, then more (to this many) while every one so far waited past SHARE, as rounds on a
#: loaded machine may (the CI's four test processes on two cores); a loop that is blocked is so in every round.
ROUNDS = 15


@pytest.fixture(scope="module")
def origin(tmp_path_factory: pytest.TempPathFactory) -> Path:
    location = tmp_path_factory.mktemp("loopfree") / "archive"
    with Archive.init(location) as archive:
        archive.add_series(S)
        for start in range(0, NAMES, 1000):
            archive.deposit_batch(S, [([Content(f"{i}\n".encode(), "text")], None)
                                      for i in range(start, start + 1000)])
    subprocess.run([sys.executable, "-m", "pdi", "keys", "init", "--archive", str(location)], check=True,
                   capture_output=True)
    return location


def _get(conn: http.client.HTTPConnection, target: str) -> tuple[int, bytes]:
    conn.request("GET", target)
    answer = conn.getresponse()
    return answer.status, answer.read()


def _round(port: int, slow_target: str) -> tuple[float, float, int, bytes]:
    """The slow answer's seconds, the longest a tiny request waited meanwhile, how many were answered, and the
    slow answer's body."""
    slow = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    tiny = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    assert _get(tiny, "/robots.txt")[0] == 200  # connected and answered once before the round begins
    result: dict[str, object] = {}

    def ask() -> None:
        begun = time.perf_counter()
        result["answer"] = _get(slow, slow_target)
        result["seconds"] = time.perf_counter() - begun

    asking = threading.Thread(target=ask)
    asking.start()
    waits: list[float] = []
    try:
        while asking.is_alive():
            begun = time.perf_counter()
            status, _ = _get(tiny, "/robots.txt")
            waits.append(time.perf_counter() - begun)
            assert status == 200
    finally:
        asking.join()
        slow.close()
        tiny.close()
    status, body = result["answer"]  # type: ignore[misc]
    assert status == 200
    return float(result["seconds"]), max(waits), len(waits), body  # type: ignore[arg-type]


def test_a_tiny_request_is_answered_while_a_large_manifest_page_is_signed(origin: Path) -> None:
    target = f"/api/manifest?series={S}&limit={NAMES}"
    with serving(origin, "--workers", "1") as (_, port):
        warm = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        status, first = _get(warm, target)  # the catalog's pages read once, as a sync's first page reads them
        assert status == 200
        status, keys = _get(warm, "/api/keys")
        warm.close()
        rounds: list[tuple[float, float, int, bytes]] = []
        while len(rounds) < ROUNDS and (len(rounds) < 5 or min(w / s for s, w, *_ in rounds) >= SHARE):
            rounds.append(_round(port, target))  # five rounds, and more while none was free of the load's waits
    # the answer is the page, whole and signed, the same octets each time
    manifest = verify_manifest(first.decode("ascii"), parse_jwks(keys, "the keys"))
    assert len(manifest.names) == NAMES and len(first) > 3 << 20
    assert all(body == first for *_, body in rounds)
    shares = [(waited / seconds, seconds, waited, count) for seconds, waited, count, _ in rounds]
    best = min(shares)
    # answered: the loop took the tiny requests all along, so each waited for a small part of the slow answer
    assert best[3] >= 2, shares
    # (measured, 2026-11-29, load 8 to 11: with the page made on the loop the best round's share was 0.13 to 0.18,
    # every round's at least 0.13; beside it, 0.056 to 0.064)
    assert best[0] < SHARE, (f"a tiny request waited {best[2] * 1000:.0f} ms while a manifest page took"
                           f" {best[1] * 1000:.0f} ms (rounds: share, slow, longest wait, tiny answers: {shares})")
