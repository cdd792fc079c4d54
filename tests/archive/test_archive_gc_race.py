"""Removing unreferenced blobs while deposits are made never takes an acknowledged deposit's bytes.

Issue 12: ``pdi verify --remove-unreferenced --older-than 0`` running beside
depositors deleted the blobs of acknowledged deposits, because a deposit
placed its blob before taking the write lock and the remover, holding the
lock, saw it unreferenced. Real processes, as in production: several
depositors and one remover in a loop, with no grace period at all. Only
the embedded store writes blobs outside its catalog transaction, so only it
has anything to remove (PostgreSQL's ``remove_unreferenced`` removes nothing).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from archive_helpers import SRC

from pdi.archive import Archive

S = "oma.eop.gov.us"

DEPOSITOR = r"""
import os, sys
from pdi.archive import Archive
archive = Archive.open(sys.argv[1])
count = int(sys.argv[2])
for i in range(count):
    data = f"deposit {os.getpid()}-{i}\n".encode() * 50
    name = archive.add("oma.eop.gov.us", data, format="text")
    print(name, flush=True)
"""

REMOVER = r"""
import os, sys
from pdi.archive import Archive
archive = Archive.open(sys.argv[1])
stop = sys.argv[2]
rounds = removed = 0
while not os.path.exists(stop):
    removed += len(archive.remove_unreferenced(0.0))
    rounds += 1
print(rounds, removed, flush=True)
"""


def _start(script: str, *args: str) -> subprocess.Popen[str]:
    env = dict(os.environ, PYTHONPATH=str(SRC))
    return subprocess.Popen(
        [sys.executable, "-c", script, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        env=env, text=True,
    )


@pytest.mark.slow  # a remover and depositors racing for a minute; out of scripts/test --quick
def test_remover_beside_depositors_loses_no_acknowledged_deposit(tmp_path: Path) -> None:
    location = str(tmp_path / "archive")
    with Archive.init(location) as archive:
        archive.add_series(S)
    stop = tmp_path / "stop"
    remover = _start(REMOVER, location, str(stop))
    depositors = [_start(DEPOSITOR, location, "15") for _ in range(4)]
    acknowledged: list[str] = []
    try:
        for child in depositors:
            out, err = child.communicate(timeout=240)
            assert child.returncode == 0, err
            acknowledged += out.split()
    finally:
        stop.touch()
        out, err = remover.communicate(timeout=60)
        for child in depositors:
            if child.poll() is None:
                child.kill()
    assert remover.returncode == 0, err
    rounds = int(out.split()[0])
    assert rounds > 0
    assert len(acknowledged) == 60
    with Archive.open(location) as archive:
        report = archive.verify()
        assert report.ok, report.problems[:3]
        for name in acknowledged:
            assert archive.get(name).data.startswith(b"deposit ")


pytestmark = pytest.mark.timeout(300)
