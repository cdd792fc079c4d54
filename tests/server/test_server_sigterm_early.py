"""``SIGTERM`` sent as soon as ``pdi serve`` says it serves stops it as one sent later does: exit 0, every worker gone
(docs/reference/operate.md, "Signals"; found by a probe, 2026-11-30: within its first second after the line, a
server of two workers exited 143, killed by the signal's default action while it still imported what its workers
answer with; one of one worker took it to a handler meant for after uvicorn had stopped, and served on)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from pdi.archive import Archive


@pytest.mark.parametrize("workers", ["1", "2", "3"])
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_stop_at_once_after_the_serving_line_stops_it_whole(tmp_path: Path, workers: str, signum: int) -> None:
    location = tmp_path / "archive"
    Archive.init(location).close()
    process = subprocess.Popen(
        [sys.executable, "-m", "pdi", "serve", "--port", "0", "--replay-port", "0", "--workers", workers,
         "--archive", str(location)], stderr=subprocess.PIPE, text=True, start_new_session=True)
    assert process.stderr is not None
    try:
        with process.stderr:
            line = process.stderr.readline()
            assert "serving" in line, line
            process.send_signal(signum)  # at once: no wait for an answer
            code = process.wait(timeout=60)
            rest = process.stderr.read()
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    # SIGTERM: 0 (docs/reference/operate.md); Ctrl-C: as Python's, 130 or 0 as it is said on stopping, never killed
    assert code == 0 if signum == signal.SIGTERM else code in (0, 130), (code, rest[-2000:])
    assert "Traceback" not in rest, rest[-2000:]
    with pytest.raises(ProcessLookupError):  # the session's other processes (its workers) are gone too
        os.killpg(process.pid, 0)
